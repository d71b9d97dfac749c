// CloudAllocator through the API server double: the cloud's ranges are written as they are, the
// node's NetworkUnavailable condition becomes False/RouteCreated, and a range clashing with a
// pool's block, another node or a Service range is reported (Warning events), not hidden.
import { describe, expect, it } from 'vitest';
import { FakeProvider } from '../../../providers/fake/fake.js';
import { CloudRangeIndex, cloudRangesFromProvider, recordCloudRanges } from '../../../src/controllers/nodeipam/cloud-ranges.js';
import { CloudAllocator } from '../../../src/controllers/nodeipam/cloud-allocator.js';
import { POD_CIDR_POOL_ANNOTATION, CLOUD_POOL } from '../../../src/model/node.js';
import { PodCIDRAllocator, cidrsOverlap, flagsPoolToClusterCIDR, parseCIDR, parseFlagsPool } from '../../../src/ipam/index.js';
import type { NodeObject } from '../../../src/model/node.js';
import { createNode, useDouble } from '../../kit/double.js';
import { eventually } from '../../kit/wait.js';
import { ip } from '../../kit/nodes.js';
import { podCIDRsOf, startReplica, storedNodes } from './harness.js';
import { GceEmulator, staticTokenAuthClient } from '../../emulators/gce/server.js';
import { ComputeInstanceSource, createInstancesClient, GceProvider, type GceConfig } from '../../../providers/gce/index.js';

const cluster = useDouble();

const conditions = (name: string): { type: string; status: string; reason?: string }[] =>
  ((cluster.api.store.get('nodes', name) as unknown as NodeObject).status?.conditions as { type: string; status: string; reason?: string }[] | undefined) ?? [];

