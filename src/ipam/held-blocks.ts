// HeldBlocks: the ledger of every pod CIDR that a live node holds, whatever today's pools are.
// A block is held while any node lists it; two nodes may hold the same or nested blocks (a
// conflict that is reported, never resolved by forgetting one of them). The allocator consults
// this ledger, never its own pools alone, to decide what is free.
//
// CIDRs nest or are disjoint, so the blocks overlapping a CIDR c are its ancestors (one per
// shorter prefix length, found by exact lookups) and its descendants (a contiguous key range when
// blocks are ordered by address, then prefix). Both are O(log n) per block found.
import sortedBTree from 'sorted-btree';
import type { CIDR, IPFamily } from './cidr.js';

// sorted-btree is CommonJS with `exports.default`: Node's ESM loader hands over the module object,
// vitest's interop the class itself.
type BTreeClass = typeof sortedBTree.default;
const BTree: BTreeClass = (sortedBTree as { default?: BTreeClass }).default ?? (sortedBTree as unknown as BTreeClass);
type Tree<V> = InstanceType<typeof BTree<BlockKey, V>>;

/**
 * Holder name → record sequence (smaller: recorded earlier), for one block. Nearly every block has
 * exactly one holder (two only in a conflict), so the first is kept in two fields and a Map is made
 * only for the others: the usual block then costs two fields, not a Map.
 */
export class BlockHolders {
  #first: string | undefined;
  #firstSeq = 0;
  #rest: Map<string, number> | undefined;

