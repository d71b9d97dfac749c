// decideNodeAddresses against the rule it implements, written the plain way: when initialising,
// an annotation is first checked against the cloud's list alone; then, when the cloud reported
// anything, the kubelet's Hostname joins (if the cloud has none) and the annotation selects.
// The implementation reads the list once when no Hostname was mirrored; over random inputs the
// decision must be the same.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NODE_ADDRESS_TYPES, type NodeAddress } from '../../src/model/node-address.js';
import { AddressExclusion, NodeIPError, decideNodeAddresses, explainNodeAddresses, parseIPSloppy, type FamilyHint, type NodeAddressDecision, type NodeAddressInputs, type NodeAddressPhase } from '../../src/nodeip/index.js';

function reference(input: NodeAddressInputs, phase: NodeAddressPhase): NodeAddressDecision {
  const { annotation, cloudAddresses, allowDualStack } = input;
  const invalid = (err: unknown): NodeAddressDecision => {
    if (!(err instanceof NodeIPError)) throw err;
    return { kind: 'invalid', annotation: annotation!, error: err.message };
  };
  if (phase === 'initialize' && annotation !== undefined) {
    try {
      explainNodeAddresses(annotation, cloudAddresses, { allowDualStack });
    } catch (err) {
      return invalid(err);
    }
  }
  if (cloudAddresses.length === 0) return { kind: 'noCloudAddresses' };
  const considered = cloudAddresses.map(({ type, address }) => ({ type, address }));
  const mirrored = new Set<number>();
  if (!considered.some((a) => a.type === 'Hostname')) {
    for (const a of input.nodeAddresses) {
      if (a.type !== 'Hostname') continue;
      mirrored.add(considered.length);
      considered.push({ type: a.type, address: a.address });
    }
  }
  let explanation;
  try {
    explanation = explainNodeAddresses(annotation, considered, { allowDualStack });
  } catch (err) {
    if (annotation === undefined) throw err;
    return invalid(err);
  }
  return { kind: 'ok', addresses: explanation.addresses.map(({ type, address }) => ({ type, address })), explanation, considered, mirrored, excluded: [] };
}

const ip = fc.constantFrom('10.0.0.1', '10.0.0.2', '010.0.0.2', 'fd00::1', 'fd00::2', 'FD00:0::2', '0.0.0.0', '::');
const address: fc.Arbitrary<NodeAddress> = fc.record({ type: fc.constantFrom(...NODE_ADDRESS_TYPES), address: fc.oneof(ip, fc.constantFrom('node-a', 'a.example')) });
const annotation = fc.option(fc.oneof(
  ip,
  fc.tuple(ip, ip).map(([a, b]) => `${a},${b}`),
  fc.constantFrom('', ' ', 'junk', '10.0.0.1,10.0.0.2,fd00::1', '10.0.0.1,'),
), { nil: undefined });
const inputs: fc.Arbitrary<NodeAddressInputs> = fc.record({
  annotation,
  cloudAddresses: fc.array(address, { maxLength: 6 }),
  nodeAddresses: fc.array(address, { maxLength: 4 }),
  allowDualStack: fc.boolean(),
});

/** The outcome, or the error it threw (an unannotated refresh with unparseable input may throw). */
function outcome(f: () => NodeAddressDecision): unknown {
  try {
    // The family hint is this project's addition to Kubernetes' decision (tested below).
    const { hint: _hint, ...decision } = f() as NodeAddressDecision & { hint?: string };
    return decision;
  } catch (err) {
    return { threw: (err as Error).message };
  }
}

describe('decideNodeAddresses', () => {
  it('decides as the plain reading of the rule does, for any annotation, cloud list and node list', () => {
    fc.assert(fc.property(inputs, fc.constantFrom<NodeAddressPhase>('initialize', 'refresh'), (input, phase) => {
      expect(outcome(() => decideNodeAddresses(input, phase))).toEqual(outcome(() => reference(input, phase)));
    }), { numRuns: 3000 });
  });

  it('an annotation only a mirrored Hostname could satisfy still fails initialisation', () => {
    const input: NodeAddressInputs = { annotation: '10.0.0.9', cloudAddresses: [{ type: 'InternalIP', address: '10.0.0.1' }], nodeAddresses: [{ type: 'Hostname', address: '10.0.0.9' }], allowDualStack: true };
    expect(decideNodeAddresses(input, 'initialize')).toMatchObject({ kind: 'invalid', error: 'failed to get node address from cloud provider that matches ip: 10.0.0.9' });
  });

  it('a node IP of a family the cloud reported none of gets a hint, with the provider\'s reason when it has one', () => {
    const awsHint: FamilyHint = (family) => (family === 'IPv6' ? 'the aws provider reports IPv6 addresses only when nodeIPFamilies in its cloud-config includes ipv6' : undefined);
    const base = { cloudAddresses: [{ type: 'InternalIP' as const, address: '10.0.0.1' }, { type: 'Hostname' as const, address: 'ip-10-0-0-1' }], nodeAddresses: [], allowDualStack: true };
    expect(decideNodeAddresses({ ...base, annotation: 'fd00::5', familyHint: awsHint }, 'initialize')).toEqual({
      kind: 'invalid',
      annotation: 'fd00::5',
      error: 'failed to get node address from cloud provider that matches ip: fd00::5',
      hint: 'the cloud reported no IPv6 address; the aws provider reports IPv6 addresses only when nodeIPFamilies in its cloud-config includes ipv6',
    });
    expect(decideNodeAddresses({ ...base, annotation: 'fd00::5' }, 'initialize')).toMatchObject({ hint: 'the cloud reported no IPv6 address' });
    // The family is there, only not this IP; or the cloud reported nothing at all: no hint.
    expect(decideNodeAddresses({ ...base, annotation: '10.0.0.9', familyHint: awsHint }, 'initialize')).not.toHaveProperty('hint');
    expect(decideNodeAddresses({ ...base, cloudAddresses: [], annotation: 'fd00::5', familyHint: awsHint }, 'initialize')).not.toHaveProperty('hint');
  });

  it('hint rule over random inputs: present exactly when the unmatched IP\'s family is absent from a cloud list that has IPs', () => {
    fc.assert(fc.property(inputs, (input) => {
      const decision = decideNodeAddresses(input, 'initialize');
      if (decision.kind !== 'invalid' || decision.hint === undefined) return;
      const families = new Set(input.cloudAddresses.map((a) => parseIPSloppy(a.address)?.family).filter((f) => f !== undefined));
      expect(families.size).toBe(1);
      const missing = decision.hint.includes('IPv6') ? 6 : 4;
      expect(families.has(missing)).toBe(false);
    }), { numRuns: 2000 });
  });
});

