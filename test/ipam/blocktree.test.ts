import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { BlockTree } from '../../src/ipam/blocktree.js';
import { UnitModel, treeCases } from './blocktree-model.js';

// The tree against a plain array of booleans, over 2^12 units.
const BITS = 12;

describe('BlockTree', () => {
  it.each([0, 3, 5, 7])('agrees with a boolean array (alignBits %d)', (alignBits) => {
    fc.assert(
      fc.property(treeCases(BITS), ({ ops, probe, from }) => {
        const t = new BlockTree(BITS, alignBits);
        const m = new UnitModel(BITS).replay(ops, (mark, r) => (mark ? t.mark(r.start, r.size) : t.clear(r.start, r.size)));
        const part = m.part(probe);
        expect(t.usedIn(probe.start, probe.size)).toBe(part.filter(Boolean).length);
        expect(t.anyUsed(probe.start, probe.size)).toBe(part.some(Boolean));
        expect(t.allUsed(probe.start, probe.size)).toBe(part.every(Boolean));
        expect(t.findFree(from, probe.size)).toBe(m.firstFree(from, probe.size));
        const bs = 2 ** alignBits;
        expect(t.touchedBlocks(0, 2 ** BITS, bs)).toBe(m.touched(bs));
      }),
      { numRuns: 300 },
    );
  });

  it('rejects more than 52 unit bits', () => {
    expect(() => new BlockTree(53)).toThrow('unitBits 53 out of 0..52');
  });
});
