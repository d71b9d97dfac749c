// BlockTree: which units of [0, 2^unitBits) are used, in the sparse 32-ary tree of
// blocktree-node.ts. Every operation takes an aligned power-of-two region (a CIDR is one), so a
// region either fills whole children of one node or lies inside a single child.
//
// Why there are two trees over the one node: offsets here are numbers (unitBits ≤ 52, so every
// offset is exact), and number arithmetic is much faster than bigint on the hot path of every
// allocation. BigBlockTree (big-blocktree.ts) repeats only this offset arithmetic in bigint, for
// the ranges whose offsets exceed 2^52.
import {
  TNode, treeLevels, getKid, run, lowestBit, freeGroups, nextNotFull, touchedGroups, fill, empty, newKid, splitKid, fold,
} from './blocktree-node.js';

export class BlockTree {
  readonly unitBits: number;
  readonly limit: number;
  private readonly height: number;
  private readonly root = new TNode();
  /** unit[l]: units covered by one child of a level-l node. */
  private readonly unit: number[];
  /** fanout[l]: children of a level-l node (≤ 32); fullMask[l]: all of them set. */
  private readonly fanout: number[];
  private readonly fullMask: number[];

  // Fast path for runs of same-size allocations: the node whose bits the last allocation set.
  private hint: TNode | undefined;
  private hintLevel = 0;
  private hintStart = 0;

  /** `alignBits`: log2 of the usual block size in units; such a block is exactly one child bit. */
  constructor(unitBits: number, alignBits = 0) {
    const t = treeLevels(unitBits, alignBits, 52);
    this.unitBits = unitBits;
    this.limit = 2 ** unitBits;
    this.unit = t.below.map((b) => 2 ** b);
    this.fanout = t.fanout;
    this.fullMask = t.fullMask;
    this.height = this.unit.length;
  }

  /** Marks [start, start+size) used. Returns true when any unit was newly marked. */
  mark(start: number, size: number): boolean {
    const h = this.hint;
    if (h !== undefined) {
      const level = this.hintLevel;
      const cs = this.unit[level];
      const idx = (start - this.hintStart) / cs;
      if (size >= cs && idx >= 0 && idx + size / cs <= this.fanout[level]) {
        if (!fill(h, run(size / cs, idx))) return false;
        if (h.full === this.fullMask[level]) {
          // The node filled up: walk down from the root so the ancestors fold it into a bit.
          this.hint = undefined;
          this.markIn(this.root, this.height - 1, 0, start, size);
        }
        return true;
      }
    }
    const changed = this.markIn(this.root, this.height - 1, 0, start, size);
    if (this.hint !== undefined && this.hint.full === this.fullMask[this.hintLevel]) this.hint = undefined;
    return changed;
  }

  private markIn(node: TNode, level: number, nodeStart: number, start: number, size: number): boolean {
    const cs = this.unit[level];
    const idx = Math.floor((start - nodeStart) / cs);
    if (size >= cs) {
      this.hint = node;
      this.hintLevel = level;
      this.hintStart = nodeStart;
      return fill(node, run(size / cs, idx));
    }
    const bit = 1 << idx;
    if (node.full & bit) return false;
    const kid = node.any & bit ? getKid(node, idx) : newKid(node, idx);
    const changed = this.markIn(kid, level - 1, nodeStart + idx * cs, start, size);
    fold(node, idx, kid, this.fullMask[level - 1]);
    return changed;
  }

  /** Marks [start, start+size) free. Returns true when any unit was used before. */
  clear(start: number, size: number): boolean {
    this.hint = undefined;
    return this.clearIn(this.root, this.height - 1, 0, start, size);
  }

  private clearIn(node: TNode, level: number, nodeStart: number, start: number, size: number): boolean {
    const cs = this.unit[level];
    const idx = Math.floor((start - nodeStart) / cs);
    if (size >= cs) return empty(node, run(size / cs, idx));
    const bit = 1 << idx;
    if (!(node.any & bit)) return false;
    const kid = node.full & bit ? splitKid(node, idx, this.fullMask[level - 1]) : getKid(node, idx);
    const changed = this.clearIn(kid, level - 1, nodeStart + idx * cs, start, size);
    fold(node, idx, kid, this.fullMask[level - 1]);
    return changed;
  }

  /** Counts used units in [start, start+size) (an aligned region). */
  usedIn(start: number, size: number): number {
    let node = this.root;
    let nodeStart = 0;
    for (let level = this.height - 1; ; level--) {
      const cs = this.unit[level];
      const idx = Math.floor((start - nodeStart) / cs);
      if (size >= cs) {
        const c = size / cs;
        let n = 0;
        for (let k = idx; k < idx + c; k++) n += this.countChild(node, level, k);
        return n;
      }
      const bit = 1 << idx;
      if (node.full & bit) return size;
      if (!(node.any & bit)) return 0;
      node = getKid(node, idx);
      nodeStart += idx * cs;
    }
  }

  private countChild(node: TNode, level: number, k: number): number {
    const bit = 1 << k;
    if (node.full & bit) return this.unit[level];
    if (!(node.any & bit)) return 0;
    if (level === 0) return 1;
    const kid = getKid(node, k);
    let n = 0;
    for (let j = 0; j < this.fanout[level - 1]; j++) n += this.countChild(kid, level - 1, j);
    return n;
  }

