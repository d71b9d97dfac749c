// The cloud's pod ranges for CloudAllocator: on GCE as cloud-provider-gcp's cloud allocator reads
// them (interface nic0, else the first; its first alias IP range; an IPv6 /112 from the
// interface's IPv6 address; ordered by the cluster's stack type), on AWS the prefixes EC2 delegates
// to the primary interface. The providers compute that into InstanceMetadata.podCIDRs; this module
// asks for them in batches, records them in the ledger with what they clash with, and builds the
// NetworkUnavailable condition the allocator writes.
import type { CloudProvider, InstanceMetadata, InstanceResult, PodCIDRRequest, PodCIDRRequestOutcome } from '../../../providers/types.js';
import { CIDRParseError, cidrsOverlap, cidrSize, formatCIDR, parseCIDR, prefixMask, type CIDR, type PodCIDRAllocator } from '../../ipam/index.js';
import type { NodeObject } from '../../model/node.js';
import type { Registry } from 'prom-client';
import { realClock, type Clock } from '../../kube/clock.js';
import { cloudNodeMetrics } from '../metrics.js';
import type { Logger } from '../../log.js';
import { nodeRef, ProviderCalls } from '../provider-calls/calls.js';
import { refuseAnswer, type InstanceIdentity } from '../provider-ids/decide.js';
import { instanceKeyOf } from '../provider-ids/live-index.js';

export type CloudRangeResult =
  /** `notes`: how the ranges were chosen; `exclusive`: refuse (never write) a range that clashes. */
  | { kind: 'ranges'; podCIDRs: string[]; notes?: string[]; exclusive?: boolean }
  /** The cloud has no pod range for the node (yet): retried with backoff. `request`: what may be asked for. */
  | { kind: 'none'; reason: string; request?: PodCIDRRequest }
  | { kind: 'error'; error: Error };

/** Most nodes asked about in one provider call, as the cloud node controller batches them. */
export const CLOUD_RANGES_BATCH = 500;

export interface CloudRanges {
  /** The cloud's pod ranges for each node (keyed by node name), in one provider call. */
  rangesFor(nodes: readonly NodeObject[]): Promise<Map<string, CloudRangeResult>>;
  /** Asks the cloud for a node's ranges (not idempotent: see range-request.ts); absent when the provider cannot. */
  request?(node: NodeObject, request: PodCIDRRequest): Promise<PodCIDRRequestOutcome>;
}

/**
 * The provider's InstanceMetadata.podCIDRs, one provider call per batch of nodes. With a registry
 * the calls count in the cloud-call metrics the cloud node controller uses
 * (cloudprovider_requests_total, …_duration_seconds). `signal` (the leadership term) cancels calls in flight.
 */
export function cloudRangesFromProvider(provider: CloudProvider, options: { registry?: Registry; clock?: Clock; signal?: AbortSignal; logger?: Logger } = {}): CloudRanges {
  const metrics = options.registry ? cloudNodeMetrics(options.registry) : undefined;
  const clock = options.clock ?? realClock;
  // A batch that fails as a whole is split, a node that fails alone is asked alone: ProviderCalls.
  const calls = new ProviderCalls({ provider, ...(options.registry ? { registry: options.registry } : {}), clock, ...(options.logger ? { logger: options.logger } : {}) });
  const ask = provider.requestPodCIDRs?.bind(provider);
  // Ranges from an answer about another instance are never the node's (other Nodes' claims on an
  // instance are the cloud node controller's to judge; ranges clashing with theirs are caught below).
  const identity: InstanceIdentity = { keyOf: instanceKeyOf(provider), holderOf: () => undefined };
  return {
    ...(ask
      ? {
        async request(node: NodeObject, request: PodCIDRRequest): Promise<PodCIDRRequestOutcome> {
          const op = { provider: provider.name, operation: 'requestPodCIDRs' };
          const started = clock.now();
          try {
            const outcome = await ask(nodeRef(node), request, options.signal);
            metrics?.cloudCalls.inc({ ...op, result: outcome.kind === 'done' ? 'success' : 'error' });
            return outcome;
          } finally {
            metrics?.cloudCallDuration.observe(op, (clock.now() - started) / 1000);
          }
        },
      }
      : {}),
    async rangesFor(nodes) {
      const out = new Map<string, CloudRangeResult>();
      if (nodes.length === 0) return out;
      const answers = await calls.ask('instancesMetadata', nodes, options.signal);
      for (const node of nodes) out.set(node.metadata.name, rangeResult(provider.name, node, answers.get(node.metadata.name), identity));
      return out;
    },
  };
}

