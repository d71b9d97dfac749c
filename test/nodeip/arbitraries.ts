// The inputs of the node-address properties (properties.test.ts) and of the same properties
// against upstream's own functions (upstream.differential.test.ts): IP texts in the odd spellings
// the parser must accept, near-misses it must reject, and cloud lists drawn from a small pool so
// that annotations and lists share addresses.
import fc from 'fast-check';
import { NODE_ADDRESS_TYPES, type NodeAddress } from '../../src/model/node-address.js';

export const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));
export const ipv6 = fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }).map((g) => g.map((x) => x.toString(16)).join(':'));
export const smallIPv4 = fc.constantFrom('10.0.0.1', '10.0.0.2', '010.000.000.002', '::ffff:10.0.0.1', '192.168.0.1', '0.0.0.0');
export const smallIPv6 = fc.constantFrom('fd00::1', 'fd00::2', 'FD00:0::2', '::', 'fd00:0:0:0:0:0:0:1');
export const ipText = fc.oneof(ipv4, ipv6, smallIPv4, smallIPv6);
export const junk = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', ' ', '1.2.3', 'fe80::1%eth0', '16909060', 'host-a'));
export const annotationText = fc.oneof(
  fc.array(fc.oneof(ipText, junk), { minLength: 1, maxLength: 4 }).map((items) => items.join(',')),
  fc.string({ maxLength: 40 }),
);
export const cloudAddress: fc.Arbitrary<NodeAddress> = fc.record({
  type: fc.constantFrom(...NODE_ADDRESS_TYPES),
  address: fc.oneof(smallIPv4, smallIPv6, fc.constantFrom('node-a', 'a.example')),
});
export const cloudList = fc.array(cloudAddress, { maxLength: 8 });
