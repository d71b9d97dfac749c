// Keeping one copy of values that repeat. JSON.parse makes a new string (or object) for every
// occurrence; a cache of 100,000 nodes, or a config listing them, would hold 100,000 copies of the
// same zone.

/**
 * A table that answers the value first stored under a key, making it with `make` on a miss.
 * Bounded: past `max` keys it stores nothing more and answers what `make` gives, so values unique
 * to each entry fill it once and then pass through.
 */
export function sharedValues<V>(max = Number.POSITIVE_INFINITY): (key: string, make: () => V) => V {
  const table = new Map<string, V>();
  return (key, make) => {
    const known = table.get(key);
    if (known !== undefined) return known;
    const value = make();
    if (table.size < max) table.set(key, value);
    return value;
  };
}

/** One copy of each distinct string (at most `max` kept; see sharedValues). */
export function interner(max?: number): (value: string) => string {
  const shared = sharedValues<string>(max);
  return (value) => shared(value, () => value);
}
