// Two replicas of the whole process (leader election on, node-ipam alone, no cloud provider) in
// MultiCIDRRangeAllocator mode: a storm of joining nodes over several ClusterCIDR pools, the
// leader's lease renewals failing and its node writes slow mid-storm, the follower taking over.
// Zero pod CIDRs may be handed out twice.
import { describe, expect, it } from 'vitest';
import { resolveRunOptions } from '../../../src/manager/options.js';
import { useDouble, createNode } from '../../kit/double.js';
import { POD_CIDR_POOL_ANNOTATION } from '../../../src/model/node.js';
import { eventually } from '../../kit/wait.js';
import { createClusterCIDR, duplicates, labelSelector, storedNodes } from './harness.js';

const cluster = useDouble();

function start(name: string) {
  const options = resolveRunOptions({
    controllers: 'node-ipam', allocateNodeCidrs: true, cidrAllocatorType: 'MultiCIDRRangeAllocator', concurrentNodeSyncs: '4',
    clusterCidr: '10.200.0.0/16', nodeCidrMaskSizeIpv4: '24', securePort: '0',
    leaderElectLeaseDuration: '1500ms', leaderElectRenewDeadline: '1s', leaderElectRetryPeriod: '200ms',
  });
  return cluster.runManager(options, { identity: name, userAgent: `ccm-${name}`, watchStaleAfterMs: 5000 });
}

const withBlocks = (): number => storedNodes(cluster.api).filter((n) => (n.spec?.podCIDRs ?? []).length > 0).length;

describe('two replicas, leader failover during an allocation storm', () => {
  it('hands out no pod CIDR twice', { timeout: 30_000 }, async () => {
    for (let i = 0; i < 4; i++) createClusterCIDR(cluster.api, `pool-${i}`, { perNodeHostBits: 8, ipv4: `10.${10 + i}.0.0/22` });
    createClusterCIDR(cluster.api, 'labelled', { perNodeHostBits: 7, ipv4: '10.20.0.0/21', nodeSelector: labelSelector('tier', 'gold') });
    const a = start('a');
    await eventually(() => a.manager.isLeading(), { timeoutMs: 5000, what: 'a leads' });
    const b = start('b');
    // a's node writes take a while, so the failover lands in the middle of the storm.
    cluster.api.faults.inject({ userAgent: 'ccm-a', resource: 'nodes', verb: 'patch', latencyMs: 250 });
    const N = 60;
    for (let i = 0; i < N; i++) createNode(cluster.api, { name: `n${String(i).padStart(2, '0')}`, tainted: false, labels: i % 5 === 0 ? { tier: 'gold' } : {} });
    await eventually(() => withBlocks() >= 10, { timeoutMs: 10_000, what: 'the storm is under way' });
    // Mid-storm: a's renewals fail; it must stop writing and b take over.
    cluster.api.faults.inject({ userAgent: 'ccm-a', resource: 'leases.coordination.k8s.io', status: 500 });
    expect(await a.done).toBe('lost');
    const byA = cluster.api.count({ userAgent: 'ccm-a', verb: 'patch', resource: 'nodes' });
    await eventually(() => b.manager.isLeading(), { timeoutMs: 5000, what: 'b takes over' });
    await eventually(() => withBlocks() === N, { timeoutMs: 15_000, what: 'every node has blocks' });
    expect(duplicates(cluster.api)).toEqual([]);
    expect(cluster.api.count({ userAgent: 'ccm-a', verb: 'patch', resource: 'nodes' })).toBe(byA);
    expect(byA, 'a wrote part of the storm').toBeLessThan(N);
    expect(cluster.api.count({ userAgent: 'ccm-b', verb: 'patch', resource: 'nodes' }), 'b wrote the rest').toBeGreaterThan(0);
    // Every node got one allocation write, with its pool in the same write.
    for (const n of storedNodes(cluster.api)) expect(n.metadata.annotations?.[POD_CIDR_POOL_ANNOTATION], n.metadata.name).toMatch(/^(pool-\d|labelled|created-from-flags-[0-9a-f]{10})$/);
    const gold = storedNodes(cluster.api).filter((n) => n.metadata.labels?.tier === 'gold');
    expect(gold.every((n) => n.spec!.podCIDRs![0]!.endsWith('/25'))).toBe(true);
  });
});
