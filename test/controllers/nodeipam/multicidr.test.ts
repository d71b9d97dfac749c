// MultiCIDRRangeAllocator through the API server double: the KEP-2593 user stories, tie-breaks,
// the ClusterCIDR lifecycle (finalizer, terminating, last node), the flags mirror across a
// restart with changed flags, a ServiceCIDR added at runtime, and a restart with allocations.
import { describe, expect, it } from 'vitest';
import { CLUSTER_CIDR_FINALIZER } from '../../../src/controllers/nodeipam/clustercidr-source.js';
import { SERVICE_OVERLAP_METRIC } from '../../../src/controllers/nodeipam/servicecidr-source.js';
import { POD_CIDR_POOL_ANNOTATION } from '../../../src/model/node.js';
import { createdFromFlagsName, parseFlagsPool, cidrContains, parseCIDR } from '../../../src/ipam/index.js';
import type { NodeObject } from '../../../src/model/node.js';
import { createNode, useDouble } from '../../kit/double.js';
import { eventually } from '../../kit/wait.js';
import type { RangeAllocator } from '../../../src/controllers/nodeipam/range-allocator.js';
import { clusterCIDR, createClusterCIDR, duplicates, labelSelector, podCIDRsOf, startReplica, storedNodes, type Replica } from './harness.js';

const cluster = useDouble();

const replica = (o: Parameters<typeof startReplica>[1] = {}): Promise<Replica<RangeAllocator>> => startReplica(cluster, o);

const within = (c: string, range: string): boolean => cidrContains(parseCIDR(range), parseCIDR(c));
const node = (name: string, labels: Record<string, string> = {}): NodeObject => createNode(cluster.api, { name, tainted: false, labels });
const hasBlocks = (name: string): (() => boolean) => () => podCIDRsOf(cluster.api, name).length > 0;

