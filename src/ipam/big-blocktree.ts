// BigBlockTree: the BlockTree (blocktree.ts) over bigint offsets, for ranges whose addresses or
// node blocks do not fit in 2^52 (e.g. KEP-2593's fd12:3456:789a:1::/64 with perNodeHostBits 6:
// 2^58 blocks). Same shape: a sparse 32-ary tree where a child entirely used or entirely free is
// one bit, so memory follows the number of used/free boundaries, never the size of the range.
// Child indexes stay small numbers; only offsets are bigint. Slower than BlockTree, so CIDRSet
// uses it only for such ranges.

const FANOUT_BITS = 5;

class TNode {
  /** Bit i: child i is entirely used. */
  full = 0;
  /** Bit i: child i has at least one used unit (full ⊆ any). */
  any = 0;
  /** Partially used children, packed in bit order. */
  kids: TNode[] | undefined;
}

function popcnt(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

function kidPos(n: TNode, idx: number): number {
  return popcnt(n.any & ~n.full & ((1 << idx) - 1));
}

function getKid(n: TNode, idx: number): TNode {
  return n.kids![kidPos(n, idx)];
}

function insertKid(n: TNode, idx: number, kid: TNode): void {
  (n.kids ??= []).splice(kidPos(n, idx), 0, kid);
}

function removeKid(n: TNode, idx: number): void {
  n.kids!.splice(kidPos(n, idx), 1);
  if (n.kids!.length === 0) n.kids = undefined;
}

function dropKidsIn(n: TNode, m: number): void {
  const partial = n.any & ~n.full;
  if ((partial & m) === 0) return;
  const keep: TNode[] = [];
  let k = 0;
  for (let b = partial; b !== 0; b &= b - 1) {
    if (((b & -b) & m) === 0) keep.push(n.kids![k]);
    k++;
  }
  n.kids = keep.length > 0 ? keep : undefined;
}

function bitsFrom(i: number): number {
  return i >= 32 ? 0 : -1 << i;
}

function run(c: number, i: number): number {
  return c >= 32 ? -1 : ((1 << c) - 1) << i;
}

function lowestBit(x: number): number {
  return 31 - Math.clz32(x & -x);
}

const ALIGNED: Record<number, number> = { 1: -1, 2: 0x55555555, 4: 0x11111111, 8: 0x01010101, 16: 0x00010001, 32: 1 };

function freeGroups(any: number, c: number): number {
  let f = ~any;
  for (let s = 1; s < c; s <<= 1) f &= f >>> s;
  return f & ALIGNED[c];
}

/** Rounds a non-negative a up to a multiple of m. */
function ceilTo(a: bigint, m: bigint): bigint {
  return ((a + m - 1n) / m) * m;
}

export class BigBlockTree {
  readonly unitBits: number;
  readonly limit: bigint;
  private readonly height: number;
  private readonly root = new TNode();
  private readonly unit: bigint[] = [];
  /** log2 of unit[l], for shifts instead of bigint division on the way down. */
  private readonly shift: bigint[] = [];
  private readonly fanout: number[] = [];
  private readonly fullMask: number[] = [];

  // Fast path for runs of same-size allocations (as in BlockTree): the node the last mark set bits in.
  private hint: TNode | undefined;
  private hintLevel = 0;
  private hintStart = 0n;

  /** `alignBits`: log2 of the usual block size in units; such a block is exactly one child bit. */
  constructor(unitBits: number, alignBits = 0) {
    if (!Number.isInteger(unitBits) || unitBits < 0 || unitBits > 128) throw new RangeError(`unitBits ${unitBits} out of 0..128`);
    this.unitBits = unitBits;
    this.limit = 1n << BigInt(unitBits);
    let below = 0;
    const first = alignBits % FANOUT_BITS;
    for (let l = 0; l === 0 || below < unitBits; l++) {
      const fb = l === 0 && first !== 0 ? first : FANOUT_BITS;
      this.unit.push(1n << BigInt(below));
      this.shift.push(BigInt(below));
      this.fanout.push(1 << fb);
      this.fullMask.push(fb === FANOUT_BITS ? -1 : (1 << (1 << fb)) - 1);
      below += fb;
    }
    this.height = this.unit.length;
  }

  /** Marks [start, start+size) used (an aligned power-of-two region). True when anything changed. */
  mark(start: bigint, size: bigint): boolean {
    const h = this.hint;
    if (h !== undefined) {
      const level = this.hintLevel;
      const cs = this.unit[level];
      const rel = start - this.hintStart;
      if (size >= cs && rel >= 0n && rel + size <= cs * BigInt(this.fanout[level])) {
        const m = run(Number(size / cs), Number(rel >> this.shift[level]));
        if ((h.full & m) === m) return false;
        dropKidsIn(h, m);
        h.full |= m;
        h.any |= m;
        if (h.full === this.fullMask[level]) {
          // The node filled up: walk down from the root so the ancestors fold it into a bit.
          this.hint = undefined;
          this.markIn(this.root, this.height - 1, 0n, start, size);
        }
        return true;
      }
    }
    const changed = this.markIn(this.root, this.height - 1, 0n, start, size);
    if (this.hint !== undefined && this.hint.full === this.fullMask[this.hintLevel]) this.hint = undefined;
    return changed;
  }

  private markIn(node: TNode, level: number, nodeStart: bigint, start: bigint, size: bigint): boolean {
    const cs = this.unit[level];
    const idx = Number((start - nodeStart) >> this.shift[level]);
    if (size >= cs) {
      const m = run(Number(size / cs), idx);
      this.hint = node;
      this.hintLevel = level;
      this.hintStart = nodeStart;
      if ((node.full & m) === m) return false;
      dropKidsIn(node, m);
      node.full |= m;
      node.any |= m;
      return true;
    }
    const bit = 1 << idx;
    if (node.full & bit) return false;
    let kid: TNode;
    if (node.any & bit) kid = getKid(node, idx);
    else {
      kid = new TNode();
      insertKid(node, idx, kid);
      node.any |= bit;
    }
    const changed = this.markIn(kid, level - 1, nodeStart + (BigInt(idx) << this.shift[level]), start, size);
    if (kid.full === this.fullMask[level - 1]) {
      removeKid(node, idx);
      node.full |= bit;
    }
    return changed;
  }

  /** Marks [start, start+size) free. True when any unit was used before. */
  clear(start: bigint, size: bigint): boolean {
    this.hint = undefined;
    return this.clearIn(this.root, this.height - 1, 0n, start, size);
  }

  private clearIn(node: TNode, level: number, nodeStart: bigint, start: bigint, size: bigint): boolean {
    const cs = this.unit[level];
    const idx = Number((start - nodeStart) >> this.shift[level]);
    if (size >= cs) {
      const m = run(Number(size / cs), idx);
      if ((node.any & m) === 0) return false;
      dropKidsIn(node, m);
      node.full &= ~m;
      node.any &= ~m;
      return true;
    }
    const bit = 1 << idx;
    if (!(node.any & bit)) return false;
    let kid: TNode;
    if (node.full & bit) {
      kid = new TNode();
      kid.full = this.fullMask[level - 1];
      kid.any = kid.full;
      insertKid(node, idx, kid);
      node.full &= ~bit;
    } else kid = getKid(node, idx);
    const changed = this.clearIn(kid, level - 1, nodeStart + (BigInt(idx) << this.shift[level]), start, size);
    if (kid.any === 0) {
      removeKid(node, idx);
      node.any &= ~bit;
    } else if (kid.full === this.fullMask[level - 1]) {
      removeKid(node, idx);
      node.full |= bit;
    }
    return changed;
  }

  /** True when any unit of the aligned region is used. */
  anyUsed(start: bigint, size: bigint): boolean {
    let node = this.root;
    let nodeStart = 0n;
    for (let level = this.height - 1; ; level--) {
      const cs = this.unit[level];
      const idx = Number((start - nodeStart) >> this.shift[level]);
      if (size >= cs) return (node.any & run(Number(size / cs), idx)) !== 0;
      const bit = 1 << idx;
      if (node.full & bit) return true;
      if (!(node.any & bit)) return false;
      node = getKid(node, idx);
      nodeStart += BigInt(idx) << this.shift[level];
    }
  }

  /** True when every unit of the aligned region is used. */
  allUsed(start: bigint, size: bigint): boolean {
    let node = this.root;
    let nodeStart = 0n;
    for (let level = this.height - 1; ; level--) {
      const cs = this.unit[level];
      const idx = Number((start - nodeStart) >> this.shift[level]);
      if (size >= cs) {
        const m = run(Number(size / cs), idx);
        return (node.full & m) === m;
      }
      const bit = 1 << idx;
      if (node.full & bit) return true;
      if (!(node.any & bit)) return false;
      node = getKid(node, idx);
      nodeStart += BigInt(idx) << this.shift[level];
    }
  }

  /** First start ≥ from, aligned to size, whose region is entirely free and inside the range; -1n when none. */
  findFree(from: bigint, size: bigint): bigint {
    if (from < 0n) from = 0n;
    const h = this.hint;
    if (h !== undefined) {
      const level = this.hintLevel;
      const cs = this.unit[level];
      const hs = this.hintStart;
      const span = cs * BigInt(this.fanout[level]);
      if (size >= cs && size <= span && from >= hs && from < hs + span) {
        const c = Number(size / cs);
        const first = Number(ceilTo(from - hs, size) >> this.shift[level]);
        const g = freeGroups(h.any, c) & this.fullMask[level] & bitsFrom(first);
        if (g !== 0) {
          const s = hs + (BigInt(lowestBit(g)) << this.shift[level]);
          if (s + size <= this.limit) return s;
        }
      }
    }
    const s = this.findIn(this.root, this.height - 1, 0n, from, size);
    return s >= 0n && s + size <= this.limit ? s : -1n;
  }

  private findIn(node: TNode, level: number, nodeStart: bigint, from: bigint, size: bigint): bigint {
    const cs = this.unit[level];
    if (size >= cs) {
      const c = Number(size / cs);
      const first = from <= nodeStart ? 0 : Number(ceilTo(from - nodeStart, size) / cs);
      if (first >= this.fanout[level]) return -1n;
      const g = freeGroups(node.any, c) & this.fullMask[level] & bitsFrom(first);
      return g === 0 ? -1n : nodeStart + BigInt(lowestBit(g)) * cs;
    }
    let idx = from <= nodeStart ? 0 : Number((from - nodeStart) >> this.shift[level]);
    const fan = this.fanout[level];
    while (idx < fan) {
      const cand = ~node.full & bitsFrom(idx) & this.fullMask[level];
      if (cand === 0) return -1n;
      idx = lowestBit(cand);
      const childStart = nodeStart + (BigInt(idx) << this.shift[level]);
      if (!(node.any & (1 << idx))) {
        const s = from <= childStart ? childStart : ceilTo(from, size);
        if (s + size <= childStart + cs) return s;
      } else {
        const s = this.findIn(getKid(node, idx), level - 1, childStart, from, size);
        if (s >= 0n) return s;
      }
      idx++;
    }
    return -1n;
  }

  /** Blocks of `blockSize` units in [lo, hi) (both aligned to it) holding at least one used unit. */
  touchedBlocks(lo: bigint, hi: bigint, blockSize: bigint): bigint {
    if (hi <= lo) return 0n;
    return this.touchedIn(this.root, this.height - 1, 0n, lo, hi, blockSize);
  }

  private touchedIn(node: TNode, level: number, nodeStart: bigint, lo: bigint, hi: bigint, bs: bigint): bigint {
    const cs = this.unit[level];
    const first = lo <= nodeStart ? 0 : Number((lo - nodeStart) >> this.shift[level]);
    const lastB = (hi - 1n - nodeStart) >> this.shift[level];
    const last = lastB >= BigInt(this.fanout[level] - 1) ? this.fanout[level] - 1 : Number(lastB);
    if (cs <= bs) {
      const c = Number(bs / cs);
      let n = 0n;
      for (let k = first - (first % c); k <= last; k += c) if (node.any & run(c, k)) n++;
      return n;
    }
    let n = 0n;
    for (let k = first; k <= last; k++) {
      const bit = 1 << k;
      if (!(node.any & bit)) continue;
      const cStart = nodeStart + (BigInt(k) << this.shift[level]);
      const a = lo > cStart ? lo : cStart;
      const b = hi < cStart + cs ? hi : cStart + cs;
      if (node.full & bit) n += (b - a) / bs;
      else n += this.touchedIn(getKid(node, k), level - 1, cStart, a, b, bs);
    }
    return n;
  }
}
