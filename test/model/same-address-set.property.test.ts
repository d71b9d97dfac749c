// sameAddressSet (the refresh's "same addresses, each as often, in any order") against a count of
// type/address pairs written out, over lists with repeats, of both sizes it handles apart (a
// node's handful of entries without a Map, and long lists with one).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { sameAddressSet } from '../../src/model/node.js';
import type { NodeAddress } from '../../src/model/node-address.js';

function countsOf(list: readonly NodeAddress[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const a of list) m.set(JSON.stringify([a.type, a.address]), (m.get(JSON.stringify([a.type, a.address])) ?? 0) + 1);
  return m;
}

function oracle(a: readonly NodeAddress[], b: readonly NodeAddress[]): boolean {
  const x = countsOf(a);
  const y = countsOf(b);
  return a.length === b.length && [...x].every(([k, n]) => y.get(k) === n);
}

describe('sameAddressSet', () => {
  // Few distinct values, so that repeats and near-misses (same address, other type) are common.
  const address: fc.Arbitrary<NodeAddress> = fc.record({ type: fc.constantFrom('InternalIP' as const, 'ExternalIP' as const, 'Hostname' as const), address: fc.constantFrom('10.0.0.1', '10.0.0.2', 'node-a') });
  const list = (max: number) => fc.array(address, { maxLength: max });
  it('equals the count of pairs for short and long lists, permutations included', () => {
    fc.assert(
      fc.property(fc.oneof(list(6), list(40)), fc.oneof(list(6), list(40)), (a, b) => {
        expect(sameAddressSet(a, b)).toBe(oracle(a, b));
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.oneof(list(6), list(40)).chain((a) => fc.tuple(fc.constant(a), fc.shuffledSubarray(a, { minLength: a.length, maxLength: a.length }))), ([a, b]) => {
        expect(sameAddressSet(a, b)).toBe(true);
        if (a.length > 0) expect(sameAddressSet(a, [...b.slice(1), { type: 'ExternalIP', address: '10.0.0.9' }])).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('undefined is the empty list', () => {
    expect(sameAddressSet(undefined, [])).toBe(true);
    expect(sameAddressSet([], undefined)).toBe(true);
    expect(sameAddressSet(undefined, [{ type: 'Hostname', address: 'a' }])).toBe(false);
  });
});
