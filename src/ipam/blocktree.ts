// A sparse 32-ary tree (the lowest level may be narrower) of "used" units over [0, 2^unitBits), unitBits ≤ 52 so every offset is
// an exact JS number. Every operation takes an aligned power-of-two region (a CIDR is one), so a
// region either fills whole children of one node or lies inside a single child. Children that
// are entirely used or entirely free are one bit each, not objects: memory grows with the number
// of boundaries between used and free space, not with the range or the allocation count.

const FANOUT_BITS = 5;

class TNode {
  /** Bit i: child i is entirely used. */
  full = 0;
  /** Bit i: child i has at least one used unit (full ⊆ any). */
  any = 0;
  /**
   * Partially used children (the bits of any & ~full), packed in bit order: a fragmented tree
   * pays only for the children that exist, not for 32 slots per node.
   */
  kids: TNode[] | undefined;
}

function popcnt(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Position of child idx in the packed kids array (counts partial children below it). */
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

/** Drops the partial children under mask m (before their bits become all-full or all-free). */
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

/** c consecutive bits starting at bit i (c a power of two ≤ 32). */
function run(c: number, i: number): number {
  return c >= 32 ? -1 : ((1 << c) - 1) << i;
}

function lowestBit(x: number): number {
  return 31 - Math.clz32(x & -x);
}

/** Bits set at positions aligned to c (c a power of two). */
const ALIGNED: Record<number, number> = { 1: -1, 2: 0x55555555, 4: 0x11111111, 8: 0x01010101, 16: 0x00010001, 32: 1 };

/** Bit i set when children i..i+c-1 are all clear in `any` and i is aligned to c. */
function freeGroups(any: number, c: number): number {
  let f = ~any;
  for (let s = 1; s < c; s <<= 1) f &= f >>> s;
  return f & ALIGNED[c];
}

export class BlockTree {
  readonly unitBits: number;
  readonly limit: number;
  private readonly height: number;
  private readonly root = new TNode();
  /** unit[l]: units covered by one child of a level-l node. */
  private readonly unit: number[] = [];
  /** fanout[l]: children of a level-l node (≤ 32); fullMask[l]: all of them set. */
  private readonly fanout: number[] = [];
  private readonly fullMask: number[] = [];

  // Fast path for runs of same-size allocations: the node whose bits the last allocation set.
  private hint: TNode | undefined;
  private hintLevel = 0;
  private hintStart = 0;

  /**
   * `alignBits`: log2 of the usual block size in units. Level boundaries are placed so such a
   * block is exactly one child bit, and 32 consecutive blocks share one node.
   */
  constructor(unitBits: number, alignBits = 0) {
    if (!Number.isInteger(unitBits) || unitBits < 0 || unitBits > 52) throw new RangeError(`unitBits ${unitBits} out of 0..52`);
    this.unitBits = unitBits;
    this.limit = 2 ** unitBits;
    let below = 0;
    const first = alignBits % FANOUT_BITS;
    for (let l = 0; l === 0 || below < unitBits; l++) {
      const fb = l === 0 && first !== 0 ? first : FANOUT_BITS;
      this.unit.push(2 ** below);
      this.fanout.push(1 << fb);
      this.fullMask.push(fb === FANOUT_BITS ? -1 : (1 << (1 << fb)) - 1);
      below += fb;
    }
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
        const c = size / cs;
        const m = run(c, idx);
        if ((h.full & m) === m) return false;
        dropKidsIn(h, m);
        h.full |= m;
        h.any |= m;
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
    const i = (start - nodeStart) / cs;
    if (size >= cs) {
      const idx = Math.floor(i);
      const m = run(size / cs, idx);
      this.hint = node;
      this.hintLevel = level;
      this.hintStart = nodeStart;
      if ((node.full & m) === m) return false;
      dropKidsIn(node, m);
      node.full |= m;
      node.any |= m;
      return true;
    }
    const idx = Math.floor(i);
    const bit = 1 << idx;
    if (node.full & bit) return false;
    let kid: TNode | undefined;
    if (node.any & bit) {
      kid = getKid(node, idx);
    } else {
      kid = new TNode();
      insertKid(node, idx, kid);
      node.any |= bit;
    }
    const changed = this.markIn(kid, level - 1, nodeStart + idx * cs, start, size);
    if (kid.full === this.fullMask[level - 1]) {
      removeKid(node, idx);
      node.full |= bit;
    }
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
    if (size >= cs) {
      const m = run(size / cs, idx);
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
      // Split a full child so part of it can be freed.
      kid = new TNode();
      kid.full = this.fullMask[level - 1];
      kid.any = kid.full;
      insertKid(node, idx, kid);
      node.full &= ~bit;
    } else {
      kid = getKid(node, idx);
    }
    const changed = this.clearIn(kid, level - 1, nodeStart + idx * cs, start, size);
    if (kid.any === 0) {
      removeKid(node, idx);
      node.any &= ~bit;
    } else if (kid.full === this.fullMask[level - 1]) {
      removeKid(node, idx);
      node.full |= bit;
    }
    return changed;
  }

  /** Counts used units in [start, start+size) (an aligned region). */
  usedIn(start: number, size: number): number {
    let node: TNode | undefined = this.root;
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
        const first = Math.ceil((from - hs) / size) * c;
        const g = freeGroups(h.any, c) & this.fullMask[level] & bitsFrom(first);
        if (g !== 0) {
          const s = hs + lowestBit(g) * cs;
          if (s + size <= this.limit) return s;
        }
      }
    }
    const s = this.findIn(this.root, this.height - 1, 0, from, size);
    return s >= 0 && s + size <= this.limit ? s : -1;
  }

  private findIn(node: TNode, level: number, nodeStart: number, from: number, size: number): number {
    const cs = this.unit[level];
    if (size >= cs) {
      const c = size / cs;
      const span = c * cs;
      const first = from <= nodeStart ? 0 : Math.ceil((from - nodeStart) / span) * c;
      if (first >= this.fanout[level]) return -1;
      const g = freeGroups(node.any, c) & this.fullMask[level] & bitsFrom(first);
      return g === 0 ? -1 : nodeStart + lowestBit(g) * cs;
    }
    let idx = from <= nodeStart ? 0 : Math.floor((from - nodeStart) / cs);
    const fan = this.fanout[level];
    while (idx < fan) {
      const cand = ~node.full & bitsFrom(idx) & this.fullMask[level];
      if (cand === 0) return -1;
      idx = lowestBit(cand);
      const childStart = nodeStart + idx * cs;
      const bit = 1 << idx;
      if (!(node.any & bit)) {
        // A free child: the first aligned start at or after `from` inside it.
        const s = from <= childStart ? childStart : Math.ceil(from / size) * size;
        if (s + size <= childStart + cs) return s;
      } else {
        const s = this.findIn(getKid(node, idx), level - 1, childStart, from, size);
        if (s >= 0) return s;
      }
      idx++;
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
    if (cs <= bs) {
      // Each block spans c whole children: count groups with any bit set, within [lo, hi).
      const c = bs / cs;
      let n = 0;
      for (let k = first - (first % c); k <= last; k += c) if (node.any & run(c, k)) n++;
      return n;
    }
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
