import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { AwsProvider, type AwsProviderOptions } from '../../../providers/aws/provider.js';
import { BackoffGate } from '../../../providers/aws/backoff.js';
import { EC2Emulator, type EmulatedInstance } from '../../emulators/ec2/server.js';
import type { InstanceMetadata, NodeRef } from '../../../providers/types.js';

const emu = new EC2Emulator();
let endpoint = '';
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'fake-secret' };
const providers: AwsProvider[] = [];

beforeAll(async () => {
  endpoint = await emu.start();
});
afterAll(async () => {
  for (const p of providers) p.close();
  await emu.stop();
});
beforeEach(() => {
  emu.reset();
});

function provider(options: AwsProviderOptions = {}): AwsProvider {
  const p = new AwsProvider({
    endpoint,
    credentials,
    region: 'us-east-1',
    // SDK retries and its adaptive rate limiter off: throttling is exercised through our own
    // gate, with millisecond delays.
    maxAttempts: 1,
    retryMode: 'standard',
    gate: new BackoffGate({ baseMs: 1, maxMs: 5 }),
    ...options,
  });
  providers.push(p);
  return p;
}

/** A valid 17-hex-digit instance ID for n. */
const iid = (n: number): string => `i-${n.toString(16).padStart(17, '0')}`;

function instance(n: number, extra: Partial<EmulatedInstance> = {}): EmulatedInstance {
  const ip = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  return {
    instanceId: iid(n),
    availabilityZone: 'us-east-1a',
    instanceType: 'm5.large',
    privateDnsName: `ip-${ip.replace(/\./g, '-')}.ec2.internal`,
    privateIp: ip,
    networkInterfaces: [{ deviceIndex: 0, privateIps: [ip] }],
    ...extra,
  };
}

const byProviderID = (n: number, name = `node-${n}`): NodeRef => ({ name, providerID: `aws:///us-east-1a/${iid(n)}` });

