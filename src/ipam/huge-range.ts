// HugeRange: the state of a CIDRSet whose range cannot be tracked address by address in JS
// numbers (over 2^52 addresses) once that matters: a block smaller than the 2^-52 slice the
// fast path tracks is occupied or released, or the range holds over 2^52 node blocks (KEP-2593's
// own example, fd12:3456:789a:1::/64 with perNodeHostBits 6, has 2^58). Every offset is an exact
// bigint address offset, so releasing any block frees exactly its addresses and the counts
// never drift. Memory follows the used/free boundaries (BigBlockTree), not the size of the range.
import { BigBlockTree } from './big-blocktree.js';
import { formatCIDR, type CIDR } from './cidr.js';
import { IntervalList } from './exclusions.js';

export interface BigRegion {
  start: bigint;
  size: bigint;
}

export class HugeRange {
  readonly tree: BigBlockTree;
  private readonly exclusions = new IntervalList<bigint>();
  /** Addresses per node-size block. */
  private readonly nodeBlock: bigint;
  private readonly hostBits: number;
  cursor = 0n;
  /** Node-size blocks with at least one used address. */
  touched = 0n;
  /** Candidate blocks examined by the last allocation. */
  lastTries = 0;

  constructor(
    readonly cidr: CIDR,
    readonly nodeMaskSize: number,
  ) {
    this.hostBits = cidr.bits - cidr.prefix;
    this.tree = new BigBlockTree(this.hostBits, cidr.bits - nodeMaskSize);
    this.nodeBlock = 1n << BigInt(cidr.bits - nodeMaskSize);
  }

  /** The addresses of `c` inside the range (offsets from its start); null when disjoint. */
  regionOf(c: CIDR): BigRegion | null {
    if (c.family !== this.cidr.family) return null;
    const rp = this.cidr.prefix;
    if (c.prefix <= rp) {
      const shift = BigInt(c.bits - c.prefix);
      return this.cidr.addr >> shift === c.addr >> shift ? { start: 0n, size: this.tree.limit } : null;
    }
    const rshift = BigInt(c.bits - rp);
    if (c.addr >> rshift !== this.cidr.addr >> rshift) return null;
    return { start: c.addr - this.cidr.addr, size: 1n << BigInt(c.bits - c.prefix) };
  }

  /** The first free, unexcluded block of `maskSize` at or after the cursor (wrapping once), marked used. */
  allocate(maskSize: number): string | undefined {
    const size = 1n << BigInt(this.cidr.bits - maskSize);
    let tries = 0;
    let start = -1n;
    for (let pass = 0; pass < 2 && start < 0n; pass++) {
      let from = pass === 0 ? this.cursor : 0n;
      if (pass === 1 && this.cursor === 0n) break;
      for (;;) {
        const s = this.tree.findFree(from, size);
        if (s < 0n) break;
        tries++;
        const exEnd = this.exclusions.size === 0 ? undefined : this.exclusions.overlapEnd(s, s + size);
        if (exEnd === undefined) {
          start = s;
          break;
        }
        from = exEnd;
      }
    }
    this.lastTries = tries;
    if (start < 0n) return undefined;
    if (size >= this.nodeBlock) {
      // The region was entirely free, so each node block in it is newly touched.
      this.tree.mark(start, size);
      this.touched += size / this.nodeBlock;
    } else this.change({ start, size }, true);
    const next = start + size;
    this.cursor = next >= this.tree.limit ? 0n : next;
    return formatCIDR(this.cidr.family, this.cidr.addr + start, maskSize);
  }

  /** Marks (or frees) exactly the region and keeps the touched count exact. True when anything changed. */
  change(r: BigRegion, mark: boolean): boolean {
    const nb = this.nodeBlock;
    const lo = (r.start / nb) * nb;
    const end = r.start + r.size;
    const hi = end > lo + nb ? end : lo + nb;
    const before = this.tree.touchedBlocks(lo, hi, nb);
    const changed = mark ? this.tree.mark(r.start, r.size) : this.tree.clear(r.start, r.size);
    if (changed) this.touched += this.tree.touchedBlocks(lo, hi, nb) - before;
    return changed;
  }

  addExclusion(key: string, r: BigRegion): void {
    this.exclusions.add(key, r.start, r.start + r.size);
  }

  removeExclusion(key: string): void {
    this.exclusions.remove(key);
  }

  isExcluded(r: BigRegion): boolean {
    return this.exclusions.overlapEnd(r.start, r.start + r.size) !== undefined;
  }

  /** Node-size blocks with no used address that overlap an exclusion. */
  excludedFreeBlocks(): bigint {
    const nb = this.nodeBlock;
    let n = 0n;
    let curLo = -1n;
    let curHi = -1n;
    const flush = () => {
      if (curHi > curLo) n += (curHi - curLo) / nb - this.tree.touchedBlocks(curLo, curHi, nb);
    };
    this.exclusions.forEach((s, e) => {
      const lo = (s / nb) * nb;
      const hi = ((e + nb - 1n) / nb) * nb;
      if (lo <= curHi) curHi = hi > curHi ? hi : curHi;
      else {
        flush();
        curLo = lo;
        curHi = hi;
      }
    });
    flush();
    return n;
  }
}
