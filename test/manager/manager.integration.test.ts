// The whole process (leader election, both loops, events) against the API server double.
import { describe, expect, it } from 'vitest';
import { FakeProvider } from '../../providers/fake/fake.js';
import { resolveRunOptions, type RawRunFlags } from '../../src/manager/options.js';
import { useDouble, createNode } from '../kit/double.js';
import { hasUninitializedTaint, nodePodCIDRs, type NodeObject } from '../../src/model/node.js';
import { ip } from '../kit/nodes.js';
import { eventually } from '../kit/wait.js';

const cluster = useDouble();

const FAST_LEASE: RawRunFlags = {
  leaderElectLeaseDuration: '1500ms', leaderElectRenewDeadline: '1s', leaderElectRetryPeriod: '200ms',
};

function cloudFor(n: number): FakeProvider {
  const cloud = new FakeProvider();
  for (let i = 0; i < n; i++) cloud.setInstance(`n${i}`, { addresses: [ip(`10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`)], zone: 'z1' });
  return cloud;
}

function start(name: string, cloud: FakeProvider, flags: RawRunFlags = {}, catchUpMinNodes?: number) {
  const options = resolveRunOptions({
    cloudProvider: 'fake', allocateNodeCidrs: true, clusterCidr: '10.244.0.0/16', serviceClusterIpRange: '10.96.0.0/12', ...FAST_LEASE, ...flags,
  });
  return cluster.runManager(options, { provider: cloud, identity: name, userAgent: `ccm-${name}`, watchStaleAfterMs: 5000, ...(catchUpMinNodes !== undefined ? { catchUpMinNodes } : {}) });
}

function nodes(): NodeObject[] {
  return cluster.api.store.list('nodes') as unknown as NodeObject[];
}

function allInitialised(n: number): boolean {
  const list = nodes();
  return list.length === n && list.every((x) => !hasUninitializedTaint(x) && nodePodCIDRs(x).length > 0);
}

function expectUniquePodCIDRs(): void {
  const all = nodes().flatMap((n) => nodePodCIDRs(n));
  expect(new Set(all).size).toBe(all.length);
}

