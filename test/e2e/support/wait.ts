// Polling with a deadline: e2e tests wait for the cluster to converge, never for a fixed time.

export interface EventuallyOptions {
  /** Give up after this long (default 20 s). */
  timeoutMs?: number;
  /** Time between attempts (default 100 ms). */
  intervalMs?: number;
  /** Extra context for the failure message (e.g. the controller's log tail), computed on failure. */
  describe?: () => string;
}

/**
 * Calls `probe` until it returns without throwing, and returns its result. On timeout, throws the
 * last error (an assertion failure keeps its diff) with `describe()` appended.
 */
export async function eventually<T>(probe: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  const interval = options.intervalMs ?? 100;
  let last: unknown;
  for (;;) {
    try {
      return await probe();
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, interval));
  }
  const extra = options.describe?.();
  if (last instanceof Error) {
    if (extra) last.message += `\n--- while waiting (${options.timeoutMs ?? 20_000} ms) ---\n${extra}`;
    throw last;
  }
  throw new Error(`eventually: timed out: ${String(last)}${extra ? `\n${extra}` : ''}`);
}

/**
 * Asserts that `probe` keeps passing for `forMs` (polled): for "stays tainted" checks, which can
 * only be shown over a window. Use after the controller has demonstrably acted (e.g. an event seen).
 */
export async function consistently(probe: () => void | Promise<void>, forMs: number, intervalMs = 100): Promise<void> {
  const end = Date.now() + forMs;
  do {
    await probe();
    await new Promise((r) => setTimeout(r, intervalMs));
  } while (Date.now() < end);
}
