import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { BlockTree } from '../../src/ipam/blocktree.js';

// The tree against a plain array of booleans, over 2^12 units with levels aligned to 2^3 blocks.
const BITS = 12;
const N = 2 ** BITS;

const region = fc.tuple(fc.integer({ min: 0, max: BITS }), fc.integer({ min: 0, max: N - 1 })).map(([k, at]) => {
  const size = 2 ** k;
  return { start: Math.floor(at / size) * size, size };
});

describe('BlockTree', () => {
  it.each([0, 3, 5, 7])('agrees with a boolean array (alignBits %d)', (alignBits) => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), region), { maxLength: 60 }), region, fc.integer({ min: 0, max: N - 1 }), (ops, probe, from) => {
        const t = new BlockTree(BITS, alignBits);
        const m = new Array<boolean>(N).fill(false);
        for (const [mark, r] of ops) {
          const before = m.slice(r.start, r.start + r.size);
          const changed = mark ? t.mark(r.start, r.size) : t.clear(r.start, r.size);
          expect(changed).toBe(mark ? before.some((u) => !u) : before.some(Boolean));
          m.fill(mark, r.start, r.start + r.size);
        }
        const part = m.slice(probe.start, probe.start + probe.size);
        expect(t.usedIn(probe.start, probe.size)).toBe(part.filter(Boolean).length);
        expect(t.anyUsed(probe.start, probe.size)).toBe(part.some(Boolean));
        expect(t.allUsed(probe.start, probe.size)).toBe(part.every(Boolean));
        let want = -1;
        for (let s = Math.ceil(from / probe.size) * probe.size; s + probe.size <= N; s += probe.size) {
          if (!m.slice(s, s + probe.size).some(Boolean)) {
            want = s;
            break;
          }
        }
        expect(t.findFree(from, probe.size)).toBe(want);
        const bs = 2 ** alignBits;
        let touched = 0;
        for (let b = 0; b < N; b += bs) if (m.slice(b, b + bs).some(Boolean)) touched++;
        expect(t.touchedBlocks(0, N, bs)).toBe(touched);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects more than 52 unit bits', () => {
    expect(() => new BlockTree(53)).toThrow('unitBits 53 out of 0..52');
  });
});
