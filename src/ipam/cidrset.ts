// One range of pod CIDRs (Kubernetes' cidrset, extended per KEP-2647 to blocks of any size).
//
// The fast path tracks the range in "units": single addresses, or for ranges larger than 2^52
// addresses, the 2^-52 slice of the range, so every offset is an exact JS number. Used units live
// in a sparse BlockTree; excluded units (Service CIDRs) in a separate IntervalList so they can be
// lifted without touching allocations. When a range needs more than that (a block smaller than a
// unit is occupied, released or excluded, or the range holds over 2^52 node blocks) it moves, once
// and for good, to HugeRange: exact bigint offsets, so nothing is ever rounded or leaked.
import { BlockTree } from './blocktree.js';
import { CIDRParseError, formatAddr, formatIPv4, formatIPv6Around, formatIPv6Groups, hexGroup, parseCIDR, parseIPv4CIDRNumbers, type CIDR, type IPFamily } from './cidr.js';
import { IntervalList } from './exclusions.js';
import { HugeRange } from './huge-range.js';

/** Bits of unit offsets on the fast path: offsets must stay exact JS numbers. */
const UNIT_BITS = 52;

export class CIDRSetError extends Error {
  override name = 'CIDRSetError';
}

interface Region {
  start: number;
  size: number;
  /** The CIDR is smaller than one unit (ranges over 2^52 addresses only): needs HugeRange. */
  finer?: boolean;
}

/**
 * Text of IPv6 node-size blocks: the group holding a block's lowest address bit (`at`) changes with
 * almost every allocation, the other groups rarely. While they match `key`, the text is
 * head + that group + tail (see formatIPv6Around), which spares rebuilding the whole address.
 */
class TextCache {
  readonly key = new Uint16Array(8);
  valid = false;
  head = '';
  tail = '';
  constructor(readonly at: number) {}
}

export class CIDRSet {
  readonly family: IPFamily;
  readonly cidr: CIDR;
  /** Canonical text of the range. */
  readonly clusterCIDR: string;
  readonly nodeMaskSize: number;

  private readonly bits: number;
  /** Prefix length of one unit. */
  private readonly unitPrefix: number;
  /** log2(addresses per unit). */
  private readonly unitShift: number;
  private readonly tree: BlockTree;
  private readonly exclusions = new IntervalList();
  /** Set once the range needs exact bigint offsets; from then on it holds all the state. */
  private huge: HugeRange | undefined;
  /** Units per node-size block. */
  private readonly nodeBlockUnits: number;
  private cursor = 0;
  /** Node-size blocks with at least one used address. */
  private touched = 0;

  private readonly baseV4: number;
  private readonly baseGroups: number[];
  // A typed array keeps one element kind whatever the arithmetic yields (no map transitions).
  private readonly groups = new Uint16Array(8);
  /**
   * Per IPv6 group: how the unit offset maps onto it. A positive number d: floor(offset / d);
   * a negative -m: offset * m; null: the offset never reaches this group.
   */
  private readonly groupShift: (number | null)[] = [];
  /** IPv6 node-block text cache, made on the first IPv6 allocation (IPv4 sets never pay for it). */
  private fmt: TextCache | undefined;