describe('MultiCIDRRangeAllocator: KEP-2593 user stories', () => {
  it('add more pod IPs: a node waiting on a full pool gets a block as soon as a second pool is added', async () => {
    createClusterCIDR(cluster.api, 'first', { perNodeHostBits: 8, ipv4: '10.1.0.0/23' });
    const r = await replica();
    for (const n of ['a', 'b', 'c']) node(n);
    await eventually(() => r.events.for('c').some((e) => e.reason === 'CIDRNotAvailable'), { timeoutMs: 5000, what: 'CIDRNotAvailable for c' });
    expect(r.controller.waitingNodes()).toEqual(['c']);
    // No restart (node-ipam-controller's issue #17): the new pool is used at once.
    createClusterCIDR(cluster.api, 'second', { perNodeHostBits: 8, ipv4: '10.2.0.0/20' });
    await eventually(hasBlocks('c'), { timeoutMs: 5000, what: 'c gets a block from the second pool' });
    expect(podCIDRsOf(cluster.api, 'c')).toEqual(['10.2.0.0/24']);
    expect((cluster.api.store.get('nodes', 'c') as unknown as NodeObject).metadata.annotations?.[POD_CIDR_POOL_ANNOTATION]).toBe('second');
    expect(['a', 'b'].map((n) => within(podCIDRsOf(cluster.api, n)[0]!, '10.1.0.0/23'))).toEqual([true, true]);
    await eventually(() => (clusterCIDR(cluster.api, 'second')?.metadata.finalizers ?? []).includes(CLUSTER_CIDR_FINALIZER));
    expect(r.controller.waitingNodes()).toEqual([]);
  });

  it('nodes with higher capabilities: labelled nodes get /23 from the same range, others /24', async () => {
    createClusterCIDR(cluster.api, 'default', { perNodeHostBits: 8, ipv4: '10.0.0.0/16' });
    createClusterCIDR(cluster.api, 'big', { perNodeHostBits: 9, ipv4: '10.0.0.0/16', nodeSelector: labelSelector('capacity', 'high') });
    await replica();
    node('small-1');
    node('big-1', { capacity: 'high' });
    node('small-2');
    node('big-2', { capacity: 'high' });
    await eventually(() => ['small-1', 'big-1', 'small-2', 'big-2'].every((n) => hasBlocks(n)()), { timeoutMs: 5000, what: 'all nodes' });
    expect(['big-1', 'big-2'].map((n) => podCIDRsOf(cluster.api, n)[0]!.split('/')[1])).toEqual(['23', '23']);
    expect(['small-1', 'small-2'].map((n) => podCIDRsOf(cluster.api, n)[0]!.split('/')[1])).toEqual(['24', '24']);
    expect(duplicates(cluster.api)).toEqual([]);
    // Overlapping pools never hand out overlapping blocks.
    const all = storedNodes(cluster.api).map((n) => parseCIDR(n.spec!.podCIDRs![0]!));
    for (const a of all) for (const b of all) if (a !== b) expect(cidrContains(a, b) || cidrContains(b, a), `${a.text} vs ${b.text}`).toBe(false);
  });

  it("KEP-2593's own IPv6 example (fd12:3456:789a:1::/64, perNodeHostBits 6: 2^58 blocks) loads and hands out /122s", async () => {
    createClusterCIDR(cluster.api, 'kep-v6', { perNodeHostBits: 6, ipv6: 'fd12:3456:789a:1::/64' });
    await replica();
    node('v6-a');
    node('v6-b');
    await eventually(() => hasBlocks('v6-a')() && hasBlocks('v6-b')(), { timeoutMs: 5000, what: 'both nodes get a /122' });
    const got = ['v6-a', 'v6-b'].map((n) => podCIDRsOf(cluster.api, n)[0]!).sort();
    expect(got).toEqual(['fd12:3456:789a:1::/122', 'fd12:3456:789a:1::40/122']);
    expect(duplicates(cluster.api)).toEqual([]);
  });

  it('discontiguous ranges: four /21 pools serve 32 nodes with /24 each, and the 33rd waits', async () => {
    const ranges = ['10.10.0.0/21', '172.16.8.0/21', '192.168.16.0/21', '100.64.24.0/21'];
    ranges.forEach((ipv4, i) => createClusterCIDR(cluster.api, `range-${i}`, { perNodeHostBits: 8, ipv4 }));
    const r = await replica({ workers: 4 });
    for (let i = 0; i < 33; i++) node(`n${String(i).padStart(2, '0')}`);
    await eventually(() => storedNodes(cluster.api).filter((n) => (n.spec?.podCIDRs ?? []).length > 0).length === 32, { timeoutMs: 10_000, what: '32 nodes with blocks' });
    await eventually(() => r.controller.waitingNodes().length === 1, { timeoutMs: 5000, what: 'one node waiting' });
    expect(duplicates(cluster.api)).toEqual([]);
    const perRange = ranges.map((rg) => storedNodes(cluster.api).filter((n) => (n.spec?.podCIDRs ?? []).some((c) => within(c, rg))).length);
    expect(perRange).toEqual([8, 8, 8, 8]);
  });

  it('tie-break: more matched labels, then fewer blocks, then fewer IPs per node; a full favourite falls through', async () => {
    createClusterCIDR(cluster.api, 'default', { perNodeHostBits: 6, ipv4: '10.0.0.0/8' });
    createClusterCIDR(cluster.api, 'node-n1', { perNodeHostBits: 4, ipv4: '192.168.128.0/17', nodeSelector: labelSelector('node', 'n1') });
    createClusterCIDR(cluster.api, 'node-n1-small', { perNodeHostBits: 4, ipv4: '192.168.64.0/20', nodeSelector: labelSelector('node', 'n1') });
    createClusterCIDR(cluster.api, 'rack', {
      perNodeHostBits: 6, ipv4: '10.5.0.0/26',
      nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'node', operator: 'In', values: ['n1'] }, { key: 'rack', operator: 'In', values: ['rack1'] }] }] },
    });
    await replica();
    // The KEP's order for {node: n1, rack: rack1}: rack (2 labels), node-n1-small (fewer blocks), node-n1, default.
    node('r1', { node: 'n1', rack: 'rack1' });
    await eventually(hasBlocks('r1'));
    expect(podCIDRsOf(cluster.api, 'r1')).toEqual(['10.5.0.0/26']);
    // rack holds one /26: the next matching node falls through to node-n1-small.
    node('r2', { node: 'n1', rack: 'rack1' });
    await eventually(hasBlocks('r2'));
    expect(podCIDRsOf(cluster.api, 'r2')).toEqual(['192.168.64.0/28']);
    node('plain');
    await eventually(hasBlocks('plain'));
    expect(within(podCIDRsOf(cluster.api, 'plain')[0]!, '10.0.0.0/8')).toBe(true);
  });
});

