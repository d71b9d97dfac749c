// A process-wide throttle gate for EC2 calls. EC2's request limits are per account and region, so
// when one call is throttled every caller in the process should slow down, not only the one that
// saw the error. The SDK's adaptive retry already paces retries of a single request; this gate
// paces the next requests of all callers.
import { sleep, sleepUntil } from '../../src/util/sleep.js';

export { sleep };

export interface BackoffGateOptions {
  /** First delay after a throttle (ms). */
  baseMs?: number;
  /** Upper bound of the delay (ms). */
  maxMs?: number;
  /** Random spread, 0..1, to avoid synchronised retries. */
  jitter?: number;
  /** Injectable for tests. */
  random?: () => number;
  now?: () => number;
}

export class BackoffGate {
  private delayMs = 0;
  private openAt = 0;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private readonly now: () => number;
  /** Throttles seen since creation, for metrics and tests. */
  throttles = 0;

  constructor(options: BackoffGateOptions = {}) {
    this.baseMs = options.baseMs ?? 500;
    this.maxMs = options.maxMs ?? 30_000;
    this.jitter = options.jitter ?? 0.2;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    if (!(this.baseMs >= 0) || !(this.maxMs >= this.baseMs)) {
      throw new Error(`BackoffGate: need 0 <= baseMs <= maxMs (got baseMs=${this.baseMs}, maxMs=${this.maxMs})`);
    }
  }

  /** Current delay applied after the last throttle (0 when calm). */
  get currentDelayMs(): number {
    return this.delayMs;
  }

  /** Milliseconds until calls may proceed. */
  waitMs(): number {
    return Math.max(0, this.openAt - this.now());
  }

  /** Resolves when calls may proceed (immediately when not throttled). */
  async wait(signal?: AbortSignal): Promise<void> {
    await sleepUntil(() => this.waitMs(), signal);
  }

  /** Records a throttle: doubles the delay (from baseMs, up to maxMs) and closes the gate. */
  throttled(): void {
    this.throttles++;
    this.delayMs = this.delayMs === 0 ? this.baseMs : Math.min(this.maxMs, this.delayMs * 2);
    const spread = this.delayMs * this.jitter * (this.random() * 2 - 1);
    this.openAt = Math.max(this.openAt, this.now() + Math.max(0, Math.round(this.delayMs + spread)));
  }

  /** Records a success: halves the delay, so the rate recovers gradually. */
  succeeded(): void {
    this.delayMs = this.delayMs <= this.baseMs ? 0 : Math.floor(this.delayMs / 2);
  }
}

/** The gate shared by every AWS provider in this process. */
export const sharedEC2Gate = new BackoffGate();
