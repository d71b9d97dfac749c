// Invariants of the initialisation decision over random nodes and cloud lists:
//  * the controller (decideInitialization) and `explain` (buildExplainReport) take the same decision;
//  * a node whose provided-node-ip annotation is not matched by the cloud's own list (whatever the
//    kubelet's Hostname says) is never untainted, and one whose annotation is matched is;
//  * the plan is read off the node alone: once its addresses are written, planning again on the
//    written node asks for no second address write and takes the same decision otherwise (the
//    cloud node controller keeps no flag of what it already wrote).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildExplainReport } from '../../../src/cli/commands/explain-report.js';
import { decideInitialization } from '../../../src/controllers/cloudnode/decide.js';
import { NODE_ADDRESS_TYPES, type NodeAddress } from '../../../src/model/node-address.js';
import { NodeIPError, parseIPSloppy, parseNodeIPAnnotation } from '../../../src/nodeip/index.js';
import { makeMetadata, makeNode } from '../../kit/nodes.js';

const ipText = fc.constantFrom('10.0.0.1', '10.0.0.2', '010.0.0.2', '::ffff:10.0.0.1', '0.0.0.0', 'fd00::1', 'FD00:0::2', 'fd00::2', '::');
const addressText = fc.oneof(ipText, fc.constantFrom('node-a', 'a.example', ''));
const address: fc.Arbitrary<NodeAddress> = fc.record({ type: fc.constantFrom(...NODE_ADDRESS_TYPES), address: addressText });
const cloudList = fc.array(address, { maxLength: 6 });
// The node's status as kubelet set it: any addresses, Hostname entries possibly IP texts.
const nodeList = fc.array(fc.record({ type: fc.constantFrom('Hostname' as const, 'InternalIP' as const), address: addressText }), { maxLength: 3 });
const annotation = fc.option(
  fc.oneof(
    fc.array(ipText, { minLength: 1, maxLength: 3 }).map((items) => items.join(',')),
    fc.constantFrom('', 'bogus', '10.0.0.1\u0001', ' 10.0.0.1'),
  ),
  { nil: undefined },
);

describe('initialisation decision: properties', () => {
  it('the controller and explain agree: taint, and the addresses the node ends with', () => {
    fc.assert(
      fc.property(annotation, cloudList, nodeList, fc.boolean(), (ann, cloud, status, gate) => {
        const plan = decideInitialization(makeNode({ nodeIP: ann, addresses: status }), makeMetadata({ addresses: cloud }), { allowDualStack: gate });
        const report = buildExplainReport(ann, cloud, { allowDualStack: gate, nodeAddresses: status.filter((a) => a.type === 'Hostname') });
        expect(report.tainted).toBe(plan.kind === 'blocked');
        if (plan.kind === 'blocked') {
          expect('error' in report && plan.message.endsWith(`: ${report.error}${report.hint !== undefined ? ` (${report.hint})` : ''}`)).toBe(true);
          return;
        }
        const endsWith = plan.addresses ?? status;
        if ('cloudAddresses' in report) {
          expect(plan.addresses).toBeUndefined();
        } else if ('addresses' in report) {
          expect(endsWith).toEqual(report.addresses.map(({ type, address: a }) => ({ type, address: a })));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("a node is untainted exactly when its annotation parses and each of its IPs is in the cloud's own list", () => {
    fc.assert(
      fc.property(annotation, cloudList, nodeList, fc.boolean(), (ann, cloud, status, gate) => {
        // The kubelet's Hostname may even spell the annotated IP: it must not count.
        const withHostname = ann === undefined ? status : [...status, { type: 'Hostname' as const, address: ann }];
        const plan = decideInitialization(makeNode({ nodeIP: ann, addresses: withHostname }), makeMetadata({ addresses: cloud }), { allowDualStack: gate });
        if (ann === undefined) {
          expect(plan.kind).toBe('initialize');
          return;
        }
        let ips: string[];
        try {
          ips = parseNodeIPAnnotation(ann, { allowDualStack: gate });
        } catch (err) {
          if (!(err instanceof NodeIPError)) throw err;
          expect(plan.kind).toBe('blocked');
          return;
        }
        const cloudIPs = new Set(cloud.map((a) => parseIPSloppy(a.address)?.canonical));
        const matched = ips.every((ip) => cloudIPs.has(ip));
        expect(plan.kind).toBe(matched ? 'initialize' : 'blocked');
      }),
      { numRuns: 3000 },
    );
  });

  it('planning again on the node after its address write asks for no second address write', () => {
    fc.assert(
      fc.property(annotation, cloudList, nodeList, fc.boolean(), (ann, cloud, status, gate) => {
        const metadata = makeMetadata({ addresses: cloud });
        const first = decideInitialization(makeNode({ nodeIP: ann, addresses: status }), metadata, { allowDualStack: gate });
        if (first.kind === 'blocked' || !first.addresses) return;
        const written = makeNode({ nodeIP: ann, addresses: first.addresses });
        const again = decideInitialization(written, metadata, { allowDualStack: gate });
        expect(again.kind).toBe('initialize');
        if (again.kind !== 'initialize') return;
        expect(again.addresses).toBeUndefined();
        expect({ ...again, addresses: first.addresses }).toEqual(first);
      }),
      { numRuns: 3000 },
    );
  });
});
