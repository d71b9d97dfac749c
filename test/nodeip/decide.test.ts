// decideNodeAddresses against the rule it implements, written the plain way: when initialising,
// an annotation is first checked against the cloud's list alone; then, when the cloud reported
// anything, the kubelet's Hostname joins (if the cloud has none) and the annotation selects.
// The implementation reads the list once when no Hostname was mirrored; over random inputs the
// decision must be the same.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NODE_ADDRESS_TYPES, type NodeAddress } from '../../src/model/node-address.js';
import { NodeIPError, decideNodeAddresses, explainNodeAddresses, type NodeAddressDecision, type NodeAddressInputs, type NodeAddressPhase } from '../../src/nodeip/index.js';

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
  return { kind: 'ok', addresses: explanation.addresses.map(({ type, address }) => ({ type, address })), explanation, considered, mirrored };
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
    return f();
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
});
