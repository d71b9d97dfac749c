import { describe, expect, it } from 'vitest';
import {
  addressesPatch, EventReason, initializationPatch, decideAddressRefresh, decideInitialization, rejectedLabelMessage,
  type InitWrite,
} from '../../../src/controllers/cloudnode/decide.js';
import { betaToGALabelUpdates, isReservedLabelKey } from '../../../src/controllers/labels.js';
import { hasUninitializedTaint, providedNodeIP, sameAddresses } from '../../../src/model/node.js';
import type { NodeAddress } from '../../../src/model/node-address.js';
import { ip, KEP_DUAL_STACK, KEP_IPV4_ONLY, makeMetadata, makeNode, UNINITIALIZED } from '../../kit/nodes.js';

const v = (...a: string[]): string[] => a;
const addrs = (list: NodeAddress[] | undefined): string[] | undefined => list?.map((a) => a.address);

// KEP-3705 "Example of --node-ip possibilities": (annotation, expected addresses or error). The
// rows "(none)", "0.0.0.0" and "::" all reach the cloud provider as no annotation.
const KEP_ROWS: Array<{ cloud: string; cloudAddresses: NodeAddress[]; annotation: string | null; expected: string[] | RegExp }> = [
  { cloud: 'dual-stack', cloudAddresses: KEP_DUAL_STACK, annotation: null, expected: v('1.2.3.4', '5.6.7.8', 'abcd::1234', 'abcd::5678') },
  { cloud: 'dual-stack', cloudAddresses: KEP_DUAL_STACK, annotation: '1.2.3.4', expected: v('1.2.3.4') },
  { cloud: 'dual-stack', cloudAddresses: KEP_DUAL_STACK, annotation: '9.10.11.12', expected: /9\.10\.11\.12/ },
  { cloud: 'dual-stack', cloudAddresses: KEP_DUAL_STACK, annotation: 'abcd::5678', expected: v('abcd::5678') },
  { cloud: 'dual-stack', cloudAddresses: KEP_DUAL_STACK, annotation: '1.2.3.4,abcd::1234', expected: v('1.2.3.4', 'abcd::1234') },
  { cloud: 'IPv4-only', cloudAddresses: KEP_IPV4_ONLY, annotation: null, expected: v('1.2.3.4', '5.6.7.8') },
  { cloud: 'IPv4-only', cloudAddresses: KEP_IPV4_ONLY, annotation: '1.2.3.4', expected: v('1.2.3.4') },
  { cloud: 'IPv4-only', cloudAddresses: KEP_IPV4_ONLY, annotation: '9.10.11.12', expected: /9\.10\.11\.12/ },
  { cloud: 'IPv4-only', cloudAddresses: KEP_IPV4_ONLY, annotation: 'abcd::5678', expected: /abcd::5678/ },
  { cloud: 'IPv4-only', cloudAddresses: KEP_IPV4_ONLY, annotation: '1.2.3.4,abcd::1234', expected: /abcd::1234/ },
];

describe('decideInitialization: KEP-3705 rows (gate on)', () => {
  it.each(KEP_ROWS)('$cloud cloud, annotation $annotation', ({ cloudAddresses, annotation, expected }) => {
    const node = makeNode({ nodeIP: annotation, addresses: [] });
    const plan = decideInitialization(node, makeMetadata({ addresses: cloudAddresses }), { allowDualStack: true });
    if (expected instanceof RegExp) {
      expect(plan.kind).toBe('blocked');
      if (plan.kind !== 'blocked') return;
      expect(plan.reason).toBe(EventReason.InvalidNodeIP);
      expect(plan.message).toMatch(expected);
      expect(plan.message).toContain(JSON.stringify(annotation));
    } else {
      expect(plan.kind).toBe('initialize');
      if (plan.kind !== 'initialize') return;
      expect(addrs(plan.addresses)).toEqual(expected);
      expect(plan.taints).toEqual([]);
    }
  });
});

