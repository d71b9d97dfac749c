// The LIST page-size rule (pure), and what it does over HTTP: a LIST of large Nodes from the API
// server double asks for smaller pages after the first, and still returns every object once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { nextPageLimit, PAGE_TARGET_CHARS } from '../../src/kube/page-size.js';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { NODES } from '../../src/kube/types.js';
import { startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { realisticNode } from '../../src/simulation/realistic-node.js';

const MiB = 2 ** 20;

describe('nextPageLimit', () => {
  it.each<[string, number, number, number, number]>([
    ['a page of 500 large Nodes (6 MiB) scales down to the target', 500, 500, 6 * MiB, 166],
    ['a page at the target keeps its limit', 166, 500, 2 * MiB, 166],
    ['a page well under half the target doubles back', 100, 500, 0.5 * MiB, 200],
    ['never past the caller\'s page size', 400, 500, 0.1 * MiB, 500],
    ['small objects keep the page size', 500, 500, 0.4 * MiB, 500],
    ['an empty page (0 characters) doubles', 10, 500, 0, 20],
    ['one huge object still asks for one', 1, 500, 50 * MiB, 1],
    ['a page between half and the whole target keeps its limit', 100, 500, 1.5 * MiB, 100],
  ])('%s', (_what, limit, max, chars, want) => {
    expect(nextPageLimit(limit, max, chars)).toBe(want);
  });

  it('stays within [1, max], and the next page of objects of the same size holds no more than the target (or one object)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 5 * MiB }), (maxLimit, limit0, perObject) => {
        const limit = Math.min(limit0, maxLimit);
        const next = nextPageLimit(limit, maxLimit, limit * perObject);
        expect(next).toBeGreaterThanOrEqual(1);
        expect(next).toBeLessThanOrEqual(maxLimit);
        if (limit * perObject > PAGE_TARGET_CHARS) expect(next === 1 || next * perObject <= PAGE_TARGET_CHARS).toBe(true);
      }),
    );
  });
});

describe('listAll of large objects', () => {
  const N = 1200;
  const name = (i: number) => `big-${String(i).padStart(4, '0')}`;
  let api: ApiServerDouble;
  beforeAll(async () => {
    api = await startApiServerDouble();
    for (let i = 0; i < N; i++) {
      const n = realisticNode(name(i), { index: i });
      api.store.createRef('nodes', { ...n, metadata: { name: n.metadata.name, labels: n.metadata.labels, annotations: n.metadata.annotations } });
    }
  });
  afterAll(() => api.stop());

  it('asks for pages of about the target size after the first, and returns every Node once, in order', async () => {
    const client = new KubeClient(kubeConfigFromString(api.kubeconfig), { userAgent: 'page-size-test' });
    try {
      const { items } = await client.listAll(NODES, { pageSize: 500 });
      expect(items.map((n) => n.metadata.name)).toEqual(Array.from({ length: N }, (_, i) => name(i)));
      // The Nodes are all about one size: the first page asks for 500, every later one for what
      // fits the target by the first page's characters per Node.
      const perNode = JSON.stringify(api.store.peek('nodes', name(0))).length + 1;
      const later = Math.floor((500 * PAGE_TARGET_CHARS) / (500 * perNode));
      expect(later).toBeGreaterThan(100);
      expect(later).toBeLessThan(250);
      expect(api.count({ verb: 'list', resource: 'nodes', userAgent: 'page-size-test' })).toBe(1 + Math.ceil((N - 500) / later));
    } finally {
      client.close();
    }
  });
});
