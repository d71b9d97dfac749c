// The aws adapter against cloud-provider-aws itself, live (issue 40): both answer the same EC2
// emulator (test/emulators/ec2/server.ts) for the same nodes, under the same cloud.conf.
// Upstream's side is its own code, run for real (test/kit/aws-oracle.ts: k8s.io/cloud-provider-aws
// v1.35.3's InstancesV2 InstanceMetadata, InstanceExists, InstanceShutdown and
// NodeAddressesByProviderID, its cloud built by its registered factory from the cloud.conf, EC2
// pointed at the emulator by [ServiceOverride]). Compared one by one: node addresses (in order),
// providerID, instance type, zone, region, whether the instance exists and whether it is shut down.
//
// Over every instance shape the emulator serves (interfaces in any order, device indexes, interfaces
// without an attachment or not in use, several private IPv4s, IPv6 on several interfaces, public
// IPv4 and DNS names, delegated prefixes, every instance state, missing instances) and every node
// form (each providerID form upstream reads, none with a private DNS name or an instance-ID name),
// under each NodeIPFamilies order: every answer agrees, except in the ways README lists among the
// deliberate deviations, each asserted here by its shape.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeAddress } from '../../../src/model/node-address.js';
import { parseAWSCloudConfig } from '../../../providers/aws/config.js';
import { AwsProvider } from '../../../providers/aws/provider.js';
import { BackoffGate } from '../../../providers/aws/backoff.js';
import type { InstanceMetadata, InstanceResult, NodeRef } from '../../../providers/types.js';
import { controlPlaneUnavailable } from '../../kit/controlplane.js';
import { awsOracleConfig, startAWSOracle, type AWSOracle, type AWSOracleAnswer } from '../../kit/aws-oracle.js';
import { EC2Emulator, type EmulatedInstance, type EmulatedInterface } from '../../emulators/ec2/server.js';

const skip = controlPlaneUnavailable();
const REGION = 'us-east-1';
const CLUSTER = 'diff';
const FAMILIES: readonly (readonly string[])[] = [['ipv4'], ['ipv6'], ['ipv4', 'ipv6'], ['ipv6', 'ipv4']];

/** A valid 17-hex-digit instance ID for n. */
const iid = (n: number): string => `i-${n.toString(16).padStart(17, '0')}`;
const dnsName = (n: number): string => `ip-10-9-${(n >> 8) & 255}-${n & 255}.ec2.internal`;

// Addresses from small pools, so that interfaces share and repeat them; one IPv6 in upper case
// and one not in canonical form, as EC2 never writes them but the mapping must not care.
const privateIPv4 = fc.constantFrom('10.0.0.1', '10.0.0.2', '10.0.1.5', '10.0.2.9', '172.16.0.4');
const ipv6 = fc.constantFrom('2600:1f18::1', '2600:1f18::2', '2600:1F18:0:0::3', '2600:1f18:0:1::a');
const publicIPv4 = fc.constantFrom('54.0.0.1', '3.3.3.3');

const iface: fc.Arbitrary<EmulatedInterface> = fc.record({
  status: fc.constantFrom('in-use', 'in-use', 'in-use', 'available', 'attaching'),
  deviceIndex: fc.option(fc.nat(3), { nil: undefined }),
  networkCardIndex: fc.option(fc.nat(1), { nil: undefined }),
  privateIps: fc.array(privateIPv4, { maxLength: 3 }),
  ipv6: fc.array(ipv6, { maxLength: 3 }),
  publicIp: fc.option(publicIPv4, { nil: undefined }),
  ipv4Prefixes: fc.option(fc.constant(['10.0.5.0/28']), { nil: undefined }),
  ipv6Prefixes: fc.option(fc.constant(['2600:1f18:0:9:1::/80']), { nil: undefined }),
}, { requiredKeys: ['status'] });

type NodeForm = 'providerID' | 'providerID-empty-zone' | 'providerID-long' | 'providerID-bare' | 'providerID-other-zone' | 'dns-name' | 'instance-id-name' | 'instance-id-fqdn' | 'missing';
const NODE_FORMS: readonly NodeForm[] = ['providerID', 'providerID-empty-zone', 'providerID-long', 'providerID-bare', 'providerID-other-zone', 'dns-name', 'instance-id-name', 'instance-id-fqdn', 'missing'];

interface Shape {
  state: string;
  instanceType: string;
  availabilityZone: string;
  /** The private DNS name is set (to this instance's own, unique name). */
  privateDns: boolean;
  publicDnsName: string;
  publicIp?: string;
  interfaces: EmulatedInterface[];
  tag: 'cluster' | 'legacy' | 'other';
  form: NodeForm;
}