describe('decideInitialization: the five-address example', () => {
  const cloud = [ip('10.0.0.1'), ip('10.0.0.2'), ip('fd00::1'), ip('fd00::2'), ip('192.168.0.1', 'ExternalIP')];
  it.each([
    ['10.0.0.2', v('10.0.0.2', '192.168.0.1')],
    ['192.168.0.1', v('192.168.0.1', '10.0.0.1', '10.0.0.2', 'fd00::1', 'fd00::2')],
    ['10.0.0.2,fd00::2', v('10.0.0.2', 'fd00::2', '192.168.0.1')],
    ['fd00::1,192.168.0.1', v('fd00::1', '192.168.0.1')],
    // No single-stack IPv6: the ExternalIP stays.
    ['fd00::1', v('fd00::1', '192.168.0.1')],
  ])('%s → %j', (annotation, expected) => {
    const plan = decideInitialization(makeNode({ nodeIP: annotation, addresses: [] }), makeMetadata({ addresses: cloud }), { allowDualStack: true });
    expect(plan.kind).toBe('initialize');
    expect(addrs((plan as InitWrite).addresses)).toEqual(expected);
  });
});

describe('decideInitialization: annotation edge cases', () => {
  it('an empty annotation counts as present and cannot be parsed: the node stays tainted', () => {
    const plan = decideInitialization(makeNode({ nodeIP: '' }), makeMetadata(), { allowDualStack: true });
    expect(plan).toMatchObject({ kind: 'blocked', reason: EventReason.InvalidNodeIP });
    expect((plan as { message: string }).message).toContain('provided node IP "" is not usable');
  });

  it.each(['not-an-ip', '1.2.3.4,5.6.7.8', '1.2.3.4, abcd::1234', '1.2.3.4,abcd::1234,abcd::5678'])('malformed %j blocks', (annotation) => {
    const plan = decideInitialization(makeNode({ nodeIP: annotation }), makeMetadata(), { allowDualStack: true });
    expect(plan.kind).toBe('blocked');
  });

  it('gate off: a dual-stack pair cannot be used, a single IP still works', () => {
    const dual = decideInitialization(makeNode({ nodeIP: '1.2.3.4,abcd::1234' }), makeMetadata(), { allowDualStack: false });
    expect(dual).toMatchObject({ kind: 'blocked', reason: EventReason.InvalidNodeIP });
    expect((dual as { message: string }).message).toMatch(/dual-stack not supported/);
    const single = decideInitialization(makeNode({ nodeIP: 'abcd::5678', addresses: [] }), makeMetadata(), { allowDualStack: false });
    expect(addrs((single as InitWrite).addresses)).toEqual(['abcd::5678']);
  });

  it('an annotation cannot be satisfied by an empty cloud list: the node stays tainted (as in Kubernetes)', () => {
    const plan = decideInitialization(makeNode({ nodeIP: '9.9.9.9' }), makeMetadata({ addresses: [] }), { allowDualStack: true });
    expect(plan).toMatchObject({ kind: 'blocked', reason: EventReason.InvalidNodeIP });
    expect((plan as { message: string }).message).toBe('provided node IP "9.9.9.9" is not usable: failed to get node address from cloud provider that matches ip: 9.9.9.9');
  });

  it('without an annotation an empty cloud list initialises the node and leaves its addresses alone', () => {
    const plan = decideInitialization(makeNode({ nodeIP: null }), makeMetadata({ addresses: [] }), { allowDualStack: true });
    expect(plan.kind).toBe('initialize');
    expect((plan as InitWrite).addresses).toBeUndefined();
  });
});

