// kind://<cluster>/kind/<node> — the providerID cloud-provider-kind gives kind nodes.

export interface KindProviderID {
  cluster: string;
  node: string;
}

const PREFIX = 'kind://';
// kind cluster names and node (container) names are DNS-label-like.
const NAME = /^[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?$/;

export function parseKindProviderID(providerID: string): KindProviderID {
  if (typeof providerID !== 'string' || !providerID.startsWith(PREFIX)) {
    throw new Error(`providerID: "${String(providerID)}" does not start with ${PREFIX}`);
  }
  const parts = providerID.slice(PREFIX.length).split('/');
  if (parts.length !== 3 || parts[1] !== 'kind') {
    throw new Error(`providerID: "${providerID}" is not kind://<cluster>/kind/<node>`);
  }
  const [cluster, , node] = parts;
  if (!NAME.test(cluster)) throw new Error(`providerID: "${providerID}" has an invalid cluster name "${cluster}"`);
  if (!NAME.test(node)) throw new Error(`providerID: "${providerID}" has an invalid node name "${node}"`);
  return { cluster, node };
}

export function formatKindProviderID(id: KindProviderID): string {
  return `${PREFIX}${id.cluster}/kind/${id.node}`;
}

/**
 * The instance a providerID names, for comparing two providerIDs: cluster and node container, as
 * the grammar above admits one spelling of each. Undefined for anything parseKindProviderID refuses.
 */
export function kindInstanceKey(providerID: string): string | undefined {
  try {
    return formatKindProviderID(parseKindProviderID(providerID));
  } catch {
    return undefined;
  }
}