const shape: fc.Arbitrary<Shape> = fc.record({
  state: fc.constantFrom('running', 'running', 'running', 'stopped', 'pending', 'stopping', 'shutting-down', 'terminated'),
  instanceType: fc.constantFrom('m5.large', 'c7g.xlarge'),
  availabilityZone: fc.constantFrom('us-east-1a', 'us-east-1b', 'us-east-1-wl1-bos-wlz-1'),
  privateDns: fc.boolean(),
  publicDnsName: fc.constantFrom('', '', 'ec2-54-0-0-1.compute-1.amazonaws.com'),
  publicIp: fc.option(publicIPv4, { nil: undefined }),
  interfaces: fc.array(iface, { maxLength: 4 }),
  tag: fc.constantFrom('cluster', 'cluster', 'legacy', 'other'),
  form: fc.constantFrom(...NODE_FORMS),
}, { requiredKeys: ['state', 'instanceType', 'availabilityZone', 'privateDns', 'publicDnsName', 'interfaces', 'tag', 'form'] });

interface Case {
  n: number;
  shape: Shape;
  instance: EmulatedInstance;
  node: NodeRef;
}

function caseOf(n: number, s: Shape): Case {
  const id = iid(n);
  const tags: Record<string, string> = s.tag === 'cluster' ? { [`kubernetes.io/cluster/${CLUSTER}`]: 'owned' } : s.tag === 'legacy' ? { KubernetesCluster: CLUSTER } : { 'kubernetes.io/cluster/other': 'owned' };
  const instance: EmulatedInstance = {
    instanceId: id,
    state: s.state,
    instanceType: s.instanceType,
    availabilityZone: s.availabilityZone,
    privateDnsName: s.privateDns ? dnsName(n) : '',
    publicDnsName: s.publicDnsName,
    ...(s.publicIp ? { publicIp: s.publicIp } : {}),
    networkInterfaces: s.interfaces.map((ni, k) => ({ ...ni, networkInterfaceId: `eni-${n.toString(16)}${k}` })),
    tags,
  };
  const name = `node-${n}`;
  const node: NodeRef = (() => {
    switch (s.form) {
      case 'providerID': return { name, providerID: `aws:///${s.availabilityZone}/${id}` };
      case 'providerID-empty-zone': return { name, providerID: `aws:////${id}` };
      // The form of upstream's instances_v2_test.go.
      case 'providerID-long': return { name, providerID: `aws:///${s.availabilityZone}/somename/${id}` };
      case 'providerID-bare': return { name, providerID: id };
      case 'providerID-other-zone': return { name, providerID: `aws:///eu-west-1c/${id}` };
      // Without a providerID, by private DNS name (an instance with none cannot be found this way).
      case 'dns-name': return { name: s.privateDns ? dnsName(n) : `ip-10-99-0-${n & 255}.ec2.internal` };
      // Resource-based names (rbnNamePrefix in upstream's aws.go).
      case 'instance-id-name': return { name: id };
      case 'instance-id-fqdn': return { name: `${id}.ec2.internal` };
      // A providerID naming an instance EC2 does not have.
      case 'missing': return { name, providerID: `aws:///${s.availabilityZone}/${iid(n + 0x100000)}` };
    }
  })();
  return { n, shape: s, instance, node };
}

interface Ours {
  metadata: InstanceResult<InstanceMetadata>;
  exists: InstanceResult<boolean>;
  shutdown: InstanceResult<boolean>;
}

/** Upstream's answer and ours for one case under one NodeIPFamilies. */
interface Pair {
  c: Case;
  families: readonly string[];
  theirs: AWSOracleAnswer;
  ours: Ours;
}

/** The kinds of difference README lists (or that are the same outcome said two ways), by name. */
const LISTED = {
  // README: "AWS with NodeIPFamilies ipv6 first, IPv6 on several interfaces".
  ipv6Order: 'IPv6 first: upstream keeps EC2\'s interface order for IPv6, here device-index order',
  // README: "An AWS instance that is terminated".
  terminated: 'a terminated instance: upstream answers its metadata (InstanceExists false), here it is not found',
} as const;