describe('decideInitialization: addresses', () => {
  it("appends the kubelet's Hostname when the cloud gives none", () => {
    const node = makeNode({ name: 'n1', addresses: [ip('n1.example', 'Hostname'), ip('10.9.9.9')] });
    const plan = decideInitialization(node, makeMetadata({ addresses: KEP_IPV4_ONLY }), { allowDualStack: true }) as InitWrite;
    expect(plan.addresses).toEqual([ip('1.2.3.4'), ip('5.6.7.8'), ip('n1.example', 'Hostname')]);
  });

  it("keeps the cloud's Hostname and drops the kubelet's when the cloud gives one", () => {
    const node = makeNode({ addresses: [ip('kubelet-name', 'Hostname')] });
    const plan = decideInitialization(node, makeMetadata({ addresses: [ip('1.2.3.4'), ip('cloud-name', 'Hostname')] }), { allowDualStack: true }) as InitWrite;
    expect(plan.addresses).toEqual([ip('1.2.3.4'), ip('cloud-name', 'Hostname')]);
  });

  it('writes no addresses when they already match, in order', () => {
    const node = makeNode({ addresses: [...KEP_IPV4_ONLY] });
    const plan = decideInitialization(node, makeMetadata({ addresses: KEP_IPV4_ONLY }), { allowDualStack: true }) as InitWrite;
    expect(plan.addresses).toBeUndefined();
  });

  it('a reordering is a change (the first address of a family is the node IP)', () => {
    const node = makeNode({ addresses: [ip('5.6.7.8'), ip('1.2.3.4')] });
    const plan = decideInitialization(node, makeMetadata({ addresses: KEP_IPV4_ONLY }), { allowDualStack: true }) as InitWrite;
    expect(addrs(plan.addresses)).toEqual(['1.2.3.4', '5.6.7.8']);
  });

  it('the replacement removes a second InternalIP the node had before', () => {
    const node = makeNode({ nodeIP: '1.2.3.4', addresses: [ip('1.2.3.4'), ip('5.6.7.8')] });
    const plan = decideInitialization(node, makeMetadata({ addresses: KEP_IPV4_ONLY }), { allowDualStack: true }) as InitWrite;
    expect(addressesPatch(plan.addresses!, {})).toEqual({ status: { addresses: [ip('1.2.3.4')] } });
    expect(addressesPatch(plan.addresses!, { uid: 'u-1', resourceVersion: '7' })).toEqual({ metadata: { uid: 'u-1', resourceVersion: '7' }, status: { addresses: [ip('1.2.3.4')] } });
  });
});