  constructor(clusterCIDR: string, nodeMaskSize: number) {
    let c: CIDR;
    try {
      c = parseCIDR(clusterCIDR);
    } catch (err) {
      throw new CIDRSetError(`cluster CIDR ${(err as Error).message}`);
    }
    this.cidr = c;
    this.family = c.family;
    this.clusterCIDR = c.text;
    this.bits = c.bits;
    if (!Number.isInteger(nodeMaskSize) || nodeMaskSize < c.prefix || nodeMaskSize > c.bits) {
      throw new CIDRSetError(`node mask size ${String(nodeMaskSize)} is invalid for range ${c.text}: must be an integer from ${c.prefix} to ${c.bits}`);
    }
    this.nodeMaskSize = nodeMaskSize;
    this.unitPrefix = Math.min(c.bits, c.prefix + UNIT_BITS);
    this.unitShift = c.bits - this.unitPrefix;
    // Over 2^52 node blocks: a node block is finer than a unit, so the range is huge from the start.
    const fast = nodeMaskSize <= this.unitPrefix;
    this.tree = new BlockTree(this.unitPrefix - c.prefix, fast ? this.unitPrefix - nodeMaskSize : 0);
    this.nodeBlockUnits = fast ? 2 ** (this.unitPrefix - nodeMaskSize) : 1;
    if (!fast) this.huge = new HugeRange(c, nodeMaskSize);
    this.baseV4 = c.family === 4 ? Number(c.addr) : 0;
    this.baseGroups = [];
    for (let i = 0; i < 8; i++) {
      this.baseGroups.push(c.family === 6 ? Number((c.addr >> BigInt(112 - 16 * i)) & 0xffffn) : 0);
      // Group i holds address bits [112-16i, 128-16i); the offset covers [unitShift, unitShift + unitBits).
      const lo = 112 - 16 * i;
      const sh = lo - this.unitShift;
      const reaches = lo + 16 > this.unitShift && lo < this.unitShift + (this.unitPrefix - c.prefix);
      this.groupShift.push(!reaches ? null : sh >= 0 ? 2 ** sh : -(2 ** -sh));
    }
  }

  /** Number of node-size blocks in the range. */
  get capacity(): bigint {
    return 1n << BigInt(this.nodeMaskSize - this.cidr.prefix);
  }

  /** Node-size blocks holding at least one allocated address. */
  get usedCount(): bigint {
    return this.huge ? this.huge.touched : BigInt(this.touched);
  }

  /** Node-size blocks that hold no allocated address but overlap an exclusion. */
  get excludedCount(): bigint {
    return this.huge ? this.huge.excludedFreeBlocks() : BigInt(this.excludedFreeBlocks());
  }

  /** Node-size blocks that could still be handed out: no allocated and no excluded address. */
  get freeCount(): bigint {
    return this.capacity - this.usedCount - this.excludedCount;
  }

  // Aliases, for callers who spell the counts differently (all bigint, all in node-size blocks).
  /** Same as freeCount. */
  get freeBlocks(): bigint {
    return this.freeCount;
  }

  /** Same as freeCount. */
  get free(): bigint {
    return this.freeCount;
  }

  /** Same as usedCount. */
  get allocatedCount(): bigint {
    return this.usedCount;
  }

  /** Same as capacity. */
  get totalBlocks(): bigint {
    return this.capacity;
  }

  /**
   * Hands out the first free block of `maskSize` (default: the node mask size) at or after the
   * cursor, skipping exclusions, wrapping once. Returns its canonical CIDR text.
   */
  allocateNext(maskSize: number = this.nodeMaskSize): string {
    if (this.huge || maskSize > this.unitPrefix) return this.allocateHuge(maskSize);
    return this.formatRegion(this.allocateRegion(maskSize), maskSize);
  }

  /** Like allocateNext, and also returns how many candidate blocks were examined. */
  allocateNextWithTries(maskSize: number = this.nodeMaskSize): { cidr: string; tries: number } {
    if (this.huge || maskSize > this.unitPrefix) {
      const cidr = this.allocateHuge(maskSize);
      return { cidr, tries: this.huge!.lastTries };
    }
    const start = this.allocateRegion(maskSize);
    return { cidr: this.formatRegion(start, maskSize), tries: this.lastTries };
  }

  private allocateHuge(maskSize: number): string {
    if (maskSize !== this.nodeMaskSize && (!Number.isInteger(maskSize) || maskSize < this.cidr.prefix || maskSize > this.bits)) {
      throw new CIDRSetError(`mask size ${String(maskSize)} is invalid for range ${this.clusterCIDR}: must be an integer from ${this.cidr.prefix} to ${this.bits}`);
    }
    const got = this.toHuge().allocate(maskSize);
    if (got === undefined) throw new CIDRSetError(`range ${this.clusterCIDR} is full: no free /${maskSize} block`);
    return got;
  }

  /** Candidate blocks examined by the last allocation (a metric). */
  private lastTries = 0;

