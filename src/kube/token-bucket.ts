// Client-side request rate limit, as client-go's token bucket (flowcontrol.NewTokenBucketRateLimiter)
// limits every Kubernetes component: `burst` requests at once, then `qps` per second. One bucket
// is shared by every controller of the process, so 100,000 joining nodes cannot flood the API
// server. Waiters are served in arrival order; an aborted wait gives its turn back.
import { realClock, type Clock } from './clock.js';

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
  cancel?: () => void;
}

export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;
  /** Waiters in arrival order. */
  #queue: Waiter[] = [];
  #timer: { cancel(): void } | undefined;

  /** `qps` > 0 and `burst` ≥ 1 (callers wanting no limit use no bucket at all). */
  constructor(qps: number, burst: number, clock: Clock = realClock) {
    if (!Number.isFinite(qps) || qps <= 0) throw new Error(`qps: must be a positive number, got ${qps}`);
    if (!Number.isInteger(burst) || burst < 1) throw new Error(`burst: must be an integer >= 1, got ${burst}`);
    this.qps = qps;
    this.burst = burst;
    this.#clock = clock;
    this.#tokens = burst;
    this.#last = clock.now();
  }

  #refill(): void {
    const now = this.#clock.now();
    // While callers wait, a timer fires up to 1 ms late (timers count whole ms), so allow one ms
    // worth of tokens over the burst: capping at the burst then would drop the fraction owed.
    const cap = this.#queue.length > 0 ? this.burst + this.qps / 1000 : this.burst;
    this.#tokens = Math.min(cap, this.#tokens + ((now - this.#last) / 1000) * this.qps);
    this.#last = now;
  }

  /** Takes a token now if one is free and nobody waits before us. */
  tryTake(): boolean {
    this.#refill();
    if (this.#queue.length > 0 || this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Waits for a token; resolves with the time waited in ms. Rejects with the signal's reason on abort. */
  async take(signal?: AbortSignal): Promise<number> {
    if (this.tryTake()) return 0;
    signal?.throwIfAborted();
    const started = this.#clock.now();
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      if (signal) {
        const onAbort = (): void => {
          const i = this.#queue.indexOf(waiter);
          if (i >= 0) this.#queue.splice(i, 1);
          reject(signal.reason ?? new Error('aborted'));
          this.#schedule();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiter.cancel = () => signal.removeEventListener('abort', onAbort);
      }
      this.#queue.push(waiter);
      this.#schedule();
    });
    return this.#clock.now() - started;
  }

  /** Serves waiters whose tokens have arrived, then sleeps until the next one's. */
  #schedule(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#refill();
    while (this.#queue.length > 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      const w = this.#queue.shift()!;
      w.cancel?.();
      w.resolve();
    }
    if (this.#queue.length === 0) return;
    const waitMs = Math.max(1, Math.ceil(((1 - this.#tokens) / this.qps) * 1000));
    this.#timer = this.#clock.setTimer(() => this.#schedule(), waitMs);
  }
}
