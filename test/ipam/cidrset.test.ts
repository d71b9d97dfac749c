import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { CIDRSet, CIDRSetError } from '../../src/ipam/cidrset.js';
import { formatCIDR, parseCIDR } from '../../src/ipam/cidr.js';

function allocateN(s: CIDRSet, n: number, mask?: number): string[] {
  return Array.from({ length: n }, () => s.allocateNext(mask));
}

describe('CIDRSet construction', () => {
  it.each([
    ['10.10.0.1/16', 24, '10.10.0.0/16', 256n],
    ['10.0.0.0/8', 24, '10.0.0.0/8', 65536n],
    ['fd00::/16', 64, 'fd00::/16', 1n << 48n],
    ['fd00::/48', 64, 'fd00::/48', 65536n],
    ['10.0.0.0/24', 24, '10.0.0.0/24', 1n],
    ['10.0.0.0/24', 32, '10.0.0.0/24', 256n],
  ])('%s with /%d', (cidr, mask, text, capacity) => {
    const s = new CIDRSet(cidr, mask);
    expect(s.clusterCIDR).toBe(text);
    expect(s.capacity).toBe(capacity);
    expect(s.freeCount).toBe(capacity);
    expect(s.usedCount).toBe(0n);
  });

  it('counts are bigint under their aliases too (freeBlocks, free, allocatedCount, totalBlocks)', () => {
    const s = new CIDRSet('10.0.0.0/22', 24);
    s.allocateNext();
    s.addExclusion('10.0.3.0/25');
    expect([s.capacity, s.totalBlocks]).toEqual([4n, 4n]);
    expect([s.freeCount, s.freeBlocks, s.free]).toEqual([2n, 2n, 2n]);
    expect([s.usedCount, s.allocatedCount]).toEqual([1n, 1n]);
    expect(typeof s.free).toBe('bigint');
  });

  it.each([
    ['10.0.0.0/8', 7, 'node mask size 7 is invalid for range 10.0.0.0/8: must be an integer from 8 to 32'],
    ['10.0.0.0/8', 33, 'node mask size 33 is invalid for range 10.0.0.0/8'],
    ['10.0.0.0/8', 24.5, 'node mask size 24.5 is invalid'],
    ['fd00::/64', 129, 'node mask size 129 is invalid for range fd00::/64: must be an integer from 64 to 128'],
    ['10.0.0.0', 24, 'cluster CIDR invalid CIDR "10.0.0.0"'],
  ])('rejects %s with /%d', (cidr, mask, msg) => {
    expect(() => new CIDRSet(cidr, mask)).toThrow(CIDRSetError);
    expect(() => new CIDRSet(cidr, mask)).toThrow(msg);
  });
});

