// The model both block tree tests hold their tree to: a plain array of booleans over 2^bits units,
// with random runs of marks and clears of aligned regions, a probe region and a search start.
import fc from 'fast-check';
import { expect } from 'vitest';

export interface Region {
  start: number;
  size: number;
}

export interface TreeCase {
  /** [mark (else clear), region] in order. */
  ops: [boolean, Region][];
  probe: Region;
  from: number;
}

/** An aligned power-of-two region of [0, 2^bits). */
function region(bits: number): fc.Arbitrary<Region> {
  return fc.tuple(fc.integer({ min: 0, max: bits }), fc.integer({ min: 0, max: 2 ** bits - 1 })).map(([k, at]) => {
    const size = 2 ** k;
    return { start: Math.floor(at / size) * size, size };
  });
}

export function treeCases(bits: number): fc.Arbitrary<TreeCase> {
  return fc.record({ ops: fc.array(fc.tuple(fc.boolean(), region(bits)), { maxLength: 60 }), probe: region(bits), from: fc.integer({ min: 0, max: 2 ** bits - 1 }) });
}

/** The units of [0, 2^bits) as the tree should hold them. */
export class UnitModel {
  readonly used: boolean[];

  constructor(readonly bits: number) {
    this.used = new Array<boolean>(2 ** bits).fill(false);
  }

  /** Applies every op to the model and, through `change`, to the tree, checking what the tree says changed. */
  replay(ops: TreeCase['ops'], change: (mark: boolean, r: Region) => boolean): this {
    for (const [mark, r] of ops) {
      const before = this.used.slice(r.start, r.start + r.size);
      expect(change(mark, r)).toBe(mark ? before.some((u) => !u) : before.some(Boolean));
      this.used.fill(mark, r.start, r.start + r.size);
    }
    return this;
  }

  part(r: Region): boolean[] {
    return this.used.slice(r.start, r.start + r.size);
  }

  /** First start ≥ from, aligned to size, of an entirely free region; -1 when none. */
  firstFree(from: number, size: number): number {
    for (let s = Math.ceil(from / size) * size; s + size <= this.used.length; s += size) {
      if (!this.used.slice(s, s + size).some(Boolean)) return s;
    }
    return -1;
  }

  /** Blocks of blockSize units holding a used unit. */
  touched(blockSize: number): number {
    let n = 0;
    for (let b = 0; b < this.used.length; b += blockSize) if (this.used.slice(b, b + blockSize).some(Boolean)) n++;
    return n;
  }
}
