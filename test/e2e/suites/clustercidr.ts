// The ClusterCIDR flows of the node IPAM controller's MultiCIDRRangeAllocator mode, shared by the
// e2e suite (the double, or a real cluster) and the real-server tier (kube-apiserver): adding a
// pool hands its blocks to the nodes its selector matches; deleting a pool in use keeps it
// (deletionTimestamp set) until its last node goes, then it disappears.
//
// They need `run --cidr-allocator-type=MultiCIDRRangeAllocator` (issue #6), gated at runtime on the
// built binary's `run --help` listing that allocator type: until it does, they are reported as
// skipped with the reason in their title.
import { describe, expect, it } from 'vitest';
import { CLUSTERCIDRS, NODES } from '../../../src/kube/types.js';
import type { NodeAddress } from '../../../src/model/node-address.js';
import { runCapabilities } from '../../kit/cli.js';
import { DOUBLE_CLUSTER_CIDRS, type StaticNodeEntry } from '../../kit/double.js';
import { consistently, eventually } from '../../kit/wait.js';
import { E2E_POLL_MS } from '../support/assert.js';
import { cidrsOverlap, cidrWithin, E2ECluster, podCIDRsOf } from '../support/cluster.js';
import { runPrefix, suiteServerName, suiteTargetSetup, useE2ETarget, type SuiteTarget } from '../support/target.js';

const caps = await runCapabilities();
const MULTI = caps.multiCIDRRangeAllocator;
const GATE = MULTI
  ? ''
  : ' [not run: `node-address-ccm run --help` does not list --cidr-allocator-type MultiCIDRRangeAllocator yet (ClusterCIDR pools, issue #6)]';
if (!MULTI) console.warn(`test/e2e/clustercidr.test.ts:${GATE}`);

const POOL_LABEL = 'e2e.node-address-ccm.io/pool';
const POOL_V4 = '10.250.0.0/20';
const POOL_V6 = 'fd00:250::/112';
/** The pool of the live ServiceCIDR case: four /24 and four /120 blocks. */
const SVC_POOL_V4 = '10.251.0.0/22';
const SVC_POOL_V6 = 'fd00:251::/118';

/**
 * The pool flows, one controller run (on the double and the control plane; on a real cluster the
 * controllers are deploy/kind/e2e.sh's).
 */
export function clusterCIDRSuite(on: SuiteTarget | { kind: 'real' }): void {
  const real = on.kind === 'real';
  /** The default range every node falls back to: the run's flags, or kind's podSubnet. */
  const DEFAULT_RANGES = real ? (process.env.E2E_CLUSTER_CIDR ?? '10.244.0.0/16,fd00:10:244::/56').split(',') : DOUBLE_CLUSTER_CIDRS;
  const TIMEOUT = real ? 120_000 : 20_000;
  const title = real ? 'real' : on.kind === 'double' ? 'double' : suiteServerName(on);
  const setup = real ? { kind: 'real' as const } : suiteTargetSetup(on);
  describe(`ClusterCIDR pools (${title})`, () => {
    const prefix = runPrefix();
    const nodeName = (id: string): string => `${prefix}-${id}`;
    const addresses = (i: number): NodeAddress[] => [{ type: 'InternalIP', address: `10.1.0.${i}` }, { type: 'InternalIP', address: `fd00:1::${i}` }];
    const cloud: Record<string, StaticNodeEntry> = {};
    ['m1', 'o1', 'm2', 's1', 's2', 's3'].forEach((id, i) => (cloud[nodeName(id)] = { addresses: addresses(i + 1) }));
    // On a real cluster the controllers (and their cloud) are deploy/kind/e2e.sh's.
    const env = useE2ETarget({ ...setup, prefix, cloud, runArgs: ['--cidr-allocator-type=MultiCIDRRangeAllocator'], enabled: MULTI });
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

    // A Service range added while the controller runs (a second ServiceCIDR object, as an operator
    // extends the Service range since Kubernetes 1.33): the block a node already holds inside it is
    // kept and reported, and no block inside it is handed out afterwards. Not on a real cluster:
    // a ServiceCIDR there is the cluster's own.
    it.runIf(MULTI && !real)(`a ServiceCIDR created live: the overlap of a held block is reported, no new block falls inside it${GATE}`, { timeout: TIMEOUT * 4 }, async () => {
      const svc = 'e2e.node-address-ccm.io/svc';
      await env.cluster.createClusterCIDR('svc-pool', {
        nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: svc, operator: 'In', values: [prefix] }] }] },
        perNodeHostBits: 8,
        ipv4: SVC_POOL_V4,
        ipv6: SVC_POOL_V6,
      });
      await eventually(async () => expect(((await env.cluster.getClusterCIDR(env.cluster.name('svc-pool')))?.metadata.finalizers as string[] | undefined)?.length ?? 0).toBeGreaterThan(0), wait);
      await register('s1', 4, { [svc]: prefix });
      const held = await podCIDRsWithin(nodeName('s1'), [SVC_POOL_V4, SVC_POOL_V6]);
      // The Service range: the half of the pool that holds s1's blocks, in each family.
      const half = (cidr: string): string => {
        const [addr, bits] = cidr.split('/') as [string, string];
        const family = addr.includes(':') ? 6 : 4;
        const pool = family === 4 ? SVC_POOL_V4 : SVC_POOL_V6;
        const halves = family === 4 ? ['10.251.0.0/23', '10.251.2.0/23'] : ['fd00:251::/119', 'fd00:251::200/119'];
        const found = halves.find((h) => cidrWithin(`${addr}/${bits}`, h));
        if (!found) throw new Error(`${cidr} is in neither half of ${pool}`);
        return found;
      };
      const serviceRange = held.map(half);
      await env.cluster.createServiceCIDR('svc', serviceRange);
      // The controller saw it: s1's blocks overlap it, which it reports (and keeps them).
      for (const block of held) {
        await eventually(async () => {
          const events = await env.cluster.nodeEvents(nodeName('s1'));
          expect(events.filter((e) => e.type === 'Warning' && e.reason === 'PodCIDROverlapsServiceCIDR' && (e.message ?? '').includes(block)).length, `PodCIDROverlapsServiceCIDR for ${block}`).toBeGreaterThan(0);
        }, wait);
      }
      expect(podCIDRsOf(await env.cluster.getNode(nodeName('s1')))).toEqual(held);
      // Two more nodes of the pool: the two blocks per family left outside the Service range.
      await register('s2', 5, { [svc]: prefix });
      await register('s3', 6, { [svc]: prefix });
      const given = [...(await podCIDRsWithin(nodeName('s2'), [SVC_POOL_V4, SVC_POOL_V6])), ...(await podCIDRsWithin(nodeName('s3'), [SVC_POOL_V4, SVC_POOL_V6]))];
      for (const block of given) {
        for (const range of serviceRange) expect(cidrsOverlap(block, range), `${block} overlaps the Service range ${range}`).toBe(false);
      }
      expect(new Set(given).size).toBe(4);
    });
  });
}
