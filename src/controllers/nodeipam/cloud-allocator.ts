// CloudAllocator mode: the pod ranges are the cloud's, as cloud-provider-gcp's cloud allocator
// reads them (interface nic0, else the first; its first alias IP range; an IPv6 /112 from the
// interface's IPv6 address; ordered by the cluster's stack type). The providers compute that into
// InstanceMetadata.podCIDRs; this module asks for them, checks them against the shared allocator
// (a clash with a pool, another node or a Service range is reported, never silently accepted) and
// builds the node writes: spec.podCIDRs, then the NetworkUnavailable=False/RouteCreated condition.
import type { CloudProvider } from '../../../providers/types.js';
import { CIDRParseError, cidrsOverlap, parseCIDR, type CIDR, type PodCIDRAllocator } from '../../ipam/index.js';
import type { NodeObject } from '../node.js';

export type CloudRangeResult =
  | { kind: 'ranges'; podCIDRs: string[] }
  /** The cloud has no pod range for the node (yet): retried with backoff. */
  | { kind: 'none'; reason: string }
  | { kind: 'error'; error: Error };

export interface CloudRanges {
  rangesFor(node: NodeObject): Promise<CloudRangeResult>;
}

/** The provider's InstanceMetadata.podCIDRs for one node. */
export function cloudRangesFromProvider(provider: CloudProvider): CloudRanges {
  return {
    async rangesFor(node) {
      const ref = { name: node.metadata.name, ...(node.spec?.providerID ? { providerID: node.spec.providerID } : {}), labels: node.metadata.labels ?? {} };
      let res;
      try {
        res = (await provider.instancesMetadata([ref])).get(node.metadata.name);
      } catch (err) {
        return { kind: 'error', error: err instanceof Error ? err : new Error(String(err)) };
      }
      if (!res) return { kind: 'error', error: new Error(`provider ${provider.name} gave no answer for node ${node.metadata.name}`) };
      if (res.kind === 'error') return { kind: 'error', error: res.error };
      if (res.kind === 'notFound') return { kind: 'none', reason: `the instance is not known to provider ${provider.name}${res.reason ? `: ${res.reason}` : ''}` };
      const podCIDRs = res.value.podCIDRs ?? [];
      if (podCIDRs.length === 0) return { kind: 'none', reason: `provider ${provider.name} reports no pod range (alias IP range) for the instance` };
      return { kind: 'ranges', podCIDRs };
    },
  };
}

export interface CloudClash {
  kind: 'invalid' | 'two-per-family' | 'other-node' | 'pool' | 'service';
  message: string;
}

/**
 * Records a node's cloud ranges in the shared allocator and lists what they clash with. Ranges
 * inside a pool are recorded there (the pool never hands them out again); ranges outside every
 * pool are normal in this mode unless they partly cover a pool. Pure over the allocator state.
 */
export function recordCloudRanges(
  allocator: PodCIDRAllocator,
  node: string,
  podCIDRs: readonly string[],
  serviceRanges: readonly string[],
): { podCIDRs: string[]; clashes: CloudClash[] } {
  const parsed: CIDR[] = [];
  const clashes: CloudClash[] = [];
  for (const t of podCIDRs) {
    try {
      parsed.push(parseCIDR(t));
    } catch (err) {
      if (!(err instanceof CIDRParseError)) throw err;
      return { podCIDRs: [], clashes: [{ kind: 'invalid', message: `the cloud's pod range for node ${node}: ${err.message}` }] };
    }
  }
  if (new Set(parsed.map((c) => c.family)).size !== parsed.length) {
    return { podCIDRs: [], clashes: [{ kind: 'two-per-family', message: `the cloud gives node ${node} more than one pod range per family: ${podCIDRs.join(', ')}` }] };
  }
  const texts = parsed.map((c) => c.text);
  const r = allocator.occupyNode(node, texts);
  if (r.ok) {
    for (const c of r.conflicts) clashes.push({ kind: 'service', message: `the cloud's pod range ${c.podCIDR} for node ${node} overlaps Service range ${c.exclusion}` });
    return { podCIDRs: texts, clashes };
  }
  if (r.reason === 'claimed-by-other-node') {
    clashes.push({ kind: 'other-node', message: `the cloud's pod range ${r.podCIDR} for node ${node} overlaps the block of node ${r.otherNode ?? '?'}` });
  } else if (r.reason === 'outside-every-pool') {
    for (const c of parsed) {
      for (const p of allocator.stats()) {
        for (const f of p.families) {
          if (cidrsOverlap(parseCIDR(f.clusterCIDR), c)) clashes.push({ kind: 'pool', message: `the cloud's pod range ${c.text} for node ${node} partly covers pool ${p.name} (${f.clusterCIDR})` });
        }
      }
    }
  }
  for (const c of parsed) {
    for (const s of serviceRanges) {
      if (cidrsOverlap(parseCIDR(s), c)) clashes.push({ kind: 'service', message: `the cloud's pod range ${c.text} for node ${node} overlaps Service range ${s}` });
    }
  }
  return { podCIDRs: texts, clashes };
}

export const NETWORK_UNAVAILABLE = 'NetworkUnavailable';
export const ROUTE_CREATED = 'RouteCreated';

/** Whether the node already says its network is available (NetworkUnavailable False). */
export function networkAvailable(node: NodeObject): boolean {
  const conds = (node.status?.conditions as { type?: string; status?: string }[] | undefined) ?? [];
  return conds.some((c) => c.type === NETWORK_UNAVAILABLE && c.status === 'False');
}

/** Strategic-merge patch of node/status setting NetworkUnavailable=False, reason RouteCreated. */
export function networkAvailablePatch(now: Date): { status: { conditions: unknown[] } } {
  const t = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    status: {
      conditions: [{
        type: NETWORK_UNAVAILABLE,
        status: 'False',
        reason: ROUTE_CREATED,
        message: 'node-address-ccm: the cloud routes the pod range (alias IP range) to the node',
        lastTransitionTime: t,
        lastHeartbeatTime: t,
      }],
    },
  };
}