  private allocateRegion(maskSize: number): number {
    if (maskSize !== this.nodeMaskSize && (!Number.isInteger(maskSize) || maskSize < this.cidr.prefix || maskSize > this.unitPrefix)) {
      throw new CIDRSetError(`mask size ${String(maskSize)} is invalid for range ${this.clusterCIDR}: must be an integer from ${this.cidr.prefix} to ${this.unitPrefix}`);
    }
    const size = maskSize === this.nodeMaskSize ? this.nodeBlockUnits : 2 ** (this.unitPrefix - maskSize);
    let tries = 0;
    let start = -1;
    for (let pass = 0; pass < 2 && start < 0; pass++) {
      let from = pass === 0 ? this.cursor : 0;
      if (pass === 1 && this.cursor === 0) break;
      for (;;) {
        const s = this.tree.findFree(from, size);
        if (s < 0) break;
        tries++;
        const exEnd = this.exclusions.size === 0 ? undefined : this.exclusions.overlapEnd(s, s + size);
        if (exEnd === undefined) {
          start = s;
          break;
        }
        from = exEnd;
      }
    }
    if (start < 0) throw new CIDRSetError(`range ${this.clusterCIDR} is full: no free /${maskSize} block`);
    if (size >= this.nodeBlockUnits) {
      // The region was entirely free, so each node block in it is newly touched.
      this.tree.mark(start, size);
      this.touched += size / this.nodeBlockUnits;
    } else {
      this.countTouched(start, size, true);
    }
    const next = start + size;
    this.cursor = next >= this.tree.limit ? 0 : next;
    this.lastTries = tries;
    return start;
  }

  /**
   * Marks every address of `cidr` that lies inside the range as used. Returns true when any
   * address was newly marked. Throws CIDRSetError when the CIDR is malformed or disjoint.
   */
  occupy(cidr: string): boolean {
    if (this.huge) return this.huge.change(this.hugeRegionOf(cidr, 'occupy'), true);
    const r = this.regionOf(cidr, 'occupy');
    if (r.finer) return this.toHuge().change(this.hugeRegionOf(cidr, 'occupy'), true);
    return this.countTouched(r.start, r.size, true);
  }

  /** Frees exactly the addresses of `cidr` (inside the range). Freeing free space is a no-op. */
  release(cidr: string): void {
    if (this.huge) {
      this.huge.change(this.hugeRegionOf(cidr, 'release'), false);
      return;
    }
    const r = this.regionOf(cidr, 'release');
    // Finer than one unit: the unit may hold other blocks, so only exact offsets can free it.
    if (r.finer) this.toHuge().change(this.hugeRegionOf(cidr, 'release'), false);
    else this.countTouched(r.start, r.size, false);
  }

  /** True when every address of `cidr` is used. False for a CIDR disjoint from the range. */
  isAllocated(cidr: string): boolean {
    const c = this.parse(cidr);
    if (this.huge) {
      const h = this.huge.regionOf(c);
      return h !== null && this.huge.tree.allUsed(h.start, h.size);
    }
    // On the fast path every used unit is used whole, so a finer CIDR is used when its unit is.
    const r = this.regionOrNull(c);
    return r !== null && this.tree.allUsed(r.start, r.size);
  }

  /** True when any address of `cidr` is used. */
  overlapsAllocated(cidr: string): boolean {
    const c = this.parse(cidr);
    if (this.huge) {
      const h = this.huge.regionOf(c);
      return h !== null && this.huge.tree.anyUsed(h.start, h.size);
    }
    const r = this.regionOrNull(c);
    return r !== null && this.tree.anyUsed(r.start, r.size);
  }

  /** True when `cidr` lies inside the range. */
  contains(cidr: string): boolean {
    const c = this.parse(cidr);
    return c.family === this.family && c.prefix >= this.cidr.prefix && c.addr >> BigInt(this.bits - this.cidr.prefix) === this.cidr.addr >> BigInt(this.bits - this.cidr.prefix);
  }

  /** True when `cidr` shares at least one address with the range. */
  overlaps(cidr: string): boolean {
    return this.regionOrNull(this.parse(cidr)) !== null;
  }