describe('decideInitialization: metadata and spec', () => {
  it('sets providerID, GA and beta topology labels, and removes only the uninitialized taint', () => {
    const other = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
    const node = makeNode({ taints: [other] });
    const plan = decideInitialization(node, makeMetadata({ instanceType: 'm5.large', zone: 'eu-west-1a', region: 'eu-west-1' }), { allowDualStack: true }) as InitWrite;
    expect(plan.providerID).toBe('static://node-a');
    expect(plan.labels).toEqual({
      'node.kubernetes.io/instance-type': 'm5.large',
      'beta.kubernetes.io/instance-type': 'm5.large',
      'topology.kubernetes.io/zone': 'eu-west-1a',
      'failure-domain.beta.kubernetes.io/zone': 'eu-west-1a',
      'topology.kubernetes.io/region': 'eu-west-1',
      'failure-domain.beta.kubernetes.io/region': 'eu-west-1',
    });
    expect(plan.taints).toEqual([other]);
  });

  it('keeps an existing providerID', () => {
    const plan = decideInitialization(makeNode({ providerID: 'aws:///i-1' }), makeMetadata(), { allowDualStack: true }) as InitWrite;
    expect(plan.providerID).toBeUndefined();
  });

  it.each<[string, Record<string, string>, Record<string, string>, Record<string, string>]>([
    ['adds a new label', {}, { 'example.com/pool': 'blue' }, { 'example.com/pool': 'blue' }],
    ['never overwrites an existing label', { 'example.com/pool': 'red' }, { 'example.com/pool': 'blue' }, {}],
    ['skips kubernetes.io', {}, { 'kubernetes.io/role': 'x' }, {}],
    ['skips subdomains of kubernetes.io', {}, { 'node.kubernetes.io/exclude': 'x' }, {}],
    ['skips k8s.io', {}, { 'cloud.k8s.io/x': 'y' }, {}],
    ['allows look-alike domains', {}, { 'notkubernetes.io/x': 'y' }, { 'notkubernetes.io/x': 'y' }],
    ['skips an invalid value', {}, { 'example.com/x': 'has space' }, {}],
    ['skips an invalid key', {}, { 'Example.com/x': 'y' }, {}],
  ])('additional labels: %s', (_name, existing, cloud, expected) => {
    const plan = decideInitialization(makeNode({ labels: existing }), makeMetadata({ labels: cloud }), { allowDualStack: true }) as InitWrite;
    expect(plan.labels).toEqual(expected);
    expect(plan.labelsAfter).toEqual({ ...existing, ...expected });
    expect(plan.skippedLabels.length + plan.rejectedLabels.length).toBe(Object.keys(cloud).length - Object.keys(expected).length);
  });

  it('labels the API server would refuse are rejected (a Warning each), rule-skipped ones only logged', () => {
    const plan = decideInitialization(
      makeNode({ labels: { 'example.com/pool': 'red' } }),
      makeMetadata({ labels: { 'example.com/x': 'has space', 'Example.com/x': 'y', 'kubernetes.io/role': 'x', 'example.com/pool': 'blue' } }),
      { allowDualStack: true },
    ) as InitWrite;
    expect(plan.rejectedLabels.map((l) => `${l.key}=${l.value}`).sort()).toEqual(['Example.com/x=y', 'example.com/x=has space']);
    expect(plan.skippedLabels.map((l) => l.key).sort()).toEqual(['example.com/pool', 'kubernetes.io/role']);
  });

  it('labelsAfter carries the topology the pod CIDR choice depends on', () => {
    const plan = decideInitialization(makeNode({ labels: { team: 'a' } }), makeMetadata({ zone: 'z1' }), { allowDualStack: true }) as InitWrite;
    expect(plan.labelsAfter).toEqual({ team: 'a', 'topology.kubernetes.io/zone': 'z1', 'failure-domain.beta.kubernetes.io/zone': 'z1' });
  });
});

// Issue 12: node initialisation edge cases, decided as Kubernetes' cloud node controller decides
// them (getInstanceMetadata's providerID check, then getNodeModifiersFromCloudProvider's check of
// the annotation against the cloud's own list, then the address update with the kubelet's
// Hostname), or as a deviation the README lists. Expected outcomes are written out by hand.
type EdgeExpectation =
  | { kind: 'blocked'; reason: string; message: string }
  | {
    kind: 'initialize';
    /** Addresses written (undefined: status.addresses left alone). */
    addresses?: NodeAddress[];
    providerID?: string;
    /** Labels the write sets, exactly. */
    labels?: Record<string, string>;
    /** `key=value` of each label left out with a CloudLabelInvalid Warning, sorted. */
    rejected?: string[];
    /** Keys left out by rule (reserved namespace, already on the node), sorted. */
    skipped?: string[];
  };