describe('MultiCIDRRangeAllocator: ClusterCIDR lifecycle', () => {
  it('deleting a pool in use: terminating, no new blocks, finalizer kept until its last node is gone', async () => {
    createClusterCIDR(cluster.api, 'pool', { perNodeHostBits: 8, ipv4: '10.1.0.0/20', nodeSelector: labelSelector('pool', 'x') });
    createClusterCIDR(cluster.api, 'fallback', { perNodeHostBits: 8, ipv4: '10.9.0.0/20' });
    const r = await replica();
    await eventually(() => (clusterCIDR(cluster.api, 'pool')?.metadata.finalizers ?? []).includes(CLUSTER_CIDR_FINALIZER), { timeoutMs: 5000, what: 'finalizer' });
    node('m1', { pool: 'x' });
    node('m2', { pool: 'x' });
    await eventually(() => hasBlocks('m1')() && hasBlocks('m2')());
    cluster.api.store.delete('clustercidrs.networking.x-k8s.io', 'pool');
    await eventually(() => r.objectEvents.some((e) => e.name === 'pool' && e.reason === 'ClusterCIDRInUse'), { timeoutMs: 5000, what: 'in-use event' });
    expect(clusterCIDR(cluster.api, 'pool')?.metadata.deletionTimestamp).toBeTruthy();
    node('m3', { pool: 'x' });
    await eventually(hasBlocks('m3'));
    expect(within(podCIDRsOf(cluster.api, 'm3')[0]!, '10.9.0.0/20')).toBe(true);
    // A deletionTimestamp on a node is not a release (kubernetes#127792): only the node going is.
    cluster.api.store.delete('nodes', 'm1');
    await new Promise((res) => setTimeout(res, 300));
    expect(clusterCIDR(cluster.api, 'pool')).toBeDefined();
    cluster.api.store.delete('nodes', 'm2');
    await eventually(() => clusterCIDR(cluster.api, 'pool') === undefined, { timeoutMs: 5000, what: 'pool gone after its last node' });
    expect(r.controller.ledger.hasPool('pool')).toBe(false);
  });

  it('an unused pool deleted goes at once; an invalid one is reported and never used', async () => {
    createClusterCIDR(cluster.api, 'unused', { perNodeHostBits: 8, ipv4: '10.1.0.0/20' });
    const r = await replica();
    await eventually(() => (clusterCIDR(cluster.api, 'unused')?.metadata.finalizers ?? []).includes(CLUSTER_CIDR_FINALIZER));
    cluster.api.store.delete('clustercidrs.networking.x-k8s.io', 'unused');
    await eventually(() => clusterCIDR(cluster.api, 'unused') === undefined, { timeoutMs: 5000, what: 'unused pool finalized' });
    // perNodeHostBits larger than the range: the CRD accepts it, the controller cannot use it.
    createClusterCIDR(cluster.api, 'too-small', { perNodeHostBits: 12, ipv4: '10.2.0.0/24' });
    await eventually(() => r.objectEvents.some((e) => e.name === 'too-small' && e.reason === 'InvalidClusterCIDR'), { timeoutMs: 5000, what: 'invalid event' });
    expect(r.objectEvents.find((e) => e.name === 'too-small')!.message).toMatch(/spec\.perNodeHostBits: 12 is larger than the 8 host bits/);
    expect(r.controller.ledger.hasPool('too-small')).toBe(false);
  });

  it('the flags pool is mirrored; changed flags at restart delete the stale mirror, which waits for its nodes', async () => {
    const oldFlags = { clusterCIDR: '10.244.0.0/16', nodeCIDRMaskSizeIPv4: 24 };
    const oldName = createdFromFlagsName(parseFlagsPool(oldFlags));
    const r1 = await replica({ flags: oldFlags });
    await eventually(() => (clusterCIDR(cluster.api, oldName)?.metadata.finalizers ?? []).includes(CLUSTER_CIDR_FINALIZER), { timeoutMs: 5000, what: 'mirror with finalizer' });
    node('old');
    await eventually(hasBlocks('old'));
    expect(podCIDRsOf(cluster.api, 'old')).toEqual(['10.244.0.0/24']);
    await r1.stop();

    const newFlags = { clusterCIDR: '10.250.0.0/16', nodeCIDRMaskSizeIPv4: 25 };
    const newName = createdFromFlagsName(parseFlagsPool(newFlags));
    const r2 = await replica({ flags: newFlags });
    // Exactly one live created-from-flags object; the stale one is terminating, held by "old".
    expect(clusterCIDR(cluster.api, newName)).toBeDefined();
    expect(clusterCIDR(cluster.api, oldName)?.metadata.deletionTimestamp).toBeTruthy();
    expect(r2.controller.ledger.nodesOfPool(oldName)).toEqual(['old']);
    node('new');
    await eventually(hasBlocks('new'));
    expect(podCIDRsOf(cluster.api, 'new')).toEqual(['10.250.0.0/25']);
    cluster.api.store.delete('nodes', 'old');
    await eventually(() => clusterCIDR(cluster.api, oldName) === undefined, { timeoutMs: 5000, what: 'stale mirror gone after its last node' });
    expect(cluster.api.store.list('clustercidrs.networking.x-k8s.io').map((o) => o.metadata?.name)).toEqual([newName]);
  });

  it('flags one object cannot express stay in memory with a Warning saying why', async () => {
    const flags = { clusterCIDR: '10.244.0.0/16,fd00:10:244::/56', nodeCIDRMaskSizeIPv4: 24, nodeCIDRMaskSizeIPv6: 64 };
    const r = await replica({ flags });
    expect(cluster.api.store.list('clustercidrs.networking.x-k8s.io')).toEqual([]);
    const ev = r.objectEvents.find((e) => e.reason === 'FlagsPoolInMemory');
    expect(ev?.type).toBe('Warning');
    expect(ev?.message).toMatch(/one perNodeHostBits for both families.*IPv4 \/24 \(8 host bits\) and IPv6 \/64 \(64 host bits\)/);
    node('a');
    await eventually(hasBlocks('a'));
    expect(podCIDRsOf(cluster.api, 'a')).toEqual(['10.244.0.0/24', 'fd00:10:244::/64']);
  });

  it('a restart with existing allocations: blocks are restored before new ones go out, none twice', async () => {
    createClusterCIDR(cluster.api, 'pool', { perNodeHostBits: 8, ipv4: '10.1.0.0/22' });
    const r1 = await replica();
    for (const n of ['a', 'b']) node(n);
    await eventually(() => hasBlocks('a')() && hasBlocks('b')());
    await r1.stop();
    // Set by another writer while no controller ran: honoured, not overwritten.
    createNode(cluster.api, { name: 'foreign', tainted: false, podCIDRs: ['10.1.2.0/24'] });
    node('c');
    const r2 = await replica();
    await eventually(hasBlocks('c'));
    expect(podCIDRsOf(cluster.api, 'c')).toEqual(['10.1.3.0/24']);
    expect(r2.controller.ledger.nodeAllocation('foreign')?.pool).toBe('pool');
    expect(duplicates(cluster.api)).toEqual([]);
  });

  it('a pod CIDR claimed by two nodes or outside every pool: a Warning event, no crash', async () => {
    createClusterCIDR(cluster.api, 'pool', { perNodeHostBits: 8, ipv4: '10.1.0.0/22' });
    createNode(cluster.api, { name: 'x', tainted: false, podCIDRs: ['10.1.0.0/24'] });
    createNode(cluster.api, { name: 'y', tainted: false, podCIDRs: ['10.1.0.0/24'] });
    createNode(cluster.api, { name: 'z', tainted: false, podCIDRs: ['192.0.2.0/24'] });
    const r = await replica();
    const conflicts = ['x', 'y', 'z'].flatMap((n) => r.events.for(n)).filter((e) => e.reason === 'PodCIDRConflict');
    expect(conflicts.map((e) => e.message).sort()).toEqual([
      'node "y": pod CIDR 10.1.0.0/24 overlaps a block of node "x"',
      'node "z": pod CIDR 192.0.2.0/24 lies outside every pool',
    ]);
    node('w');
    await eventually(hasBlocks('w'));
    expect(podCIDRsOf(cluster.api, 'w')).toEqual(['10.1.1.0/24']);
  });
});