describe('AwsProvider through the EC2 emulator', () => {
  it('maps a found instance to metadata', async () => {
    emu.add(
      instance(1, {
        publicIp: '54.0.0.1',
        publicDnsName: 'ec2-54-0-0-1.compute-1.amazonaws.com',
        networkInterfaces: [
          { deviceIndex: 1, privateIps: ['10.1.0.1'], ipv6: ['2600:1F18::1:0:0:1'] },
          { deviceIndex: 0, privateIps: ['10.0.0.1', '10.0.0.11'], publicIp: '54.0.0.1', ipv6: ['2600:1f18::1'] },
        ],
      }),
    );
    const p = provider({ config: { nodeIPFamilies: ['ipv4', 'ipv6'] } });
    const res = await p.instancesMetadata([byProviderID(1)]);
    expect(res.get('node-1')).toEqual({
      kind: 'found',
      value: {
        providerID: `aws:///us-east-1a/${iid(1)}`,
        instanceType: 'm5.large',
        zone: 'us-east-1a',
        region: 'us-east-1',
        addresses: [
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'InternalIP', address: '10.0.0.11' },
          { type: 'InternalIP', address: '10.1.0.1' },
          { type: 'ExternalIP', address: '54.0.0.1' },
          { type: 'InternalDNS', address: 'ip-10-0-0-1.ec2.internal' },
          { type: 'Hostname', address: 'ip-10-0-0-1.ec2.internal' },
          { type: 'ExternalDNS', address: 'ec2-54-0-0-1.compute-1.amazonaws.com' },
          { type: 'InternalIP', address: '2600:1f18::1' },
          { type: 'InternalIP', address: '2600:1f18::1:0:0:1' },
        ],
        // No delegated prefixes: no pod CIDRs, and the reason names the primary interface.
        podCIDRDetails: {
          exclusive: true,
          missing: `interface eni-${iid(1).slice(2)}1 (device index 0) of instance ${iid(1)} has no IPv4 prefix (Ipv4Prefixes is empty); ` +
            `interface eni-${iid(1).slice(2)}1 (device index 0) of instance ${iid(1)} has no IPv6 prefix (Ipv6Prefixes is empty)`,
        },
      },
    });
    expect(emu.describeCalls()).toBe(1);
  });

  it('answers stopped, terminated and missing instances', async () => {
    emu.add(instance(1), instance(2, { state: 'stopped' }), instance(3, { state: 'terminated' }));
    const p = provider();
    const nodes = [byProviderID(1), byProviderID(2), byProviderID(3), byProviderID(4)];
    const md = await p.instancesMetadata(nodes);
    expect([...md.values()].map((r) => r.kind)).toEqual(['found', 'found', 'notFound', 'notFound']);
    const down = await p.instancesShutdown(nodes);
    expect(down.get('node-1')).toEqual({ kind: 'found', value: false });
    expect(down.get('node-2')).toEqual({ kind: 'found', value: true });
    expect(down.get('node-3')?.kind).toBe('notFound');
    expect(down.get('node-4')?.kind).toBe('notFound');
    const exist = await p.instancesExist(nodes);
    expect([...exist.values()]).toEqual([true, true, false, false].map((value) => ({ kind: 'found', value })));
  });

  it('keeps answering the rest of a batch when some IDs do not exist or are malformed', async () => {
    for (let n = 1; n <= 6; n++) emu.add(instance(n));
    const p = provider();
    const nodes = [byProviderID(1), byProviderID(2), byProviderID(90), byProviderID(3), byProviderID(91), { name: 'bad', providerID: 'aws:///us-east-1a/i-NOTHEX' }, byProviderID(4)];
    const res = await p.instancesMetadata(nodes);
    expect(res.get('node-1')?.kind).toBe('found');
    expect(res.get('node-2')?.kind).toBe('found');
    expect(res.get('node-3')?.kind).toBe('found');
    expect(res.get('node-4')?.kind).toBe('found');
    expect(res.get('node-90')).toMatchObject({ kind: 'notFound', reason: `EC2 instance ${iid(90)} does not exist` });
    expect(res.get('node-91')?.kind).toBe('notFound');
    expect(res.get('bad')).toMatchObject({ kind: 'error', retryable: true });
    const bad = res.get('bad');
    expect(bad?.kind === 'error' && bad.error.message).toMatch(/malformed.*i-NOTHEX/);
    // One call fails on the malformed ID, one on the two missing IDs, one succeeds.
    expect(emu.requests.map((r) => r.status)).toEqual([400, 400, 200]);
    expect(emu.requests[2]!.instanceIds).toEqual([iid(1), iid(2), iid(3), iid(4)]);
  });

  it('splits a batch when EC2 does not say which ID it rejected', async () => {
    for (let n = 1; n <= 4; n++) emu.add(instance(n));
    const p = provider();
    emu.failNext('InvalidInstanceID.NotFound', 'One or more instance IDs do not exist');
    const res = await p.instancesMetadata([1, 2, 3, 4].map((n) => byProviderID(n)));
    expect([...res.values()].map((r) => r.kind)).toEqual(['found', 'found', 'found', 'found']);
    expect(emu.describeCalls()).toBe(3);
  });

  it('follows NextToken pagination', async () => {
    for (let n = 1; n <= 23; n++) emu.add(instance(n));
    emu.defaultPageSize = 10;
    const p = provider();
    const res = await p.instancesMetadata(Array.from({ length: 23 }, (_, k) => byProviderID(k + 1)));
    expect([...res.values()].every((r) => r.kind === 'found')).toBe(true);
    expect(emu.requests.map((r) => r.nextToken !== undefined)).toEqual([false, true, true]);
    expect(p.apiCalls).toBe(3);
  });

  it('backs off on throttling and then succeeds, sharing the gate', async () => {
    emu.add(instance(1));
    const gate = new BackoffGate({ baseMs: 1, maxMs: 4 });
    const p = provider({ gate });
    emu.throttleNext(3);
    const res = await p.instancesMetadata([byProviderID(1)]);
    expect(res.get('node-1')?.kind).toBe('found');
    expect(emu.requests.map((r) => r.status)).toEqual([503, 503, 503, 200]);
    expect(gate.throttles).toBe(3);
  });

  it('lets the SDK adaptive retry absorb a throttle in the production configuration', async () => {
    emu.add(instance(1));
    const p = provider({ maxAttempts: 2, retryMode: 'adaptive', throttleRetries: 0 });
    emu.throttleNext(1);
    const res = await p.instancesMetadata([byProviderID(1)]);
    expect(res.get('node-1')?.kind).toBe('found');
    expect(emu.requests.map((r) => r.status)).toEqual([503, 200]);
    expect(p.apiCalls).toBe(1);
  });

  it('reports retryable errors when throttling outlasts the retries', async () => {
    emu.add(instance(1));
    const p = provider({ throttleRetries: 2 });
    emu.throttleNext(10);
    const res = await p.instancesMetadata([byProviderID(1), { name: 'by-dns' }]);
    expect(res.get('node-1')).toMatchObject({ kind: 'error', retryable: true });
    expect(res.get('by-dns')).toMatchObject({ kind: 'error', retryable: true });
    const r = res.get('node-1');
    expect(r?.kind === 'error' && r.error.name).toBe('RequestLimitExceeded');
  });

  it('finds nodes by instance-ID node name and by private DNS name with the cluster tag', async () => {
    emu.add(
      instance(1, { privateDnsName: 'ip-10-0-0-1.ec2.internal', tags: { 'kubernetes.io/cluster/prod': 'owned' } }),
      instance(2, { privateDnsName: 'ip-10-0-0-2.ec2.internal', tags: { KubernetesCluster: 'prod' } }),
      instance(3, { privateDnsName: 'ip-10-0-0-3.ec2.internal', tags: { 'kubernetes.io/cluster/other': 'owned' } }),
      instance(4, { privateDnsName: 'ip-10-0-0-4.ec2.internal', tags: { 'kubernetes.io/cluster/prod': 'shared' }, state: 'terminated' }),
      instance(5, { privateDnsName: 'ip-10-0-0-4.ec2.internal', tags: { 'kubernetes.io/cluster/prod': 'shared' }, state: 'stopped' }),
      instance(6, { privateDnsName: 'ip-10-0-0-6.ec2.internal', tags: { 'kubernetes.io/cluster/prod': '' } }),
      instance(7, { privateDnsName: 'ip-10-0-0-6.ec2.internal', tags: { 'kubernetes.io/cluster/prod': 'owned' } }),
      instance(8),
    );
    const p = provider({ config: { clusterID: 'prod' } });
    const names = ['ip-10-0-0-1.ec2.internal', 'ip-10-0-0-2.ec2.internal', 'ip-10-0-0-3.ec2.internal', 'ip-10-0-0-4.ec2.internal', 'ip-10-0-0-6.ec2.internal', `${iid(8)}.ec2.internal`];
    const res = await p.instancesMetadata(names.map((name) => ({ name })));
    const idOf = (name: string): string | undefined => {
      const r = res.get(name);
      return r?.kind === 'found' ? r.value.providerID : r?.kind;
    };
    expect(names.map(idOf)).toEqual([
      `aws:///us-east-1a/${iid(1)}`,
      `aws:///us-east-1a/${iid(2)}`,
      'notFound',
      `aws:///us-east-1a/${iid(5)}`,
      'error',
      `aws:///us-east-1a/${iid(8)}`,
    ]);
    const dup = res.get('ip-10-0-0-6.ec2.internal');
    expect(dup?.kind === 'error' && dup.error.message).toMatch(/several EC2 instances/);
    const filterCall = emu.requests.find((r) => r.filters.length > 0)!;
    expect(filterCall.filters).toEqual([
      { name: 'private-dns-name', values: names.slice(0, 5) },
      { name: 'instance-state-name', values: ['pending', 'running', 'shutting-down', 'stopping', 'stopped'] },
    ]);
    expect(filterCall.maxResults).toBe(1000);
    expect(emu.describeCalls()).toBe(2);
  });

  it('chunks private DNS name filters at 150 values', async () => {
    const p = provider({ config: { clusterID: 'prod' } });
    await p.instancesMetadata(Array.from({ length: 301 }, (_, k) => ({ name: `node-${k}` })));
    expect(emu.requests.map((r) => r.filters[0]!.values.length)).toEqual([150, 150, 1]);
  });

  it('finds an instance whose providerID has more path segments, the last one being the instance (issue 39, item 1)', async () => {
    emu.add(instance(1), instance(2));
    const p = provider();
    // The forms of cloud-provider-aws's instances_v2_test.go and of an empty middle segment.
    const nodes = [
      { name: 'node-1', providerID: `aws:///us-east-1a/1abc-2def/${iid(1)}` },
      { name: 'node-2', providerID: `aws:///us-east-1a//${iid(2)}` },
    ];
    const res = await p.instancesMetadata(nodes);
    // Answered with the node's own providerID, as cloud-provider-aws's InstanceMetadata answers.
    expect(res.get('node-1')).toMatchObject({ kind: 'found', value: { providerID: nodes[0]!.providerID, zone: 'us-east-1a' } });
    expect(res.get('node-2')).toMatchObject({ kind: 'found', value: { providerID: nodes[1]!.providerID } });
    expect(emu.requests.map((r) => r.instanceIds)).toEqual([[iid(1), iid(2)]]);
    expect([...(await p.instancesExist(nodes)).values()]).toEqual([{ kind: 'found', value: true }, { kind: 'found', value: true }]);
  });

  it("answers with the node's own providerID in every form it reads, and the canonical form for a node without one (issue 40)", async () => {
    emu.add(instance(1), instance(2), instance(3), instance(4));
    const p = provider();
    // cloud-provider-aws's InstanceMetadata returns spec.providerID as the node has it
    // (instances_v2.go getProviderID) and builds aws:///<zone>/<id> only for a node without one.
    const nodes = [
      { name: 'node-1', providerID: `aws:////${iid(1)}` },
      { name: 'node-2', providerID: iid(2) },
      { name: 'node-3', providerID: `aws:///eu-west-1c/${iid(3)}` },
      { name: iid(4) },
    ];
    const res = await p.instancesMetadata(nodes);
    expect(nodes.map((n) => res.get(n.name))).toMatchObject([
      { kind: 'found', value: { providerID: `aws:////${iid(1)}`, zone: 'us-east-1a' } },
      { kind: 'found', value: { providerID: iid(2), zone: 'us-east-1a' } },
      // The zone is the instance's, whatever the providerID's first segment says.
      { kind: 'found', value: { providerID: `aws:///eu-west-1c/${iid(3)}`, zone: 'us-east-1a' } },
      { kind: 'found', value: { providerID: `aws:///us-east-1a/${iid(4)}`, zone: 'us-east-1a' } },
    ]);
  });

  it('IPv6 first with IPv6 on several interfaces listed out of order: device-index order, as for IPv4 (issue 39, item 4)', async () => {
    // EC2 lists an instance's interfaces in no promised order; here the secondary comes first.
    emu.add(
      instance(1, {
        privateDnsName: 'ip-10-0-0-1.ec2.internal',
        networkInterfaces: [
          { deviceIndex: 2, privateIps: ['10.2.0.1'], ipv6: ['2600:1f18::2:1'] },
          { deviceIndex: 1, privateIps: ['10.1.0.1'], ipv6: ['2600:1f18::1:1', '2600:1f18::1:2'] },
          { deviceIndex: 0, privateIps: ['10.0.0.1'], ipv6: ['2600:1f18::1'] },
        ],
      }),
    );
    const p = provider({ config: { nodeIPFamilies: ['ipv6', 'ipv4'] } });
    const res = await p.instancesMetadata([byProviderID(1)]);
    // cloud-provider-aws would list the IPv6 addresses in EC2's order (::2:1, ::1:1, ::1) and so
    // give the node a secondary interface's address as its first InternalIP.
    expect(res.get('node-1')).toMatchObject({
      kind: 'found',
      value: {
        addresses: [
          { type: 'InternalIP', address: '2600:1f18::1' },
          { type: 'InternalIP', address: '2600:1f18::1:1' },
          { type: 'InternalIP', address: '2600:1f18::2:1' },
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'InternalIP', address: '10.1.0.1' },
          { type: 'InternalIP', address: '10.2.0.1' },
          { type: 'InternalDNS', address: 'ip-10-0-0-1.ec2.internal' },
          { type: 'Hostname', address: 'ip-10-0-0-1.ec2.internal' },
        ],
      },
    });
  });

  it('reports an unparseable providerID as an error without calling EC2', async () => {
    const p = provider();
    const res = await p.instancesMetadata([{ name: 'n', providerID: 'gce://project/zone/n' }]);
    const r = res.get('n');
    expect(r?.kind === 'error' && r.error.message).toMatch(/providerID "gce:\/\/project\/zone\/n"/);
    expect(emu.describeCalls()).toBe(0);
  });

  it('resyncs 5,000 nodes with at most 10 DescribeInstances calls', async () => {
    for (let n = 1; n <= 5000; n++) emu.add(instance(n));
    const p = provider();
    const nodes = Array.from({ length: 5000 }, (_, k) => byProviderID(k + 1));
    const res = await p.instancesMetadata(nodes);
    expect([...res.values()].filter((r) => r.kind === 'found')).toHaveLength(5000);
    expect(emu.describeCalls()).toBeLessThanOrEqual(10);
    expect(emu.requests.every((r) => r.instanceIds.length <= 500)).toBe(true);
    expect(new Set(emu.requests.flatMap((r) => r.instanceIds)).size).toBe(5000);
  });

  it('uses AWS_ENDPOINT_URL_EC2 when no endpoint is given', async () => {
    emu.add(instance(1));
    const saved = process.env.AWS_ENDPOINT_URL_EC2;
    process.env.AWS_ENDPOINT_URL_EC2 = endpoint;
    try {
      const p = await AwsProvider.create({ credentials, config: { region: 'eu-west-1' }, maxAttempts: 1, retryMode: 'standard' });
      providers.push(p);
      const res = await p.instancesMetadata([byProviderID(1)]);
      expect(res.get('node-1')).toMatchObject({ kind: 'found', value: { region: 'eu-west-1' } });
      expect(emu.describeCalls()).toBe(1);
    } finally {
      if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_EC2;
      else process.env.AWS_ENDPOINT_URL_EC2 = saved;
    }
  });

  it('rejects a bad family list when built', () => {
    expect(() => provider({ config: { nodeIPFamilies: ['ipv4', 'ipx' as 'ipv4'] } })).toThrow(/unknown family "ipx"/);
  });

  it('honours an abort signal', async () => {
    emu.add(instance(1));
    const p = provider();
    const ac = new AbortController();
    ac.abort(new Error('stopping'));
    await expect(p.instancesMetadata([byProviderID(1)], ac.signal)).rejects.toThrow('stopping');
  });
});

