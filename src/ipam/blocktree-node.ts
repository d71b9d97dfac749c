// The node of the sparse 32-ary block tree, and everything done to one node, for both trees:
// BlockTree (blocktree.ts, number offsets) and BigBlockTree (big-blocktree.ts, bigint offsets).
// A node has up to 32 children, each one bit in `full` and `any`; a child entirely used or
// entirely free is only its bits, not an object, so memory grows with the number of boundaries
// between used and free space, not with the range or the allocation count. Child indexes and
// masks are small numbers in both trees: only the offsets that say where a node starts differ,
// and the trees keep that arithmetic (blocktree.ts says why it is written twice).

const FANOUT_BITS = 5;

export class TNode {
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

/** The levels of a tree, from the bottom (level 0) to the root (level height - 1). */
export interface Levels {
  /** below[l]: log2 of the units one child of a level-l node covers. */
  below: number[];
  /** fanout[l]: children of a level-l node (≤ 32). */
  fanout: number[];
  /** fullMask[l]: all of a level-l node's children set. */
  fullMask: number[];
}

/**
 * The levels of a tree over 2^unitBits units. `alignBits`: log2 of the usual block size in units.
 * Level boundaries are placed so such a block is exactly one child bit, and 32 consecutive blocks
 * share one node (the lowest level may be narrower).
 */
export function treeLevels(unitBits: number, alignBits: number, maxUnitBits: number): Levels {
  if (!Number.isInteger(unitBits) || unitBits < 0 || unitBits > maxUnitBits) throw new RangeError(`unitBits ${unitBits} out of 0..${maxUnitBits}`);
  const t: Levels = { below: [], fanout: [], fullMask: [] };
  let below = 0;
  const first = alignBits % FANOUT_BITS;
  for (let l = 0; l === 0 || below < unitBits; l++) {
    const fb = l === 0 && first !== 0 ? first : FANOUT_BITS;
    t.below.push(below);
    t.fanout.push(1 << fb);
    t.fullMask.push(fb === FANOUT_BITS ? -1 : (1 << (1 << fb)) - 1);
    below += fb;
  }
  return t;
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

/** The node of partial child idx. */
export function getKid(n: TNode, idx: number): TNode {
  return n.kids![kidPos(n, idx)];
}

function insertKid(n: TNode, idx: number, kid: TNode): void {
  (n.kids ??= []).splice(kidPos(n, idx), 0, kid);
}

function removeKid(n: TNode, idx: number): void {
  n.kids!.splice(kidPos(n, idx), 1);
  if (n.kids!.length === 0) n.kids = undefined;
}

/** Drops the partial children under mask m (some are) before their bits become all-full or all-free. */
function dropKidsIn(n: TNode, m: number): void {
  const partial = n.any & ~n.full;
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
export function run(c: number, i: number): number {
  return c >= 32 ? -1 : ((1 << c) - 1) << i;
}

export function lowestBit(x: number): number {
  return 31 - Math.clz32(x & -x);
}

/** Bits set at positions aligned to c (c a power of two). */
const ALIGNED: Record<number, number> = { 1: -1, 2: 0x55555555, 4: 0x11111111, 8: 0x01010101, 16: 0x00010001, 32: 1 };

/**
 * Bit i set when children i..i+c-1 of n are all free, i is aligned to c and at least `first`
 * (c a power of two ≤ 32; fullMask the node's level's).
 */
export function freeGroups(n: TNode, c: number, fullMask: number, first: number): number {
  let f = ~n.any;
  for (let s = 1; s < c; s <<= 1) f &= f >>> s;
  return f & ALIGNED[c] & fullMask & bitsFrom(first);
}

/** The first child of n at or after idx that is not entirely used; -1 when none is. */
export function nextNotFull(n: TNode, idx: number, fullMask: number): number {
  const cand = ~n.full & bitsFrom(idx) & fullMask;
  return cand === 0 ? -1 : lowestBit(cand);
}

/** Groups of c children (c a power of two) in first..last with a used unit, counted from the group holding `first`. */
export function touchedGroups(n: TNode, first: number, last: number, c: number): number {
  let count = 0;
  for (let k = first - (first % c); k <= last; k += c) if (n.any & run(c, k)) count++;
  return count;
}

/** Marks the children under mask m entirely used. Returns true when any of them was not. */
export function fill(n: TNode, m: number): boolean {
  if ((n.full & m) === m) return false;
  // Tested here, not in dropKidsIn: this is every allocation's path, and it seldom has kids to drop.
  if (n.any & ~n.full & m) dropKidsIn(n, m);
  n.full |= m;
  n.any |= m;
  return true;
}

/** Marks the children under mask m entirely free. Returns true when any of them was used. */
export function empty(n: TNode, m: number): boolean {
  if ((n.any & m) === 0) return false;
  if (n.any & ~n.full & m) dropKidsIn(n, m);
  n.full &= ~m;
  n.any &= ~m;
  return true;
}

// newKid and splitKid always return a node: helpers that could also return undefined (for a
// child with nothing to do) made the trees' recursions measurably slower.

/** A node for free child idx, so units can be marked inside it. */
export function newKid(n: TNode, idx: number): TNode {
  const kid = new TNode();
  insertKid(n, idx, kid);
  n.any |= 1 << idx;
  return kid;
}

/** Splits full child idx into a node whose children are all full (kidFull: its level's fullMask), so units can be freed inside it. */
export function splitKid(n: TNode, idx: number, kidFull: number): TNode {
  const kid = new TNode();
  kid.full = kidFull;
  kid.any = kidFull;
  insertKid(n, idx, kid);
  n.full &= ~(1 << idx);
  return kid;
}

/** After a change inside child idx: a kid now entirely used or entirely free goes back to being bits. */
export function fold(n: TNode, idx: number, kid: TNode, kidFull: number): void {
  if (kid.any === 0) {
    removeKid(n, idx);
    n.any &= ~(1 << idx);
  } else if (kid.full === kidFull) {
    removeKid(n, idx);
    n.full |= 1 << idx;
  }
}
