// Exclusions: address ranges (Service CIDRs) that must never be handed out as pod CIDRs.
// Two layers: `IntervalList` keeps one range's excluded units for fast overlap checks during
// allocation; `ExclusionRegistry` keeps the keyed sets callers add and remove at runtime
// (e.g. one key per ServiceCIDR object), so removing one key keeps ranges another key still holds.
import sortedBTree from 'sorted-btree';
import { parseCIDR, type CIDR } from './cidr.js';

// sorted-btree is CommonJS with `exports.default` (see held-blocks.ts for the interop).
type BTreeClass = typeof sortedBTree.default;
const BTree: BTreeClass = (sortedBTree as { default?: BTreeClass }).default ?? (sortedBTree as unknown as BTreeClass);

/** A unit offset: a number in ranges tracked with numbers, a bigint in huge IPv6 ranges. */
type Off = number | bigint;

/** An interval key; `end` null sorts before every interval with the same start (a search key). */
type Span<T extends Off> = [start: T, end: T | null];

function cmp<T extends Off>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** By start, then the larger interval first, so a parent comes before what it contains. */
function cmpSpan<T extends Off>(a: Span<T>, b: Span<T>): number {
  const s = cmp(a[0], b[0]);
  if (s !== 0) return s;
  if (a[1] === null) return b[1] === null ? 0 : -1;
  if (b[1] === null) return 1;
  return cmp(b[1], a[1]);
}

export class ExclusionOverlapError extends RangeError {
  override name = 'ExclusionOverlapError';
}

/**
 * Half-open unit intervals, each reference-counted by its key. The intervals come from CIDRs, so
 * any two nest or are disjoint: the excluded space is the union of the outermost ones. Those are
 * kept in their own ordered tree, so adding or removing a key costs O(log n) plus the outermost
 * intervals it absorbs or uncovers, and an overlap query is O(log n).
 */
export class IntervalList<T extends Off = number> {
  private readonly sources = new Map<string, { start: T; end: T; refs: number }>();
  /** Every distinct interval → how many keys name it. */
  private readonly all = new BTree<Span<T>, { keys: number }>(undefined, cmpSpan);
  /** The outermost intervals, start → end (disjoint, possibly adjacent). */
  private readonly top = new BTree<T, T>(undefined, cmp);

  /** Number of outermost intervals. */
  get size(): number {
    return this.top.size;
  }

  add(key: string, start: T, end: T): void {
    const cur = this.sources.get(key);
    if (cur) {
      cur.refs++;
      return;
    }
    const span: Span<T> = [start, end];
    const same = this.all.get(span);
    if (same) {
      same.keys++;
      this.sources.set(key, { start, end, refs: 1 });
      return;
    }
    const before = this.top.getPairOrNextLower(start);
    if (before && before[1] > start) {
      if (before[1] >= end) {
        // Inside an outermost interval: the union does not change.
        this.sources.set(key, { start, end, refs: 1 });
        this.all.set(span, { keys: 1 });
        return;
      }
      if (before[0] < start) {
        throw new ExclusionOverlapError(`interval ${String(start)}-${String(end)} of ${key} partly overlaps ${String(before[0])}-${String(before[1])}`);
      }
    }
    const last = this.top.nextLowerPair(end);
    if (last && last[0] >= start && last[1] > end) {
      throw new ExclusionOverlapError(`interval ${String(start)}-${String(end)} of ${key} partly overlaps ${String(last[0])}-${String(last[1])}`);
    }
    this.sources.set(key, { start, end, refs: 1 });
    this.all.set(span, { keys: 1 });
    // It becomes outermost and absorbs the outermost intervals it contains.
    this.top.deleteRange(start, end, false);
    this.top.set(start, end);
  }

  /** Returns true when the key was known. */
  remove(key: string): boolean {
    const cur = this.sources.get(key);
    if (!cur) return false;
    if (--cur.refs > 0) return true;
    this.sources.delete(key);
    const span: Span<T> = [cur.start, cur.end];
    const same = this.all.get(span)!;
    if (--same.keys > 0) return true;
    this.all.delete(span);
    if (this.top.get(cur.start) !== cur.end) return true;
    // An outermost interval went away: what it contained directly becomes outermost. Each step
    // jumps past the interval just promoted, so only the promoted ones are visited.
    this.top.delete(cur.start);
    let at: T = cur.start;
    for (;;) {
      const next = this.all.getPairOrNextHigher([at, null]);
      if (!next || next[0][0] >= cur.end) break;
      const [s, e] = next[0] as [T, T];
      this.top.set(s, e);
      at = e;
    }
    return true;
  }

  /** End of the first interval overlapping [start, end), or undefined when none does. */
  overlapEnd(start: T, end: T): T | undefined {
    const before = this.top.getPairOrNextLower(start);
    if (before && before[1] > start) return before[1];
    const after = this.top.nextHigherPair(start);
    return after && after[0] < end ? after[1] : undefined;
  }

  /** Every key with its reference count. */
  entries(): [key: string, refs: number][] {
    return [...this.sources].map(([k, v]) => [k, v.refs]);
  }

  /** Calls `f` for each outermost interval in address order. */
  forEach(f: (start: T, end: T) => void): void {
    this.top.forEachPair((s, e) => {
      f(s, e);
    });
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
    const addedText = new Set(added.map((c) => c.text));
    const removedText = new Set(removed.map((c) => c.text));
    return {
      added: added.filter((c) => !removedText.has(c.text)),
      removed: removed.filter((c) => !addedText.has(c.text)),
    };
  }
}

function dedupe(list: CIDR[]): CIDR[] {
  const seen = new Set<string>();
  return list.filter((c) => (seen.has(c.text) ? false : (seen.add(c.text), true)));
}
