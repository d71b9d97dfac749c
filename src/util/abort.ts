// Helpers that make a wait end when its AbortSignal does: a leadership term, or the process on
// SIGTERM, cancels everything it started through one signal, including waits on promises that
// know nothing of it (a cache's first sync, a relist waiting for the API server to come back).

/** The signal's reason as an Error (AbortController.abort() without one gives a DOMException). */
export function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new Error(typeof r === 'string' ? r : 'aborted');
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts (the promise itself runs on). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      promise.catch(() => {});
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (err: unknown) => { signal.removeEventListener('abort', onAbort); reject(err); },
    );
  });
}

/**
 * A signal that aborts when either input does, and `unlink` to drop the listeners once the
 * operation is over. (AbortSignal.any would keep a long-lived input's listener set growing
 * per request on some Node 20 releases; this one is released explicitly.)
 */
export function linkSignals(a: AbortSignal | undefined, b: AbortSignal | undefined): { signal: AbortSignal | undefined; unlink: () => void } {
  if (!a || !b) return { signal: a ?? b, unlink: () => {} };
  if (a.aborted) return { signal: a, unlink: () => {} };
  if (b.aborted) return { signal: b, unlink: () => {} };
  const ac = new AbortController();
  const onA = (): void => ac.abort(a.reason);
  const onB = (): void => ac.abort(b.reason);
  a.addEventListener('abort', onA, { once: true });
  b.addEventListener('abort', onB, { once: true });
  return {
    signal: ac.signal,
    unlink: () => {
      a.removeEventListener('abort', onA);
      b.removeEventListener('abort', onB);
    },
  };
}
