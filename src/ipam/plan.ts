// planPodCIDRs: what the IPAM controller would do with these pools and nodes, computed offline.
// Existing pod CIDRs are restored first, in the controller's order (oldest node first, then by
// name) and read as the controller reads them (spec.podCIDR when spec.podCIDRs is empty), so a
// conflict has the same winner; then the other nodes are allocated in input order.
import { nodePodCIDRs } from '../model/node.js';
import { PodCIDRAllocator, CIDRNotAvailableError, type ExclusionConflict, type PoolStats } from './allocator.js';
import { parseClusterCIDR, type ClusterCIDR } from './clustercidr.js';
import { flagsPoolToClusterCIDR, parseFlagsPool, type FlagsInput } from './flags.js';
import { restoreOrder } from './restore-order.js';

/** The smallest spec.perNodeHostBits the ClusterCIDR CRD accepts. */
export const MIN_PER_NODE_HOST_BITS = 4;

export class PlanInputError extends Error {
  override name = 'PlanInputError';
}

/** The parts of a core v1 Node the planner reads. */
export interface PlanNode {
  metadata?: { name?: string; labels?: Record<string, string>; creationTimestamp?: string };
  spec?: { podCIDR?: string; podCIDRs?: string[] };
}

export interface PlanOptions {
  /** Service CIDRs: never handed out. */
  serviceCIDRs?: string[];
  /** The flags pool (--cluster-cidr and mask flags), added as a fallback pool. */
  flags?: FlagsInput;
}

export interface PlanDecision {
  pool: string;
  reason: string;
  existing: boolean;
}

export interface PlanResult {
  allocations: Record<string, string[]>;
  failures: Record<string, string>;
  decisions: Record<string, PlanDecision>;
  pools: PoolStats[];
  exclusionConflicts: ExclusionConflict[];
}

function isParsed(v: unknown): v is ClusterCIDR {
  return typeof v === 'object' && v !== null && Array.isArray((v as ClusterCIDR).families) && typeof (v as ClusterCIDR).name === 'string';
}

export function planPodCIDRs(clusterCIDRs: readonly unknown[], nodes: readonly PlanNode[], options: PlanOptions = {}): PlanResult {
  const alloc = new PodCIDRAllocator();
  const pools = clusterCIDRs.map((c) => (isParsed(c) ? c : parseClusterCIDR(c)));
  const seen = new Set<string>();
  for (const p of pools) {
    if (seen.has(p.name)) throw new PlanInputError(`ClusterCIDR "${p.name}": metadata.name: duplicate name`);
    if (p.perNodeHostBits < MIN_PER_NODE_HOST_BITS) {
      throw new PlanInputError(`ClusterCIDR "${p.name}": spec.perNodeHostBits: ${p.perNodeHostBits} is below ${MIN_PER_NODE_HOST_BITS}, the smallest the ClusterCIDR CRD accepts`);
    }
    seen.add(p.name);
    alloc.upsertPool(p);
  }
  if (options.flags) {
    const flagsPool = flagsPoolToClusterCIDR(parseFlagsPool(options.flags));
    // The controller mirrors the flags pool under this name; an existing object takes its place.
    if (!seen.has(flagsPool.name)) alloc.upsertPool(flagsPool);
  }
  const exclusionConflicts = options.serviceCIDRs && options.serviceCIDRs.length > 0 ? alloc.setExclusion('service-cluster-ip-range', options.serviceCIDRs) : [];

  const result: PlanResult = { allocations: {}, failures: {}, decisions: {}, pools: [], exclusionConflicts };
  const views = nodes.map((n, i) => nodeView(n, i));
  const names = new Set<string>();
  for (const v of views) {
    if (names.has(v.name)) throw new PlanInputError(`Node "${v.name}": metadata.name: duplicate name`);
    names.add(v.name);
  }
  for (const v of restoreOrder(views)) {
    if (v.podCIDRs.length === 0) continue;
    const r = alloc.occupyNode(v.name, v.podCIDRs);
    if (r.ok) {
      result.allocations[v.name] = alloc.nodeAllocation(v.name)!.podCIDRs;
      result.decisions[v.name] = { pool: r.pool, reason: 'existing spec.podCIDRs', existing: true };
      for (const c of r.conflicts) result.exclusionConflicts.push(c);
    } else {
      result.failures[v.name] = r.message;
    }
  }
  for (const v of views) {
    if (v.podCIDRs.length > 0) continue;
    try {
      const r = alloc.allocateNode({ name: v.name, labels: v.labels });
      result.allocations[v.name] = r.podCIDRs;
      result.decisions[v.name] = { pool: r.pool, reason: r.reason, existing: false };
    } catch (err) {
      if (!(err instanceof CIDRNotAvailableError)) throw err;
      result.failures[v.name] = err.message;
    }
  }
  result.pools = alloc.stats();
  return result;
}

interface NodeView {
  name: string;
  labels: Record<string, string>;
  podCIDRs: string[];
  metadata: { name: string; creationTimestamp?: string };
}

function nodeView(n: PlanNode, i: number): NodeView {
  const name = n?.metadata?.name;
  if (typeof name !== 'string' || name === '') throw new PlanInputError(`Node #${i + 1}: metadata.name: is required`);
  const labels = n.metadata?.labels ?? {};
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) throw new PlanInputError(`Node "${name}": metadata.labels: must be a map`);
  const created: unknown = n.metadata?.creationTimestamp;
  if (created !== undefined && created !== null && typeof created !== 'string') {
    throw new PlanInputError(`Node "${name}": metadata.creationTimestamp: must be a string, got ${JSON.stringify(created)}`);
  }
  const spec = n.spec ?? {};
  const list: unknown = spec.podCIDRs;
  if (list !== undefined && list !== null && (!Array.isArray(list) || list.some((c) => typeof c !== 'string'))) {
    throw new PlanInputError(`Node "${name}": spec.podCIDRs: must be a list of strings`);
  }
  const single: unknown = spec.podCIDR;
  if (single !== undefined && single !== null && typeof single !== 'string') throw new PlanInputError(`Node "${name}": spec.podCIDR: must be a string, got ${JSON.stringify(single)}`);
  // The controller's own reading: spec.podCIDRs, or spec.podCIDR when that list is empty.
  const podCIDRs = nodePodCIDRs({ spec: { podCIDRs: (list ?? undefined) as string[] | undefined, podCIDR: (single ?? undefined) as string | undefined } });
  return { name, labels, podCIDRs, metadata: { name, creationTimestamp: (created ?? undefined) as string | undefined } };
}