describe('ControllerManager', () => {
  it('initialises nodes with 2 writes + 1 event each, pod CIDRs in the same write, none inside the Service range', async () => {
    const cloud = cloudFor(10);
    // The Service range lies inside the cluster CIDR: its 16 /24 blocks are never handed out.
    start('a', cloud, { serviceClusterIpRange: '10.244.0.0/20' });
    for (let i = 0; i < 10; i++) createNode(cluster.api, { name: `n${i}` });
    await eventually(() => allInitialised(10), { timeoutMs: 10_000, what: 'all nodes initialised' });
    expectUniquePodCIDRs();
    const patches = cluster.api.count({ verb: 'patch', resource: 'nodes', userAgent: 'ccm-a' });
    expect(patches).toBe(20);
    await eventually(() => cluster.api.count({ verb: 'create', resource: 'events' }) >= 10);
    expect(cluster.api.count({ verb: 'create', resource: 'events' })).toBe(10);
    expect(cluster.api.count({ verb: 'update', resource: 'nodes' })).toBe(0);
    for (const n of nodes()) {
      const m = /^10\.244\.(\d+)\.0\/24$/.exec(n.spec?.podCIDRs?.[0] ?? '');
      expect(m, n.spec?.podCIDRs?.[0]).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThanOrEqual(16);
    }
  });

  it('a takeover over a large cache lists no nodes again: the watch is caught up to a quorum read, and no block is given twice', async () => {
    const cloud = cloudFor(12);
    const a = start('a', cloud, {}, 0);
    await eventually(() => a.manager.isLeading(), { timeoutMs: 5000, what: 'a leads' });
    const b = start('b', cloud, {}, 0);
    for (let i = 0; i < 6; i++) createNode(cluster.api, { name: `n${i}` });
    await eventually(() => allInitialised(6) && b.manager.watcher.size() === 6, { timeoutMs: 10_000, what: 'first half, seen by b' });
    const listsBefore = cluster.api.count({ verb: 'list', resource: 'nodes', userAgent: 'ccm-b' });
    a.abort.abort();
    expect(await a.done).toBe('cancelled');
    await eventually(() => b.manager.isLeading() && (b.manager.controllers().ipam?.ready() ?? false), { timeoutMs: 10_000, what: 'b takes over and node IPAM is ready' });
    // One LIST of one node (the quorum read), no full LIST.
    expect(cluster.api.count({ verb: 'list', resource: 'nodes', userAgent: 'ccm-b' }) - listsBefore).toBe(1);
    for (let i = 6; i < 12; i++) createNode(cluster.api, { name: `n${i}` });
    await eventually(() => allInitialised(12), { timeoutMs: 10_000, what: 'second half' });
    expectUniquePodCIDRs();
  });

  it('two processes: exactly one writes; when it stops, the other takes over without duplicate pod CIDRs', async () => {
    const cloud = cloudFor(12);
    const a = start('a', cloud);
    await eventually(() => a.manager.isLeading(), { timeoutMs: 5000, what: 'a leads' });
    const b = start('b', cloud);
    for (let i = 0; i < 6; i++) createNode(cluster.api, { name: `n${i}` });
    await eventually(() => allInitialised(6), { timeoutMs: 10_000, what: 'first half' });
    expect(cluster.api.count({ verb: 'patch', resource: 'nodes', userAgent: 'ccm-b' })).toBe(0);
    expect(b.manager.isLeading()).toBe(false);
    a.abort.abort();
    expect(await a.done).toBe('cancelled');
    await eventually(() => b.manager.isLeading(), { timeoutMs: 5000, what: 'b takes over' });
    for (let i = 6; i < 12; i++) createNode(cluster.api, { name: `n${i}` });
    await eventually(() => allInitialised(12), { timeoutMs: 10_000, what: 'second half' });
    expectUniquePodCIDRs();
    const lease = cluster.api.store.get('leases.coordination.k8s.io', 'node-address-ccm', 'kube-system') as { spec: Record<string, unknown> };
    expect(lease.spec.holderIdentity).toBe('b');
    expect(lease.spec.leaseTransitions).toBeGreaterThanOrEqual(1);
    expect(String(lease.spec.renewTime)).toMatch(/\.\d{6}Z$/);
  });

  it('a leader that cannot renew stops writing and exits lost; a write in flight at failover causes no duplicate', async () => {
    const cloud = cloudFor(16);
    const a = start('a', cloud);
    await eventually(() => a.manager.isLeading(), { timeoutMs: 5000, what: 'a leads' });
    // A's node writes are slow (still inside its write timeout), and its renewals start failing.
    cluster.api.faults.inject({ userAgent: 'ccm-a', resource: 'nodes', verb: 'patch', latencyMs: 300 });
    cluster.api.faults.inject({ userAgent: 'ccm-a', resource: 'leases.coordination.k8s.io', status: 500 });
    for (let i = 0; i < 16; i++) createNode(cluster.api, { name: `n${i}` });
    start('b', cloud);
    expect(await a.done).toBe('lost');
    // The term's end aborts a's writes on the wire at once, so run() returns before the server (in
    // this process) has read them all: let those arrive; after that, nothing more may.
    await new Promise((r) => setTimeout(r, 200));
    const writesAfterLoss = cluster.api.count({ userAgent: 'ccm-a', verb: 'patch', resource: 'nodes' });
    await eventually(() => allInitialised(16), { timeoutMs: 15_000, what: 'b finishes' });
    expectUniquePodCIDRs();
    expect(cluster.api.count({ userAgent: 'ccm-a', verb: 'patch', resource: 'nodes' })).toBe(writesAfterLoss);
  });

  it('restart midway: the new process restores allocations from the nodes and never hands a block out twice', async () => {
    const cloud = cloudFor(20);
    // The first process's node writes are slow, then start failing: it stops with blocks claimed
    // in memory that never reached the API, and nodes still tainted.
    cluster.api.faults.inject({ userAgent: 'ccm-first', resource: 'nodes', verb: 'patch', latencyMs: 50 });
    const first = start('first', cloud, { leaderElect: 'false', concurrentNodeSyncs: '1' });
    for (let i = 0; i < 20; i++) createNode(cluster.api, { name: `n${i}` });
    await eventually(() => nodes().filter((n) => nodePodCIDRs(n).length > 0).length >= 3, { timeoutMs: 10_000, what: 'some nodes done' });
    cluster.api.faults.inject({ userAgent: 'ccm-first', resource: 'nodes', verb: 'patch', status: 500 });
    first.abort.abort();
    await first.done;
    const doneByFirst = nodes().filter((n) => nodePodCIDRs(n).length > 0).length;
    expect(doneByFirst).toBeGreaterThanOrEqual(3);
    expect(doneByFirst).toBeLessThan(20);
    start('second', cloud, { leaderElect: 'false' });
    await eventually(() => allInitialised(20), { timeoutMs: 15_000, what: 'all nodes after restart' });
    expectUniquePodCIDRs();
  });

  it('initialised nodes without pod CIDRs get them from the IPAM loop; tainted ones are left to cloud-node', async () => {
    const cloud = cloudFor(3);
    createNode(cluster.api, { name: 'n0', tainted: false, addresses: [ip('10.1.0.1')] });
    createNode(cluster.api, { name: 'n1', tainted: false, addresses: [ip('10.1.0.2')], podCIDRs: ['10.244.0.0/24'] });
    createNode(cluster.api, { name: 'n2' });
    start('a', cloud);
    await eventually(() => allInitialised(3), { timeoutMs: 10_000, what: 'all three' });
    expectUniquePodCIDRs();
    expect(nodes().find((n) => n.metadata.name === 'n1')!.spec?.podCIDRs).toEqual(['10.244.0.0/24']);
  });

  it('each IP range audit lets the heap budget settle before it reads the caches (beforeLargeAllocation) and after (afterLargeAllocation)', async () => {
    const cloud = cloudFor(2);
    createNode(cluster.api, { name: 'n0', tainted: false, addresses: [ip('10.1.0.1')], podCIDRs: ['10.244.0.0/24'] });
    const options = resolveRunOptions({ cloudProvider: 'fake', allocateNodeCidrs: true, clusterCidr: '10.244.0.0/16', leaderElect: 'false' });
    const order: string[] = [];
    const r = cluster.runManager(options, { provider: cloud, auditIntervalMs: 100 });
    r.manager.beforeLargeAllocation = () => order.push('before');
    r.manager.afterLargeAllocation = () => order.push('after');
    await eventually(() => order.length >= 4, { timeoutMs: 10_000, what: 'two audits' });
    expect(order.slice(0, 4)).toEqual(['before', 'after', 'before', 'after']);
  });

  it('controllers that cannot start (the ClusterCIDR CRD not served): the lease is released and run fails with the reason', async () => {
    const { DEFAULT_RESOURCES } = await import('../../src/double/resources.js');
    await cluster.replaceApi({ resources: DEFAULT_RESOURCES.filter((r) => r.plural !== 'clustercidrs') });
    const a = start('a', cloudFor(1), { cidrAllocatorType: 'MultiCIDRRangeAllocator' });
    await expect(a.done).rejects.toThrow(/clustercidrs\.networking\.x-k8s\.io\/v1 is not served/);
    const lease = cluster.api.store.get('leases.coordination.k8s.io', 'node-address-ccm', 'kube-system') as { spec: { holderIdentity?: string } };
    expect(lease.spec.holderIdentity ?? '').toBe('');
  });

  it('without leader election, controllers that cannot start make run fail with the reason', async () => {
    const { DEFAULT_RESOURCES } = await import('../../src/double/resources.js');
    await cluster.replaceApi({ resources: DEFAULT_RESOURCES.filter((r) => r.plural !== 'clustercidrs') });
    const a = start('a', cloudFor(1), { cidrAllocatorType: 'MultiCIDRRangeAllocator', leaderElect: 'false' });
    await expect(a.done).rejects.toThrow(/is not served/);
  });

  it('a lost leader returns from run only after its controllers stopped (their in-flight syncs finished)', async () => {
    // A cloud call that ignores cancellation: the sync holding it ends only when it answers.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let calls = 0;
    class SlowCloud extends FakeProvider {
      override async instancesMetadata(...args: Parameters<FakeProvider['instancesMetadata']>) {
        calls++;
        await gate;
        return super.instancesMetadata(args[0]);
      }
    }
    const cloud = new SlowCloud();
    cloud.setInstance('n0', { addresses: [ip('10.1.0.1')] });
    const a = start('a', cloud);
    await eventually(() => a.manager.isLeading() && a.manager.controllers().cloudNode !== undefined, { timeoutMs: 5000, what: 'a leads' });
    const cloudNode = a.manager.controllers().cloudNode!;
    createNode(cluster.api, { name: 'n0' });
    await eventually(() => calls > 0, { timeoutMs: 5000, what: 'a provider call in flight' });
    cluster.api.faults.inject({ userAgent: 'ccm-a', resource: 'leases.coordination.k8s.io', status: 500 });
    // The cloud answers a little after leadership is lost.
    void eventually(() => !a.manager.isLeading(), { timeoutMs: 10_000, what: 'leadership lost' }).then(() => setTimeout(open, 300));
    expect(await a.done).toBe('lost');
    expect(cloudNode.aliveWorkers()).toBe(0);
  });
});
