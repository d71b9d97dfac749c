// A clock the queue, backoff and correlator read time from, so tests can drive time by hand
// instead of sleeping.

export interface ClockTimer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds; the returned handle cancels it. */
  setTimer(fn: () => void, ms: number): ClockTimer;
}

/**
 * The process's clock: epoch milliseconds as they were at start, moved on by a monotonic clock.
 * Lease expiry, the renew deadline and the write gate are all elapsed times; a wall clock stepped
 * back by NTP or by hand would keep a deposed leader's gate open for as long as the step (Go's
 * time.Now carries a monotonic reading for the same reason). Timestamps written from it drift from
 * the wall clock only by the steps taken since the process started. Whole milliseconds, as
 * Date.now() gives them: with the fraction kept, the e2e run lost warnings (init-edge-cases,
 * quote-ctl and quote-nel), so readers of the clock count on it.
 */
export const realClock: Clock = {
  now: () => Math.floor(performance.timeOrigin + performance.now()),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(t) };
  },
};

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A manually advanced clock for tests. Timers fire in due-time order during `advance`. */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: FakeTimer[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): ClockTimer {
    const timer: FakeTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(timer);
    return { cancel: () => { timer.cancelled = true; } };
  }

  /** Number of timers not yet fired or cancelled. */
  pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way (including ones they schedule). */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new Error(`FakeClock.advance: ms must be >= 0, got ${ms}`);
    const target = this.#now + ms;
    for (;;) {
      this.#timers = this.#timers.filter((t) => !t.cancelled);
      let next: FakeTimer | undefined;
      for (const t of this.#timers) {
        if (t.at <= target && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      }
      if (!next) break;
      this.#now = Math.max(this.#now, next.at);
      next.cancelled = true;
      next.fn();
    }
    this.#now = target;
  }
}