/** The answers agree on a field, or the difference is one of LISTED (returned), or it is a failure. */
function classify(p: Pair): string[] {
  const { c, theirs, ours } = p;
  const where = `case ${c.n} (${JSON.stringify(c.shape)}), node ${JSON.stringify(c.node)}, families ${p.families.join(',')}:\n upstream ${JSON.stringify(theirs)}\n ours ${JSON.stringify(ours)}`;
  expect(theirs.error, where).toBeUndefined();
  const kinds: string[] = [];

  // Exists: upstream's bool (or an error) against ours.
  if (theirs.existsError !== undefined) {
    // Upstream fails where it cannot look the instance up: a DNS-named node it cannot find.
    expect(ours.exists.kind === 'error' || (ours.exists.kind === 'found' && ours.exists.value === false), where).toBe(true);
  } else {
    expect(ours.exists, where).toEqual({ kind: 'found', value: theirs.exists });
  }

  // Metadata.
  const md = theirs.metadata;
  if (md === undefined) {
    // Upstream has none: the instance is missing or cannot be found; ours is not found (or an error
    // where upstream's answer was one too).
    expect(ours.metadata.kind, where).not.toBe('found');
  } else if (ours.metadata.kind !== 'found') {
    // Upstream answers for a terminated instance; here it is gone.
    expect(c.instance.state, where).toBe('terminated');
    expect(ours.metadata.kind, where).toBe('notFound');
    expect(theirs.exists, where).toBe(false);
    kinds.push(LISTED.terminated);
  } else {
    const mine = ours.metadata.value;
    expect(mine.providerID, where).toBe(md.providerID);
    expect(mine.instanceType ?? '', where).toBe(md.instanceType);
    expect(mine.zone ?? '', where).toBe(md.zone);
    expect(mine.region ?? '', where).toBe(md.region);
    if (JSON.stringify(mine.addresses) !== JSON.stringify(md.addresses)) {
      // The listed difference: ipv6 first, and only the IPv6 addresses' order differs.
      expect(p.families[0], where).toBe('ipv6');
      const v6 = (list: readonly NodeAddress[]) => list.filter((a) => a.address.includes(':'));
      const v4 = (list: readonly NodeAddress[]) => list.filter((a) => !a.address.includes(':'));
      expect(v4(mine.addresses), where).toEqual(v4(md.addresses));
      expect([...v6(mine.addresses)].map((a) => a.address).sort(), where).toEqual([...v6(md.addresses)].map((a) => a.address).sort());
      kinds.push(LISTED.ipv6Order);
    }
    // Upstream's two address paths agree with each other.
    if (theirs.addressesByProviderID !== undefined) expect(theirs.addressesByProviderID, where).toEqual(md.addresses);
  }

  // Shutdown: a stopped instance is shut down, on both sides.
  if (theirs.shutdown !== undefined) {
    if (ours.shutdown.kind === 'found') expect(ours.shutdown.value, where).toBe(theirs.shutdown);
    // Here a terminated instance is not found (upstream: not shut down); an instance upstream
    // finds no way to name is not found here either.
    else expect(ours.shutdown.kind === 'notFound' && (c.instance.state === 'terminated' || theirs.exists === false), where).toBe(true);
  } else {
    // Upstream fails on an instance EC2 does not know (its batch answers InvalidInstanceID.NotFound): here it is not found.
    expect(ours.shutdown.kind === 'notFound' || ours.shutdown.kind === 'error', where).toBe(true);
    expect(theirs.exists === false || theirs.existsError !== undefined, where).toBe(true);
  }
  return kinds;
}

