// ARM throttling, honoured for every caller. ARM answers 429 with Retry-After when a subscription
// or principal is over its read budget; the SDK's retry policy then waits that long before it
// retries that one request. The gate below makes the provider's other requests wait too (a batch
// runs several listings at once), so nothing is sent before ARM said it may be. No SDK import here.
import { sleepUntil } from '../../src/util/sleep.js';

/**
 * Milliseconds a throttling response asks to wait, from `retry-after-ms`, `x-ms-retry-after-ms`
 * (milliseconds) or `Retry-After` (seconds, or an HTTP date); undefined without a usable one.
 */
export function retryAfterMs(header: (name: string) => string | undefined, now: number = Date.now()): number | undefined {
  for (const name of ['retry-after-ms', 'x-ms-retry-after-ms']) {
    const v = header(name)?.trim();
    if (v && /^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v));
  }
  const v = header('retry-after')?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  const date = Date.parse(v);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

export interface ThrottleGateOptions {
  /** Longest wait the gate imposes after one answer (ms); a longer Retry-After is cut to this. */
  maxWaitMs?: number;
  /** Wait when a 429 carries no Retry-After (ms). */
  defaultWaitMs?: number;
  now?: () => number;
}

export class ThrottleGate {
  private openAt = 0;
  private readonly maxWaitMs: number;
  private readonly defaultWaitMs: number;
  private readonly now: () => number;
  /** 429 answers seen. */
  throttles = 0;

  constructor(options: ThrottleGateOptions = {}) {
    this.maxWaitMs = options.maxWaitMs ?? 60_000;
    this.defaultWaitMs = options.defaultWaitMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /** Milliseconds until requests may be sent again. */
  waitMs(): number {
    return Math.max(0, this.openAt - this.now());
  }

  /** Records a 429: no request leaves before `retryAfter` ms (capped) have passed. */
  throttled(retryAfter: number | undefined): void {
    this.throttles++;
    const ms = Math.min(this.maxWaitMs, retryAfter ?? this.defaultWaitMs);
    this.openAt = Math.max(this.openAt, this.now() + ms);
  }

  async wait(signal?: AbortSignal): Promise<void> {
    await sleepUntil(() => this.waitMs(), signal);
  }
}

/** Counts of what the provider sent to ARM, for tests, metrics and the benchmark. */
export interface ArmCallStats {
  /** HTTP requests sent to ARM (every page and every retry). */
  requests: number;
  /** Of which answered 429. */
  throttled: number;
}

/** The part of a core-rest-pipeline PipelinePolicy this needs (structural, so no SDK type is imported). */
interface PolicyRequest {
  abortSignal?: { aborted: boolean };
}
interface PolicyResponse {
  status: number;
  headers: { get(name: string): string | undefined };
}

/**
 * A per-retry pipeline policy: waits for the gate before each attempt, counts it, and closes the
 * gate on a 429 for as long as its Retry-After says.
 */
export function armGatePolicy(gate: ThrottleGate, stats: ArmCallStats) {
  return {
    name: 'nodeAddressCcmArmGate',
    async sendRequest<Req extends PolicyRequest, Res extends PolicyResponse>(request: Req, next: (r: Req) => Promise<Res>): Promise<Res> {
      await gate.wait(request.abortSignal as AbortSignal | undefined);
      stats.requests++;
      const response = await next(request);
      if (response.status === 429) {
        stats.throttled++;
        gate.throttled(retryAfterMs((n) => response.headers.get(n) ?? undefined));
      }
      return response;
    },
  };
}