describe('CIDRSet single size: Kubernetes cidrset order', () => {
  it('hands out blocks in order and reports exhaustion', () => {
    const s = new CIDRSet('10.0.0.0/22', 24);
    expect(allocateN(s, 4)).toEqual(['10.0.0.0/24', '10.0.1.0/24', '10.0.2.0/24', '10.0.3.0/24']);
    expect(s.freeCount).toBe(0n);
    expect(() => s.allocateNext()).toThrow('range 10.0.0.0/22 is full: no free /24 block');
  });

  it('a released block comes back only after the cursor wraps', () => {
    const s = new CIDRSet('10.0.0.0/22', 24);
    allocateN(s, 2);
    s.release('10.0.0.0/24');
    expect(s.allocateNext()).toBe('10.0.2.0/24');
    expect(s.allocateNext()).toBe('10.0.3.0/24');
    expect(s.allocateNext()).toBe('10.0.0.0/24');
  });

  it('occupy does not move the cursor and is skipped', () => {
    const s = new CIDRSet('10.0.0.0/22', 24);
    expect(s.occupy('10.0.1.7/24')).toBe(true);
    expect(s.occupy('10.0.1.0/24')).toBe(false);
    expect(s.allocateNext()).toBe('10.0.0.0/24');
    expect(s.allocateNext()).toBe('10.0.2.0/24');
  });

  it('IPv6 /64 from a /16 (beyond kube-controller-manager’s 16-bit limit)', () => {
    const s = new CIDRSet('fd00::/16', 64);
    expect(allocateN(s, 3)).toEqual(['fd00::/64', 'fd00:0:0:1::/64', 'fd00:0:0:2::/64']);
    s.occupy('fd00:0:0:4::5/128');
    expect(s.allocateNext()).toBe('fd00:0:0:3::/64');
    expect(s.allocateNext()).toBe('fd00:0:0:5::/64');
    expect(s.usedCount).toBe(6n);
    expect(s.freeCount).toBe((1n << 48n) - 6n);
  });

  it('IPv6 text crosses group boundaries', () => {
    const s = new CIDRSet('2001:db8:ff00::/40', 64);
    s.occupy('2001:db8:ff00::/48');
    expect(s.allocateNext()).toBe('2001:db8:ff01::/64');
    const t = new CIDRSet('fd00::/104', 120);
    t.occupy('fd00::/105');
    expect(t.allocateNext()).toBe('fd00::80:0/120');
  });
});

describe('CIDRSet mixed sizes (KEP-2647)', () => {
  it('IPv6 text of many sequential blocks, as higher groups carry', () => {
    const s = new CIDRSet('fd00::/32', 64);
    const base = parseCIDR('fd00::/32').addr;
    for (let i = 0; i < 70_000; i++) {
      const got = s.allocateNext();
      const want = formatCIDR(6, base + (BigInt(i) << 64n), 64);
      if (got !== want) expect(got).toBe(want);
    }
  });

  it('aligns each block to its own size without overlap', () => {
    const s = new CIDRSet('10.10.0.0/16', 24);
    expect(s.allocateNext()).toBe('10.10.0.0/24');
    expect(s.allocateNext(23)).toBe('10.10.2.0/23');
    expect(s.allocateNext(26)).toBe('10.10.4.0/26');
    expect(s.allocateNext(26)).toBe('10.10.4.64/26');
    expect(s.allocateNext()).toBe('10.10.5.0/24');
    // Wrap: the hole at 10.10.1.0/24 is found after the end.
    allocateN(s, 256 - 6);
    expect(s.allocateNext(25)).toBe('10.10.1.0/25');
    expect(s.allocateNext(26)).toBe('10.10.1.128/26');
    expect(s.allocateNext(26)).toBe('10.10.1.192/26');
    expect(s.allocateNext(26)).toBe('10.10.4.128/26');
    expect(s.freeCount).toBe(0n);
  });

  it('rejects mask sizes outside the range', () => {
    const s = new CIDRSet('10.0.0.0/16', 24);
    expect(() => s.allocateNext(15)).toThrow('mask size 15 is invalid for range 10.0.0.0/16: must be an integer from 16 to 32');
    expect(() => s.allocateNext(33)).toThrow(CIDRSetError);
  });
});