describe('AwsProvider: pod CIDRs from delegated prefixes', () => {
  const meta = async (p: AwsProvider, n: number): Promise<InstanceMetadata> => {
    const r = (await p.instancesMetadata([byProviderID(n)])).get(`node-${n}`);
    if (r?.kind !== 'found') throw new Error(`node-${n}: ${JSON.stringify(r)}`);
    return r.value;
  };
  const withPrefixes = (n: number, o: { v4?: string[]; v6?: string[]; limit?: number } = {}): EmulatedInstance =>
    instance(n, { networkInterfaces: [{ networkInterfaceId: `eni-${n}`, deviceIndex: 0, privateIps: [`10.0.0.${n}`], ipv4Prefixes: o.v4, ipv6Prefixes: o.v6, ipv6PrefixLimit: o.limit, subnetIpv6Cidr: `2600:1f18:0:${n}::/64` }] });

  it('reads the prefixes from the one batched DescribeInstances, in the NodeIPFamilies order, with the choice explained', async () => {
    emu.add(withPrefixes(1, { v4: ['10.1.0.16/28', '10.1.0.0/28'], v6: ['2600:1f18:0:1:5::/80'] }), withPrefixes(2, { v4: ['10.1.1.0/28'] }));
    const p = provider({ config: { nodeIPFamilies: ['ipv6', 'ipv4'] } });
    const res = await p.instancesMetadata([byProviderID(1), byProviderID(2)]);
    const one = res.get('node-1');
    const two = res.get('node-2');
    expect(one?.kind === 'found' && one.value.podCIDRs).toEqual(['2600:1f18:0:1:5::/80', '10.1.0.0/27']);
    expect(one?.kind === 'found' && one.value.podCIDRDetails).toEqual({ exclusive: true, notes: ['interface eni-1: its 2 IPv4 prefixes form one aligned block, 10.1.0.0/27, the pod CIDR'] });
    // Dual-stack without an IPv6 prefix: no pod CIDRs at all, the missing family named; nothing to ask for.
    expect(two?.kind === 'found' && two.value.podCIDRs).toBeUndefined();
    expect(two?.kind === 'found' && two.value.podCIDRDetails).toEqual({ exclusive: true, missing: `interface eni-2 (device index 0) of instance ${iid(2)} has no IPv6 prefix (Ipv6Prefixes is empty)` });
    expect(emu.describeCalls()).toBe(1);
  });

  it('offers a request only with AssignIPv6PodPrefix, and only for a missing IPv6 prefix', async () => {
    emu.add(withPrefixes(1), withPrefixes(2, { v6: ['2600:1f18:0:2:1::/80'] }));
    const off = await meta(provider({ config: { nodeIPFamilies: ['ipv6'] } }), 1);
    expect(off.podCIDRDetails?.request).toBeUndefined();
    const on = provider({ config: { nodeIPFamilies: ['ipv6'], assignIPv6PodPrefix: true } });
    expect((await meta(on, 1)).podCIDRDetails?.request).toEqual({ target: 'eni-1', what: 'one IPv6 /80 prefix' });
    expect((await meta(on, 2)).podCIDRDetails?.request).toBeUndefined();
    expect(() => provider({ config: { nodeIPFamilies: ['ipv4'], assignIPv6PodPrefix: true } })).toThrow('assignIPv6PodPrefix needs nodeIPFamilies to include ipv6');
  });

  it('a prefix it cannot read costs the pod CIDRs only, not the node', async () => {
    emu.add(withPrefixes(1, { v4: ['10.1.0.0/33'] }));
    const m = await meta(provider(), 1);
    expect(m.addresses.length).toBeGreaterThan(0);
    expect(m.podCIDRs).toBeUndefined();
    expect(m.podCIDRDetails?.missing).toBe(`EC2 instance ${iid(1)}: NetworkInterfaces[0].Ipv4Prefixes[0].Ipv4Prefix: invalid CIDR "10.1.0.0/33": prefix length must be 0..32`);
  });

  describe('requestPodCIDRs: one AssignIpv6Addresses attempt, its outcome classified', () => {
    const ask = (p: AwsProvider, n: number) => p.requestPodCIDRs({ name: `node-${n}` }, { target: `eni-${n}`, what: 'one IPv6 /80 prefix' });
    // The main client retries (maxAttempts 3, as by default): the assign call must not.
    const assigning = () => provider({ config: { nodeIPFamilies: ['ipv6'], assignIPv6PodPrefix: true }, maxAttempts: 3 });

    it('done: the prefix shows in the next DescribeInstances', async () => {
      emu.add(withPrefixes(1));
      const p = assigning();
      expect(await ask(p, 1)).toEqual({ kind: 'done', detail: 'EC2 assigned 2600:1f18:0:1:1::/80 to eni-1' });
      expect((await meta(p, 1)).podCIDRs).toEqual(['2600:1f18:0:1:1::/80']);
      expect(emu.assignCalls()).toBe(1);
    });

    it('an answer lost after success is unknown, and is not sent again', async () => {
      emu.add(withPrefixes(1));
      emu.loseNextAssignAnswer('reset');
      const p = assigning();
      const out = await ask(p, 1);
      expect(out.kind).toBe('unknown');
      expect(emu.assignCalls()).toBe(1);
      expect(p.assignCalls).toBe(1);
      expect((await meta(p, 1)).podCIDRs).toEqual(['2600:1f18:0:1:1::/80']);
    });

    it('throttled: not applied, may be asked again; the interface limit: not applied, not to be asked again', async () => {
      emu.add(withPrefixes(1), withPrefixes(2, { limit: 0 }));
      emu.throttleNextAssign(1);
      const p = assigning();
      expect(await ask(p, 1)).toMatchObject({ kind: 'not-applied', retry: true, error: { name: 'RequestLimitExceeded' } });
      expect(await ask(p, 2)).toMatchObject({ kind: 'not-applied', retry: false, error: { name: 'PrivateIpAddressLimitExceeded' } });
      expect(emu.assignCalls()).toBe(2);
      expect((await meta(p, 1)).podCIDRs).toBeUndefined();
    });

    it('a server error is unknown (it may have come after the prefix was assigned)', async () => {
      emu.add(withPrefixes(1));
      emu.failNextAssign('InternalError', 'An internal error has occurred', 500);
      expect((await ask(assigning(), 1)).kind).toBe('unknown');
      expect(emu.assignCalls()).toBe(1);
    });

    it('with assignment off it sends nothing', async () => {
      emu.add(withPrefixes(1));
      expect(await ask(provider({ config: { nodeIPFamilies: ['ipv6'] } }), 1)).toMatchObject({ kind: 'not-applied', retry: false });
      expect(emu.assignCalls()).toBe(0);
    });
  });
});
