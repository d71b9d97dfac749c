import { afterAll, beforeAll, beforeEach, describe, it, expect } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GceEmulator, staticTokenAuthClient, type EmulatedInstance } from '../../emulators/gce/server.js';
import { ComputeInstanceSource, createGceProvider, createInstancesClient, GceProvider, GCE_LISTING_MAX_AGE_MS, type GceConfig, type GceProviderOptions } from '../../../providers/gce/index.js';
import { readCloudConfig } from '../../../providers/cloud-config.js';
import type { CloudProvider, InstanceResult, NodeRef } from '../../../providers/types.js';
import { cloudRangesFromProvider } from '../../../src/controllers/nodeipam/cloud-ranges.js';
import { createNode, useDouble } from '../../kit/double.js';
import { eventually } from '../../kit/wait.js';
import { podCIDRsOf, startReplica } from '../../controllers/nodeipam/harness.js';
import { computeInstance, IPV4_ONLY_NIC } from './compute-instance.js';

const PROJECT = 'e2e-proj';

function summarise<T>(m: Map<string, InstanceResult<T>>): Record<string, unknown> {
  return Object.fromEntries([...m].map(([k, v]) => [k, v.kind === 'found' ? v.value : v.kind]));
}

function vm(name: string, n: number, extra: Partial<EmulatedInstance> = {}): EmulatedInstance {
  return {
    name,
    machineType: `https://www.googleapis.com/compute/v1/projects/${PROJECT}/zones/us-central1-a/machineTypes/e2-standard-4`,
    networkInterfaces: [
      {
        name: 'nic0',
        networkIP: `10.0.${Math.floor(n / 250)}.${(n % 250) + 2}`,
        accessConfigs: [{ type: 'ONE_TO_ONE_NAT', natIP: `34.0.${Math.floor(n / 250)}.${(n % 250) + 2}` }],
        aliasIpRanges: [{ ipCidrRange: `10.64.${n % 256}.0/24` }],
        ipv6Address: `fd20:0:0:${n.toString(16)}::`,
      },
    ],
    ...extra,
  };
}

// Listing reuse is off unless a test turns it on, so each call sees the emulator's current state.
async function provider(emu: GceEmulator, config: Partial<GceConfig> = {}, options: GceProviderOptions = { listingMaxAgeMs: 0 }): Promise<GceProvider> {
  const full: GceConfig = { project: PROJECT, zones: [], apiEndpoint: emu.url, stackType: 'IPV4_IPV6', ...config };
  const client = await createInstancesClient(full, { authClient: staticTokenAuthClient() });
  // A short call budget so persistent failures give up fast.
  return new GceProvider(full, new ComputeInstanceSource(client, full, undefined, 1_000), options);
}

