// The request line without a URL per request: for every path and query it is the line the URL
// the client used to build would give (server URL + path, each defined value set on its
// searchParams), so what reaches the API server is unchanged.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { requestPath, type Query } from '../../src/kube/request-path.js';
import { resourcePath } from '../../src/kube/types.js';

/** What the client sent before: a URL built for each request. */
function throughURL(server: URL, path: string, query: Query): string {
  const url = new URL(server.href.replace(/\/$/, '') + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  return `${url.pathname}${url.search}`;
}

const SERVERS = ['https://10.0.0.1:6443', 'https://api.example.com/', 'http://127.0.0.1:8080/k8s', 'https://[fd00::1]:6443/prefix/', 'https://h/a%20b/'].map((s) => new URL(s));

// Path characters the client builds, and ones a caller of request() might pass: escapes, dot
// segments (plain and escaped), spaces, '?', '#', backslashes, non-ASCII.
const pathChar = fc.constantFrom(...'abz09-._~!$&\'()*+,;=:@%/ ?#\\é"<>{}`|^[]'.split(''), '%2e', '%2E', '..', '.', '%20', '%2F');
const path = fc.array(fc.array(pathChar, { maxLength: 6 }).map((cs) => cs.join('')), { minLength: 1, maxLength: 5 }).map((segs) => '/' + segs.join('/'));
const query: fc.Arbitrary<Query> = fc.option(fc.dictionary(
  fc.constantFrom('labelSelector', 'fieldSelector', 'limit', 'continue', 'watch', 'fieldManager', 'resourceVersion', 'a b', 'k&=', 'é'),
  fc.option(fc.oneof(fc.string(), fc.integer(), fc.boolean()), { nil: undefined }),
), { nil: undefined });

describe('requestPath', () => {
  it('gives the line a URL per request gave, for any path and query', () => {
    fc.assert(fc.property(fc.constantFrom(...SERVERS), path, query, (server, p, q) => {
      expect(requestPath(server, p, q)).toBe(throughURL(server, p, q));
    }), { numRuns: 2000 });
  });

  it('the paths the client builds keep their query, prefix and escapes', () => {
    const nodes = { group: '', version: 'v1', plural: 'nodes', namespaced: false };
    const p = resourcePath(nodes, { name: 'n1', subresource: 'status' });
    expect(requestPath(new URL('https://h:6443/k8s/'), p, { fieldManager: 'node-address-ccm', dryRun: undefined })).toBe('/k8s/api/v1/nodes/n1/status?fieldManager=node-address-ccm');
    expect(requestPath(new URL('https://h:6443'), '/api/v1/nodes', { labelSelector: 'a in (x, y)', limit: 500 })).toBe('/api/v1/nodes?labelSelector=a+in+%28x%2C+y%29&limit=500');
    expect(requestPath(new URL('https://h:6443'), '/api/v1/nodes', {})).toBe('/api/v1/nodes');
    // Not plain: a URL normalises it as before.
    expect(requestPath(new URL('https://h:6443'), '/api/v1/../v1/nodes', undefined)).toBe('/api/v1/nodes');
  });
});
