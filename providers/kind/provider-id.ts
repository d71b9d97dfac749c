// kind providerIDs. Two forms are accepted:
//  * kind://<node provider>/<cluster>/<node>, what kind itself gives every kubelet as
//    --provider-id since v0.9.0 (kubernetes-sigs/kind pkg/cluster/internal/kubeadm/config.go:
//    "kind://{{.NodeProvider}}/{{.ClusterName}}/{{.NodeName}}", the node provider being the
//    String() of kind's docker, podman or nerdctl provider): kind://docker/kind/kind-worker. Every
//    node of a real kind cluster carries this one.
//  * kind://<cluster>/kind/<node>, what cloud-provider-kind answers for a node whose kubelet set
//    none (pkg/provider/instances.go, InstanceMetadata), and what this adapter wrote before it
//    read kind's form. spec.providerID never changes once set, so a node given it keeps it.
// Both name the same container: kind names each node container <cluster>-<role>[<n>]
// (pkg/cluster/internal/providers/common/namer.go), so the node name says which segment is the
// cluster, and the two readings never disagree on a real providerID.

export interface KindProviderID {
  cluster: string;
  /** The node container's name, which is also the Node's name. */
  node: string;
  /** kind's node provider (docker, podman, nerdctl); absent in cloud-provider-kind's form. */
  nodeProvider?: string;
}

const PREFIX = 'kind://';
// kind's own rule for cluster names is ^[a-z0-9.-]+$ (pkg/internal/apis/config/validate.go); a
// name must also start a container name Docker accepts ([a-zA-Z0-9] first), since every node
// container is named after the cluster. A trailing "-" or "." is fine: "ccm-" gives ccm--worker.
export const KIND_CLUSTER_NAME = /^[a-z0-9][a-z0-9.-]*$/;
const NODE_NAME = /^[a-z0-9][a-z0-9.-]*$/;
const NODE_PROVIDER = /^[a-z][a-z0-9-]*$/;
const FORMS = 'kind://<node provider>/<cluster>/<node> (kind\'s) or kind://<cluster>/kind/<node> (cloud-provider-kind\'s)';

export function parseKindProviderID(providerID: string): KindProviderID {
  if (typeof providerID !== 'string' || !providerID.startsWith(PREFIX)) {
    throw new Error(`providerID: "${String(providerID)}" does not start with ${PREFIX}`);
  }
  const parts = providerID.slice(PREFIX.length).split('/');
  if (parts.length !== 3 || parts.some((p) => p === '')) {
    throw new Error(`providerID: "${providerID}" is neither ${FORMS}`);
  }
  const [first, second, node] = parts as [string, string, string];
  if (!NODE_NAME.test(node)) throw new Error(`providerID: "${providerID}" has an invalid node name "${node}"`);
  // cloud-provider-kind's form first: a real kind-form ID fits it only when its node provider is
  // named "kind", and then both readings give the same cluster and node.
  if (second === 'kind' && KIND_CLUSTER_NAME.test(first) && node.startsWith(`${first}-`)) {
    return { cluster: first, node };
  }
  if (!NODE_PROVIDER.test(first)) throw new Error(`providerID: "${providerID}" has an invalid node provider "${first}" (kind writes docker, podman or nerdctl)`);
  if (!KIND_CLUSTER_NAME.test(second)) throw new Error(`providerID: "${providerID}" has an invalid cluster name "${second}"`);
  if (!node.startsWith(`${second}-`)) {
    throw new Error(`providerID: "${providerID}": node "${node}" is not a node of kind cluster "${second}" (kind names them ${second}-<role>); expected ${FORMS}`);
  }
  return { cluster: second, node, nodeProvider: first };
}

/** kind's form when `nodeProvider` is given, else cloud-provider-kind's. */
export function formatKindProviderID(id: KindProviderID): string {
  return id.nodeProvider === undefined ? `${PREFIX}${id.cluster}/kind/${id.node}` : `${PREFIX}${id.nodeProvider}/${id.cluster}/${id.node}`;
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