function rangeResult(provider: string, of: NodeObject, res: InstanceResult<InstanceMetadata> | undefined, identity: InstanceIdentity): CloudRangeResult {
  const node = of.metadata.name;
  if (!res) return { kind: 'error', error: new Error(`provider ${provider} gave no answer for node ${node}`) };
  if (res.kind === 'error') return { kind: 'error', error: res.error };
  if (res.kind === 'notFound') return { kind: 'none', reason: `the instance is not known to provider ${provider}${res.reason ? `: ${res.reason}` : ''}` };
  const refused = refuseAnswer(of, res.value.providerID, provider, identity);
  if (refused) return { kind: 'error', error: new Error(refused.message) };
  const podCIDRs = res.value.podCIDRs ?? [];
  const details = res.value.podCIDRDetails ?? {};
  if (podCIDRs.length === 0) {
    return {
      kind: 'none',
      reason: details.missing ?? `provider ${provider} reports no pod range (alias IP range) for the instance`,
      ...(details.request ? { request: details.request } : {}),
    };
  }
  return { kind: 'ranges', podCIDRs, ...(details.notes?.length ? { notes: details.notes } : {}), ...(details.exclusive ? { exclusive: true } : {}) };
}

/**
 * Every node's cloud ranges, pools or not, so two nodes given overlapping ranges are caught even
 * outside every pool. CIDRs nest or are disjoint: a range overlaps another iff one contains the
 * other, found by walking the range's own prefixes (the ones containing it) and by a binary search
 * over the ranges sorted by address (the ones it contains): O(bits + log n) per check.
 */
export class CloudRangeIndex {
  readonly #byKey = new Map<string, Set<string>>();
  readonly #byNode = new Map<string, CIDR[]>();
  /** Per family (0: IPv4, 1: IPv6): [range, node] sorted by address, then prefix. */
  readonly #sorted: [CIDR, string][][] = [[], []];

  get size(): number {
    return this.#byNode.size;
  }