const LONG_TYPE = `x${'l'.repeat(68)}e`;
const H = (address: string): NodeAddress => ({ type: 'Hostname', address });
const EDGE_ROWS: Array<{ name: string; node: Parameters<typeof makeNode>[0]; metadata: Parameters<typeof makeMetadata>[0]; expected: EdgeExpectation }> = [
  // 1. The cloud reports no addresses.
  {
    name: '1: IPv4 annotation, cloud reports no addresses: stays tainted',
    node: { nodeIP: '10.0.0.1', addresses: [ip('10.0.0.1'), H('n')] },
    metadata: { addresses: [] },
    expected: { kind: 'blocked', reason: EventReason.InvalidNodeIP, message: 'provided node IP "10.0.0.1" is not usable: failed to get node address from cloud provider that matches ip: 10.0.0.1' },
  },
  {
    name: '1: IPv6 annotation, cloud reports no addresses: stays tainted',
    node: { nodeIP: 'fd00::1', addresses: [ip('fd00::1'), H('n')] },
    metadata: { addresses: [] },
    expected: { kind: 'blocked', reason: EventReason.InvalidNodeIP, message: 'provided node IP "fd00::1" is not usable: failed to get node address from cloud provider that matches ip: fd00::1' },
  },
  {
    name: '1: dual-stack annotation, cloud reports no addresses: stays tainted',
    node: { nodeIP: '10.0.0.1,fd00::1' },
    metadata: { addresses: [] },
    expected: { kind: 'blocked', reason: EventReason.InvalidNodeIP, message: 'provided node IP "10.0.0.1,fd00::1" is not usable: failed to get node address from cloud provider that matches ip: 10.0.0.1' },
  },
  {
    name: '1: unparsable annotation, cloud reports no addresses: stays tainted',
    node: { nodeIP: 'bogus' },
    metadata: { addresses: [] },
    expected: { kind: 'blocked', reason: EventReason.InvalidNodeIP, message: 'provided node IP "bogus" is not usable: failed to parse node IP "bogus": could not parse "bogus"' },
  },
  {
    name: '1: no annotation, cloud reports no addresses: initialised, addresses left alone',
    node: { nodeIP: null, addresses: [ip('10.0.0.1'), H('n')] },
    metadata: { addresses: [] },
    expected: { kind: 'initialize', addresses: undefined, providerID: 'static://node-a' },
  },
  // 2. The annotation equals only the kubelet's Hostname entry.
  {
    name: "2: only kubelet's Hostname equals the annotated IP: stays tainted",
    node: { nodeIP: '10.0.0.5', addresses: [ip('10.0.0.5'), H('10.0.0.5')] },
    metadata: { addresses: [ip('10.0.0.1')] },
    expected: { kind: 'blocked', reason: EventReason.InvalidNodeIP, message: 'provided node IP "10.0.0.5" is not usable: failed to get node address from cloud provider that matches ip: 10.0.0.5' },
  },
  {
    name: "2: the annotation matches the cloud's list: initialised, the kubelet's Hostname appended",
    node: { nodeIP: '10.0.0.1', addresses: [H('10.0.0.5')] },
    metadata: { addresses: [ip('10.0.0.1'), ip('10.0.0.2')] },
    expected: { kind: 'initialize', addresses: [ip('10.0.0.1'), H('10.0.0.5')] },
  },
  // 3. providerID.
  {
    name: '3: no providerID from the cloud and none on the node: stays tainted',
    node: { name: 'node-a' },
    metadata: { providerID: '' },
    expected: { kind: 'blocked', reason: EventReason.MissingProviderID, message: 'cloud provider does not set node provider ID for node "node-a"; the node stays tainted until the provider reports one' },
  },
  {
    name: '3: no providerID from the cloud, one on the node: initialised, the node keeps its own',
    node: { providerID: 'kubelet://set-by-flag', nodeIP: null, addresses: [] },
    metadata: { providerID: '', addresses: [ip('10.0.0.7')] },
    expected: { kind: 'initialize', addresses: [ip('10.0.0.7')], providerID: undefined },
  },
  {
    name: '3: the providerID check comes before the annotation check',
    node: { nodeIP: '9.9.9.9' },
    metadata: { providerID: '', addresses: [] },
    expected: { kind: 'blocked', reason: EventReason.MissingProviderID, message: 'cloud provider does not set node provider ID for node "node-a"; the node stays tainted until the provider reports one' },
  },
  // 4. Label values the API server would refuse (deliberate deviation: left out with a Warning).
  {
    name: '4: a 70-character instance type and zone "z/1": left out with a Warning each, region written, node initialised',
    node: { nodeIP: null, addresses: [] },
    metadata: { addresses: [ip('10.0.0.8')], instanceType: LONG_TYPE, zone: 'z/1', region: 'region-1' },
    expected: {
      kind: 'initialize',
      addresses: [ip('10.0.0.8')],
      labels: { 'topology.kubernetes.io/region': 'region-1', 'failure-domain.beta.kubernetes.io/region': 'region-1' },
      rejected: [
        `beta.kubernetes.io/instance-type=${LONG_TYPE}`,
        'failure-domain.beta.kubernetes.io/zone=z/1',
        `node.kubernetes.io/instance-type=${LONG_TYPE}`,
        'topology.kubernetes.io/zone=z/1',
      ],
    },
  },
  {
    name: '4: a 63-character instance type is valid',
    node: { nodeIP: null, addresses: [] },
    metadata: { addresses: [ip('10.0.0.8')], instanceType: 'a'.repeat(63) },
    expected: { kind: 'initialize', labels: { 'node.kubernetes.io/instance-type': 'a'.repeat(63), 'beta.kubernetes.io/instance-type': 'a'.repeat(63) }, rejected: [] },
  },
  {
    name: '4: additional labels with a bad key or value: left out with a Warning each',
    node: { nodeIP: null, addresses: [] },
    metadata: { addresses: [ip('10.0.0.8')], labels: { 'Example.com/x': 'y', 'example.com/v': 'has space', 'example.com/ok': 'yes' } },
    expected: { kind: 'initialize', labels: { 'example.com/ok': 'yes' }, rejected: ['Example.com/x=y', 'example.com/v=has space'], skipped: [] },
  },
  // 5. Reserved label keys: kubernetes.io, k8s.io and their subdomains (see src/controllers/labels.ts).
  {
    name: '5: reserved keys dropped, look-alikes applied',
    node: { nodeIP: null, addresses: [] },
    metadata: {
      addresses: [ip('10.0.0.9')],
      labels: {
        'examplek8s.io/a': 'a', 'k8s-io/b': 'b', 'mykubernetes.io/f': 'f', 'app.k8snio/g': 'g',
        'a.k8s.io/c': 'c', 'kubernetes.io/d': 'd', 'node.kubernetes.io/e': 'e', 'k8s.io/h': 'h',
      },
    },
    expected: {
      kind: 'initialize',
      labels: { 'examplek8s.io/a': 'a', 'k8s-io/b': 'b', 'mykubernetes.io/f': 'f', 'app.k8snio/g': 'g' },
      skipped: ['a.k8s.io/c', 'k8s.io/h', 'kubernetes.io/d', 'node.kubernetes.io/e'],
      rejected: [],
    },
  },
  {
    name: '5: a reserved key that is also on the node is skipped as reserved',
    node: { nodeIP: null, addresses: [], labels: { 'kubernetes.io/d': 'old' } },
    metadata: { addresses: [ip('10.0.0.9')], labels: { 'kubernetes.io/d': 'new' } },
    expected: { kind: 'initialize', labels: {}, skipped: ['kubernetes.io/d'] },
  },
  // 6. Go %q in the messages.
  {
    name: '6: a control character is quoted as Go does (\\x01)',
    node: { nodeIP: '10.0.0.14\u0001' },
    metadata: { addresses: [ip('10.0.0.14')] },
    expected: {
      kind: 'blocked', reason: EventReason.InvalidNodeIP,
      message: 'provided node IP "10.0.0.14\\x01" is not usable: failed to parse node IP "10.0.0.14\\x01": could not parse "10.0.0.14\\x01"',
    },
  },
  {
    name: '6: U+0085 and U+007F are quoted as Go does (\\u0085, \\x7f)',
    node: { nodeIP: '10.0.0.15\u0085\u007f' },
    metadata: { addresses: [ip('10.0.0.15')] },
    expected: {
      kind: 'blocked', reason: EventReason.InvalidNodeIP,
      message: 'provided node IP "10.0.0.15\\u0085\\x7f" is not usable: failed to parse node IP "10.0.0.15\\u0085\\x7f": could not parse "10.0.0.15\\u0085\\x7f"',
    },
  },
  {
    name: '6: printable non-ASCII stays as it is',
    node: { nodeIP: '10.0.0.16é' },
    metadata: { addresses: [ip('10.0.0.16')] },
    expected: {
      kind: 'blocked', reason: EventReason.InvalidNodeIP,
      message: 'provided node IP "10.0.0.16é" is not usable: failed to parse node IP "10.0.0.16é": could not parse "10.0.0.16é"',
    },
  },
];