  /** True when any unit of the aligned region is used. */
  anyUsed(start: number, size: number): boolean {
    let node = this.root;
    let nodeStart = 0;
    for (let level = this.height - 1; ; level--) {
      const cs = this.unit[level];
      const idx = Math.floor((start - nodeStart) / cs);
      if (size >= cs) return (node.any & run(size / cs, idx)) !== 0;
      const bit = 1 << idx;
      if (node.full & bit) return true;
      if (!(node.any & bit)) return false;
      node = getKid(node, idx);
      nodeStart += idx * cs;
    }
  }

  /** True when every unit of the aligned region is used. */
  allUsed(start: number, size: number): boolean {
    let node = this.root;
    let nodeStart = 0;
    for (let level = this.height - 1; ; level--) {
      const cs = this.unit[level];
      const idx = Math.floor((start - nodeStart) / cs);
      if (size >= cs) {
        const m = run(size / cs, idx);
        return (node.full & m) === m;
      }
      const bit = 1 << idx;
      if (node.full & bit) return true;
      if (!(node.any & bit)) return false;
      node = getKid(node, idx);
      nodeStart += idx * cs;
    }
  }

  /**
   * First start ≥ from, aligned to size, whose region [start, start+size) is entirely free and
   * inside [0, limit). Returns -1 when there is none.
   */
  findFree(from: number, size: number): number {
    if (from < 0) from = 0;
    const h = this.hint;
    if (h !== undefined) {
      const level = this.hintLevel;
      const cs = this.unit[level];
      const c = size / cs;
      const hs = this.hintStart;
      if (c >= 1 && c <= this.fanout[level] && from >= hs && from < hs + this.fanout[level] * cs) {
        const g = freeGroups(h, c, this.fullMask[level], Math.ceil((from - hs) / size) * c);
        if (g !== 0) {
          const s = hs + lowestBit(g) * cs;
          if (s + size <= this.limit) return s;
        }
      }
    }
    // Rounded up only here, off the hint's path, which nearly every allocation takes.
    const s = this.findIn(this.root, this.height - 1, 0, Math.ceil(from / size) * size, size);
    return s >= 0 && s + size <= this.limit ? s : -1;
  }

  /** `from` is aligned to size. */
  private findIn(node: TNode, level: number, nodeStart: number, from: number, size: number): number {
    const cs = this.unit[level];
    const mask = this.fullMask[level];
    const first = from <= nodeStart ? 0 : Math.floor((from - nodeStart) / cs);
    if (size >= cs) {
      const g = freeGroups(node, size / cs, mask, first);
      return g === 0 ? -1 : nodeStart + lowestBit(g) * cs;
    }
    for (let idx = nextNotFull(node, first, mask); idx >= 0; idx = nextNotFull(node, idx + 1, mask)) {
      const childStart = nodeStart + idx * cs;
      // A free child holds the first aligned start at or after `from` in it.
      if (!(node.any & (1 << idx))) return from <= childStart ? childStart : from;
      const s = this.findIn(getKid(node, idx), level - 1, childStart, from, size);
      if (s >= 0) return s;
    }
    return -1;
  }

  /** Calls `f` for each used region, in address order (whole children; adjacent ones not merged). */
  forEachUsed(f: (start: number, size: number) => void): void {
    this.walkUsed(this.root, this.height - 1, 0, f);
  }

  private walkUsed(node: TNode, level: number, nodeStart: number, f: (start: number, size: number) => void): void {
    const cs = this.unit[level];
    for (let b = node.any; b !== 0; b &= b - 1) {
      const k = lowestBit(b);
      if (node.full & (1 << k)) f(nodeStart + k * cs, cs);
      else this.walkUsed(getKid(node, k), level - 1, nodeStart + k * cs, f);
    }
  }

  /**
   * Counts blocks of `blockSize` units (a power of two) in [lo, hi) (both aligned to blockSize)
   * that contain at least one used unit.
   */
  touchedBlocks(lo: number, hi: number, blockSize: number): number {
    if (hi <= lo) return 0;
    return this.touchedIn(this.root, this.height - 1, 0, lo, hi, blockSize);
  }

  private touchedIn(node: TNode, level: number, nodeStart: number, lo: number, hi: number, bs: number): number {
    const cs = this.unit[level];
    const first = Math.max(0, Math.floor((lo - nodeStart) / cs));
    const last = Math.min(this.fanout[level] - 1, Math.floor((hi - 1 - nodeStart) / cs));
    // Each block spans whole children: count the groups with a used unit.
    if (cs <= bs) return touchedGroups(node, first, last, bs / cs);
    let n = 0;
    for (let k = first; k <= last; k++) {
      const bit = 1 << k;
      if (!(node.any & bit)) continue;
      const cStart = nodeStart + k * cs;
      const a = Math.max(lo, cStart);
      const b = Math.min(hi, cStart + cs);
      if (node.full & bit) n += (b - a) / bs;
      else n += this.touchedIn(getKid(node, k), level - 1, cStart, a, b, bs);
    }
    return n;
  }
}