  /** Excludes a CIDR from allocation (reference-counted by its text). Returns true when it overlaps allocated addresses. */
  addExclusion(cidr: string): boolean {
    const c = this.parse(cidr);
    const r = this.regionOrNull(c);
    if (r === null) return false;
    if (this.huge || r.finer) {
      const h = this.toHuge();
      const hr = h.regionOf(c)!;
      h.addExclusion(c.text, hr);
      return h.tree.anyUsed(hr.start, hr.size);
    }
    this.exclusions.add(c.text, r.start, r.start + r.size);
    return this.tree.anyUsed(r.start, r.size);
  }

  removeExclusion(cidr: string): void {
    const c = this.parse(cidr);
    if (this.regionOrNull(c) === null) return;
    if (this.huge) this.huge.removeExclusion(c.text);
    else this.exclusions.remove(c.text);
  }

  /** True when `cidr` overlaps an exclusion. */
  isExcluded(cidr: string): boolean {
    const c = this.parse(cidr);
    if (this.huge) {
      const h = this.huge.regionOf(c);
      return h !== null && this.huge.isExcluded(h);
    }
    // Fast-path exclusions are whole units, so rounding a finer CIDR to its unit is exact.
    const r = this.regionOrNull(c);
    return r !== null && this.exclusions.overlapEnd(r.start, r.start + r.size) !== undefined;
  }

  /**
   * Moves the state to exact bigint offsets (once): every used unit and every exclusion is
   * copied, then the fast-path structures are emptied. Used units were used whole, so the copy
   * is exact.
   */
  private toHuge(): HugeRange {
    if (this.huge) return this.huge;
    const h = new HugeRange(this.cidr, this.nodeMaskSize);
    const shift = BigInt(this.unitShift);
    this.tree.forEachUsed((start, size) => {
      h.change({ start: BigInt(start) << shift, size: BigInt(size) << shift }, true);
    });
    for (const [key, refs] of this.exclusions.entries()) {
      const r = h.regionOf(parseCIDR(key))!;
      for (let i = 0; i < refs; i++) h.addExclusion(key, r);
    }
    h.cursor = BigInt(this.cursor) << shift;
    for (const [key, refs] of this.exclusions.entries()) for (let i = 0; i < refs; i++) this.exclusions.remove(key);
    this.tree.clear(0, this.tree.limit);
    this.touched = 0;
    this.huge = h;
    return h;
  }

  private hugeRegionOf(cidr: string, op: string): { start: bigint; size: bigint } {
    const c = this.parse(cidr);
    const r = this.toHuge().regionOf(c);
    if (r === null) throw new CIDRSetError(`cannot ${op} ${c.text === cidr ? `"${cidr}"` : `"${cidr}" (${c.text})`}: it does not overlap range ${this.clusterCIDR}`);
    return r;
  }

  // Runs `op` on a region and keeps the count of touched node blocks exact.
  private countTouched(start: number, size: number, mark: boolean): boolean {
    const nb = this.nodeBlockUnits;
    if (size >= nb) {
      // Whole node blocks: afterwards they are all touched (mark) or all untouched (clear).
      const before = size === nb ? (this.tree.anyUsed(start, nb) ? 1 : 0) : this.tree.touchedBlocks(start, start + size, nb);
      const changed = mark ? this.tree.mark(start, size) : this.tree.clear(start, size);
      this.touched += (mark ? size / nb : 0) - before;
      return changed;
    }
    const op = () => (mark ? this.tree.mark(start, size) : this.tree.clear(start, size));
    const lo = Math.floor(start / nb) * nb;
    const hi = Math.max(lo + nb, start + size);
    const before = this.tree.touchedBlocks(lo, hi, nb);
    const changed = op();
    if (changed) this.touched += this.tree.touchedBlocks(lo, hi, nb) - before;
    return changed;
  }