  get size(): number {
    return (this.#first === undefined ? 0 : 1) + (this.#rest?.size ?? 0);
  }

  get(node: string): number | undefined {
    return node === this.#first ? this.#firstSeq : this.#rest?.get(node);
  }

  has(node: string): boolean {
    return this.get(node) !== undefined;
  }

  set(node: string, seq: number): void {
    if (node === this.#first || (this.#first === undefined && this.#rest === undefined)) {
      this.#first = node;
      this.#firstSeq = seq;
    } else (this.#rest ??= new Map()).set(node, seq);
  }

  delete(node: string): boolean {
    if (node === this.#first) {
      this.#first = undefined;
      return true;
    }
    const deleted = this.#rest?.delete(node) ?? false;
    if (this.#rest?.size === 0) this.#rest = undefined;
    return deleted;
  }

  *keys(): Generator<string> {
    for (const [node] of this) yield node;
  }

  /** Holders in the order they were first set, as a Map iterates (the inline one is the oldest). */
  *[Symbol.iterator](): Generator<[string, number]> {
    if (this.#first !== undefined) yield [this.#first, this.#firstSeq];
    if (this.#rest) yield* this.#rest;
  }
}

/**
 * One held block and who holds it, with the order in which each holder recorded it. The block is
 * its own holder table (one object per block, not two).
 */
export class HeldBlock extends BlockHolders {
  constructor(readonly cidr: CIDR) {
    super();
  }

  get holders(): BlockHolders {
    return this;
  }
}

/** A holder of a block overlapping the one asked about. */
export interface Holder {
  node: string;
  block: CIDR;
  seq: number;
}

/**
 * A block's place in the tree: its address, then its prefix length (a parent sorts before its
 * first child). A held block's key is its own CIDR, so the tree keeps no key of its own per block
 * (a BigInt of address and prefix was 24 B a block); lookups make a key for the time of the call.
 */
interface BlockKey {
  readonly addr: bigint;
  readonly prefix: number;
}

function cmpKey(a: BlockKey, b: BlockKey): number {
  return a.addr < b.addr ? -1 : a.addr > b.addr ? 1 : a.prefix - b.prefix;
}

function keyOf(addr: bigint, prefix: number): BlockKey {
  return { addr, prefix };
}

class FamilyLedger {
  readonly tree: Tree<HeldBlock> = new BTree<BlockKey, HeldBlock>(undefined, cmpKey);
  /** Held blocks per prefix length: ancestor lookups try only the lengths in use. */
  readonly perPrefix: number[];
  constructor(readonly bits: number) {
    this.perPrefix = new Array<number>(bits + 1).fill(0);
  }

  /** Held blocks that contain c and are larger than it (shortest prefix first). */
  ancestors(c: CIDR, out: (b: HeldBlock) => void): void {
    for (let p = 0; p < c.prefix; p++) {
      if (this.perPrefix[p] === 0) continue;
      const shift = BigInt(this.bits - p);
      const b = this.tree.get(keyOf((c.addr >> shift) << shift, p));
      if (b) out(b);
    }
  }

  /** The block c itself, if held, and every held block inside it. */
  selfAndDescendants(c: CIDR, out: (b: HeldBlock) => void): void {
    const last = c.addr | ((1n << BigInt(this.bits - c.prefix)) - 1n);
    this.tree.forRange(c, keyOf(last, 255), true, (_k, b) => {
      out(b);
    });
  }
}

export class HeldBlocks {
  readonly #families: Record<IPFamily, FamilyLedger> = { 4: new FamilyLedger(32), 6: new FamilyLedger(128) };
  #seq = 0;
  #count = 0;

  /** Number of distinct held blocks. */
  get size(): number {
    return this.#count;
  }

  /** Records that `node` holds `c`. Returns the record's sequence number. */
  add(c: CIDR, node: string): number {
    const f = this.#families[c.family];
    let b = f.tree.get(c);
    if (!b) {
      b = new HeldBlock(c);
      f.tree.set(c, b);
      f.perPrefix[c.prefix]++;
      this.#count++;
    }
    const prev = b.holders.get(node);
    if (prev !== undefined) return prev;
    const seq = ++this.#seq;
    b.holders.set(node, seq);
    return seq;
  }

  /** Forgets that `node` holds `c`. Returns true when it did. */
  remove(c: CIDR, node: string): boolean {
    const f = this.#families[c.family];
    const b = f.tree.get(c);
    if (!b || !b.holders.delete(node)) return false;
    if (b.holders.size === 0) {
      f.tree.delete(c);
      f.perPrefix[c.prefix]--;
      this.#count--;
    }
    return true;
  }

  /** The record sequence of `node` holding exactly `c`, if it does. */
  seqOf(c: CIDR, node: string): number | undefined {
    return this.#families[c.family].tree.get(c)?.holders.get(node);
  }

  /** True when every address of `c` is still held by some block (c itself or one containing it). */
  covers(c: CIDR): boolean {
    const f = this.#families[c.family];
    if (f.tree.has(c)) return true;
    let found = false;
    f.ancestors(c, () => (found = true));
    return found;
  }

  /** Every held block sharing an address with `c`: containing ones, c itself, contained ones. */
  overlapping(c: CIDR): HeldBlock[] {
    const f = this.#families[c.family];
    const out: HeldBlock[] = [];
    f.ancestors(c, (b) => out.push(b));
    f.selfAndDescendants(c, (b) => out.push(b));
    return out;
  }

  /** Held blocks strictly inside `c` (not c itself). */
  inside(c: CIDR): HeldBlock[] {
    const out: HeldBlock[] = [];
    this.#families[c.family].selfAndDescendants(c, (b) => {
      if (b.cidr.prefix > c.prefix) out.push(b);
    });
    return out;
  }

  /**
   * The holder, other than `self`, of a block overlapping `c` that recorded it before `before`
   * (the earliest such holder), if any. With `before` = Infinity: any other holder.
   */
  earlierHolder(c: CIDR, self: string, before = Infinity): Holder | undefined {
    let best: Holder | undefined;
    for (const b of this.overlapping(c)) {
      for (const [node, seq] of b.holders) {
        if (node === self || seq >= before) continue;
        if (!best || seq < best.seq) best = { node, block: b.cidr, seq };
      }
    }
    return best;
  }

  /** Every held block, in address order per family (IPv4 first). */
  *all(): Generator<HeldBlock> {
    for (const fam of [4, 6] as const) for (const b of this.#families[fam].tree.values()) yield b;
  }
}

