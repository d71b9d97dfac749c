// Review answers kept for a short time, as the delegating authenticator and authorizer of
// Kubernetes components keep theirs: a scrape every few seconds costs one review per TTL, not
// one per request. Bounded, so a flood of distinct tokens cannot grow memory without limit.
import type { Clock } from '../kube/clock.js';
import { realClock } from '../kube/clock.js';

export class TtlCache<V> {
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #clock: Clock;
  /** Insertion order is expiry order (one TTL for all), so the oldest entry is evicted first. */
  readonly #entries = new Map<string, { value: V; expires: number }>();

  constructor(ttlMs: number, maxEntries = 4096, clock: Clock = realClock) {
    if (!(ttlMs >= 0) || !Number.isFinite(ttlMs)) throw new Error(`cache TTL: must be a finite number of ms >= 0, got ${ttlMs}`);
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new Error(`cache size: must be an integer >= 1, got ${maxEntries}`);
    this.#ttlMs = ttlMs;
    this.#max = maxEntries;
    this.#clock = clock;
  }

  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.#clock.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V): void {
    if (this.#ttlMs === 0) return;
    this.#entries.delete(key);
    while (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { value, expires: this.#clock.now() + this.#ttlMs });
  }

  get size(): number {
    return this.#entries.size;
  }
}