  private excludedFreeBlocks(): number {
    const nb = this.nodeBlockUnits;
    let n = 0;
    let curLo = -1;
    let curHi = -1;
    const flush = () => {
      if (curHi > curLo) n += (curHi - curLo) / nb - this.tree.touchedBlocks(curLo, curHi, nb);
    };
    this.exclusions.forEach((start, end) => {
      const lo = Math.floor(start / nb) * nb;
      const hi = Math.ceil(end / nb) * nb;
      if (lo <= curHi) curHi = Math.max(curHi, hi);
      else {
        flush();
        curLo = lo;
        curHi = hi;
      }
    });
    flush();
    return n;
  }

  private parse(cidr: string): CIDR {
    try {
      return parseCIDR(cidr);
    } catch (err) {
      if (err instanceof CIDRParseError) throw new CIDRSetError(`${err.message} (range ${this.clusterCIDR})`);
      throw err;
    }
  }

  private regionOf(cidr: string, op: string): Region {
    if (this.family === 4) {
      // Number-only fast path for IPv4; the range is at most 2^32 addresses, so units are addresses.
      const f = parseIPv4CIDRNumbers(cidr);
      if (f !== undefined) {
        const [addr, prefix] = f;
        const rp = this.cidr.prefix;
        if (prefix <= rp) {
          const block = 2 ** (32 - prefix);
          if (this.baseV4 - (this.baseV4 % block) === addr) return { start: 0, size: this.tree.limit };
        } else {
          const off = addr - this.baseV4;
          if (off >= 0 && off < this.tree.limit) return { start: off, size: 2 ** (32 - prefix) };
        }
      }
    }
    const c = this.parse(cidr);
    const r = this.regionOrNull(c);
    if (r === null) throw new CIDRSetError(`cannot ${op} ${c.text === cidr ? `"${cidr}"` : `"${cidr}" (${c.text})`}: it does not overlap range ${this.clusterCIDR}`);
    return r;
  }

  /** The units of `c` inside the range; null when disjoint or of another family. */
  private regionOrNull(c: CIDR): Region | null {
    if (c.family !== this.family) return null;
    const rp = this.cidr.prefix;
    if (c.prefix <= rp) {
      // c contains the range, or is disjoint from it.
      const shift = BigInt(this.bits - c.prefix);
      return this.cidr.addr >> shift === c.addr >> shift ? { start: 0, size: this.tree.limit } : null;
    }
    const rshift = BigInt(this.bits - rp);
    if (c.addr >> rshift !== this.cidr.addr >> rshift) return null;
    const start = Number((c.addr - this.cidr.addr) >> BigInt(this.unitShift));
    // Finer than a unit: the whole unit stands for it (rounding outwards never double-allocates).
    if (c.prefix > this.unitPrefix) return { start, size: 1, finer: true };
    return { start, size: 2 ** (this.unitPrefix - c.prefix) };
  }

  private formatRegion(start: number, maskSize: number): string {
    if (this.family === 4) return `${formatIPv4(this.baseV4 + start)}/${maskSize}`;
    const g = this.groups;
    const base = this.baseGroups;
    for (let i = 0; i < 8; i++) {
      const sh = this.groupShift[i];
      // Groups entirely below or above the offset's bits keep the base value.
      g[i] = sh === null ? base[i] : base[i] + (sh >= 0 ? Math.floor(start / sh) % 65536 : (start * -sh) % 65536);
    }
    if (maskSize !== this.nodeMaskSize) return `${formatIPv6Groups(g)}/${maskSize}`;
    const f = (this.fmt ??= new TextCache(7 - ((128 - maskSize) >> 4)));
    const at = f.at;
    if (at < 0 || g[at] === 0) return `${formatIPv6Groups(g)}/${maskSize}`;
    const key = f.key;
    let hit = f.valid;
    for (let i = 0; hit && i < 8; i++) if (i !== at && key[i] !== g[i]) hit = false;
    if (!hit) {
      key.set(g);
      const [head, tail] = formatIPv6Around(g, at);
      f.head = head;
      f.tail = `${tail}/${maskSize}`;
      f.valid = true;
    }
    return f.head + hexGroup(g[at]) + f.tail;
  }

  /** Canonical text of a CIDR from its address (for callers holding bigint addresses). */
  static format(family: IPFamily, addr: bigint, prefix: number): string {
    return `${formatAddr(family, addr)}/${prefix}`;
  }
}
