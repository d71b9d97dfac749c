// Issue 18's three migrations, each through a real `run` process (the built binary) against the
// API server double: a block a node holds is never handed to another node, whatever today's
// pools are, and the Warning event says how the block relates to the pools.
import { describe, expect, it } from 'vitest';
import { cidrsOverlap, parseCIDR } from '../../../src/ipam/cidr.js';
import { nodePodCIDRs } from '../../../src/model/node.js';
import { createNode, useDouble } from '../../kit/double.js';
import type { CliProcess } from '../../kit/processes.js';
import { eventually } from '../../kit/wait.js';
import { createClusterCIDR, podCIDRsOf, storedNodes } from './harness.js';

const cluster = useDouble();

/** `run` with node IPAM only, once it has restored its allocator from the nodes. */
async function startRun(...flags: string[]): Promise<CliProcess> {
  const run = cluster.start(['run', `--kubeconfig=${cluster.kubeconfigPath}`, '--controllers=node-ipam', '--allocate-node-cidrs', '--secure-port=0', '--leader-elect=false', ...flags]);
  await run.waitFor((l) => l.msg === 'allocator loaded from existing nodes', 15_000, 'the run process restored the allocator');
  return run;
}

function eventsFor(name: string): { reason: string; message: string; type: string }[] {
  return (cluster.api.store.list('events', { namespace: 'default' }) as unknown as { involvedObject: { name: string }; reason: string; message: string; type: string }[])
    .filter((e) => e.involvedObject.name === name);
}

/** No two live nodes hold overlapping pod CIDRs. */
function overlaps(): string[] {
  const held = storedNodes(cluster.api).flatMap((n) => nodePodCIDRs(n).map((c) => ({ node: n.metadata.name, c: parseCIDR(c) })));
  const out: string[] = [];
  for (let i = 0; i < held.length; i++) {
    for (let j = i + 1; j < held.length; j++) if (cidrsOverlap(held[i].c, held[j].c)) out.push(`${held[i].node} ${held[i].c.text} ~ ${held[j].node} ${held[j].c.text}`);
  }
  return out;
}

describe('a pod CIDR any node holds is never handed out again (real run process)', () => {
  it('1. a held block that contains the narrowed pool: the joining node waits, the event says "contains pool"', async () => {
    createNode(cluster.api, { name: 'legacy', tainted: false, podCIDRs: ['10.0.0.0/16'] });
    await startRun('--cluster-cidr=10.0.0.0/20');
    createNode(cluster.api, { name: 'fresh', tainted: false });
    await eventually(() => eventsFor('fresh').some((e) => e.reason === 'CIDRNotAvailable'), { timeoutMs: 10_000, what: 'CIDRNotAvailable for fresh' });
    expect(podCIDRsOf(cluster.api, 'fresh')).toEqual([]);
    const warning = eventsFor('legacy').find((e) => e.reason === 'PodCIDRConflict');
    expect(warning?.type).toBe('Warning');
    expect(warning?.message).toMatch(/pod CIDR 10\.0\.0\.0\/16 contains pool "created-from-flags-[0-9a-f]+" \(10\.0\.0\.0\/20\)/);
    expect(warning?.message).not.toMatch(/outside every pool/);
    expect(overlaps()).toEqual([]);
  });

  it('2. a held block outside every pool, then a ClusterCIDR is created over it: the new node gets another block', async () => {
    createNode(cluster.api, { name: 'old', tainted: false, podCIDRs: ['10.1.0.0/24'] });
    const run = await startRun('--cluster-cidr=10.0.0.0/16', '--cidr-allocator-type=MultiCIDRRangeAllocator');
    await eventually(() => eventsFor('old').some((e) => e.reason === 'PodCIDRConflict'), { timeoutMs: 10_000, what: 'old reported outside every pool' });
    expect(eventsFor('old').find((e) => e.reason === 'PodCIDRConflict')?.message).toMatch(/10\.1\.0\.0\/24 lies outside every pool/);
    // Fewer blocks than the flags pool, so the new pool is the first choice for every node.
    createClusterCIDR(cluster.api, 'added', { perNodeHostBits: 8, ipv4: '10.1.0.0/22' });
    await run.waitFor((l) => l.clusterCIDR === 'added' && l.msg === 'ClusterCIDR added', 10_000, 'the pool is loaded');
    createNode(cluster.api, { name: 'new', tainted: false });
    await eventually(() => podCIDRsOf(cluster.api, 'new').length > 0, { timeoutMs: 10_000, what: 'new gets a block' });
    expect(podCIDRsOf(cluster.api, 'new')).toEqual(['10.1.1.0/24']);
    expect(overlaps()).toEqual([]);
  });

  it('3. two holders of one block, the older is deleted: the block stays held by the younger', async () => {
    createNode(cluster.api, { name: 'x-old', tainted: false, podCIDRs: ['10.0.0.0/24'] });
    createNode(cluster.api, { name: 'y-new', tainted: false, podCIDRs: ['10.0.0.0/24'] });
    const run = await startRun('--cluster-cidr=10.0.0.0/16');
    await eventually(() => eventsFor('y-new').some((e) => e.reason === 'PodCIDRConflict'), { timeoutMs: 10_000, what: 'y-new gets the conflict' });
    expect(eventsFor('x-old').filter((e) => e.reason === 'PodCIDRConflict')).toEqual([]);
    cluster.api.store.delete('nodes', 'x-old');
    await run.waitFor((l) => l.node === 'x-old' && l.msg === 'pod CIDRs released', 10_000, 'x-old released');
    createNode(cluster.api, { name: 'z', tainted: false });
    await eventually(() => podCIDRsOf(cluster.api, 'z').length > 0, { timeoutMs: 10_000, what: 'z gets a block' });
    expect(podCIDRsOf(cluster.api, 'z')).toEqual(['10.0.1.0/24']);
    expect(overlaps()).toEqual([]);
  });
});
