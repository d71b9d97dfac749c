import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { ExclusionOverlapError, IntervalList } from '../../src/ipam/exclusions.js';

// Intervals as CIDRs make them: aligned power-of-two blocks of [0, 256), which nest or are disjoint.
const blockArb = fc.record({ bits: fc.integer({ min: 0, max: 8 }), at: fc.nat(255) }).map(({ bits, at }) => {
  const size = 2 ** bits;
  const start = Math.floor(at / size) * size;
  return { key: `${start}/${bits}`, start, end: start + size };
});

describe('IntervalList', () => {
  it('keeps the union of nested and disjoint intervals; removing an outer one uncovers what it held', () => {
    const l = new IntervalList();
    l.add('inner', 8, 12);
    l.add('outer', 0, 16);
    l.add('far', 32, 48);
    expect(l.size).toBe(2);
    expect(l.overlapEnd(13, 14)).toBe(16);
    l.remove('outer');
    expect([l.overlapEnd(13, 14), l.overlapEnd(0, 8), l.overlapEnd(9, 10), l.overlapEnd(20, 40)]).toEqual([undefined, undefined, 12, 48]);
    expect(l.size).toBe(2);
  });

  it('counts references per key; the same interval under two keys stays until both are gone', () => {
    const l = new IntervalList();
    l.add('a', 0, 4);
    l.add('a', 0, 4);
    l.add('b', 0, 4);
    l.remove('a');
    l.remove('b');
    expect(l.overlapEnd(0, 4)).toBe(4);
    l.remove('a');
    expect(l.overlapEnd(0, 4)).toBe(undefined);
    expect(l.remove('a')).toBe(false);
  });

  it('refuses an interval that partly overlaps another (CIDRs never do)', () => {
    const l = new IntervalList();
    l.add('a', 0, 8);
    expect(() => l.add('b', 4, 12)).toThrow(ExclusionOverlapError);
    expect(() => l.add('c', 0, 16)).not.toThrow();
  });

  it('works on bigint offsets', () => {
    const l = new IntervalList<bigint>();
    l.add('big', 1n << 70n, 1n << 71n);
    expect(l.overlapEnd(0n, (1n << 70n) + 1n)).toBe(1n << 71n);
  });

  it('random add/remove histories agree with a brute-force union', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ add: fc.boolean(), b: blockArb, pick: fc.nat() }), { maxLength: 120 }), (ops) => {
        const l = new IntervalList();
        const live: { key: string; start: number; end: number }[] = [];
        for (const op of ops) {
          if (op.add || live.length === 0) {
            l.add(op.b.key, op.b.start, op.b.end);
            live.push(op.b);
          } else {
            const [gone] = live.splice(op.pick % live.length, 1);
            l.remove(gone.key);
          }
          const covered = new Array<boolean>(256).fill(false);
          for (const iv of live) for (let i = iv.start; i < iv.end; i++) covered[i] = true;
          for (let s = 0; s < 256; s += 4) {
            const any = covered.slice(s, s + 4).some(Boolean);
            const end = l.overlapEnd(s, s + 4);
            expect(end !== undefined).toBe(any);
            // The end returned belongs to an interval covering the first covered unit.
            if (end !== undefined) expect(covered[end - 1]).toBe(true);
          }
          let union = 0;
          l.forEach((a, b) => (union += b - a));
          expect(union).toBe(covered.filter(Boolean).length);
        }
      }),
      { numRuns: 300 },
    );
  });
});
