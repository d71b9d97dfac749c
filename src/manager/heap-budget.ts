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
// marking nearly all through it at that factor slows the LIST. Pure: the heap reading, the
// collection, V8's setting and the clock are passed in.
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
  clock: Clock;
  /** Told about each collection: what was in use before and after, and how long it took. */
  onCollect?: (c: { beforeBytes: number; afterBytes: number; ms: number }) => void;
  /** Sets V8's old-generation growing factor, as a percentage past live (steady()). */
  setGrowingPercent?: (percent: number) => void;
  /** The budget once steady() has handed ordinary collections to V8 (default: budgetBytes). */
  steadyBudgetBytes?: number;
}

/** What steady() asks of V8: a collection once the old generation is this far past live (V8 picks 10–300% alone). */
export const STEADY_GROWING_PERCENT = 10;

export class HeapBudget {
  readonly #o: HeapBudgetOptions;
  #live: number;
  #timer: ClockTimer | undefined;
  #stopped = false;
  #steady = false;

  constructor(options: HeapBudgetOptions) {
    for (const [field, v] of [['budgetBytes', options.budgetBytes], ['steadyBudgetBytes', options.steadyBudgetBytes ?? options.budgetBytes]] as const) {
      if (!(v > 0)) throw new Error(`heap budget: ${field} must be positive, got ${v}`);
    }
    if (!(options.intervalMs > 0)) throw new Error(`heap budget: intervalMs must be positive, got ${options.intervalMs}`);
    this.#o = options;
    this.#live = options.heapUsed();
  }

  start(): void {
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
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
    return true;
  }

  /** Collects if the heap outgrew the budget; returns whether it did. */
  check(): boolean {
    return this.#collectAbove(this.#steady ? (this.#o.steadyBudgetBytes ?? this.#o.budgetBytes) : this.#o.budgetBytes);
  }

  /**
   * Called before work that builds a large short-lived copy of the caches in one go (the IP range
   * audit over every node): collects if the heap holds more than `marginBytes` past what was live,
   * so that copy is not stacked on a whole budget of garbage. Returns whether it collected.
   */
  settle(marginBytes: number): boolean {
    return this.#collectAbove(marginBytes);
  }

  #collectAbove(allowance: number): boolean {
    const before = this.#o.heapUsed();
    if (before <= this.#live + allowance) {
      // Garbage V8 collected on its own lowers the baseline too.
      if (before < this.#live) this.#live = before;
      return false;
    }
    const started = this.#o.clock.now();
    this.#o.collect();
    this.#live = this.#o.heapUsed();
    this.#o.onCollect?.({ beforeBytes: before, afterBytes: this.#live, ms: this.#o.clock.now() - started });
    return true;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimer(() => {
      this.check();
      this.#schedule();
    }, this.#o.intervalMs);
  }
}
