/**
 * Waits `ms`, or rejects with the signal's own reason as soon as it aborts. (node:timers/promises
 * rejects with a generic AbortError instead, which would hide why a round was cancelled.)
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Resolves once `remainingMs()` is zero or less, sleeping in between; it is asked again after each
 * sleep, since a gate shared by many callers can be pushed further out meanwhile (another 429).
 */
export async function sleepUntil(remainingMs: () => number, signal?: AbortSignal): Promise<void> {
  for (;;) {
    signal?.throwIfAborted();
    const ms = remainingMs();
    if (ms <= 0) return;
    await sleep(ms, signal);
  }
}
