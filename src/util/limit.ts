// Bounded concurrency for a batch: a round over many nodes sends its requests (the controllers'
// writes, the adapters' cloud calls) a few at a time, rather than all at once or one by one.

/** Runs `fn` over `items` with at most `limit` calls in flight. */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
}

/**
 * A gate for calls made at different times: at most `limit` of the functions given to it run at
 * once, the rest wait their turn in order.
 */
export function limiter(limit: number): <R>(fn: () => Promise<R>) => Promise<R> {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`limit: must be an integer >= 1, got ${limit}`);
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <R>(fn: () => Promise<R>): Promise<R> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter, so `running` never undercounts.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
