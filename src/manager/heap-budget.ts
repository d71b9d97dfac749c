// --optimize-for-memory: a full garbage collection whenever the heap has grown a fixed budget past
// what was live after the last one. V8 left alone lets the heap grow to several times the live
// data while a paginated LIST of large Nodes streams through, and its --optimize-for-size holds
// the heap down only by making the LIST much slower; a budget bounds the garbage at about the
// speed of V8's defaults. The figures behind the 40 MiB the run command uses are in
// docs/benchmarks.md ("The heap budget").
//
// Once the caches are filled, ordinary collections go back to V8 (steady()): it is told to start
// one when the old generation is STEADY_GROWING_PERCENT past what was live, because V8's own
// collections mark on another thread while the budget's block the main thread. The budget stays as
// the backstop, wider (steadyBudgetBytes): V8's collections leave more behind than a full one
// does, so a backstop as narrow as the first budget would keep collecting on top of V8's marking
// in progress (which gc() first finishes, then collects again). Not during the first LIST: V8
// marking nearly all through it at that factor slows the LIST.
//
// The young generation. V8 grows it to two 16 MiB semi-spaces while the first LIST streams
// through (a large one is what makes the LIST and a join fast), and shrinks it only in a
// collection that finds the allocation rate low, which a process idle between its refresh rounds
// never runs: its collections all fall in the rounds, and each round grew it back. At 130,000
// nodes that was 31 MiB of RSS held for nothing (docs/benchmarks.md, "Where the memory goes").
// So once steady:
//  * V8 does not grow the young generation (setYoungGrowth(false)) unless the event loop has been
//    busy (BUSY_FRACTION of the time for BUSY_MS: a join, a relist), so that a refresh round of a
//    second runs in it as it is;
//  * a quiet spell (no collection and next to no allocation for QUIET_MS) gets a full collection
//    when the young generation is past YOUNG_FLOOR_BYTES (and a second one if V8 kept its size
//    after the first): V8 then shrinks it to its minimum. One V8 does not shrink is not
//    collected again until it has grown, or until QUIET_RETRY_MS later.
// A process that is never quiet (kubelets posting status all the time) keeps the young
// generation it had, as before. Pure: the heap readings, the collection, V8's settings, the
// event loop's busy time and the clock are passed in.
import type { Clock, ClockTimer } from '../kube/clock.js';

export interface HeapBudgetOptions {
  /** Growth past the last live size that triggers a collection, in bytes. */
  budgetBytes: number;
  /** How often the heap is read (a LIST page is parsed between two readings). */
  intervalMs: number;
  /** Bytes in use on the heap now. */
  heapUsed: () => number;
  /** A full, blocking collection. */
  collect: () => void;
  /** A collection of the young generation alone (a scavenge); with it, listPage() runs one. */
  collectYoung?: () => void;
  clock: Clock;
  /** Told about each collection: what was in use before and after, how long it took, and why. */
  onCollect?: (c: { beforeBytes: number; afterBytes: number; ms: number; reason: CollectionReason }) => void;
  /** Bytes V8's young generation holds (new space, committed); with it, steady() also collects in quiet spells. */
  youngBytes?: () => number;
  /** Lets V8 grow its young generation, or stops it (it then keeps its size); with busyFraction, steady() controls it. */
  setYoungGrowth?: (grow: boolean) => void;
  /** The fraction of the time since the last call that the event loop was busy (0–1). */
  busyFraction?: () => number;
  /** Sets V8's old-generation growing factor, as a percentage past live (steady()). */
  setGrowingPercent?: (percent: number) => void;
  /** The budget once steady() has handed ordinary collections to V8 (default: budgetBytes). */
  steadyBudgetBytes?: number;
}

/** What steady() asks of V8: a collection once the old generation is this far past live (V8 picks 10–300% alone). */
export const STEADY_GROWING_PERCENT = 10;