describe('--node-address-exclude-cidrs', () => {
  const exclude = AddressExclusion.parse('192.168.50.0/24, fd00:50::/64');
  const cloud: NodeAddress[] = [
    { type: 'InternalIP', address: '192.168.50.7' },
    { type: 'InternalIP', address: '10.0.0.7' },
    { type: 'InternalIP', address: 'fd00:50::7' },
    { type: 'InternalIP', address: 'fd00:1::7' },
    { type: 'Hostname', address: 'node-7' },
  ];

  it('takes the excluded networks out before the selection: without an annotation the first InternalIP is the right one', () => {
    const decision = decideNodeAddresses({ annotation: undefined, cloudAddresses: cloud, nodeAddresses: [], allowDualStack: true, exclude }, 'initialize');
    expect(decision).toMatchObject({
      kind: 'ok',
      addresses: [{ type: 'InternalIP', address: '10.0.0.7' }, { type: 'InternalIP', address: 'fd00:1::7' }, { type: 'Hostname', address: 'node-7' }],
      excluded: [{ address: '192.168.50.7', cloudIndex: 0, cidr: '192.168.50.0/24' }, { address: 'fd00:50::7', cloudIndex: 2, cidr: 'fd00:50::/64' }],
    });
  });

  it('an annotation that names an excluded address is refused (the node stays tainted), whatever the cloud reports', () => {
    for (const annotation of ['192.168.50.7', '10.0.0.7,fd00:50::7']) {
      const decision = decideNodeAddresses({ annotation, cloudAddresses: cloud, nodeAddresses: [], allowDualStack: true, exclude }, 'initialize');
      expect(decision).toMatchObject({ kind: 'invalid', error: expect.stringMatching(/^node IP (192\.168\.50\.7|fd00:50::7) is inside (192\.168\.50\.0\/24|fd00:50::\/64), which --node-address-exclude-cidrs excludes$/) });
    }
  });

  it('bad lists name the entry', () => {
    expect(() => AddressExclusion.parse('10.0.0.0/8,nope')).toThrow('"nope" is not a CIDR');
    expect(() => AddressExclusion.parse('10.0.0.0/8,')).toThrow('an empty entry in "10.0.0.0/8,"');
  });

  it('over random inputs: no kept address lies in an excluded CIDR, nothing else is lost, and without exclusion the decision is unchanged', () => {
    const cidrs = fc.subarray(['10.0.0.0/31', '10.0.0.2/32', 'fd00::/127', 'fd00::2/128', '0.0.0.0/0'], { minLength: 1 });
    fc.assert(fc.property(inputs, cidrs, (input, list) => {
      const ex = AddressExclusion.parse(list.join(','));
      const decision = decideNodeAddresses({ ...input, exclude: ex }, 'refresh');
      if (decision.kind === 'ok') {
        for (const a of decision.addresses) {
          const mirroredHostname = a.type === 'Hostname' && input.nodeAddresses.some((n) => n.address === a.address);
          if (!mirroredHostname) expect(ex.cidrOf(a.address)).toBeUndefined();
        }
        expect(decision.excluded.every((e) => ex.cidrOf(e.address) === e.cidr)).toBe(true);
      }
      const none = decideNodeAddresses({ ...input, exclude: AddressExclusion.parse('192.0.2.0/32') }, 'refresh');
      const plain = decideNodeAddresses(input, 'refresh');
      if (!input.cloudAddresses.some((a) => a.address === '192.0.2.0')) expect(outcomeOf(none)).toEqual(outcomeOf(plain));
    }), { numRuns: 1000 });
  });
});

function outcomeOf(d: NodeAddressDecision): unknown {
  return d.kind === 'ok' ? { ...d, excluded: [] } : d;
}
