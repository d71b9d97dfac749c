import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { CIDRSet } from '../../src/ipam/cidrset.js';
import { formatCIDR, parseCIDR } from '../../src/ipam/cidr.js';

// Ranges over 2^52 addresses: blocks finer than the fast path's unit, and over 2^52 node blocks.
describe('CIDRSet in huge IPv6 ranges', () => {
  it("loads KEP-2593's example pool (fd12:3456:789a:1::/64, perNodeHostBits 6: 2^58 blocks) and allocates in order", () => {
    const s = new CIDRSet('fd12:3456:789a:1::/64', 122);
    expect(s.capacity).toBe(2n ** 58n);
    expect([s.allocateNext(), s.allocateNext(), s.allocateNext()]).toEqual(['fd12:3456:789a:1::/122', 'fd12:3456:789a:1::40/122', 'fd12:3456:789a:1::80/122']);
    expect(s.usedCount).toBe(3n);
    expect(s.freeCount).toBe(2n ** 58n - 3n);
    s.release('fd12:3456:789a:1::40/122');
    expect(s.usedCount).toBe(2n);
    expect(s.isAllocated('fd12:3456:789a:1::40/122')).toBe(false);
    // The cursor moves on, as Kubernetes' cidrset does; the freed block comes back after wrapping.
    expect(s.allocateNext()).toBe('fd12:3456:789a:1::c0/122');
  });

  it('occupying and releasing a block finer than a unit frees it: counts return exactly (no leak)', () => {
    // fd00::/32 tracks units of /84 on the fast path; a /96 is finer than a unit.
    const s = new CIDRSet('fd00::/32', 64);
    s.allocateNext();
    expect(s.occupy('fd00:0:0:5::/96')).toBe(true);
    expect(s.occupy('fd00:0:0:5:0:1::/96')).toBe(true);
    expect(s.usedCount).toBe(2n);
    s.release('fd00:0:0:5::/96');
    expect(s.usedCount).toBe(2n); // the other /96 still holds block fd00:0:0:5::/64
    expect(s.overlapsAllocated('fd00:0:0:5::/64')).toBe(true);
    expect(s.isAllocated('fd00:0:0:5::/96')).toBe(false);
    s.release('fd00:0:0:5:0:1::/96');
    expect(s.usedCount).toBe(1n);
    expect(s.freeCount).toBe(s.capacity - 1n);
    expect(s.overlapsAllocated('fd00:0:0:5::/64')).toBe(false);
    // Earlier state survives the move to exact offsets: the first block is still used, the cursor kept.
    expect(s.isAllocated('fd00::/64')).toBe(true);
    expect(s.allocateNext()).toBe('fd00:0:0:1::/64');
  });

  it('a finer exclusion is exact: it keeps its own addresses out, not its whole unit', () => {
    const s = new CIDRSet('fd12:3456:789a:1::/64', 122);
    s.addExclusion('fd12:3456:789a:1::/123');
    expect(s.excludedCount).toBe(1n);
    expect(s.allocateNext()).toBe('fd12:3456:789a:1::40/122');
    expect(s.allocateNext(124)).toBe('fd12:3456:789a:1::80/124');
    s.removeExclusion('fd12:3456:789a:1::/123');
    expect(s.excludedCount).toBe(0n);
    expect(s.usedCount).toBe(2n);
  });

  it('counts stay exact when a huge occupy covers 2^56 blocks and is released', () => {
    const s = new CIDRSet('fd12:3456:789a:1::/64', 122);
    s.allocateNext();
    s.occupy('fd12:3456:789a:1:4000::/66');
    expect(s.usedCount).toBe(1n + 2n ** 56n);
    s.release('fd12:3456:789a:1:4000::/66');
    expect(s.usedCount).toBe(1n);
  });

  it('mask sizes beyond the fast path are allowed up to the address length', () => {
    const s = new CIDRSet('fd00::/32', 64);
    expect(s.allocateNext(128)).toBe('fd00::/128');
    expect(s.allocateNext(64)).toBe('fd00:0:0:1::/64');
    expect(() => s.allocateNext(129)).toThrow('mask size 129 is invalid for range fd00::/32: must be an integer from 32 to 128');
  });
});