/** Why the budget collected: past the budget, before or after a large copy (settle), or in a quiet spell. */
export type CollectionReason = 'budget' | 'settle' | 'quiet';

/**
 * A quiet spell: this long without a collection, allocating under QUIET_BYTES_PER_SECOND. V8 sizes
 * the young generation down in a collection when the allocation rate of the last 5 s was under
 * 1 MB/s; the spell is longer than that window and the rate well under it.
 */
export const QUIET_MS = 6000;
export const QUIET_BYTES_PER_SECOND = 256 * 1024;
/**
 * A young generation V8 kept through a quiet collection is tried again this long after (V8 judges
 * the allocation rate by its own samples and now and then keeps the size; left at that, a process
 * kept 30 MiB more for good). One full collection a minute while idle, at most.
 */
export const QUIET_RETRY_MS = 60_000;
/** A young generation this small or smaller is left alone: a collection would give back little. */
export const YOUNG_FLOOR_BYTES = 4 * 2 ** 20;
/** The event loop busy this much of the time for BUSY_MS lets V8 grow the young generation again. */
export const BUSY_FRACTION = 0.8;
export const BUSY_MS = 5000;

export class HeapBudget {
  readonly #o: HeapBudgetOptions;
  #live: number;
  #timer: ClockTimer | undefined;
  #stopped = false;
  #steady = false;
  /** Heap in use at the last check: less now means something collected. */
  #lastUsed: number;
  /** The quiet spell under way: since when, from what heap in use; none before steady() or right after a collection. */
  #spell: { since: number; fromBytes: number } | undefined;
  /** The young generation right after the last quiet collection: it must grow past this for another, or QUIET_RETRY_MS pass. */
  #youngAfterQuiet = 0;
  /** When the last quiet collection ran. */
  #quietAt = 0;
  /** Since when the event loop has been busy, check after check; undefined when the last check found it not. */
  #busySince: number | undefined;
  /** What setYoungGrowth was last told. */
  #youngGrowth = true;

  constructor(options: HeapBudgetOptions) {
    for (const [field, v] of [['budgetBytes', options.budgetBytes], ['steadyBudgetBytes', options.steadyBudgetBytes ?? options.budgetBytes]] as const) {
      if (!(v > 0)) throw new Error(`heap budget: ${field} must be positive, got ${v}`);
    }
    if (!(options.intervalMs > 0)) throw new Error(`heap budget: intervalMs must be positive, got ${options.intervalMs}`);
    this.#o = options;
    this.#live = options.heapUsed();
    this.#lastUsed = this.#live;
  }

  start(): void {
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
    // V8's settings are the process's: another budget (a test's next process) starts from V8's own.
    if (!this.#youngGrowth) {
      this.#youngGrowth = true;
      this.#o.setYoungGrowth?.(true);
    }
  }

