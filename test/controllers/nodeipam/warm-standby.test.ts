// Warm standby (issue 26): two replicas of the whole process (leader election on, node-ipam alone)
// in MultiCIDRRangeAllocator mode. The follower keeps node IPAM's pools and ledger current while
// writing nothing; when the leader vanishes it takes over from them with no second node LIST, no
// takeover delay after an expired lease, and no block given twice — also when its watches were
// cut just before and it missed the last blocks and a new Service range.
import { describe, expect, it } from 'vitest';
import { resolveRunOptions } from '../../../src/manager/options.js';
import { cidrsOverlap, parseCIDR } from '../../../src/ipam/cidr.js';
import { nodePodCIDRs } from '../../../src/model/node.js';
import { useDouble, createNode } from '../../kit/double.js';
import { captureLog } from '../../kit/log.js';
import { eventually } from '../../kit/wait.js';
import { CLUSTER_CIDR_FINALIZER } from '../../../src/controllers/nodeipam/clustercidr-source.js';
import { clusterCIDR, createClusterCIDR, duplicates, podCIDRsOf, startReplica, storedNodes } from './harness.js';

const cluster = useDouble();

function start(name: string, flags: Record<string, string> = {}) {
  const log = captureLog();
  const options = resolveRunOptions({
    controllers: 'node-ipam', allocateNodeCidrs: true, cidrAllocatorType: 'MultiCIDRRangeAllocator', concurrentNodeSyncs: '2',
    securePort: '0', leaderElectLeaseDuration: '3s', leaderElectRenewDeadline: '2s', leaderElectRetryPeriod: '300ms', ...flags,
  });
  // catchUpMinNodes 0: the takeover catches the cache up to a quorum read, as from 5,000 nodes.
  const r = cluster.runManager(options, { identity: name, userAgent: `ccm-${name}`, watchStaleAfterMs: 5000, catchUpMinNodes: 0, logger: log.logger });
  return { ...r, log };
}

const withBlocks = (): number => storedNodes(cluster.api).filter((n) => nodePodCIDRs(n).length > 0).length;
/** Requests of `who` that change something, leases aside. */
const writesBy = (who: string): number => (['create', 'update', 'patch', 'delete'] as const)
  .reduce((sum, verb) => sum + cluster.api.count({ userAgent: `ccm-${who}`, verb }) - cluster.api.count({ userAgent: `ccm-${who}`, verb, resource: 'leases.coordination.k8s.io' }), 0);
/** PodCIDRConflict events about twin whose last writer was `who`'s identity (the event's reporting instance). */
const conflictEventsBy = (who: string): number => (cluster.api.store.list('events') as unknown as { reason?: string; involvedObject?: { name?: string }; reportingInstance?: string; source?: { host?: string } }[])
  .filter((e) => e.reason === 'PodCIDRConflict' && e.involvedObject?.name === 'twin' && (e.reportingInstance ?? e.source?.host) === who).length;
const listsBy = (who: string, resource?: string): number => cluster.api.count({ userAgent: `ccm-${who}`, verb: 'list', ...(resource ? { resource } : {}) });

function join(names: string[]): void {
  for (const name of names) createNode(cluster.api, { name, tainted: false });
}

/** Existing nodes holding blocks of pool-0 (10.10.0.0/20 in /24s), and a leader with a warm follower. */
async function twoReplicas(flags: Record<string, string> = {}, { conflict = false } = {}) {
  createClusterCIDR(cluster.api, 'pool-0', { perNodeHostBits: 8, ipv4: '10.10.0.0/20' });
  for (let i = 0; i < 4; i++) createNode(cluster.api, { name: `old-${i}`, tainted: false, podCIDRs: [`10.10.${i}.0/24`] });
  // A younger node claiming old-0's block (a bad migration): the leader reports it, a follower only logs it.
  if (conflict) createNode(cluster.api, { name: 'twin', tainted: false, podCIDRs: ['10.10.0.0/24'] });
  const a = start('a', flags);
  await eventually(() => a.manager.isLeading(), { timeoutMs: 5000, what: 'a leads' });
  const b = start('b', flags);
  return { a, b };
}

