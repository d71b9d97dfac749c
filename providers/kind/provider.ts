// kind adapter: runs next to kind on the host (like cloud-provider-kind), finds node containers
// through the Docker Engine API and answers a whole batch from one container listing plus one
// inspect per asked-for node. Overrides are re-read every round, so edits need no restart.
import { readFile } from 'node:fs/promises';
import { forEachLimited } from '../../src/util/limit.js';
import type { CloudProvider, InstanceMetadata, InstanceResult, NodeRef, ProviderLogger } from '../types.js';
import { found, notFound, retryableError } from '../types.js';
import { KIND_CLUSTER_LABEL, kindContainerStopped, kindNodeAddresses, type DockerContainerInspect } from './addresses.js';
import type { KindConfig, KindConfigMapRef } from './config.js';
import { DockerApiError, DockerClient, type DockerContainerSummary } from './docker.js';
import { parseKindOverrides, type KindOverrides } from './overrides.js';
import { formatKindProviderID, parseKindProviderID } from './provider-id.js';
import type { ConfigMapReader } from './configmap-client.js';
import { kindInstanceKey } from './provider-id.js';

/** Reads the overrides document; empty when none is configured. */
export type OverridesLoader = (signal?: AbortSignal) => Promise<KindOverrides>;

export function fileOverridesLoader(path: string): OverridesLoader {
  return async () => parseKindOverrides(await readFile(path, 'utf8'), path);
}

export function configMapOverridesLoader(api: ConfigMapReader, ref: KindConfigMapRef, logger?: ProviderLogger): OverridesLoader {
  const source = `ConfigMap ${ref.namespace}/${ref.name} key ${ref.key}`;
  return async () => {
    let cm;
    try {
      cm = await api.readNamespacedConfigMap({ name: ref.name, namespace: ref.namespace });
    } catch (err) {
      // Not created yet is normal for e2e: no overrides until the test writes it.
      if ((err as { code?: number }).code === 404) {
        logger?.debug({ configMap: `${ref.namespace}/${ref.name}` }, 'kind: overrides ConfigMap absent');
        return { nodes: {} };
      }
      throw new Error(`${source}: ${(err as Error).message}`, { cause: err });
    }
    const text = cm.data?.[ref.key];
    return text === undefined ? { nodes: {} } : parseKindOverrides(text, source);
  };
}

// Docker states in which the container exists but its node cannot run.
const SHUTDOWN_STATES = new Set(['exited', 'created', 'dead']);
const INSPECT_CONCURRENCY = 8;

