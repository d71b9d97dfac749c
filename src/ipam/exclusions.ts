// Exclusions: address ranges (Service CIDRs) that must never be handed out as pod CIDRs.
// Two layers: `IntervalList` keeps one range's excluded units for fast overlap checks during
// allocation; `ExclusionRegistry` keeps the keyed sets callers add and remove at runtime
// (e.g. one key per ServiceCIDR object), so removing one key keeps ranges another key still holds.
import { parseCIDR, type CIDR } from './cidr.js';

/** Half-open unit intervals, kept sorted and merged; each source interval is reference-counted. */
export class IntervalList {
  private readonly sources = new Map<string, { start: number; end: number; refs: number }>();
  starts: number[] = [];
  ends: number[] = [];

  get size(): number {
    return this.starts.length;
  }

  add(key: string, start: number, end: number): void {
    const cur = this.sources.get(key);
    if (cur) {
      cur.refs++;
      return;
    }
    this.sources.set(key, { start, end, refs: 1 });
    this.rebuild();
  }

  /** Returns true when the key was known. */
  remove(key: string): boolean {
    const cur = this.sources.get(key);
    if (!cur) return false;
    if (--cur.refs === 0) {
      this.sources.delete(key);
      this.rebuild();
    }
    return true;
  }

  private rebuild(): void {
    const all = [...this.sources.values()].sort((a, b) => a.start - b.start);
    const starts: number[] = [];
    const ends: number[] = [];
    for (const iv of all) {
      const n = ends.length;
      if (n > 0 && iv.start <= ends[n - 1]) ends[n - 1] = Math.max(ends[n - 1], iv.end);
      else {
        starts.push(iv.start);
        ends.push(iv.end);
      }
    }
    this.starts = starts;
    this.ends = ends;
  }

  /** End of the first interval overlapping [start, end), or -1 when none does. */
  overlapEnd(start: number, end: number): number {
    const ends = this.ends;
    let lo = 0;
    let hi = ends.length;
    // First interval whose end is after `start`.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ends[mid] <= start) lo = mid + 1;
      else hi = mid;
    }
    return lo < ends.length && this.starts[lo] < end ? ends[lo] : -1;
  }
}

export interface ExclusionChange {
  /** CIDRs (canonical text) that became excluded with this change. */
  added: CIDR[];
  /** CIDRs (canonical text) no longer excluded by any key. */
  removed: CIDR[];
}

/** Keyed exclusion sets. Pure bookkeeping: callers apply the returned changes to their ranges. */
export class ExclusionRegistry {
  private readonly byKey = new Map<string, CIDR[]>();
  private readonly refs = new Map<string, { cidr: CIDR; refs: number }>();

  /** Replaces the CIDRs of `key`. Throws CIDRParseError for a malformed CIDR before changing anything. */
  set(key: string, cidrs: readonly string[]): ExclusionChange {
    const parsed = dedupe(cidrs.map((c) => parseCIDR(c)));
    const old = this.byKey.get(key) ?? [];
    this.byKey.set(key, parsed);
    return this.diff(old, parsed);
  }

  remove(key: string): ExclusionChange {
    const old = this.byKey.get(key) ?? [];
    this.byKey.delete(key);
    return this.diff(old, []);
  }

  /** Every excluded CIDR, each once. */
  all(): CIDR[] {
    return [...this.refs.values()].map((r) => r.cidr);
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  private diff(oldList: CIDR[], newList: CIDR[]): ExclusionChange {
    const added: CIDR[] = [];
    const removed: CIDR[] = [];
    for (const c of newList) {
      const r = this.refs.get(c.text);
      if (r) r.refs++;
      else {
        this.refs.set(c.text, { cidr: c, refs: 1 });
        added.push(c);
      }
    }
    for (const c of oldList) {
      const r = this.refs.get(c.text)!;
      if (--r.refs === 0) {
        this.refs.delete(c.text);
        removed.push(c);
      }
    }
    // A CIDR present in both lists nets out to no change.
    return {
      added: added.filter((c) => !removed.some((r) => r.text === c.text)),
      removed: removed.filter((c) => !added.some((a) => a.text === c.text)),
    };
  }
}

function dedupe(list: CIDR[]): CIDR[] {
  const seen = new Set<string>();
  return list.filter((c) => (seen.has(c.text) ? false : (seen.add(c.text), true)));
}
