// BigBlockTree: BlockTree (blocktree.ts) with bigint offsets, over the same nodes
// (blocktree-node.ts), for ranges whose addresses or node blocks do not fit in 2^52 (e.g.
// KEP-2593's fd12:3456:789a:1::/64 with perNodeHostBits 6: 2^58 blocks). Only the offset
// arithmetic is here; child indexes stay small numbers. It is slower than BlockTree (see
// blocktree.ts), so CIDRSet uses it only for such ranges.
import {
  TNode, treeLevels, getKid, run, lowestBit, freeGroups, nextNotFull, touchedGroups, fill, empty, newKid, splitKid, fold,
} from './blocktree-node.js';

/** Rounds a non-negative a up to a multiple of m. */
function ceilTo(a: bigint, m: bigint): bigint {
  return ((a + m - 1n) / m) * m;
}

export class BigBlockTree {
  readonly unitBits: number;
  readonly limit: bigint;
  private readonly height: number;
  private readonly root = new TNode();
  private readonly unit: bigint[];
  /** log2 of unit[l], for shifts instead of bigint division on the way down. */
  private readonly shift: bigint[];
  private readonly fanout: number[];
  private readonly fullMask: number[];

  // Fast path for runs of same-size allocations (as in BlockTree): the node the last mark set bits in.
  private hint: TNode | undefined;
  private hintLevel = 0;
  private hintStart = 0n;

  /** `alignBits`: log2 of the usual block size in units; such a block is exactly one child bit. */
  constructor(unitBits: number, alignBits = 0) {
    const t = treeLevels(unitBits, alignBits, 128);
    this.unitBits = unitBits;
    this.limit = 1n << BigInt(unitBits);
    this.shift = t.below.map(BigInt);
    this.unit = this.shift.map((b) => 1n << b);
    this.fanout = t.fanout;
    this.fullMask = t.fullMask;
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
        if (!fill(h, run(Number(size / cs), Number(rel >> this.shift[level])))) return false;
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
      this.hint = node;
      this.hintLevel = level;
      this.hintStart = nodeStart;
      return fill(node, run(Number(size / cs), idx));
    }
    const bit = 1 << idx;
    if (node.full & bit) return false;
    const kid = node.any & bit ? getKid(node, idx) : newKid(node, idx);
    const changed = this.markIn(kid, level - 1, nodeStart + (BigInt(idx) << this.shift[level]), start, size);
    fold(node, idx, kid, this.fullMask[level - 1]);
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
    if (size >= cs) return empty(node, run(Number(size / cs), idx));
    const bit = 1 << idx;
    if (!(node.any & bit)) return false;
    const kid = node.full & bit ? splitKid(node, idx, this.fullMask[level - 1]) : getKid(node, idx);
    const changed = this.clearIn(kid, level - 1, nodeStart + (BigInt(idx) << this.shift[level]), start, size);
    fold(node, idx, kid, this.fullMask[level - 1]);
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
        const g = freeGroups(h, Number(size / cs), this.fullMask[level], Number(ceilTo(from - hs, size) >> this.shift[level]));
        if (g !== 0) {
          const s = hs + (BigInt(lowestBit(g)) << this.shift[level]);
          if (s + size <= this.limit) return s;
        }
      }
    }
    const s = this.findIn(this.root, this.height - 1, 0n, ceilTo(from, size), size);
    return s >= 0n && s + size <= this.limit ? s : -1n;
  }

  /** `from` is aligned to size. */
  private findIn(node: TNode, level: number, nodeStart: bigint, from: bigint, size: bigint): bigint {
    const cs = this.unit[level];
    const mask = this.fullMask[level];
    const first = from <= nodeStart ? 0 : Number((from - nodeStart) >> this.shift[level]);
    if (size >= cs) {
      const g = freeGroups(node, Number(size / cs), mask, first);
      return g === 0 ? -1n : nodeStart + (BigInt(lowestBit(g)) << this.shift[level]);
    }
    for (let idx = nextNotFull(node, first, mask); idx >= 0; idx = nextNotFull(node, idx + 1, mask)) {
      const childStart = nodeStart + (BigInt(idx) << this.shift[level]);
      // A free child holds the first aligned start at or after `from` in it.
      if (!(node.any & (1 << idx))) return from <= childStart ? childStart : from;
      const s = this.findIn(getKid(node, idx), level - 1, childStart, from, size);
      if (s >= 0n) return s;
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
    if (cs <= bs) return BigInt(touchedGroups(node, first, last, Number(bs / cs)));
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
