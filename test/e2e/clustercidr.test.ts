// End-to-end ClusterCIDR flows of the node IPAM controller's MultiCIDRRangeAllocator mode:
// adding a pool hands its blocks to the nodes its selector matches; deleting a pool in use keeps
// it (deletionTimestamp set) until its last node goes, then it disappears.
//
// These tests need `run --cidr-allocator-type=MultiCIDRRangeAllocator` (issue #6). They are gated
// at runtime on the built binary's `run --help` listing that allocator type: until it does, they
// are reported as skipped with the reason in their title.
import { describe, expect, it } from 'vitest';
import { CLUSTERCIDRS, NODES } from '../../src/kube/types.js';
import type { NodeAddress } from '../../src/model/node-address.js';
import { runCapabilities } from '../kit/cli.js';
import { DOUBLE_CLUSTER_CIDRS, type StaticNodeEntry } from '../kit/double.js';
import { consistently, eventually } from '../kit/wait.js';
import { E2E_POLL_MS } from './support/assert.js';
import { cidrWithin, E2ECluster, podCIDRsOf } from './support/cluster.js';
import { runPrefix, targetKind, useE2ETarget } from './support/target.js';

const TARGET = targetKind();
const caps = await runCapabilities();
const MULTI = caps.multiCIDRRangeAllocator;
const GATE = MULTI
  ? ''
  : ' [not run: `node-address-ccm run --help` does not list --cidr-allocator-type MultiCIDRRangeAllocator yet (ClusterCIDR pools, issue #6)]';
if (!MULTI) console.warn(`test/e2e/clustercidr.test.ts:${GATE}`);

const POOL_LABEL = 'e2e.node-address-ccm.io/pool';
const POOL_V4 = '10.250.0.0/20';
const POOL_V6 = 'fd00:250::/112';
/** The default range every node falls back to: the double's flags, or kind's podSubnet. */
const DEFAULT_RANGES = TARGET === 'double' ? DOUBLE_CLUSTER_CIDRS : (process.env.E2E_CLUSTER_CIDR ?? '10.244.0.0/16,fd00:10:244::/56').split(',');
const TIMEOUT = TARGET === 'double' ? 20_000 : 120_000;

describe(`ClusterCIDR pools (${TARGET})`, () => {
  const prefix = runPrefix();
  const nodeName = (id: string): string => `${prefix}-${id}`;
  const addresses = (i: number): NodeAddress[] => [{ type: 'InternalIP', address: `10.1.0.${i}` }, { type: 'InternalIP', address: `fd00:1::${i}` }];
  const cloud: Record<string, StaticNodeEntry> = {};
  ['m1', 'o1', 'm2'].forEach((id, i) => (cloud[nodeName(id)] = { addresses: addresses(i + 1) }));
  // On a real cluster the controllers (and their cloud) are deploy/kind/e2e.sh's.
  const env = useE2ETarget({ kind: TARGET, prefix, cloud, runArgs: ['--cidr-allocator-type=MultiCIDRRangeAllocator'], enabled: MULTI });
  const wait = { timeoutMs: TIMEOUT, intervalMs: E2E_POLL_MS, describe: () => env.log() };

  const register = (id: string, i: number, labels: Record<string, string> = {}): ReturnType<E2ECluster['registerFakeNode']> =>
    env.cluster.registerFakeNode({ name: nodeName(id), cloudProviderExternal: true, nodeIP: `10.1.0.${i}`, hostIPs: addresses(i).map((a) => a.address), labels });

  const podCIDRsWithin = async (name: string, ranges: string[]): Promise<string[]> =>
    eventually(async () => {
      const cidrs = podCIDRsOf(await env.cluster.getNode(name));
      expect(cidrs.length, `pod CIDRs of ${name}`).toBe(ranges.length);
      for (const c of cidrs) expect(ranges.some((r) => cidrWithin(c, r)), `${name}: ${c} inside ${ranges.join(' or ')}`).toBe(true);
      return cidrs;
    }, wait);

  it.runIf(MULTI)(`a new pool: nodes its selector matches get blocks from it, others keep the default range${GATE}`, { timeout: TIMEOUT * 3 }, async () => {
    const pool = await env.cluster.createClusterCIDR('pool', {
      nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: POOL_LABEL, operator: 'In', values: [prefix] }] }] },
      perNodeHostBits: 8,
      ipv4: POOL_V4,
      ipv6: POOL_V6,
    });
    // The controller takes the pool in before handing out its blocks: it puts its finalizer on it.
    await eventually(async () => expect(((await env.cluster.getClusterCIDR(pool.metadata.name))?.metadata.finalizers as string[] | undefined)?.length ?? 0).toBeGreaterThan(0), wait);

    await register('m1', 1, { [POOL_LABEL]: prefix });
    await register('o1', 2);
    const m1 = await podCIDRsWithin(nodeName('m1'), [POOL_V4, POOL_V6]);
    expect(m1.map((c) => c.split('/')[1]).sort()).toEqual(['120', '24']);
    await podCIDRsWithin(nodeName('o1'), DEFAULT_RANGES);
  });

  it.runIf(MULTI)(`deleting a pool in use: kept with deletionTimestamp until its node goes, then gone${GATE}`, { timeout: TIMEOUT * 4 }, async () => {
    const name = env.cluster.name('pool');
    expect(await env.cluster.getClusterCIDR(name), 'the pool of the previous test').toBeDefined();
    await env.cluster.deleteCreated(CLUSTERCIDRS, name);
    await eventually(async () => expect((await env.cluster.getClusterCIDR(name))?.metadata.deletionTimestamp).toBeTruthy(), wait);

    // A terminating pool hands out nothing new: a matching node falls back to the default range.
    await register('m2', 3, { [POOL_LABEL]: prefix });
    await podCIDRsWithin(nodeName('m2'), DEFAULT_RANGES);

    // Still in use by m1: it stays.
    await consistently(async () => expect(await env.cluster.getClusterCIDR(name)).toBeDefined(), 1_500);

    await env.cluster.deleteCreated(NODES, nodeName('m1'));
    await eventually(async () => expect(await env.cluster.getClusterCIDR(name)).toBeUndefined(), wait);
  });
});
