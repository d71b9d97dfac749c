// The node IPAM loop with its real ClusterCIDR and ServiceCIDR sources against the API server
// double: one "replica" per call, each with its own client, node watcher and recorded events,
// stopped when the double closes (or earlier by the test).
import { Registry } from 'prom-client';
import type { CIDRAllocator, CIDRAllocatorOptions } from '../../../src/controllers/nodeipam/cidr-allocator.js';
import { CloudAllocator } from '../../../src/controllers/nodeipam/cloud-allocator.js';
import { RangeAllocator } from '../../../src/controllers/nodeipam/range-allocator.js';
import { ClusterCIDRSource } from '../../../src/controllers/nodeipam/clustercidr-source.js';
import { ServiceCIDRSource } from '../../../src/controllers/nodeipam/servicecidr-source.js';
import { FlagsPoolSource, type PoolSource } from '../../../src/controllers/nodeipam/pool-source.js';
import type { CloudRanges } from '../../../src/controllers/nodeipam/cloud-ranges.js';
import { parseFlagsPool, type FlagsInput } from '../../../src/ipam/flags.js';
import { NODES, CLUSTERCIDRS } from '../../../src/kube/types.js';
import type { ApiServerDouble } from '../../../src/double/server.js';
import { nodePodCIDRs, type NodeObject } from '../../../src/model/node.js';
import type { DoubleTarget } from '../../kit/double.js';
import { MemoryEvents } from '../memory-nodes.js';

export interface ObjectEvent {
  kind: string;
  name: string;
  type: string;
  reason: string;
  message: string;
}

export interface Replica<C extends CIDRAllocator = CIDRAllocator> {
  controller: C;
  clusterCIDRs?: ClusterCIDRSource;
  serviceCIDRs: ServiceCIDRSource;
  events: MemoryEvents;
  objectEvents: ObjectEvent[];
  registry: Registry;
  stop(): Promise<void>;
}

export interface ReplicaOptions {
  flags?: FlagsInput;
  serviceClusterIPRange?: string;
  /** CloudAllocator mode: ranges from this source, no ClusterCIDR source (`flags`: an in-memory pool). */
  cloud?: CloudRanges;
  workers?: number;
  /** Only follow (warm standby): the caller starts it. */
  follow?: boolean;
}

export async function startReplica(cluster: DoubleTarget, o: ReplicaOptions & { cloud: CloudRanges }): Promise<Replica<CloudAllocator>>;
export async function startReplica(cluster: DoubleTarget, o?: ReplicaOptions): Promise<Replica<RangeAllocator>>;
export async function startReplica(cluster: DoubleTarget, o: ReplicaOptions = {}): Promise<Replica<RangeAllocator | CloudAllocator>> {
  const { client, watcher, nodes, writer, close } = cluster.connect();
  const registry = new Registry();
  const events = new MemoryEvents();
  const objectEvents: ObjectEvent[] = [];
  const serviceCIDRs = new ServiceCIDRSource({ client, registry, watchStaleAfterMs: 5000, ...(o.serviceClusterIPRange ? { serviceClusterIPRange: o.serviceClusterIPRange } : {}) });
  const clusterCIDRs = o.cloud ? undefined : new ClusterCIDRSource({ client, watchStaleAfterMs: 5000, ...(o.flags ? { flags: parseFlagsPool(o.flags) } : {}) });
  const sources: PoolSource[] = clusterCIDRs ? [clusterCIDRs, serviceCIDRs] : [...(o.flags ? [new FlagsPoolSource(o.flags)] : []), serviceCIDRs];
  watcher.start();
  await watcher.synced;
  const common: CIDRAllocatorOptions = {
    nodes, writer, events, sources, registry, fenceMs: 0, relist: () => watcher.relist('test'), workers: o.workers ?? 2,
    objectEvents: (ref, type, reason, message) => objectEvents.push({ kind: ref.kind, name: ref.name, type, reason, message }),
  };
  const controller = o.cloud
    ? new CloudAllocator({
      ...common,
      ranges: o.cloud,
      serviceRanges: () => serviceCIDRs.serviceRanges().flatMap((r) => r.cidrs),
      patchStatus: (name: string, patch: unknown) => client.patch(NODES, name, patch, 'strategic', { subresource: 'status' }),
    })
    : new RangeAllocator({ ...common, leaveTaintedNodes: false });
  let stopped: Promise<void> | undefined;
  // Once: a test stops a replica to restart it; the double's close stops the rest.
  const stop = (): Promise<void> => (stopped ??= (async () => {
    await controller.stop();
    await close();
  })());
  await (o.follow ? controller.follow() : controller.start());
  cluster.defer(stop);
  return { controller, serviceCIDRs, events, objectEvents, registry, ...(clusterCIDRs ? { clusterCIDRs } : {}), stop };
}

/** The stored nodes themselves, not copies (read them, never mutate them): polled every 100 ms over 1,200 nodes, copies cost seconds. */
export function storedNodes(api: ApiServerDouble): NodeObject[] {
  return api.store.listRefs('nodes') as unknown as NodeObject[];
}

export function podCIDRsOf(api: ApiServerDouble, name: string): string[] {
  const n = api.store.peek('nodes', name) as unknown as NodeObject | undefined;
  return n ? nodePodCIDRs(n) : [];
}

export function createClusterCIDR(api: ApiServerDouble, name: string, spec: Record<string, unknown>): void {
  api.store.create('clustercidrs.networking.x-k8s.io', { apiVersion: `${CLUSTERCIDRS.group}/${CLUSTERCIDRS.version}`, kind: 'ClusterCIDR', metadata: { name }, spec });
}

export function clusterCIDR(api: ApiServerDouble, name: string): { metadata: { name: string; finalizers?: string[]; deletionTimestamp?: string } } | undefined {
  return api.store.peek('clustercidrs.networking.x-k8s.io', name) as never;
}

/** Every pod CIDR handed out exactly once. */
export function duplicates(api: ApiServerDouble): string[] {
  const seen = new Map<string, string>();
  const dups: string[] = [];
  for (const n of storedNodes(api)) {
    for (const c of nodePodCIDRs(n)) {
      const other = seen.get(c);
      if (other) dups.push(`${c}: ${other} and ${n.metadata.name}`);
      seen.set(c, n.metadata.name);
    }
  }
  return dups;
}

export function labelSelector(key: string, value: string): Record<string, unknown> {
  return { nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: [value] }] }] };
}