  /**
   * The caches are filled: from now on V8 starts its own collections early and the budget is
   * steadyBudgetBytes (see the file comment). Once; returns whether this call did it. Without a
   * way to tell V8, nothing changes.
   */
  steady(): boolean {
    if (this.#steady || !this.#o.setGrowingPercent) return false;
    this.#steady = true;
    this.#o.setGrowingPercent(STEADY_GROWING_PERCENT);
    this.#controlYoungGrowth();
    return true;
  }

  /** Collects if the heap outgrew the budget, or (once steady) in a quiet spell; returns whether it did. */
  check(): boolean {
    if (this.#steady) this.#controlYoungGrowth();
    const collected = this.#collectAbove(this.#steady ? (this.#o.steadyBudgetBytes ?? this.#o.budgetBytes) : this.#o.budgetBytes, 'budget') || this.#quiet();
    this.#lastUsed = this.#o.heapUsed();
    return collected;
  }

  /** Young generation growth, once steady: only after BUSY_MS of an event loop busy BUSY_FRACTION of the time. */
  #controlYoungGrowth(): void {
    const { setYoungGrowth, busyFraction } = this.#o;
    if (!setYoungGrowth || !busyFraction) return;
    const now = this.#o.clock.now();
    if (busyFraction() >= BUSY_FRACTION) this.#busySince ??= now;
    else this.#busySince = undefined;
    const grow = this.#busySince !== undefined && now - this.#busySince >= BUSY_MS;
    if (grow === this.#youngGrowth) return;
    this.#youngGrowth = grow;
    setYoungGrowth(grow);
  }

  /**
   * A page of a LIST has been taken in: its body text and parsed objects are garbage now, all of
   * them still in the young generation unless a scavenge ran while they were in use. A scavenge
   * here frees them before the next page arrives, so that the next page is parsed in an empty
   * young generation and no scavenge runs while its text is alive. That text (2 MB) is a large
   * object: once a scavenge has promoted it, only a full collection frees it, and at 130,000
   * nodes such promoted pages were most of what the budget's full collections collected during
   * the LIST (docs/benchmarks.md, "Where the memory goes"). Then check().
   */
  listPage(): boolean {
    this.#o.collectYoung?.();
    return this.check();
  }

  /**
   * The quiet-spell collection (see the file comment): when a spell has lasted QUIET_MS and the
   * young generation is past YOUNG_FLOOR_BYTES and has grown since the last quiet collection (a
   * collection ends the spell, so at most one per spell).
   */
  #quiet(): boolean {
    const young = this.#o.youngBytes;
    if (!this.#steady || !young) return false;
    const now = this.#o.clock.now();
    const used = this.#o.heapUsed();
    const s = this.#spell;
    // Something collected (the heap shrank) or allocated faster than a quiet process: a new spell.
    if (s === undefined || used < this.#lastUsed || used - s.fromBytes > (QUIET_BYTES_PER_SECOND * (now - s.since)) / 1000 + 64 * 1024) {
      this.#spell = { since: now, fromBytes: used };
      return false;
    }
    if (now - s.since < QUIET_MS) return false;
    const bytes = young();
    if (bytes <= YOUNG_FLOOR_BYTES) return false;
    if (bytes <= this.#youngAfterQuiet && now - this.#quietAt < QUIET_RETRY_MS) return false;
    this.#quietAt = now;
    this.#collect(used, 'quiet');
    // V8 judges the allocation rate by its own samples, taken at collections: when the last one
    // before the spell was recent, the first collection may keep the size. The second then finds
    // the spell's rate in the sample the first took.
    if (young() > YOUNG_FLOOR_BYTES) this.#collect(this.#o.heapUsed(), 'quiet');
    this.#youngAfterQuiet = young();
    return true;
  }

  /**
   * Called before work that builds a large short-lived copy of the caches in one go (the IP range
   * audit over every node): collects if the heap holds more than `marginBytes` past what was live,
   * so that copy is not stacked on a whole budget of garbage. Returns whether it collected.
   */
  settle(marginBytes: number): boolean {
    return this.#collectAbove(marginBytes, 'settle');
  }

  #collectAbove(allowance: number, reason: CollectionReason): boolean {
    const before = this.#o.heapUsed();
    if (before <= this.#live + allowance) {
      // Garbage V8 collected on its own lowers the baseline too.
      if (before < this.#live) this.#live = before;
      return false;
    }
    this.#collect(before, reason);
    return true;
  }

  #collect(before: number, reason: CollectionReason): void {
    const started = this.#o.clock.now();
    this.#o.collect();
    this.#live = this.#o.heapUsed();
    // A collection ends any quiet spell: the next one is measured from here.
    this.#spell = undefined;
    this.#o.onCollect?.({ beforeBytes: before, afterBytes: this.#live, ms: this.#o.clock.now() - started, reason });
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimer(() => {
      this.check();
      this.#schedule();
    }, this.#o.intervalMs);
  }
}