describe('decideInitialization: issue 12 edge cases', () => {
  it.each(EDGE_ROWS)('$name', ({ node, metadata, expected }) => {
    const plan = decideInitialization(makeNode(node), makeMetadata(metadata), { allowDualStack: true });
    if (expected.kind === 'blocked') {
      expect(plan).toEqual(expected);
      return;
    }
    expect(plan.kind).toBe('initialize');
    if (plan.kind !== 'initialize') return;
    expect(plan.taints).toEqual([]);
    if ('addresses' in expected) expect(plan.addresses).toEqual(expected.addresses);
    if ('providerID' in expected) expect(plan.providerID).toBe(expected.providerID);
    if (expected.labels) expect(plan.labels).toEqual(expected.labels);
    if (expected.rejected) expect(plan.rejectedLabels.map((l) => `${l.key}=${l.value}`).sort()).toEqual(expected.rejected);
    if (expected.skipped) expect(plan.skippedLabels.map((l) => l.key).sort()).toEqual(expected.skipped);
  });

  it('the CloudLabelInvalid message names the label and the value, quoted as Go does', () => {
    const plan = decideInitialization(makeNode(), makeMetadata({ zone: 'z/1' }), { allowDualStack: true }) as InitWrite;
    expect(plan.rejectedLabels.map(rejectedLabelMessage)).toEqual([
      'cloud label "topology.kubernetes.io/zone"="z/1" not applied (the API server would refuse it): label value "z/1": must be at most 63 alphanumeric characters, \'-\', \'_\' or \'.\', starting and ending alphanumeric; the node is initialised without it',
      'cloud label "failure-domain.beta.kubernetes.io/zone"="z/1" not applied (the API server would refuse it): label value "z/1": must be at most 63 alphanumeric characters, \'-\', \'_\' or \'.\', starting and ending alphanumeric; the node is initialised without it',
    ]);
  });
});

