// A watch's staleness watchdog: calls onSilent once when nothing has kicked it for timeoutMs.
// A kick only notes the time; the one timer, when it falls due, re-arms for what is left. A
// timer cancelled and made again for every event cost more than handling the event in a flood
// of 10,000 (each timer a closure and a timer list insertion).
import type { Clock, ClockTimer } from './clock.js';

export class Watchdog {
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #onSilent: () => void;
  #last: number;
  #timer: ClockTimer | undefined;
  #done = false;

  constructor(clock: Clock, timeoutMs: number, onSilent: () => void) {
    this.#clock = clock;
    this.#timeoutMs = timeoutMs;
    this.#onSilent = onSilent;
    this.#last = clock.now();
    this.#timer = clock.setTimer(() => this.#due(), timeoutMs);
  }

  /** Something arrived: silence is measured from now. */
  kick(): void {
    this.#last = this.#clock.now();
  }

  /** No call after this. */
  stop(): void {
    this.#done = true;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #due(): void {
    if (this.#done) return;
    const quiet = this.#clock.now() - this.#last;
    if (quiet >= this.#timeoutMs) {
      this.#done = true;
      this.#timer = undefined;
      this.#onSilent();
      return;
    }
    this.#timer = this.#clock.setTimer(() => this.#due(), this.#timeoutMs - quiet);
  }
}