describe('gce provider against the compute v1 emulator', () => {
  const emu = new GceEmulator();
  let gce: GceProvider;

  beforeAll(async () => {
    await emu.start();
  });
  afterAll(async () => {
    await gce?.close();
    await emu.stop();
  });
  beforeEach(async () => {
    await gce?.close();
    for (const z of ['us-central1-a', 'us-central1-b', 'us-east1-c']) {
      for (const n of ['a-1', 'a-2', 'b-1', 'c-1', 'dup', 'stopped']) emu.removeInstance(PROJECT, z, n);
      emu.setUnreachable(PROJECT, z, false);
    }
    emu.requests.length = 0;
    emu.addInstance(PROJECT, 'us-central1-a', vm('a-1', 1));
    emu.addInstance(PROJECT, 'us-central1-a', vm('a-2', 2));
    emu.addInstance(PROJECT, 'us-central1-b', vm('b-1', 3, { status: 'TERMINATED' }));
    emu.addInstance(PROJECT, 'us-east1-c', vm('c-1', 4, { networkInterfaces: [] }));
    emu.addInstance('other-proj', 'us-central1-a', vm('a-9', 9));
    gce = await provider(emu);
  });

  it('answers a batch from one aggregatedList, matched by providerID or by name', async () => {
    const nodes: NodeRef[] = [
      { name: 'a-1', providerID: `gce://${PROJECT}/us-central1-a/a-1` },
      { name: 'a-2.c.e2e-proj.internal' },
      { name: 'gone', providerID: `gce://${PROJECT}/us-central1-a/gone` },
      { name: 'a-9' },
    ];
    const res = await gce.instancesMetadata(nodes);
    expect(res.get('a-1')).toEqual({
      kind: 'found',
      value: {
        providerID: `gce://${PROJECT}/us-central1-a/a-1`,
        instanceType: 'e2-standard-4',
        zone: 'us-central1-a',
        region: 'us-central1',
        addresses: [
          { type: 'InternalIP', address: '10.0.0.3' },
          { type: 'ExternalIP', address: '34.0.0.3' },
          { type: 'InternalIP', address: 'fd20:0:0:1::' },
        ],
        podCIDRs: ['10.64.1.0/24', 'fd20:0:0:1::/112'],
      },
    });
    const a2 = res.get('a-2.c.e2e-proj.internal');
    expect(a2?.kind === 'found' && a2.value.providerID).toBe(`gce://${PROJECT}/us-central1-a/a-2`);
    expect(res.get('gone')?.kind).toBe('notFound');
    // a-9 lives in another project: this adapter never sees it.
    expect(res.get('a-9')?.kind).toBe('notFound');
    expect(emu.count('aggregatedList')).toBe(1);
    expect(emu.count('get')).toBe(0);
  });

  it('an instance without network interfaces is an error for that node only', async () => {
    const res = await gce.instancesMetadata([{ name: 'c-1' }, { name: 'a-1' }]);
    const c1 = res.get('c-1');
    expect(c1?.kind).toBe('error');
    expect(c1?.kind === 'error' && c1.error.message).toMatch(/gce: node c-1: instance "c-1" has no network interface/);
    expect(res.get('a-1')?.kind).toBe('found');
  });

  it('instancesExist and instancesShutdown', async () => {
    const nodes = [{ name: 'a-1' }, { name: 'b-1' }, { name: 'nope' }];
    const exist = await gce.instancesExist(nodes);
    expect(Object.fromEntries([...exist].map(([k, v]) => [k, v.kind === 'found' ? v.value : v.kind]))).toEqual({ 'a-1': true, 'b-1': true, nope: false });
    const down = await gce.instancesShutdown(nodes);
    expect(Object.fromEntries([...down].map(([k, v]) => [k, v.kind === 'found' ? v.value : v.kind]))).toEqual({ 'a-1': false, 'b-1': true, nope: 'notFound' });
  });

  it('a transient failure is retried within the call', async () => {
    emu.failNext({ status: 503, message: 'backend unavailable' });
    expect((await gce.instancesMetadata([{ name: 'a-1' }])).get('a-1')?.kind).toBe('found');
    expect(emu.count('aggregatedList')).toBe(2);
  });

  it('an API failure makes every node a retryable error, then recovers', async () => {
    emu.setOutage(503);
    const res = await gce.instancesMetadata([{ name: 'a-1' }, { name: 'a-2' }]);
    for (const r of res.values()) {
      expect(r.kind).toBe('error');
      expect(r.kind === 'error' && r.error.message).toMatch(/listing instances of project e2e-proj failed/);
    }
    expect(emu.count('aggregatedList')).toBeGreaterThan(1);
    emu.setOutage(undefined);
    emu.failNext({ status: 403, message: 'Required compute.instances.list permission' });
    const denied = await gce.instancesExist([{ name: 'a-1' }]);
    expect(denied.get('a-1')).toMatchObject({ kind: 'error', error: { message: expect.stringMatching(/compute\.instances\.list permission/) } });
    expect((await gce.instancesMetadata([{ name: 'a-1' }])).get('a-1')?.kind).toBe('found');
  });

  it('an unreachable zone never turns its nodes into notFound', async () => {
    emu.setUnreachable(PROJECT, 'us-central1-b', true);
    const res = await gce.instancesExist([
      { name: 'b-1', providerID: `gce://${PROJECT}/us-central1-b/b-1` },
      { name: 'b-2' },
      { name: 'a-1', providerID: `gce://${PROJECT}/us-central1-a/a-1` },
      { name: 'a-3', providerID: `gce://${PROJECT}/us-central1-a/a-3` },
    ]);
    expect(res.get('b-1')?.kind).toBe('error');
    expect(res.get('b-2')?.kind).toBe('error');
    expect(res.get('a-1')).toEqual({ kind: 'found', value: true });
    expect(res.get('a-3')).toEqual({ kind: 'found', value: false });
  });

  it('an aborted round rejects instead of reporting per-node errors', async () => {
    const ac = new AbortController();
    ac.abort(new Error('resync cancelled'));
    await expect(gce.instancesMetadata([{ name: 'a-1' }], ac.signal)).rejects.toThrow(/resync cancelled/);
  });

  it('a name in two zones is ambiguous without a providerID', async () => {
    emu.addInstance(PROJECT, 'us-central1-a', vm('dup', 5));
    emu.addInstance(PROJECT, 'us-central1-b', vm('dup', 6));
    const res = await gce.instancesMetadata([{ name: 'dup' }, { name: 'dup-by-id', providerID: `gce://${PROJECT}/us-central1-b/dup` }]);
    expect(res.get('dup')?.kind === 'error' && res.get('dup')).toMatchObject({ error: { message: expect.stringMatching(/exists in zones us-central1-a, us-central1-b/) } });
    const byId = res.get('dup-by-id');
    expect(byId?.kind === 'found' && byId.value.addresses[0]).toEqual({ type: 'InternalIP', address: '10.0.0.8' });
  });

  it('a providerID naming another project (a project number, say) is looked up in this project, as cloud-provider-gcp does', async () => {
    // cloud-provider-gcp without --enable-multi-project ignores the providerID's project
    // (gce_instances.go InstanceMetadata / instanceByProviderID; TestProjectFromNodeProviderID):
    // here too, the zone and name are looked up in the configured project's listing.
    emu.addInstance(PROJECT, 'us-central1-a', vm('a-9', 10));
    try {
      const nodes = [
        { name: 'a-1', providerID: 'gce://123456789012/us-central1-a/a-1' },
        { name: 'a-9', providerID: 'gce://other-proj/us-central1-a/a-9' },
      ];
      const res = await gce.instancesMetadata(nodes);
      const a1 = res.get('a-1');
      // The node's own providerID is answered, as upstream answers it.
      expect(a1?.kind === 'found' && a1.value.providerID).toBe('gce://123456789012/us-central1-a/a-1');
      expect(a1?.kind === 'found' && a1.value.addresses[0]).toEqual({ type: 'InternalIP', address: '10.0.0.3' });
      // Upstream's test: same name and zone in both projects; the configured project's instance is the one read.
      const a9 = res.get('a-9');
      expect(a9?.kind === 'found' && a9.value).toMatchObject({ providerID: 'gce://other-proj/us-central1-a/a-9', addresses: [{ type: 'InternalIP', address: '10.0.0.12' }, { type: 'ExternalIP', address: '34.0.0.12' }, { type: 'InternalIP', address: 'fd20:0:0:a::' }] });
      expect(summarise(await gce.instancesExist(nodes))).toEqual({ 'a-1': true, 'a-9': true });
      expect(emu.count('get')).toBe(0);
    } finally {
      emu.removeInstance(PROJECT, 'us-central1-a', 'a-9');
    }
  });

  it('an instance missing from this project while the providerID names another: an error, never "gone"', async () => {
    // a-9 lives in other-proj only. Upstream would answer InstanceNotFound and delete the Node.
    const nodes = [{ name: 'a-9', providerID: 'gce://other-proj/us-central1-a/a-9' }, { name: 'gone', providerID: `gce://${PROJECT}/us-central1-a/gone` }];
    const res = await gce.instancesMetadata(nodes);
    expect(res.get('a-9')).toMatchObject({ kind: 'error', error: { message: 'gce: node a-9: no instance a-9 in e2e-proj/us-central1-a, and its providerID names project other-proj, which this adapter does not list; not taken for gone' } });
    expect(res.get('gone')?.kind).toBe('notFound');
    expect(summarise(await gce.instancesExist(nodes))).toEqual({ 'a-9': 'error', gone: false });
    expect(summarise(await gce.instancesShutdown(nodes))).toEqual({ 'a-9': 'error', gone: 'notFound' });
  });

  it('rejects a malformed providerID, per node', async () => {
    const res = await gce.instancesMetadata([{ name: 'y', providerID: 'aws:///us-east-1a/i-0123' }, { name: 'a-1' }]);
    expect(res.get('y')).toMatchObject({ kind: 'error', error: { message: expect.stringMatching(/does not start with gce:\/\//) } });
    expect(res.get('a-1')?.kind).toBe('found');
  });

  it('pod ranges by the stack type, apart from the addresses: a single-stack node of a dual-stack cluster gets none and says why; host bits are a note', async () => {
    const zone = 'us-central1-a';
    emu.addInstance(PROJECT, zone, computeInstance(IPV4_ONLY_NIC, { name: 'v4-only' }));
    emu.addInstance(PROJECT, zone, computeInstance({ aliasIpRanges: undefined }, { name: 'v6-only' }));
    emu.addInstance(PROJECT, zone, computeInstance({ aliasIpRanges: [{ ipCidrRange: '10.10.10.10/24', subnetworkRangeName: 'pods' }] }, { name: 'host-bits' }));
    emu.addInstance(PROJECT, zone, computeInstance({ aliasIpRanges: [{ ipCidrRange: 'not-a-range' }] }, { name: 'junk' }));
    try {
      const names = ['v4-only', 'v6-only', 'host-bits', 'junk'];
      const res = await gce.instancesMetadata(names.map((n) => ({ name: n, providerID: `gce://${PROJECT}/${zone}/${n}` })));
      const value = (n: string) => {
        const r = res.get(n);
        if (r?.kind !== 'found') throw new Error(`${n}: ${r?.kind === 'error' ? r.error.message : String(r?.kind)}`);
        return r.value;
      };
      expect(value('v4-only').podCIDRs).toBeUndefined();
      expect(value('v4-only').podCIDRDetails).toEqual({ missing: 'gce: instance v4-only: stack-type IPV4_IPV6: nic0 has the alias IP range 10.4.1.0/24 but no IPv6 address; a dual-stack node needs both' });
      expect(value('v4-only').addresses).toEqual([{ type: 'InternalIP', address: '10.128.0.7' }, { type: 'ExternalIP', address: '34.72.10.5' }]);
      expect(value('v6-only').podCIDRDetails?.missing).toMatch(/nic0 has the IPv6 address 2600:1900:4000:7a1b:0:0:0:0 but no alias IP range/);
      expect(value('host-bits').podCIDRs).toEqual(['10.10.10.0/24', '2600:1900:4000:7a1b::/112']);
      expect(value('host-bits').podCIDRDetails).toEqual({ notes: ['the alias IP range 10.10.10.10/24 of nic0 has host bits set; its network 10.10.10.0/24 is the pod range'] });
      // An unreadable range costs the pod ranges only, never the addresses.
      expect(value('junk').addresses[0]).toEqual({ type: 'InternalIP', address: '10.128.0.7' });
      expect(value('junk').podCIDRDetails?.missing).toMatch(/aliasIpRanges\[0\]\.ipCidrRange: "not-a-range" is not a CIDR/);

      const v6 = await provider(emu, { stackType: 'IPV6' });
      try {
        const r6 = await v6.instancesMetadata([{ name: 'host-bits' }, { name: 'v4-only' }]);
        // An IPv6 cluster and a dual-stack node: the IPv6 range alone, as upstream.
        expect(r6.get('host-bits')?.kind === 'found' && r6.get('host-bits')).toMatchObject({ value: { podCIDRs: ['2600:1900:4000:7a1b::/112'] } });
        expect(r6.get('v4-only')).toMatchObject({ kind: 'found', value: { podCIDRDetails: { missing: expect.stringMatching(/stack-type IPV6: nic0 has no IPv6 address/) } } });
      } finally {
        await v6.close();
      }
    } finally {
      for (const n of ['v4-only', 'v6-only', 'host-bits', 'junk']) emu.removeInstance(PROJECT, zone, n);
    }
  });

  it('with zones configured, lists each zone and leaves other zones alone', async () => {
    const zonal = await provider(emu, { zones: ['us-central1-a', 'us-central1-b'] });
    try {
      const res = await zonal.instancesExist([{ name: 'a-1' }, { name: 'b-1' }, { name: 'c-1' }]);
      expect(Object.fromEntries([...res].map(([k, v]) => [k, v.kind === 'found' ? v.value : v.kind]))).toEqual({ 'a-1': true, 'b-1': true, 'c-1': false });
      expect(emu.count('list')).toBe(2);
      expect(emu.count('aggregatedList')).toBe(0);
      // One zone failing: its nodes are errors, the other zone still answers.
      emu.setUnreachable(PROJECT, 'us-central1-b', true);
      const partial = await zonal.instancesExist([{ name: 'a-1' }, { name: 'b-1', providerID: `gce://${PROJECT}/us-central1-b/b-1` }]);
      expect(partial.get('a-1')).toEqual({ kind: 'found', value: true });
      expect(partial.get('b-1')?.kind).toBe('error');
    } finally {
      await zonal.close();
    }
  });

  it('calls within the listing max age share one listing; a node missing from it is looked up afresh', async () => {
    let clock = 1_000_000;
    const cached = await provider(emu, {}, { now: () => clock });
    try {
      expect((await cached.instancesMetadata([{ name: 'a-1' }])).get('a-1')?.kind).toBe('found');
      clock += 1_000;
      expect(summarise(await cached.instancesExist([{ name: 'a-2' }, { name: 'b-1' }]))).toEqual({ 'a-2': true, 'b-1': true });
      expect(summarise(await cached.instancesShutdown([{ name: 'b-1' }]))).toEqual({ 'b-1': true });
      expect(emu.count('aggregatedList')).toBe(1);

      // An instance created after the listing: never reported missing from the old listing.
      emu.addInstance(PROJECT, 'us-central1-b', vm('new-1', 7));
      clock += 1_000;
      expect(summarise(await cached.instancesExist([{ name: 'a-1' }, { name: 'new-1' }]))).toEqual({ 'a-1': true, 'new-1': true });
      expect(emu.count('aggregatedList')).toBe(2);

      // A deletion shows once the listing is older than the max age (the accepted staleness).
      emu.removeInstance(PROJECT, 'us-central1-a', 'a-2');
      expect(summarise(await cached.instancesExist([{ name: 'a-2' }]))).toEqual({ 'a-2': true });
      clock += GCE_LISTING_MAX_AGE_MS + 1;
      expect(summarise(await cached.instancesExist([{ name: 'a-2' }]))).toEqual({ 'a-2': false });
      expect(emu.count('aggregatedList')).toBe(3);

      // Concurrent calls wait on one listing.
      clock += GCE_LISTING_MAX_AGE_MS + 1;
      await Promise.all([cached.instancesMetadata([{ name: 'a-1' }]), cached.instancesExist([{ name: 'b-1' }]), cached.instancesShutdown([{ name: 'a-1' }])]);
      expect(emu.count('aggregatedList')).toBe(4);
    } finally {
      emu.removeInstance(PROJECT, 'us-central1-b', 'new-1');
      await cached.close();
    }
  });

  it('a failed listing is not reused', async () => {
    const cached = await provider(emu, {}, {});
    try {
      emu.failNext({ status: 403, message: 'denied' });
      expect((await cached.instancesExist([{ name: 'a-1' }])).get('a-1')?.kind).toBe('error');
      expect(summarise(await cached.instancesExist([{ name: 'a-1' }]))).toEqual({ 'a-1': true });
      expect(emu.count('aggregatedList')).toBe(2);
    } finally {
      await cached.close();
    }
  });

  it('IPV4 stack: the IPv6 address is reported after the IPv4 ones (as cloud-provider-gcp does), no IPv6 range', async () => {
    const v4 = await provider(emu, { stackType: 'IPV4' });
    try {
      const r = (await v4.instancesMetadata([{ name: 'a-1' }])).get('a-1');
      expect(r?.kind === 'found' && r.value.addresses.map((a) => a.address)).toEqual(['10.0.0.3', '34.0.0.3', 'fd20:0:0:1::']);
      expect(r?.kind === 'found' && r.value.podCIDRs).toEqual(['10.64.1.0/24']);
    } finally {
      await v4.close();
    }
  });
});

describe('gce provider paging at scale', () => {
  const emu = new GceEmulator();
  let gce: CloudProvider;
  let dir: string;
  const zones = ['us-central1-a', 'us-central1-b', 'us-central1-c', 'us-central1-f'];
  const N = 5000;

  beforeAll(async () => {
    await emu.start();
    for (let i = 0; i < N; i++) emu.addInstance(PROJECT, zones[i % zones.length], vm(`node-${String(i).padStart(4, '0')}`, i));
    // Built the way the CLI builds it: from a gce.conf pointing at the emulator.
    dir = await mkdtemp(path.join(tmpdir(), 'gce-conf-'));
    const conf = path.join(dir, 'gce.conf');
    await writeFile(conf, `[global]\nproject-id = ${PROJECT}\napi-endpoint = ${emu.url}/compute/v1/\nstack-type = IPV4\n`);
    gce = await createGceProvider({ cloudConfig: await readCloudConfig(conf) }, { authClient: staticTokenAuthClient() });
  });
  afterAll(async () => {
    await gce?.close?.();
    await emu.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a resync of 5,000 nodes costs one aggregatedList page per 500 instances and no get', async () => {
    const nodes = Array.from({ length: N }, (_, i) => ({ name: `node-${String(i).padStart(4, '0')}` }));
    const res = await gce.instancesMetadata(nodes);
    expect(res.size).toBe(N);
    expect([...res.values()].every((r) => r.kind === 'found')).toBe(true);
    const n4321 = res.get('node-4321');
    expect(n4321?.kind === 'found' && n4321.value.addresses[0]).toEqual({ type: 'InternalIP', address: `10.0.${Math.floor(4321 / 250)}.${(4321 % 250) + 2}` });
    expect(n4321?.kind === 'found' && n4321.value.zone).toBe(zones[4321 % zones.length]);
    const pages = emu.requests.filter((r) => r.kind === 'aggregatedList');
    expect(pages.length).toBe(Math.ceil(N / 500));
    expect(pages.every((p) => p.query.maxResults === '500' && p.query.filter === undefined)).toBe(true);
    expect(pages.map((p) => p.returned)).toEqual(Array(10).fill(500));
    // Every page after the first continues from the token the previous one returned.
    expect(pages.slice(1).every((p) => typeof p.query.pageToken === 'string')).toBe(true);
    expect(emu.count('get')).toBe(0);
  });

  it('the same resync asked in batches of 500, as the controller asks, still costs 10 pages', async () => {
    emu.requests.length = 0;
    const fresh = await createGceProvider({ cloudConfig: await readCloudConfig(path.join(dir, 'gce.conf')) }, { authClient: staticTokenAuthClient() });
    try {
      for (let b = 0; b < N; b += 500) {
        const batch = Array.from({ length: 500 }, (_, i) => ({ name: `node-${String(b + i).padStart(4, '0')}` }));
        const res = await fresh.instancesMetadata(batch);
        expect([...res.values()].every((r) => r.kind === 'found')).toBe(true);
      }
      expect(emu.count('aggregatedList')).toBe(Math.ceil(N / 500));
      expect(emu.count('get')).toBe(0);
    } finally {
      await fresh.close?.();
    }
  });
});

describe('CloudAllocator with the gce provider (dual-stack cluster) through the API server double', () => {
  const cluster = useDouble();

  it('writes both ranges or none: a node lacking one family waits with a Warning and gets both once the cloud has them; host bits are written as the network', async () => {
    const emu = new GceEmulator();
    await emu.start();
    const zone = 'us-central1-a';
    emu.addInstance(PROJECT, zone, computeInstance({}, { name: 'both' }));
    emu.addInstance(PROJECT, zone, computeInstance({ ...IPV4_ONLY_NIC, aliasIpRanges: [{ ipCidrRange: '10.4.2.0/24' }] }, { name: 'v4-only' }));
    emu.addInstance(PROJECT, zone, computeInstance({ aliasIpRanges: [{ ipCidrRange: '10.10.10.10/24' }], ipv6AccessConfigs: [{ type: 'DIRECT_IPV6', externalIpv6: '2600:1900:4000:7a1c:0:0:0:0', externalIpv6PrefixLength: 96 }] }, { name: 'host-bits' }));
    const gce = await provider(emu);
    try {
      const r = await startReplica(cluster, { cloud: cloudRangesFromProvider(gce) });
      for (const name of ['both', 'v4-only', 'host-bits']) createNode(cluster.api, { name, tainted: false, providerID: `gce://${PROJECT}/${zone}/${name}` });
      await eventually(() => podCIDRsOf(cluster.api, 'both').length > 0 && podCIDRsOf(cluster.api, 'host-bits').length > 0 && r.events.for('v4-only').length > 0, { timeoutMs: 10_000, what: 'ranges and the Warning' });
      expect(podCIDRsOf(cluster.api, 'both')).toEqual(['10.4.1.0/24', '2600:1900:4000:7a1b::/112']);
      expect(podCIDRsOf(cluster.api, 'host-bits')).toEqual(['10.10.10.0/24', '2600:1900:4000:7a1c::/112']);
      expect(r.events.for('host-bits')).toEqual([expect.objectContaining({ type: 'Normal', reason: 'CloudRangeChosen', message: 'the alias IP range 10.10.10.10/24 of nic0 has host bits set; its network 10.10.10.0/24 is the pod range' })]);
      expect(r.controller.ledger.nodeAllocation('host-bits')?.podCIDRs).toEqual(['10.10.10.0/24', '2600:1900:4000:7a1c::/112']);
      // Never a single-family list: spec.podCIDRs could not be completed afterwards.
      expect(podCIDRsOf(cluster.api, 'v4-only')).toEqual([]);
      expect(r.events.for('v4-only')[0]).toMatchObject({ type: 'Warning', reason: 'CloudRangeNotAvailable', message: expect.stringMatching(/no pod range from the cloud: gce: instance v4-only: stack-type IPV4_IPV6: nic0 has the alias IP range 10\.4\.2\.0\/24 but no IPv6 address; a dual-stack node needs both/) });

      // The instance gets its IPv6 address: the retry writes both ranges.
      emu.addInstance(PROJECT, zone, computeInstance({ aliasIpRanges: [{ ipCidrRange: '10.4.2.0/24' }], ipv6AccessConfigs: [{ type: 'DIRECT_IPV6', externalIpv6: '2600:1900:4000:7a1d:0:0:0:0', externalIpv6PrefixLength: 96 }] }, { name: 'v4-only' }));
      await eventually(() => podCIDRsOf(cluster.api, 'v4-only').length > 0, { timeoutMs: 20_000, what: 'v4-only retried' });
      expect(podCIDRsOf(cluster.api, 'v4-only')).toEqual(['10.4.2.0/24', '2600:1900:4000:7a1d::/112']);
    } finally {
      await gce.close();
      await emu.stop();
    }
  }, 30_000);
});