function summaryName(c: DockerContainerSummary): string {
  return (c.Names?.[0] ?? '').replace(/^\//, '');
}

type Located = { kind: 'found'; container: DockerContainerSummary } | { kind: 'notFound'; reason: string } | { kind: 'error'; error: Error; retryable: true };

export class KindProvider implements CloudProvider {
  readonly name = 'kind';
  /** Which providerIDs name one instance (kindInstanceKey): the controllers compare answers with it. */
  readonly instanceKey = kindInstanceKey;

  constructor(
    private readonly config: KindConfig,
    private readonly docker: DockerClient,
    private readonly loadOverrides: OverridesLoader = async () => ({ nodes: {} }),
    private readonly logger?: ProviderLogger,
  ) {}

  async instancesMetadata(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<InstanceMetadata>>> {
    const out = new Map<string, InstanceResult<InstanceMetadata>>();
    if (nodes.length === 0) return out;
    let overrides: KindOverrides;
    let located: Map<string, Located>;
    try {
      // A broken overrides document must not silently drop the addresses it adds.
      overrides = await this.loadOverrides(signal);
      located = await this.locate(nodes, signal);
    } catch (err) {
      signal?.throwIfAborted();
      this.logger?.warn({ err: (err as Error).message }, 'kind: cannot answer this round');
      for (const n of nodes) out.set(n.name, retryableError(err));
      return out;
    }
    const pending: [NodeRef, DockerContainerSummary][] = [];
    for (const node of nodes) {
      const l = located.get(node.name)!;
      if (l.kind === 'found') pending.push([node, l.container]);
      else out.set(node.name, l);
    }
    await forEachLimited(pending, INSPECT_CONCURRENCY, async ([node, summary]) => {
      out.set(node.name, await this.metadataFor(node, summary, overrides, signal));
    });
    signal?.throwIfAborted();
    return out;
  }

  async instancesExist(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    return this.fromListing(nodes, signal, () => found(true), true);
  }

  async instancesShutdown(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    return this.fromListing(nodes, signal, (c) => found(SHUTDOWN_STATES.has(String(c.State ?? ''))), false);
  }

  private async fromListing(
    nodes: readonly NodeRef[],
    signal: AbortSignal | undefined,
    onFound: (c: DockerContainerSummary) => InstanceResult<boolean>,
    missingIsFalse: boolean,
  ): Promise<Map<string, InstanceResult<boolean>>> {
    const out = new Map<string, InstanceResult<boolean>>();
    if (nodes.length === 0) return out;
    let located: Map<string, Located>;
    try {
      located = await this.locate(nodes, signal);
    } catch (err) {
      signal?.throwIfAborted();
      for (const n of nodes) out.set(n.name, retryableError(err));
      return out;
    }
    for (const node of nodes) {
      const l = located.get(node.name)!;
      if (l.kind === 'found') out.set(node.name, onFound(l.container));
      else if (l.kind === 'notFound' && missingIsFalse) out.set(node.name, found(false));
      else out.set(node.name, l);
    }
    return out;
  }

  /**
   * One listing of the cluster's containers; each node matched by the container its providerID
   * names (either form provider-id.ts accepts, after checking that it names this cluster), else
   * by its name. cloud-provider-kind always matches by name; for a kind node the two agree.
   */
  private async locate(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, Located>> {
    const containers = await this.docker.listContainers([`${KIND_CLUSTER_LABEL}=${this.config.cluster}`], signal);
    const byName = new Map(containers.map((c) => [summaryName(c), c]));
    const out = new Map<string, Located>();
    for (const node of nodes) {
      let containerName = node.name;
      if (node.providerID) {
        try {
          const id = parseKindProviderID(node.providerID);
          if (id.cluster !== this.config.cluster) {
            throw new Error(`providerID ${node.providerID} belongs to kind cluster ${id.cluster}, this adapter serves ${this.config.cluster}`);
          }
          containerName = id.node;
        } catch (err) {
          out.set(node.name, { kind: 'error', error: new Error(`kind: node ${node.name}: ${(err as Error).message}`), retryable: true });
          continue;
        }
      }
      const c = byName.get(containerName);
      out.set(node.name, c ? { kind: 'found', container: c } : { kind: 'notFound', reason: `kind: no container ${containerName} in cluster ${this.config.cluster}` });
    }
    return out;
  }

  private async metadataFor(node: NodeRef, summary: DockerContainerSummary, overrides: KindOverrides, signal?: AbortSignal): Promise<InstanceResult<InstanceMetadata>> {
    let inspect: DockerContainerInspect;
    try {
      inspect = await this.docker.inspectContainer(summary.Id, signal);
    } catch (err) {
      // Removed between the listing and the inspect.
      if (err instanceof DockerApiError && err.status === 404) return notFound(`kind: container ${summaryName(summary)} is gone`);
      return retryableError(new Error(`kind: node ${node.name}: ${(err as Error).message}`, { cause: err }));
    }
    try {
      const name = summaryName(summary);
      const addresses = kindNodeAddresses(inspect, { overrides });
      if (addresses.length === 0 && kindContainerStopped(inspect)) {
        // No addresses, no error: the node keeps the ones it has until the container runs again.
        this.logger?.debug({ node: node.name, container: name, state: inspect.State?.Status }, 'kind: node container stopped; its addresses are left as they are');
      }
      return found({
        // The node's own providerID when it has one (kind's kubelets always do); else the form
        // cloud-provider-kind answers with.
        providerID: node.providerID || formatKindProviderID({ cluster: this.config.cluster, node: name }),
        instanceType: 'kind-node',
        addresses,
      });
    } catch (err) {
      return retryableError(new Error(`kind: node ${node.name}: ${(err as Error).message}`, { cause: err }));
    }
  }
}

/** Overrides loader for a config: file, ConfigMap (via a kubeconfig), or none. */
export async function overridesLoaderFor(config: KindConfig, logger?: ProviderLogger): Promise<OverridesLoader> {
  if (config.overridesFile) return fileOverridesLoader(config.overridesFile);
  if (config.overridesConfigMap) {
    const { configMapReader } = await import('./configmap-client.js');
    return configMapOverridesLoader(configMapReader(config.kubeconfig), config.overridesConfigMap, logger);
  }
  return async () => ({ nodes: {} });
}
