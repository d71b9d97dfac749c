// The path and query line of a request to the API server. Node's http.request takes a URL apart
// into options on every call; building a URL per request and having it taken apart again was a
// tenth of a request's cost. A plain path (every path the client builds) needs neither.

/** A path WHATWG URL parsing leaves as it is: path characters only, no dot segments (plain or escaped). */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9\-._~!$&'()*+,;=:@%]*)+$/;
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|$)/i;

export type Query = Record<string, string | number | boolean | undefined> | undefined;

/**
 * `path` under the server URL's own path (e.g. a proxy at https://host/k8s), with the query's
 * defined values form-encoded as URLSearchParams does: the same line `new URL(server + path)`
 * with each value set on its searchParams would give, without the URL for a plain path.
 */
export function requestPath(server: URL, path: string, query: Query): string {
  const params = new URLSearchParams();
  for (const k in query) {
    const v = query[k];
    if (v !== undefined) params.set(k, String(v));
  }
  if (PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path)) {
    return `${server.pathname.replace(/\/$/, '')}${path}${params.size > 0 ? `?${params}` : ''}`;
  }
  const url = new URL(server.href.replace(/\/$/, '') + path);
  for (const [k, v] of params) url.searchParams.set(k, v);
  return `${url.pathname}${url.search}`;
}
