// The suite's one way to wait for something: poll a probe with a deadline, never sleep for a guess.
// A fixed sleep stays only where a test deliberately waits out time (a lease expiring, a "stays
// tainted for N ms" window): `consistently` for the latter.

export interface EventuallyOptions {
  /** Give up after this long (default 5 s). */
  timeoutMs?: number;
  /**
   * Time between attempts (default 5 ms: cheap in-process checks answer as soon as the state
   * changes). Probes that make a request or spawn a command ask for more (e2e: 100 ms).
   */
  intervalMs?: number;
  /** What is waited for, for the message when the probe only ever returned false. */
  what?: string;
  /** Extra context computed on failure (a controller's log tail, the last scrape), appended to the message. */
  describe?: () => string;
}

/**
 * Thrown by a probe to stop waiting at once (e.g. the process whose output it waits for has
 * exited): `eventually` rethrows it without retrying.
 */
export class GiveUp extends Error {
  override name = 'GiveUp';
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls `probe` until it neither throws nor returns exactly `false`, and returns its result: a
 * probe is either a predicate (`() => nodes.size === 3`) or a function of assertions that returns
 * what it read (`async () => { const n = await get(); expect(n…)…; return n; }`).
 *
 * On timeout it throws the probe's last error (an assertion failure keeps its diff), or, when the
 * probe only returned false, an Error naming `what` and the timeout; either way with `describe()`
 * appended. The probe is called once more after the deadline, so a slow machine that misses the
 * last interval still sees the final state.
 */
export async function eventually<T>(probe: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<Exclude<T, false>> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const intervalMs = options.intervalMs ?? 5;
  const deadline = Date.now() + timeoutMs;
  let failure: { error: unknown } | undefined;
  for (;;) {
    try {
      const value = await probe();
      if (value !== false) return value as Exclude<T, false>;
      failure = undefined;
    } catch (err) {
      if (err instanceof GiveUp) throw withContext(err, options, timeoutMs);
      failure = { error: err };
    }
    if (Date.now() >= deadline) break;
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
  if (failure) throw withContext(failure.error, options, timeoutMs);
  throw withContext(new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'the condition'}`), options, timeoutMs);
}

function withContext(err: unknown, options: EventuallyOptions, timeoutMs: number): unknown {
  const extra = options.describe?.();
  const error = err instanceof Error ? err : new Error(`eventually: the probe threw ${String(err)}`);
  if (extra) {
    const heading = options.what && !error.message.includes(options.what) ? `while waiting for ${options.what} (${timeoutMs} ms)` : `while waiting (${timeoutMs} ms)`;
    error.message += `\n--- ${heading} ---\n${extra}`;
  } else if (options.what && !error.message.includes(options.what)) {
    error.message += ` (while waiting for ${options.what}, ${timeoutMs} ms)`;
  }
  return error;
}

/**
 * Asserts that `probe` keeps passing (no throw, no `false`) for `forMs`, polled: for "stays
 * tainted" checks, which can only be shown over a window. Use after the thing under test has
 * demonstrably acted (an event seen), or the window proves nothing.
 */
export async function consistently(probe: () => unknown, forMs: number, intervalMs = 100): Promise<void> {
  const started = Date.now();
  do {
    if ((await probe()) === false) throw new Error(`the condition stopped holding after ${Date.now() - started} ms of ${forMs} ms`);
    await sleep(intervalMs);
  } while (Date.now() < started + forMs);
}