// --- Property: random histories compared with a BigInt model of used and excluded addresses. ---

interface Scenario {
  range: string;
  nodeMask: number;
}

const scenarios: Scenario[] = [
  { range: 'fd12:3456:789a:1::/64', nodeMask: 122 }, // 2^58 blocks: exact offsets from the start
  { range: 'fd00::/32', nodeMask: 64 }, // fast path (units /84) until a finer block shows up
  { range: 'fd00:0:0:ab00::/56', nodeMask: 62 }, // fast path (units /108)
];

type Op =
  | { kind: 'alloc'; maskDelta: number }
  | { kind: 'occupy' | 'release' | 'exclude'; pos: bigint; mask: number }
  | { kind: 'unexclude'; index: number };

/** Half-open [lo, hi) intervals, sorted and disjoint. */
type Intervals = [bigint, bigint][];

function setRange(list: Intervals, lo: bigint, hi: bigint, on: boolean): Intervals {
  const out: Intervals = [];
  for (const [a, b] of list) {
    if (b <= lo || a >= hi) out.push([a, b]);
    else {
      if (a < lo) out.push([a, lo]);
      if (b > hi) out.push([hi, b]);
    }
  }
  if (on) out.push([lo, hi]);
  out.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  // Merge touching intervals so the list stays canonical.
  const merged: Intervals = [];
  for (const iv of out) {
    const last = merged[merged.length - 1];
    if (last && iv[0] <= last[1]) last[1] = iv[1] > last[1] ? iv[1] : last[1];
    else merged.push([iv[0], iv[1]]);
  }
  return merged;
}

/** Node-block index ranges [first, last+1) touched by the intervals, merged. */
function blocksOf(list: Intervals, nb: bigint): Intervals {
  let out: Intervals = [];
  for (const [a, b] of list) out = setRange(out, a / nb, (b - 1n) / nb + 1n, true);
  return out;
}

function total(list: Intervals): bigint {
  return list.reduce((n, [a, b]) => n + b - a, 0n);
}

function intersection(x: Intervals, y: Intervals): bigint {
  let n = 0n;
  for (const [a, b] of x) for (const [c, d] of y) {
    const lo = a > c ? a : c;
    const hi = b < d ? b : d;
    if (hi > lo) n += hi - lo;
  }
  return n;
}

class Model {
  used: Intervals = [];
  excluded: bigint[][] = [];
  cursor = 0n;
  readonly range;
  readonly limit: bigint;
  readonly nb: bigint;
  constructor(readonly sc: Scenario) {
    this.range = parseCIDR(sc.range);
    this.limit = 1n << BigInt(128 - this.range.prefix);
    this.nb = 1n << BigInt(128 - sc.nodeMask);
  }
  excludedUnion(): Intervals {
    let u: Intervals = [];
    for (const [a, b] of this.excluded) u = setRange(u, a, b, true);
    return u;
  }
  /** First free, unexcluded aligned block at or after the cursor (wrapping once), or -1n. */
  expectedAlloc(size: bigint): bigint {
    const busy = [...this.used, ...this.excludedUnion()];
    const scan = (from: bigint): bigint => {
      let s = ((from + size - 1n) / size) * size;
      for (;;) {
        if (s + size > this.limit) return -1n;
        const hit = busy.find(([a, b]) => a < s + size && b > s);
        if (!hit) return s;
        s = ((hit[1] + size - 1n) / size) * size;
      }
    };
    const a = scan(this.cursor);
    return a >= 0n || this.cursor === 0n ? a : scan(0n);
  }
  counts(): { used: bigint; excluded: bigint } {
    const u = blocksOf(this.used, this.nb);
    const x = blocksOf(this.excludedUnion(), this.nb);
    return { used: total(u), excluded: total(x) - intersection(x, u) };
  }
}

