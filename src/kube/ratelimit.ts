// Rate limiters for the work queue (same semantics as client-go's workqueue rate limiters) and a
// jittered, capped backoff for restart loops. Pure: time comes from the caller or a Clock.
import { realClock, type Clock } from './clock.js';

/** Decides how long an item must wait before it is queued again. */
export interface RateLimiter<T> {
  /** Delay in ms before `item` may be processed again; counts as one more failure. */
  when(item: T): number;
  /** Clears the failure history of `item` (call after it was processed successfully). */
  forget(item: T): void;
  /** How many times `item` was rate-limited since it was last forgotten. */
  numRequeues(item: T): number;
}

function positive(field: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${field}: must be a positive number, got ${value}`);
  return value;
}

export interface ItemBackoffJitter {
  /** Fraction of the delay added at random, 0..1 (default 0: client-go's limiter, which has none). */
  jitter?: number;
  /** Source of randomness in [0, 1), injectable for tests. */
  random?: () => number;
}

/**
 * Per-item exponential backoff: base × 2^failures, capped at max, plus up to `jitter` of that at
 * random. Without jitter, items that failed together (one provider call) come back together.
 */
export class ItemExponentialRateLimiter<T> implements RateLimiter<T> {
  readonly #failures = new Map<T, number>();
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #jitter: number;
  readonly #random: () => number;

  constructor(baseMs = 5, maxMs = 1_000_000, { jitter = 0, random = Math.random }: ItemBackoffJitter = {}) {
    this.#baseMs = positive('baseMs', baseMs);
    this.#maxMs = positive('maxMs', maxMs);
    if (maxMs < baseMs) throw new Error(`maxMs: must be >= baseMs (${baseMs}), got ${maxMs}`);
    if (!(jitter >= 0 && jitter <= 1)) throw new Error(`jitter: must be within 0..1, got ${jitter}`);
    this.#jitter = jitter;
    this.#random = random;
  }

  when(item: T): number {
    const n = this.#failures.get(item) ?? 0;
    this.#failures.set(item, n + 1);
    // 2^n overflows to Infinity long after the cap is reached; Math.min keeps it finite.
    const delay = Math.min(this.#baseMs * 2 ** n, this.#maxMs);
    return this.#jitter === 0 ? delay : Math.round(delay * (1 + this.#jitter * this.#random()));
  }

  forget(item: T): void {
    this.#failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.#failures.get(item) ?? 0;
  }
}

/**
 * Overall token bucket (qps, burst). Each call reserves one token; when the bucket is empty the
 * reservation is in the future and its distance is the delay, so a burst of failures is spread out
 * at `qps` instead of being rejected.
 */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(qps = 10, burst = 100, clock: Clock = realClock) {
    this.#qps = positive('qps', qps);
    this.#burst = positive('burst', burst);
    this.#clock = clock;
    this.#tokens = burst;
    this.#last = clock.now();
  }

  when(_item: T): number {
    const now = this.#clock.now();
    const elapsed = Math.max(0, now - this.#last) / 1000;
    this.#last = now;
    this.#tokens = Math.min(this.#burst, this.#tokens + elapsed * this.#qps) - 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens / this.#qps) * 1000);
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/** The longest delay of several limiters; requeue counts come from the largest. */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  readonly #limiters: RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    if (limiters.length === 0) throw new Error('MaxOfRateLimiter: needs at least one limiter');
    this.#limiters = limiters;
  }

  when(item: T): number {
    let delay = 0;
    for (const l of this.#limiters) delay = Math.max(delay, l.when(item));
    return delay;
  }

  forget(item: T): void {
    for (const l of this.#limiters) l.forget(item);
  }

  numRequeues(item: T): number {
    let n = 0;
    for (const l of this.#limiters) n = Math.max(n, l.numRequeues(item));
    return n;
  }
}

/** Jitter of the default per-item backoff: up to half the delay again. */
export const DEFAULT_ITEM_JITTER = 0.5;

/**
 * client-go's default controller limiter: per-item 5 ms → 1000 s, overall 10 qps / burst 100; with
 * jitter on the per-item delay (client-go has none), so items that failed together do not all come
 * back in the same instant. `random` is for tests.
 */
export function defaultControllerRateLimiter<T>(clock: Clock = realClock, random: () => number = Math.random): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(new ItemExponentialRateLimiter<T>(5, 1_000_000, { jitter: DEFAULT_ITEM_JITTER, random }), new BucketRateLimiter<T>(10, 100, clock));
}

export interface BackoffOptions {
  /** First delay in ms. */
  initialMs: number;
  /** Upper bound in ms before jitter. */
  maxMs: number;
  /** Multiplier per step (default 2). */
  factor?: number;
  /** Fraction of the delay added at random, 0..1 (default 0.2). */
  jitter?: number;
  /** Source of randomness in [0, 1), injectable for tests. */
  random?: () => number;
}

/**
 * Capped exponential backoff with jitter for restart loops (watch restarts, lease retries).
 * Jitter keeps thousands of clients from reconnecting in lockstep after an apiserver restart.
 */
export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #random: () => number;
  #attempt = 0;

  constructor(options: BackoffOptions) {
    this.#initial = positive('initialMs', options.initialMs);
    this.#max = positive('maxMs', options.maxMs);
    this.#factor = options.factor ?? 2;
    if (!(this.#factor >= 1)) throw new Error(`factor: must be >= 1, got ${this.#factor}`);
    this.#jitter = options.jitter ?? 0.2;
    if (!(this.#jitter >= 0 && this.#jitter <= 1)) throw new Error(`jitter: must be within 0..1, got ${this.#jitter}`);
    this.#random = options.random ?? Math.random;
  }

  /** The next delay in ms; each call moves one step further. */
  next(): number {
    const base = Math.min(this.#initial * this.#factor ** this.#attempt, this.#max);
    this.#attempt++;
    return Math.round(base * (1 + this.#jitter * this.#random()));
  }

  /** Starts over from the initial delay (after a success). */
  reset(): void {
    this.#attempt = 0;
  }

  get attempts(): number {
    return this.#attempt;
  }
}
