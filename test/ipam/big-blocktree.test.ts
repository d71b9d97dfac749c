import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { BigBlockTree } from '../../src/ipam/big-blocktree.js';
import { UnitModel, treeCases } from './blocktree-model.js';

// The bigint tree against a plain array of booleans over a window of 2^12 units at `base` inside
// a tree of `bits` unit bits (2^12 itself, or far larger: the tree must not care).
const W = 12;
const N = 2 ** W;

describe('BigBlockTree', () => {
  it.each([
    [12, 0, 0n],
    [12, 3, 0n],
    [12, 6, 0n],
    [64, 6, 1n << 40n], // KEP-2593's pool: /64 split into /122 (6 host bits)
    [100, 7, (1n << 99n) + (1n << 60n)],
  ])('agrees with a boolean array (unitBits %d, alignBits %d, window at %s)', (bits, alignBits, base) => {
    fc.assert(
      fc.property(treeCases(W), ({ ops, probe, from }) => {
        const t = new BigBlockTree(bits, alignBits);
        const B = (x: number) => base + BigInt(x);
        const m = new UnitModel(W).replay(ops, (mark, r) => (mark ? t.mark(B(r.start), BigInt(r.size)) : t.clear(B(r.start), BigInt(r.size))));
        const part = m.part(probe);
        expect(t.anyUsed(B(probe.start), BigInt(probe.size))).toBe(part.some(Boolean));
        expect(t.allUsed(B(probe.start), BigInt(probe.size))).toBe(part.every(Boolean));
        const want = m.firstFree(from, probe.size);
        const got = t.findFree(B(from), BigInt(probe.size));
        // Past the window the tree is free: a miss inside the window lands right after it.
        if (want >= 0) expect(got).toBe(B(want));
        else if (bits === W) expect(got).toBe(-1n);
        else expect(got >= B(N)).toBe(true);
        const bs = 2 ** Math.min(alignBits, W);
        expect(t.touchedBlocks(base, B(N), BigInt(bs))).toBe(BigInt(m.touched(bs)));
      }),
      { numRuns: 200 },
    );
  });

  it('counts touched blocks of a huge region without walking it', () => {
    const t = new BigBlockTree(64, 6);
    t.mark(0n, 1n << 62n);
    t.mark((1n << 63n) + 64n, 64n);
    expect(t.touchedBlocks(0n, 1n << 64n, 64n)).toBe((1n << 56n) + 1n);
    t.clear(1n << 61n, 1n << 61n);
    expect(t.touchedBlocks(0n, 1n << 64n, 64n)).toBe((1n << 55n) + 1n);
  });

  it('rejects more than 128 unit bits', () => {
    expect(() => new BigBlockTree(129)).toThrow('unitBits 129 out of 0..128');
  });
});
