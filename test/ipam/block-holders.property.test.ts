// BlockHolders keeps one holder inline and a Map only for the others; over any history of sets and
// deletes it must answer exactly as a Map would, iteration order included.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BlockHolders } from '../../src/ipam/held-blocks.js';

const op = fc.oneof(
  fc.record({ set: fc.constantFrom('a', 'b', 'c', 'd'), seq: fc.nat(1000) }),
  fc.record({ del: fc.constantFrom('a', 'b', 'c', 'd') }),
);

describe('BlockHolders', () => {
  it('behaves as a Map<string, number> over random histories', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const h = new BlockHolders();
        const m = new Map<string, number>();
        for (const o of ops) {
          if ('set' in o) {
            h.set(o.set, o.seq);
            m.set(o.set, o.seq);
          } else expect(h.delete(o.del)).toBe(m.delete(o.del));
          expect(h.size).toBe(m.size);
          expect([...h]).toEqual([...m]);
          expect([...h.keys()]).toEqual([...m.keys()]);
          for (const n of ['a', 'b', 'c', 'd']) {
            expect(h.get(n)).toBe(m.get(n));
            expect(h.has(n)).toBe(m.has(n));
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