describe('CIDRSet occupy/release on addresses', () => {
  it('a CIDR containing the range fills it', () => {
    const s = new CIDRSet('10.0.0.0/16', 24);
    expect(s.occupy('10.0.0.0/8')).toBe(true);
    expect(s.freeCount).toBe(0n);
    expect(s.isAllocated('10.0.0.0/16')).toBe(true);
    s.release('10.0.3.0/24');
    expect(s.freeCount).toBe(1n);
    expect(s.allocateNext()).toBe('10.0.3.0/24');
  });

  it('a partial occupy marks only the new addresses', () => {
    const s = new CIDRSet('10.0.0.0/16', 24);
    expect(s.occupy('10.0.0.0/25')).toBe(true);
    expect(s.usedCount).toBe(1n);
    expect(s.occupy('10.0.0.0/24')).toBe(true);
    expect(s.occupy('10.0.0.128/25')).toBe(false);
    expect(s.isAllocated('10.0.0.0/24')).toBe(true);
  });

  it('release frees exactly that CIDR; releasing free space is a no-op', () => {
    const s = new CIDRSet('10.0.0.0/16', 24);
    s.occupy('10.0.0.0/23');
    s.release('10.0.1.128/25');
    expect(s.isAllocated('10.0.0.0/24')).toBe(true);
    expect(s.isAllocated('10.0.1.0/25')).toBe(true);
    expect(s.isAllocated('10.0.1.0/24')).toBe(false);
    expect(s.overlapsAllocated('10.0.1.0/24')).toBe(true);
    expect(s.usedCount).toBe(2n);
    s.release('10.0.9.0/24');
    s.release('10.0.1.0/25');
    expect(s.usedCount).toBe(1n);
  });

  it.each([
    ['occupy', '11.0.0.0/24', 'cannot occupy "11.0.0.0/24": it does not overlap range 10.0.0.0/16'],
    ['occupy', '11.0.0.9/24', 'cannot occupy "11.0.0.9/24" (11.0.0.0/24): it does not overlap range 10.0.0.0/16'],
    ['occupy', 'fd00::/64', 'does not overlap range 10.0.0.0/16'],
    ['release', '11.0.0.0/24', 'cannot release "11.0.0.0/24": it does not overlap range 10.0.0.0/16'],
    ['occupy', 'bogus', 'invalid CIDR "bogus": missing "/prefix" (range 10.0.0.0/16)'],
  ])('%s %s throws', (op, cidr, msg) => {
    const s = new CIDRSet('10.0.0.0/16', 24);
    const f = op === 'occupy' ? () => s.occupy(cidr) : () => s.release(cidr);
    expect(f).toThrow(CIDRSetError);
    expect(f).toThrow(msg);
  });

  it('restores any text the API server accepted (ParseCIDRSloppy leading zeros)', () => {
    const s = new CIDRSet('10.0.0.0/16', 24);
    expect(s.occupy('0010.0.5.0/24')).toBe(true);
    expect(s.isAllocated('10.0.5.0/24')).toBe(true);
    s.release('10.0.5.0/0024');
    expect(s.isAllocated('10.0.5.0/24')).toBe(false);
    const v6 = new CIDRSet('fd00::/48', 64);
    expect(v6.occupy('fd00:0:0:00005::/64')).toBe(true);
    expect(v6.isAllocated('fd00:0:0:5::/64')).toBe(true);
  });

  it('isAllocated is false for a disjoint CIDR', () => {
    const s = new CIDRSet('10.0.0.0/16', 24);
    expect(s.isAllocated('11.0.0.0/24')).toBe(false);
  });
});

describe('CIDRSet exclusions', () => {
  it('skips blocks overlapping an exclusion, until it is removed', () => {
    const s = new CIDRSet('10.0.0.0/22', 24);
    expect(s.addExclusion('10.0.0.128/25')).toBe(false);
    expect(s.addExclusion('10.0.1.0/24')).toBe(false);
    expect(s.freeCount).toBe(2n);
    expect(s.excludedCount).toBe(2n);
    expect(s.allocateNext(25)).toBe('10.0.0.0/25');
    expect(s.allocateNext()).toBe('10.0.2.0/24');
    s.removeExclusion('10.0.1.0/24');
    expect(s.allocateNext()).toBe('10.0.3.0/24');
    expect(s.allocateNext()).toBe('10.0.1.0/24');
    expect(() => s.allocateNext()).toThrow('is full');
  });

  it('an exclusion over allocated space is reported, not revoked', () => {
    const s = new CIDRSet('10.0.0.0/22', 24);
    s.allocateNext();
    expect(s.addExclusion('10.0.0.0/16')).toBe(true);
    expect(s.isAllocated('10.0.0.0/24')).toBe(true);
    expect(s.freeCount).toBe(0n);
    expect(s.excludedCount).toBe(3n);
  });

  it('exclusions are reference-counted by CIDR; other families are ignored', () => {
    const s = new CIDRSet('10.0.0.0/22', 24);
    s.addExclusion('10.0.1.0/24');
    s.addExclusion('10.0.1.0/24');
    s.addExclusion('fd00::/64');
    s.removeExclusion('10.0.1.0/24');
    expect(s.isExcluded('10.0.1.5/32')).toBe(true);
    s.removeExclusion('10.0.1.0/24');
    expect(s.isExcluded('10.0.1.5/32')).toBe(false);
  });
});