describe('initializationPatch', () => {
  it('guards with the resourceVersion and sets the pod CIDRs in stack order', () => {
    const node = makeNode({ resourceVersion: '42' });
    const plan = decideInitialization(node, makeMetadata({ zone: 'z1' }), { allowDualStack: true }) as InitWrite;
    expect(initializationPatch(node, plan, ['10.244.3.0/24', 'fd00:0:0:3::/64'])).toEqual({
      metadata: { resourceVersion: '42', labels: { 'topology.kubernetes.io/zone': 'z1', 'failure-domain.beta.kubernetes.io/zone': 'z1' } },
      spec: { taints: null, providerID: 'static://node-a', podCIDR: '10.244.3.0/24', podCIDRs: ['10.244.3.0/24', 'fd00:0:0:3::/64'] },
    });
  });

  it('without labels, providerID or pod CIDRs it still removes the taint', () => {
    const node = makeNode({ providerID: 'p', taints: [{ key: 'a', effect: 'NoExecute' }] });
    const plan = decideInitialization(node, makeMetadata(), { allowDualStack: true }) as InitWrite;
    expect(initializationPatch(node, plan)).toEqual({ metadata: { resourceVersion: '7' }, spec: { taints: [{ key: 'a', effect: 'NoExecute' }] } });
  });

  it('refuses to build an unguarded write', () => {
    const node = makeNode();
    delete node.metadata.resourceVersion;
    const plan = decideInitialization(node, makeMetadata(), { allowDualStack: true }) as InitWrite;
    expect(() => initializationPatch(node, plan)).toThrow(/node-a: metadata.resourceVersion is empty/);
  });
});