describe('CloudAllocator', () => {
  it('writes the cloud ranges with the cloud pool annotation and sets NetworkUnavailable=False/RouteCreated, keeping other conditions', async () => {
    const cloud = new FakeProvider();
    cloud.setInstance('a', { addresses: [ip('10.0.0.1')], podCIDRs: ['10.8.1.0/24', 'fd00:8::1:0/112'] });
    const node = createNode(cluster.api, { name: 'a', tainted: false });
    const stored = cluster.api.store.get('nodes', 'a');
    cluster.api.store.update('nodes', { ...stored, status: { ...(node.status ?? {}), conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } }, { subresource: 'status' });
    const r = await startReplica(cluster, { cloud: cloudRangesFromProvider(cloud) });
    await eventually(() => conditions('a').some((c) => c.type === 'NetworkUnavailable'), { timeoutMs: 5000, what: 'NetworkUnavailable condition' });
    expect(podCIDRsOf(cluster.api, 'a')).toEqual(['10.8.1.0/24', 'fd00:8::1:0/112']);
    expect((cluster.api.store.get('nodes', 'a') as unknown as NodeObject).metadata.annotations?.[POD_CIDR_POOL_ANNOTATION]).toBe(CLOUD_POOL);
    expect(conditions('a')).toEqual(expect.arrayContaining([
      expect.objectContaining({ type: 'Ready', status: 'True' }),
      expect.objectContaining({ type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated' }),
    ]));
    // Nothing to claim in this mode: the cloud node controller gets no claims and writes no pod CIDRs.
    expect(r.controller).toBeInstanceOf(CloudAllocator);
    expect('claim' in r.controller).toBe(false);
  });

  it('a failed condition write is retried on its own: the blocks are written once and kept', async () => {
    const cloud = new FakeProvider();
    cloud.setInstance('a', { addresses: [ip('10.0.0.1')], podCIDRs: ['10.8.1.0/24'] });
    const fault = cluster.api.faults.inject({ verb: 'patch', resource: 'nodes', subresource: 'status', status: 500, count: 1 });
    const r = await startReplica(cluster, { cloud: cloudRangesFromProvider(cloud), flags: { clusterCIDR: '10.8.0.0/16', nodeCIDRMaskSizeIPv4: 24 } });
    createNode(cluster.api, { name: 'a', tainted: false });
    await eventually(() => conditions('a').some((c) => c.type === 'NetworkUnavailable' && c.status === 'False'), { timeoutMs: 10_000, what: 'condition after the retry' });
    expect(fault.fired).toBe(1);
    expect(cluster.api.count({ verb: 'patch', resource: 'nodes', subresource: '' })).toBe(1);
    expect(r.controller.ledger.nodeAllocation('a')?.podCIDRs).toEqual(['10.8.1.0/24']);
  });

  it('a clash with another node and with a Service range is reported; a node the cloud has no range for waits with a Warning', async () => {
    const cloud = new FakeProvider();
    cloud.setInstance('a', { addresses: [ip('10.0.0.1')], podCIDRs: ['10.8.0.0/24'] });
    cloud.setInstance('b', { addresses: [ip('10.0.0.2')], podCIDRs: ['10.8.0.0/24'] });
    cloud.setInstance('c', { addresses: [ip('10.0.0.3')] });
    cluster.api.store.create('servicecidrs.networking.k8s.io', { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'svc' }, spec: { cidrs: ['10.8.0.0/23'] } });
    // A --cluster-cidr pool: the cloud's ranges inside it are recorded there, so two nodes given
    // the same range are caught (outside every pool, the audit loop's PodCIDROverlap catches it).
    const r = await startReplica(cluster, { cloud: cloudRangesFromProvider(cloud), flags: { clusterCIDR: '10.8.0.0/16', nodeCIDRMaskSizeIPv4: 24 } });
    createNode(cluster.api, { name: 'a', tainted: false });
    await eventually(() => podCIDRsOf(cluster.api, 'a').length > 0);
    createNode(cluster.api, { name: 'b', tainted: false });
    createNode(cluster.api, { name: 'c', tainted: false });
    await eventually(() => r.events.for('b').some((e) => e.reason === 'CloudRangeClash') && r.events.for('c').length > 0, { timeoutMs: 5000, what: 'events' });
    const msgs = [...r.events.for('a'), ...r.events.for('b')].filter((e) => e.reason === 'CloudRangeClash').map((e) => e.message);
    expect(msgs).toContain("the cloud's pod range 10.8.0.0/24 for node a overlaps Service range 10.8.0.0/23");
    expect(msgs).toContain("the cloud's pod range 10.8.0.0/24 for node b overlaps the block of node a");
    expect(r.events.for('c')[0]).toMatchObject({ type: 'Warning', reason: 'CloudRangeNotAvailable' });
    expect(r.events.for('c')[0]!.message).toMatch(/reports no pod range/);
    expect(podCIDRsOf(cluster.api, 'c')).toEqual([]);
  });

  it('ranges from an answer about another instance than the node\'s own are never written', async () => {
    const cloud = new FakeProvider();
    cloud.setInstance('a', { providerID: 'fake://vm-elsewhere', addresses: [ip('10.0.0.1')], podCIDRs: ['10.8.1.0/24'] });
    const r = await startReplica(cluster, { cloud: cloudRangesFromProvider(cloud) });
    createNode(cluster.api, { name: 'a', tainted: false, providerID: 'fake://a' });
    await eventually(() => r.events.for('a').length > 0, { timeoutMs: 5000, what: 'a Warning' });
    expect(r.events.for('a')[0]).toEqual({
      node: 'a', type: 'Warning', reason: 'CloudRangeNotAvailable',
      message: 'no pod range from the cloud: cloud provider fake answered for node "a" with providerID "fake://vm-elsewhere", another instance than the node\'s own "fake://a"; nothing of that answer is written',
    });
    expect(podCIDRsOf(cluster.api, 'a')).toEqual([]);
  });
});

describe('CloudAllocator: a node deleted while its range is looked up', () => {
  it('leaves nothing behind: a later node given the same range is not reported as clashing with it', async () => {
    const cloud = new FakeProvider();
    cloud.setInstance('gone', { addresses: [ip('10.0.0.1')], podCIDRs: ['172.20.1.0/24'] });
    cloud.setInstance('b', { addresses: [ip('10.0.0.2')], podCIDRs: ['172.20.1.0/24'] });
    cloud.setInstance('sentinel', { addresses: [ip('10.0.0.3')], podCIDRs: ['172.20.9.0/24'] });
    const provider = cloudRangesFromProvider(cloud);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let asked = false;
    const ranges = {
      rangesFor: async (nodes: readonly NodeObject[]) => {
        if (nodes.some((n) => n.metadata.name === 'gone')) {
          asked = true;
          await gate;
        }
        return provider.rangesFor(nodes);
      },
    };
    const r = await startReplica(cluster, { cloud: ranges });
    createNode(cluster.api, { name: 'gone', tainted: false });
    await eventually(() => asked, { timeoutMs: 5000, what: 'the lookup for "gone"' });
    cluster.api.store.delete('nodes', 'gone');
    // Watch events come in order: once a node created after the delete is written, the
    // controller has seen the delete, before the lookup for "gone" returns.
    createNode(cluster.api, { name: 'sentinel', tainted: false });
    await eventually(() => podCIDRsOf(cluster.api, 'sentinel').length > 0, { timeoutMs: 5000, what: 'sentinel written' });
    open();
    // Its write finds no node: what the lookup recorded is dropped.
    // The sync of "gone" is over once nothing is queued or in progress.
    await eventually(() => r.controller.queue.len() === 0 && r.controller.queue.processingCount() === 0 && r.controller.queue.delayedCount() === 0, { timeoutMs: 5000, what: 'the sync of "gone" done' });
    expect(r.controller.ledger.nodeAllocation('gone')).toBeUndefined();
    createNode(cluster.api, { name: 'b', tainted: false });
    await eventually(() => podCIDRsOf(cluster.api, 'b').length > 0, { timeoutMs: 5000, what: 'b written' });
    expect(podCIDRsOf(cluster.api, 'b')).toEqual(['172.20.1.0/24']);
    expect(r.events.for('b').filter((e) => e.reason === 'CloudRangeClash')).toEqual([]);
  });
});

describe('CloudAllocator after a restart', () => {
  it('existing cloud ranges outside every pool are recorded without warnings; a new node given one of them is reported', async () => {
    const cloud = new FakeProvider();
    cloud.setInstance('old', { addresses: [ip('10.0.0.1')], podCIDRs: ['172.20.1.0/24'] });
    cloud.setInstance('new', { addresses: [ip('10.0.0.2')], podCIDRs: ['172.20.1.0/25'] });
    createNode(cluster.api, { name: 'old', tainted: false, podCIDRs: ['172.20.1.0/24'] });
    const r = await startReplica(cluster, { cloud: cloudRangesFromProvider(cloud) });
    // Restored without any event; the missing condition is still set.
    await eventually(() => conditions('old').some((c) => c.type === 'NetworkUnavailable'), { timeoutMs: 5000, what: 'condition of the restored node' });
    expect(r.events.for('old')).toEqual([]);
    createNode(cluster.api, { name: 'new', tainted: false });
    await eventually(() => podCIDRsOf(cluster.api, 'new').length > 0, { timeoutMs: 5000, what: 'new written (the cloud owns the range)' });
    expect(r.events.for('new').map((e) => `${e.reason}: ${e.message}`)).toEqual([
      "CloudRangeClash: the cloud's pod range 172.20.1.0/25 for node new overlaps the block of node old",
    ]);
  });
});

describe('recordCloudRanges', () => {
  const flags = flagsPoolToClusterCIDR(parseFlagsPool({ clusterCIDR: '10.8.0.0/16', nodeCIDRMaskSizeIPv4: 24 }));
  const cases: { name: string; ranges: string[][]; service?: string[]; clashes: string[] }[] = [
    { name: 'inside the pool, disjoint', ranges: [['10.8.1.0/24'], ['10.8.2.0/24']], clashes: [] },
    { name: 'the same block as another node', ranges: [['10.8.1.0/24'], ['10.8.1.0/24']], clashes: ['other-node'] },
    { name: 'containing the pool', ranges: [['10.8.0.0/15']], clashes: ['pool'] },
    { name: 'outside every pool: normal in this mode', ranges: [['192.168.0.0/24']], clashes: [] },
    { name: 'outside every pool, the same range as another node', ranges: [['192.168.0.0/24'], ['192.168.0.0/24']], clashes: ['other-node'] },
    { name: 'outside every pool, inside a bigger range of another node', ranges: [['192.168.0.0/22'], ['192.168.2.0/24']], clashes: ['other-node'] },
    { name: 'outside every pool, around a smaller range of another node', ranges: [['192.168.2.128/25'], ['192.168.0.0/22']], clashes: ['other-node'] },
    { name: 'IPv6 /112 ranges side by side', ranges: [['fd00:8::1:0/112'], ['fd00:8::2:0/112']], clashes: [] },
    { name: 'inside a Service range', ranges: [['10.8.1.0/24']], service: ['10.8.0.0/22'], clashes: ['service'] },
    { name: 'two ranges of one family', ranges: [['10.8.1.0/24', '10.8.2.0/24']], clashes: ['two-per-family'] },
    { name: 'not a CIDR', ranges: [['10.8.1.0/33']], clashes: ['invalid'] },
  ];
  it.each(cases)('$name', ({ ranges, service, clashes }) => {
    const a = new PodCIDRAllocator();
    a.upsertPool(flags);
    if (service) a.setExclusion('svc', service);
    const index = new CloudRangeIndex();
    const got = ranges.flatMap((r, i) => recordCloudRanges(a, index, `n${i}`, r, service ?? []).clashes.map((c) => c.kind));
    expect(got).toEqual(clashes);
  });
});

describe('CloudRangeIndex', () => {
  it('finds an overlapping node exactly when a brute-force check does, across adds and removes', () => {
    let seed = 11;
    const rnd = (m: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % m);
    const index = new CloudRangeIndex();
    const held = new Map<string, ReturnType<typeof parseCIDR>>();
    for (let step = 0; step < 2000; step++) {
      const prefix = 20 + rnd(9);
      const size = 2 ** (32 - prefix);
      const start = Math.floor(rnd(2 ** 16) / size) * size;
      const c = parseCIDR(`10.9.${Math.floor(start / 256)}.${start % 256}/${prefix}`);
      const name = `n${rnd(300)}`;
      const want = [...held].some(([n, h]) => n !== name && cidrsOverlap(h, c));
      expect(index.overlapping(c, name) !== undefined, `${c.text} for ${name} at step ${step}`).toBe(want);
      if (rnd(4) === 0) {
        index.remove(name);
        held.delete(name);
      } else {
        index.set(name, [c]);
        held.set(name, c);
      }
    }
    expect(index.size).toBe(held.size);
  });
});

describe('CloudAllocator batches its lookups (GCE provider against the compute v1 emulator)', () => {
  it('1,200 nodes waiting for ranges cost one provider call per 500 nodes, not one per node', async () => {
    const project = 'batch-proj';
    const emu = new GceEmulator();
    await emu.start();
    const config: GceConfig = { project, zones: ['us-central1-a'], apiEndpoint: emu.url, stackType: 'IPV4' };
    const gce = new GceProvider(config, new ComputeInstanceSource(await createInstancesClient(config, { authClient: staticTokenAuthClient() }), config, undefined, 1_000), { listingMaxAgeMs: 0 });
    const count = 1200;
    try {
      for (let i = 0; i < count; i++) {
        const name = `gce-${String(i).padStart(4, '0')}`;
        emu.addInstance(project, 'us-central1-a', {
          name,
          networkInterfaces: [{ name: 'nic0', networkIP: `10.0.${i >> 8}.${i & 255}`, aliasIpRanges: [{ ipCidrRange: `10.${64 + (i >> 8)}.${i & 255}.0/24` }] }],
        });
        createNode(cluster.api, { name, tainted: false, providerID: `gce://${project}/us-central1-a/${name}` });
      }
      let calls = 0;
      let largest = 0;
      const counted: typeof gce = Object.create(gce) as typeof gce;
      counted.instancesMetadata = (refs, signal) => {
        calls++;
        largest = Math.max(largest, refs.length);
        return gce.instancesMetadata(refs, signal);
      };
      await startReplica(cluster, { cloud: cloudRangesFromProvider(counted), workers: 2 });
      await eventually(() => storedNodes(cluster.api).every((n) => podCIDRsOf(cluster.api, n.metadata.name).length > 0), { timeoutMs: 60_000, intervalMs: 100, what: 'every node has its cloud range' });
      expect(podCIDRsOf(cluster.api, 'gce-0513')).toEqual(['10.66.1.0/24']);
      // The nodes were queued together (restore replay): batches of at most 500.
      expect(largest).toBeLessThanOrEqual(500);
      expect(calls).toBe(Math.ceil(count / 500));
      // Each provider call lists the zone once (one page per 500 instances), never instances.get.
      expect(emu.count('get')).toBe(0);
    } finally {
      await gce.close();
      await emu.stop();
    }
  }, 90_000);
});