describe('warm standby', () => {
  it('the follower keeps the ledger current writing nothing, and takes over with no second LIST and no block twice', { timeout: 30_000 }, async () => {
    const { a, b } = await twoReplicas({}, { conflict: true });
    await eventually(() => b.log.find('warm standby: allocator loaded…').length === 1, { timeoutMs: 5000, what: 'b warm' });
    expect(b.log.find('warm standby: allocator loaded…')[0]?.restored).toBe(5);
    join(['new-0', 'new-1', 'new-2']);
    await eventually(() => withBlocks() === 8, { timeoutMs: 5000, what: 'a allocates' });
    // Idle follower: its watches only, no periodic LIST, nothing written.
    const listsBefore = listsBy('b');
    await new Promise((r) => setTimeout(r, 1500));
    expect(listsBy('b')).toBe(listsBefore);
    expect(writesBy('b')).toBe(0);
    expect(b.manager.isLeading()).toBe(false);

    const nodeListsBefore = listsBy('b', 'nodes');
    // a vanishes (every request fails) while more nodes join.
    cluster.api.faults.inject({ userAgent: 'ccm-a', status: 503 });
    join(['late-0', 'late-1', 'late-2']);
    expect(await a.done).toBe('lost');
    await eventually(() => withBlocks() === 11, { timeoutMs: 10_000, what: 'b allocates the late nodes' });
    expect(duplicates(cluster.api)).toEqual(['10.10.0.0/24: old-0 and twin']);
    // The conflict b found while following is reported once it leads.
    await eventually(() => conflictEventsBy('b') > 0, { timeoutMs: 5000, what: 'b reports the conflict' });
    // The lease expired under a: no takeover delay; the warm ledger, with no cold restore.
    expect(b.log.find('acquired the lease').map((l) => [l.from, l.takeoverDelayMs])).toEqual([['expired', 0]]);
    expect(b.log.find('allocator loaded from existing nodes').map((l) => l.warmStandby)).toEqual([true]);
    // One LIST of nodes at the takeover: the quorum read of one node (limit=1), not the nodes again.
    expect(listsBy('b', 'nodes') - nodeListsBefore).toBe(1);
    expect(b.log.find('node IPAM: the node cache is current to a quorum read…')).toHaveLength(1);
  });

  it('a follower whose watches were cut misses the last blocks and a new Service range, and still gives neither out', { timeout: 40_000 }, async () => {
    const { a, b } = await twoReplicas();
    await eventually(() => b.log.find('warm standby: allocator loaded…').length === 1, { timeoutMs: 5000, what: 'b warm' });
    // b's watches end and cannot come back: from here on b sees nothing until it lists.
    cluster.api.faults.inject({ userAgent: 'ccm-b', verb: 'watch', status: 503 });
    cluster.api.closeWatches();
    cluster.api.store.create('servicecidrs.networking.k8s.io', { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'late' }, spec: { cidrs: ['10.10.8.0/22'] } });
    join(['new-0', 'new-1', 'new-2']);
    await eventually(() => withBlocks() === 7, { timeoutMs: 5000, what: 'a allocates what b does not see' });
    cluster.api.faults.inject({ userAgent: 'ccm-a', status: 503 });
    join(['late-0', 'late-1', 'late-2', 'late-3']);
    expect(await a.done).toBe('lost');
    await eventually(() => withBlocks() === 11, { timeoutMs: 20_000, what: 'b allocates the late nodes' });
    expect(duplicates(cluster.api)).toEqual([]);
    const service = parseCIDR('10.10.8.0/22');
    const inside = storedNodes(cluster.api).flatMap((n) => nodePodCIDRs(n).filter((c) => cidrsOverlap(parseCIDR(c), service)).map((c) => `${n.metadata.name} ${c}`));
    expect(inside).toEqual([]);
    // The watch never reached the quorum read: the nodes were listed again after all.
    expect(b.log.find('allocator loaded from existing nodes').map((l) => l.warmStandby)).toEqual([true]);
    expect(b.log.find('node IPAM: the node cache is current to a quorum read…')).toHaveLength(0);
  });

  it('--leader-elect-warm-standby=false: the follower keeps the node cache only, and a takeover loads node IPAM cold', { timeout: 30_000 }, async () => {
    const { a, b } = await twoReplicas({ leaderElectWarmStandby: 'false' });
    join(['new-0']);
    await eventually(() => withBlocks() === 5, { timeoutMs: 5000, what: 'a allocates' });
    await eventually(() => b.manager.notReadyReason() === undefined, { timeoutMs: 5000, what: 'b synced' });
    // No pool source runs on the follower: it lists nodes (its cache) and nothing else.
    expect(listsBy('b', 'clustercidrs')).toBe(0);
    cluster.api.faults.inject({ userAgent: 'ccm-a', status: 503 });
    join(['late-0']);
    expect(await a.done).toBe('lost');
    await eventually(() => withBlocks() === 6, { timeoutMs: 10_000, what: 'b allocates' });
    expect(duplicates(cluster.api)).toEqual([]);
    expect(b.log.find('warm standby: allocator loaded…')).toHaveLength(0);
    expect(b.log.find('allocator loaded from existing nodes').map((l) => [l.warmStandby, l.restored])).toEqual([[false, 5]]);
  });
});