  /** Replaces the node's ranges. */
  set(node: string, cidrs: readonly CIDR[]): void {
    this.remove(node);
    this.#byNode.set(node, [...cidrs]);
    for (const c of cidrs) {
      const k = key(c);
      (this.#byKey.get(k) ?? this.#byKey.set(k, new Set()).get(k)!).add(node);
      const list = this.#sorted[c.family === 4 ? 0 : 1]!;
      list.splice(lowerBound(list, c.addr, c.prefix), 0, [c, node]);
    }
  }

  remove(node: string): void {
    const cidrs = this.#byNode.get(node);
    if (!cidrs) return;
    this.#byNode.delete(node);
    for (const c of cidrs) {
      const k = key(c);
      const set = this.#byKey.get(k);
      set?.delete(node);
      if (set?.size === 0) this.#byKey.delete(k);
      const list = this.#sorted[c.family === 4 ? 0 : 1]!;
      for (let i = lowerBound(list, c.addr, c.prefix); i < list.length && list[i]![0].addr === c.addr && list[i]![0].prefix === c.prefix; i++) {
        if (list[i]![1] === node) {
          list.splice(i, 1);
          break;
        }
      }
    }
  }

  /** A node other than `self` whose range overlaps `c`, if any. */
  overlapping(c: CIDR, self: string): string | undefined {
    // Ranges containing c (or equal): c's own prefixes.
    for (let p = 0; p <= c.prefix; p++) {
      const k = `${c.family}|${formatCIDR(c.family, c.addr & prefixMask(c.bits, p), p)}`;
      for (const n of this.#byKey.get(k) ?? []) if (n !== self) return n;
    }
    // Ranges inside c: addresses in [c.addr, c.addr + size).
    const list = this.#sorted[c.family === 4 ? 0 : 1]!;
    const end = c.addr + cidrSize(c);
    for (let i = lowerBound(list, c.addr, 0); i < list.length && list[i]![0].addr < end; i++) {
      if (list[i]![1] !== self) return list[i]![1];
    }
    return undefined;
  }
}

function key(c: CIDR): string {
  return `${c.family}|${c.text}`;
}

function lowerBound(list: [CIDR, string][], addr: bigint, prefix: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const m = list[mid]![0];
    if (m.addr < addr || (m.addr === addr && m.prefix < prefix)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface CloudClash {
  kind: 'invalid' | 'two-per-family' | 'other-node' | 'pool' | 'service';
  message: string;
}

/**
 * Records a node's cloud ranges in the shared allocator and the range index, and lists what they
 * clash with. Ranges inside a pool are recorded there (the pool never hands them out again);
 * ranges outside every pool are normal in this mode unless they contain a pool. `exclusive`
 * (ranges the cloud gives one instance alone, as EC2's prefixes): ranges with any clash are not
 * recorded and none is returned, so the node is never written a block another node or a Service
 * range holds. `uid`: the node's metadata.uid, which the ledger's record carries. No I/O.
 */
export function recordCloudRanges(
  allocator: PodCIDRAllocator,
  index: CloudRangeIndex,
  node: string,
  podCIDRs: readonly string[],
  serviceRanges: readonly string[],
  { exclusive = false, uid }: { exclusive?: boolean; uid?: string } = {},
): { podCIDRs: string[]; clashes: CloudClash[] } {
  const r = recordOrReport(allocator, index, node, podCIDRs, serviceRanges, uid);
  if (!exclusive || r.clashes.length === 0) return r;
  allocator.releaseNode(node, uid);
  index.remove(node);
  return { podCIDRs: [], clashes: r.clashes.map((c) => ({ ...c, message: `${c.message}: refused, the node waits` })) };
}

function recordOrReport(
  allocator: PodCIDRAllocator,
  index: CloudRangeIndex,
  node: string,
  podCIDRs: readonly string[],
  serviceRanges: readonly string[],
  uid: string | undefined,
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
  for (const c of parsed) {
    const other = index.overlapping(c, node);
    if (other !== undefined) clashes.push({ kind: 'other-node', message: `the cloud's pod range ${c.text} for node ${node} overlaps the block of node ${other}` });
  }
  index.set(node, parsed);
  const r = allocator.occupyNode(node, texts, uid);
  if (r.ok) {
    for (const c of r.conflicts) clashes.push({ kind: 'service', message: `the cloud's pod range ${c.podCIDR} for node ${node} overlaps Service range ${c.exclusion}` });
    return { podCIDRs: texts, clashes };
  }
  if (r.reason === 'claimed-by-other-node') {
    // A block held through a pool by a node the index does not know (restored before this mode).
    if (!clashes.some((c) => c.kind === 'other-node')) {
      clashes.push({ kind: 'other-node', message: `the cloud's pod range ${r.podCIDR} for node ${node} overlaps the block of node ${r.otherNode ?? '?'}` });
    }
  } else if (r.reason === 'contains-pool') {
    for (const c of parsed) {
      for (const p of allocator.stats()) {
        for (const f of p.families) {
          if (cidrsOverlap(parseCIDR(f.clusterCIDR), c)) clashes.push({ kind: 'pool', message: `the cloud's pod range ${c.text} for node ${node} contains pool ${p.name} (${f.clusterCIDR}): nothing inside it is handed out while the node holds it` });
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