describe.skipIf(skip !== undefined)(skip ?? 'the aws adapter against cloud-provider-aws v1.35.3, live through the EC2 emulator', () => {
  const emu = new EC2Emulator();
  let endpoint = '';
  let oracle: AWSOracle;
  const providers: AwsProvider[] = [];

  beforeAll(async () => {
    endpoint = await emu.start();
    oracle = startAWSOracle();
  }, 15 * 60_000);
  afterAll(async () => {
    for (const p of providers) p.close();
    await oracle?.stop();
    await emu.stop();
  });

  /** Both sides' answers for every case under one cloud.conf. */
  async function answers(cases: readonly Case[], families: readonly string[]): Promise<Pair[]> {
    const config = awsOracleConfig(endpoint, { region: REGION, clusterID: CLUSTER, nodeIPFamilies: families });
    // The same file, read by this project's own reader.
    const ours = new AwsProvider({
      config: parseAWSCloudConfig(config), endpoint, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'fake-secret' },
      maxAttempts: 1, retryMode: 'standard', gate: new BackoffGate({ baseMs: 1, maxMs: 5 }),
    });
    providers.push(ours);
    const nodes = cases.map((c) => c.node);
    const [theirs, metadata, exists, shutdown] = await Promise.all([
      oracle.ask(cases.map((c) => ({ config, node: { name: c.node.name, ...(c.node.providerID ? { providerID: c.node.providerID } : {}) } }))),
      ours.instancesMetadata(nodes),
      ours.instancesExist(nodes),
      ours.instancesShutdown(nodes),
    ]);
    return cases.map((c, i) => ({ c, families, theirs: theirs[i]!, ours: { metadata: metadata.get(c.node.name)!, exists: exists.get(c.node.name)!, shutdown: shutdown.get(c.node.name)! } }));
  }

  // One readable case of each: what agrees since issue 40's fixes, and each listed difference.
  const named: [string, readonly string[], Partial<Shape>, string[]][] = [
    ['interfaces out of order, several private IPv4s, public IPv4 and both DNS names', ['ipv4'],
      { publicIp: '54.0.0.1', publicDnsName: 'ec2-54-0-0-1.compute-1.amazonaws.com', interfaces: [{ deviceIndex: 1, privateIps: ['10.0.1.5'] }, { deviceIndex: 0, privateIps: ['10.0.0.1', '10.0.0.2'], publicIp: '54.0.0.1' }, { privateIps: ['172.16.0.4'] }] }, []],
    ['IPv6 on several interfaces, ipv4 first: device-index order on both sides', ['ipv4', 'ipv6'],
      { interfaces: [{ deviceIndex: 1, privateIps: ['10.0.1.5'], ipv6: ['2600:1f18::2'] }, { deviceIndex: 0, privateIps: ['10.0.0.1'], ipv6: ['2600:1F18:0:0::3', '2600:1f18::1'] }] }, []],
    ['IPv6 on several interfaces, ipv6 first', ['ipv6', 'ipv4'],
      { interfaces: [{ deviceIndex: 1, privateIps: ['10.0.1.5'], ipv6: ['2600:1f18::2'] }, { deviceIndex: 0, privateIps: ['10.0.0.1'], ipv6: ['2600:1f18::1'] }] }, [LISTED.ipv6Order]],
    ['a public IPv4 on the primary interface only, not on the instance: no ExternalIP on either side', ['ipv4'],
      { interfaces: [{ deviceIndex: 0, privateIps: ['10.0.0.1'], publicIp: '3.3.3.3' }] }, []],
    ['providerID aws:////<id>: answered as written', ['ipv4'], { form: 'providerID-empty-zone' }, []],
    ['providerID aws:///<zone>/<anything>/<id>: answered as written', ['ipv4'], { form: 'providerID-long' }, []],
    ['a bare instance ID as providerID: answered as written', ['ipv4'], { form: 'providerID-bare' }, []],
    ['a stopped instance: shut down on both sides', ['ipv4'], { state: 'stopped' }, []],
    ['a terminated instance', ['ipv4'], { state: 'terminated' }, [LISTED.terminated]],
    ['a providerID EC2 does not know', ['ipv4'], { form: 'missing' }, []],
    ['no providerID, found by private DNS name with the cluster tag', ['ipv4'], { form: 'dns-name', privateDns: true }, []],
    ['no providerID, found by private DNS name with the legacy KubernetesCluster tag', ['ipv4'], { form: 'dns-name', privateDns: true, tag: 'legacy' }, []],
    ["no providerID, a private DNS name of another cluster's instance: found by neither", ['ipv4'], { form: 'dns-name', privateDns: true, tag: 'other' }, []],
    ['no providerID, an instance-ID node name with a domain', ['ipv4'], { form: 'instance-id-fqdn' }, []],
  ];
  it.each(named)('%s', async (_what, families, over, kinds) => {
    const base: Shape = { state: 'running', instanceType: 'm5.large', availabilityZone: 'us-east-1a', privateDns: true, publicDnsName: '', interfaces: [{ deviceIndex: 0, privateIps: ['10.0.0.1'] }], tag: 'cluster', form: 'providerID' };
    const c = caseOf(0x200000 + named.findIndex(([w]) => w === _what), { ...base, ...over });
    emu.add(c.instance);
    const [pair] = await answers([c], families);
    expect(classify(pair!)).toEqual(kinds);
  });

  it('agrees on every answer over random instances and nodes, but for the listed deviations', async () => {
    const shapes = fc.sample(shape, { numRuns: 240, seed: 4001 });
    const cases = shapes.map((s, i) => caseOf(i + 1, s));
    emu.reset().add(...cases.map((c) => c.instance));
    const seen = new Map<string, number>();
    for (const families of FAMILIES) {
      for (const p of await answers(cases, families)) {
        for (const k of classify(p)) seen.set(k, (seen.get(k) ?? 0) + 1);
      }
    }
    // Every kind met is a listed one, and the sample meets each.
    expect([...seen.keys()].sort()).toEqual(Object.values(LISTED).sort());
  }, 300_000);
});