describe('a following allocator (in process)', () => {
  it('loads ClusterCIDR pools and the flags pool writing nothing, records blocks, hands none out; start() then does the writes', async () => {
    createClusterCIDR(cluster.api, 'pool', { perNodeHostBits: 8, ipv4: '10.30.0.0/20' });
    createNode(cluster.api, { name: 'n1', tainted: false, podCIDRs: ['10.30.0.0/24'] });
    const r = await startReplica(cluster, { follow: true, flags: { clusterCIDR: '10.250.0.0/16', nodeCIDRMaskSizeIPv4: 24 } });
    expect(r.controller.ledger.nodeAllocation('n1')?.podCIDRs).toEqual(['10.30.0.0/24']);
    expect(r.controller.ready()).toBe(false);
    join(['n2']);
    await new Promise((res) => setTimeout(res, 500));
    expect(podCIDRsOf(cluster.api, 'n2')).toEqual([]);
    expect(clusterCIDR(cluster.api, 'pool')?.metadata.finalizers ?? []).toEqual([]);
    const mirrors = () => (cluster.api.store.list('clustercidrs.networking.x-k8s.io') as unknown as { metadata: { name: string } }[]).filter((o) => o.metadata.name.startsWith('created-from-flags-'));
    expect(mirrors()).toEqual([]);
    // n2 arrives while following, then n1 goes: the ledger follows both.
    cluster.api.store.delete('nodes', 'n1');
    await eventually(() => r.controller.ledger.nodeAllocation('n1') === undefined, { timeoutMs: 5000, what: 'n1 released' });
    await r.controller.start();
    expect(r.controller.ready()).toBe(true);
    await eventually(() => podCIDRsOf(cluster.api, 'n2').length === 1, { timeoutMs: 5000, what: 'n2 gets a block' });
    await eventually(() => (clusterCIDR(cluster.api, 'pool')?.metadata.finalizers ?? []).includes(CLUSTER_CIDR_FINALIZER), { timeoutMs: 5000, what: 'finalizer' });
    expect(mirrors()).toHaveLength(1);
    expect(r.objectEvents.filter((e) => e.reason === 'FlagsPoolMirrored')).toHaveLength(1);
  });
});