describe('decideAddressRefresh', () => {
  it.each<[string, ReturnType<typeof makeNode>, NodeAddress[], ReturnType<typeof decideAddressRefresh>]>([
    ['unchanged', makeNode({ tainted: false, addresses: [...KEP_IPV4_ONLY] }), KEP_IPV4_ONLY, { kind: 'unchanged' }],
    ['cloud gave none', makeNode({ tainted: false, addresses: [...KEP_IPV4_ONLY] }), [], { kind: 'unchanged' }],
    ['new address', makeNode({ tainted: false, addresses: [ip('1.2.3.4')] }), KEP_IPV4_ONLY, { kind: 'replace', addresses: KEP_IPV4_ONLY }],
    ['annotation still selects', makeNode({ tainted: false, nodeIP: '5.6.7.8', addresses: [ip('5.6.7.8')] }), KEP_IPV4_ONLY, { kind: 'unchanged' }],
  ])('%s', (_name, node, cloud, expected) => {
    expect(decideAddressRefresh(node, makeMetadata({ addresses: cloud }), { allowDualStack: true })).toEqual(expected);
  });

  it('an annotation no longer satisfiable warns and changes nothing', () => {
    const node = makeNode({ tainted: false, nodeIP: '5.6.7.8', addresses: [ip('5.6.7.8')] });
    const plan = decideAddressRefresh(node, makeMetadata({ addresses: [ip('1.2.3.4')] }), { allowDualStack: true });
    expect(plan).toMatchObject({ kind: 'warn', reason: EventReason.InvalidNodeIP });
    expect((plan as { message: string }).message).toMatch(/^addresses not updated: provided node IP "5.6.7.8"/);
  });
});

describe('node helpers', () => {
  it('matches the taint by key, whatever its value or effect', () => {
    expect(hasUninitializedTaint(makeNode({ tainted: false, taints: [{ ...UNINITIALIZED, value: 'x', effect: 'NoExecute' }] }))).toBe(true);
    expect(hasUninitializedTaint(makeNode({ tainted: false }))).toBe(false);
  });

  it('an empty annotation value is present', () => {
    expect(providedNodeIP(makeNode({ nodeIP: '' }))).toBe('');
    expect(providedNodeIP(makeNode({ nodeIP: null }))).toBeUndefined();
  });

  it('sameAddresses is ordered and type-sensitive', () => {
    expect(sameAddresses([ip('1.1.1.1')], [ip('1.1.1.1', 'ExternalIP')])).toBe(false);
    expect(sameAddresses(undefined, [])).toBe(true);
  });
});

describe('betaToGALabelUpdates', () => {
  it.each<[Record<string, string>, Record<string, string>]>([
    [{}, {}],
    [{ 'failure-domain.beta.kubernetes.io/zone': 'z1' }, { 'topology.kubernetes.io/zone': 'z1' }],
    [{ 'failure-domain.beta.kubernetes.io/zone': 'z1', 'topology.kubernetes.io/zone': 'z2' }, { 'topology.kubernetes.io/zone': 'z1' }],
    [{ 'failure-domain.beta.kubernetes.io/region': 'r', 'topology.kubernetes.io/region': 'r' }, {}],
    [{ 'beta.kubernetes.io/instance-type': 't' }, { 'node.kubernetes.io/instance-type': 't' }],
    [{ 'topology.kubernetes.io/zone': 'z-only-ga' }, {}],
  ])('%j → %j', (labels, expected) => {
    expect(betaToGALabelUpdates(makeNode({ tainted: false, labels }))).toEqual(expected);
  });

  it('reserved keys', () => {
    expect(isReservedLabelKey('kubernetes.io/x')).toBe(true);
    expect(isReservedLabelKey('a.k8s.io/x')).toBe(true);
    expect(isReservedLabelKey('example.com/kubernetes.io')).toBe(false);
  });
});