describe('MultiCIDRRangeAllocator: Service CIDRs', () => {
  it('a ServiceCIDR added at runtime is excluded at once; an existing block inside it gets a Warning and the gauge, and is kept', async () => {
    createClusterCIDR(cluster.api, 'pool', { perNodeHostBits: 8, ipv4: '10.1.0.0/22' });
    const r = await replica();
    node('a');
    await eventually(hasBlocks('a'));
    expect(podCIDRsOf(cluster.api, 'a')).toEqual(['10.1.0.0/24']);
    cluster.api.store.create('servicecidrs.networking.k8s.io', { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'extra' }, spec: { cidrs: ['10.1.0.0/23'] } });
    await eventually(() => r.events.for('a').some((e) => e.reason === 'PodCIDROverlapsServiceCIDR'), { timeoutMs: 5000, what: 'overlap event' });
    expect((await r.registry.getSingleMetricAsString(SERVICE_OVERLAP_METRIC))).toMatch(new RegExp(`^${SERVICE_OVERLAP_METRIC} 1$`, 'm'));
    node('b');
    await eventually(hasBlocks('b'));
    expect(podCIDRsOf(cluster.api, 'b')).toEqual(['10.1.2.0/24']);
    expect(podCIDRsOf(cluster.api, 'a')).toEqual(['10.1.0.0/24']);
    // Deleting it (a finalizer holds it, as kube-apiserver's does): still excluded until it is gone.
    const sc = cluster.api.store.get('servicecidrs.networking.k8s.io', 'extra');
    cluster.api.store.update('servicecidrs.networking.k8s.io', { ...sc, metadata: { ...sc.metadata, finalizers: ['networking.k8s.io/service-cidr-finalizer'] } });
    cluster.api.store.delete('servicecidrs.networking.k8s.io', 'extra');
    node('c');
    await eventually(hasBlocks('c'));
    expect(podCIDRsOf(cluster.api, 'c')).toEqual(['10.1.3.0/24']);
    const held = cluster.api.store.get('servicecidrs.networking.k8s.io', 'extra');
    cluster.api.store.update('servicecidrs.networking.k8s.io', { ...held, metadata: { ...held.metadata, finalizers: [] } });
    cluster.api.store.delete('nodes', 'a');
    node('d');
    await eventually(hasBlocks('d'));
    expect(within(podCIDRsOf(cluster.api, 'd')[0]!, '10.1.0.0/23')).toBe(true);
  });

  it('v1beta1 only: watched there; neither served: --service-cluster-ip-range', async () => {
    const { DEFAULT_RESOURCES } = await import('../../../src/double/resources.js');
    const beta = DEFAULT_RESOURCES.map((r) => (r.plural === 'servicecidrs' ? { ...r, version: 'v1beta1' } : r));
    await cluster.replaceApi({ resources: beta });
    createClusterCIDR(cluster.api, 'pool', { perNodeHostBits: 8, ipv4: '10.1.0.0/22' });
    cluster.api.store.create('servicecidrs.networking.k8s.io', { apiVersion: 'networking.k8s.io/v1beta1', kind: 'ServiceCIDR', metadata: { name: 'kubernetes' }, spec: { cidrs: ['10.1.0.0/24'] } });
    const r1 = await replica({ serviceClusterIPRange: '10.1.1.0/24' });
    expect(r1.serviceCIDRs.resource?.version).toBe('v1beta1');
    node('a');
    await eventually(hasBlocks('a'));
    // The ServiceCIDR is excluded; the flag is not used while the API is served.
    expect(podCIDRsOf(cluster.api, 'a')).toEqual(['10.1.1.0/24']);

    await cluster.replaceApi({ resources: DEFAULT_RESOURCES.filter((r) => r.plural !== 'servicecidrs') });
    createClusterCIDR(cluster.api, 'pool', { perNodeHostBits: 8, ipv4: '10.1.0.0/22' });
    const r2 = await replica({ serviceClusterIPRange: '10.1.0.0/24' });
    expect(r2.serviceCIDRs.resource).toBeUndefined();
    node('a');
    await eventually(hasBlocks('a'));
    expect(podCIDRsOf(cluster.api, 'a')).toEqual(['10.1.1.0/24']);
  });
});

describe('MultiCIDRRangeAllocator without the CRD', () => {
  it('fails to start with an error naming the missing resource', async () => {
    const { DEFAULT_RESOURCES } = await import('../../../src/double/resources.js');
    await cluster.replaceApi({ resources: DEFAULT_RESOURCES.filter((r) => r.plural !== 'clustercidrs') });
    await expect(replica()).rejects.toThrow('MultiCIDRRangeAllocator: clustercidrs.networking.x-k8s.io/v1 is not served: install the CRD (deploy/base/crd-clustercidrs.yaml)');
  });
});