function opArb(sc: Scenario): fc.Arbitrary<Op> {
  const prefix = parseCIDR(sc.range).prefix;
  // Positions cluster in the first blocks of the range (quarter-block steps) so operations meet.
  const near = fc.nat(255).map((k) => BigInt(k) << BigInt(128 - sc.nodeMask - 2));
  const far = fc.bigInt({ min: 0n, max: (1n << BigInt(128 - prefix)) - 1n });
  const pos = fc.oneof({ weight: 5, arbitrary: near }, { weight: 1, arbitrary: far });
  const mask = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: sc.nodeMask - 2, max: Math.min(128, sc.nodeMask + 6) }) },
    { weight: 1, arbitrary: fc.integer({ min: prefix, max: 128 }) },
  );
  return fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: -1, max: 2 }).map((d) => ({ kind: 'alloc' as const, maskDelta: d })) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('occupy' as const), pos, mask }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('release' as const), pos, mask }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('exclude' as const), pos, mask }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('unexclude' as const), index: fc.nat() }) },
  );
}

describe('CIDRSet in huge IPv6 ranges: properties', () => {
  it.each(scenarios)('random allocate/occupy/release/exclude histories on $range /$nodeMask match a BigInt model', (sc) => {
    fc.assert(
      fc.property(fc.array(opArb(sc), { maxLength: 60 }), (ops) => {
        const s = new CIDRSet(sc.range, sc.nodeMask);
        const m = new Model(sc);
        const exclusions: string[] = [];
        for (const op of ops) {
          if (op.kind === 'alloc') {
            const mask = sc.nodeMask + op.maskDelta;
            const size = 1n << BigInt(128 - mask);
            const want = m.expectedAlloc(size);
            if (want < 0n) {
              expect(() => s.allocateNext(mask)).toThrow('is full');
              continue;
            }
            expect(s.allocateNext(mask)).toBe(formatCIDR(6, m.range.addr + want, mask));
            m.used = setRange(m.used, want, want + size, true);
            m.cursor = want + size >= m.limit ? 0n : want + size;
          } else if (op.kind === 'unexclude') {
            if (exclusions.length === 0) continue;
            const t = exclusions.splice(op.index % exclusions.length, 1)[0];
            s.removeExclusion(t);
            const c = parseCIDR(t);
            const lo = c.addr - m.range.addr;
            const i = m.excluded.findIndex(([a, b]) => a === lo && b === lo + (1n << BigInt(128 - c.prefix)));
            m.excluded.splice(i, 1);
          } else {
            const size = 1n << BigInt(128 - op.mask);
            const lo = op.mask <= m.range.prefix ? 0n : (op.pos / size) * size;
            const hi = op.mask <= m.range.prefix ? m.limit : lo + size;
            const t = op.mask <= m.range.prefix ? formatCIDR(6, m.range.addr, op.mask) : formatCIDR(6, m.range.addr + lo, op.mask);
            const anyUsed = m.used.some(([a, b]) => a < hi && b > lo);
            if (op.kind === 'occupy') {
              const covered = m.used.some(([a, b]) => a <= lo && b >= hi);
              expect(s.occupy(t)).toBe(!covered);
              m.used = setRange(m.used, lo, hi, true);
            } else if (op.kind === 'release') {
              s.release(t);
              m.used = setRange(m.used, lo, hi, false);
            } else {
              expect(s.addExclusion(t)).toBe(anyUsed);
              exclusions.push(t);
              m.excluded.push([lo, hi]);
            }
            expect(s.isAllocated(t)).toBe(m.used.some(([a, b]) => a <= lo && b >= hi));
          }
          const want = m.counts();
          expect({ used: s.usedCount, excluded: s.excludedCount, free: s.freeCount }).toEqual({
            used: want.used,
            excluded: want.excluded,
            free: s.capacity - want.used - want.excluded,
          });
        }
      }),
      { numRuns: 120 },
    );
  });
});
