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