// A brute-force model: one boolean per cell of `cellPrefix` length.
interface Scenario {
  range: string;
  nodeMask: number;
  cellPrefix: number;
  minMask: number;
}

const scenarios: Scenario[] = [
  { range: '10.20.0.0/24', nodeMask: 28, cellPrefix: 32, minMask: 24 },
  { range: 'fd00::/120', nodeMask: 124, cellPrefix: 128, minMask: 120 },
  // Units coarser than addresses: /56 + 52 bits = /108 units; cells of /66.
  { range: 'fd00:0:0:ab00::/56', nodeMask: 62, cellPrefix: 66, minMask: 56 },
  // Node blocks vary group 6 (base ff00) next to a run of zero groups.
  { range: 'fd00::ff:ff00:0/104', nodeMask: 112, cellPrefix: 114, minMask: 104 },
  // Node blocks span groups 6 and 7: group 6 changes every fourth block, group 7 is often zero.
  { range: 'fd00::ab:fff4:0/110', nodeMask: 114, cellPrefix: 118, minMask: 110 },
];

type Op =
  | { kind: 'alloc'; mask: number }
  | { kind: 'occupy'; cell: number; mask: number }
  | { kind: 'release'; cell: number; mask: number }
  | { kind: 'exclude'; cell: number; mask: number }
  | { kind: 'unexclude'; index: number };

function opArb(sc: Scenario): fc.Arbitrary<Op> {
  const cells = 2 ** (sc.cellPrefix - sc.minMask);
  const mask = fc.integer({ min: sc.minMask, max: sc.cellPrefix });
  const cell = fc.integer({ min: 0, max: cells - 1 });
  return fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: Math.max(sc.minMask, sc.nodeMask - 2), max: Math.min(sc.cellPrefix, sc.nodeMask + 3) }).map((m) => ({ kind: 'alloc' as const, mask: m })) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('occupy' as const), cell, mask }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('release' as const), cell, mask }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('exclude' as const), cell, mask: fc.integer({ min: sc.nodeMask, max: sc.cellPrefix }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('unexclude' as const), index: fc.nat() }) },
  );
}

class Model {
  used: boolean[];
  excluded: number[];
  cursor = 0;
  readonly range;
  constructor(readonly sc: Scenario) {
    this.range = parseCIDR(sc.range);
    this.used = new Array<boolean>(2 ** (sc.cellPrefix - this.range.prefix)).fill(false);
    this.excluded = new Array<number>(this.used.length).fill(0);
  }
  shift(): bigint {
    return BigInt(this.range.bits - this.sc.cellPrefix);
  }
  text(cell: number, mask: number): string {
    const size = 2 ** (this.sc.cellPrefix - mask);
    const start = Math.floor(cell / size) * size;
    return formatCIDR(this.range.family, this.range.addr + (BigInt(start) << this.shift()), mask);
  }
  cells(cidr: string): [number, number] {
    const c = parseCIDR(cidr);
    const start = Number((c.addr - this.range.addr) >> this.shift());
    return [start, start + 2 ** (this.sc.cellPrefix - c.prefix)];
  }
  freeBlockAt(start: number, size: number): boolean {
    for (let i = start; i < start + size; i++) if (this.used[i] || this.excluded[i] > 0) return false;
    return true;
  }
  expectedAlloc(mask: number): number {
    const size = 2 ** (this.sc.cellPrefix - mask);
    const n = this.used.length;
    const scan = (from: number, to: number) => {
      for (let s = Math.ceil(from / size) * size; s + size <= to; s += size) if (this.freeBlockAt(s, size)) return s;
      return -1;
    };
    const a = scan(this.cursor, n);
    return a >= 0 ? a : scan(0, n);
  }
  blockCounts(): { used: number; free: number } {
    const nb = 2 ** (this.sc.cellPrefix - this.sc.nodeMask);
    let used = 0;
    let free = 0;
    for (let b = 0; b < this.used.length; b += nb) {
      let u = false;
      let x = false;
      for (let i = b; i < b + nb; i++) {
        u ||= this.used[i] as boolean;
        x ||= (this.excluded[i] as number) > 0;
      }
      if (u) used++;
      else if (!x) free++;
    }
    return { used, free };
  }
}

