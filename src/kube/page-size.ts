// How many objects the next page of a paginated LIST asks for. A page is parsed whole before its
// objects are transformed for the cache, so its size in bytes, not in objects, is what the heap
// pays: 500 realistic Nodes are about 6 MB of JSON and some 30 MB of parsed objects, which outlive
// V8's young generation and are promoted before they die; pages of about 2 MB die young. Objects
// of one resource are of similar size, so the last page's bytes per object predict the next.
// Pure: the caller measures the body and sends the limit.

/** Characters of JSON a page should hold at most (about 170 Nodes of 12 KB). */
export const PAGE_TARGET_CHARS = 2 * 2 ** 20;

/**
 * The limit for the next page: scaled down so the next page holds about `targetChars` when the
 * last one held more; doubled back toward `maxLimit` when the last held under half of it; never
 * below 1 or above `maxLimit`.
 */
export function nextPageLimit(limit: number, maxLimit: number, bodyChars: number, targetChars = PAGE_TARGET_CHARS): number {
  let next = limit;
  if (bodyChars > targetChars) next = Math.floor((limit * targetChars) / bodyChars);
  else if (bodyChars < targetChars / 2) next = limit * 2;
  return Math.max(1, Math.min(maxLimit, next));
}