describe('CIDRSet properties', () => {
  it.each(scenarios)('random operations on $range agree with a brute-force model', (sc) => {
    fc.assert(
      fc.property(fc.array(opArb(sc), { maxLength: 80 }), (ops) => {
        const s = new CIDRSet(sc.range, sc.nodeMask);
        const m = new Model(sc);
        const exclusions: string[] = [];
        for (const op of ops) {
          if (op.kind === 'alloc') {
            const want = m.expectedAlloc(op.mask);
            if (want < 0) {
              expect(() => s.allocateNext(op.mask)).toThrow('is full');
              continue;
            }
            const got = s.allocateNext(op.mask);
            expect(got).toBe(m.text(want, op.mask));
            const [a, b] = m.cells(got);
            for (let i = a; i < b; i++) m.used[i] = true;
            m.cursor = b >= m.used.length ? 0 : b;
          } else if (op.kind === 'occupy' || op.kind === 'release') {
            const t = m.text(op.cell, op.mask);
            const [a, b] = m.cells(t);
            if (op.kind === 'occupy') {
              const fresh = m.used.slice(a, b).some((u) => !u);
              expect(s.occupy(t)).toBe(fresh);
            } else s.release(t);
            for (let i = a; i < b; i++) m.used[i] = op.kind === 'occupy';
          } else if (op.kind === 'exclude') {
            const t = m.text(op.cell, op.mask);
            const [a, b] = m.cells(t);
            expect(s.addExclusion(t)).toBe(m.used.slice(a, b).some(Boolean));
            exclusions.push(t);
            for (let i = a; i < b; i++) m.excluded[i]++;
          } else if (exclusions.length > 0) {
            const t = exclusions.splice(op.index % exclusions.length, 1)[0];
            s.removeExclusion(t);
            const [a, b] = m.cells(t);
            for (let i = a; i < b; i++) m.excluded[i]--;
          }
          const counts = m.blockCounts();
          if (s.usedCount !== BigInt(counts.used) || s.freeCount !== BigInt(counts.free)) {
            expect({ used: s.usedCount, free: s.freeCount }).toEqual({ used: BigInt(counts.used), free: BigInt(counts.free) });
          }
        }
        // Restore: occupying every used cell in a fresh set reproduces the state.
        const r = new CIDRSet(sc.range, sc.nodeMask);
        m.used.forEach((u, i) => u && r.occupy(m.text(i, sc.cellPrefix)));
        // Every cell checked; expect is called only to report a mismatch (a thousand cells a run).
        for (let i = 0; i < m.used.length; i++) {
          const cell = m.text(i, sc.cellPrefix);
          if (r.isAllocated(cell) !== m.used[i]) expect({ cell, allocated: r.isAllocated(cell) }).toEqual({ cell, allocated: m.used[i] });
        }
        expect(r.usedCount).toBe(s.usedCount);
      }),
      { numRuns: 150 },
    );
  });
});
