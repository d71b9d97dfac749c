// The watcher against the API server double: real paging, bookmarks, compaction and restarts.
import { describe, it, expect, afterEach } from 'vitest';
import { startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { NODES, type KubeObject } from '../../src/kube/types.js';
import { Watcher } from '../../src/kube/watcher.js';
import { newNode } from '../kit/nodes.js';
import { eventually } from '../kit/wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const nodeObj = (name: string) => newNode({ name, labels: { pool: 'a' } });

async function setup(opts: { bookmarkIntervalMs?: number; staleAfterMs?: number } = {}) {
  const api = await startApiServerDouble({ bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 100 });
  const client = new KubeClient(kubeConfigFromString(api.kubeconfig), { readTimeoutMs: 2000 });
  const w = new Watcher<KubeObject>({
    client,
    resource: NODES,
    pageSize: 500,
    staleAfterMs: opts.staleAfterMs ?? 5000,
    backoff: { initialMs: 20, maxMs: 200 },
  });
  const log: string[] = [];
  w.on('add', (o) => log.push(`add ${o.metadata.name}`));
  w.on('update', (o) => log.push(`update ${o.metadata.name}`));
  w.on('delete', (o, i) => log.push(`delete ${o.metadata.name}${i.finalStateUnknown ? ' (unknown)' : ''}`));
  w.on('relist', (r) => log.push(`relist ${r}`));
  cleanups.push(() => api.stop(), () => client.close(), () => w.stop());
  return { api, client, w, log };
}

const watches = (api: ApiServerDouble) => api.count({ verb: 'watch', resource: 'nodes' });

describe('Watcher against the API server double', () => {
  it('lists 1200 nodes in pages of 500 and then follows changes', async () => {
    const { api, client, w, log } = await setup();
    for (let i = 0; i < 1200; i++) api.store.create('nodes', nodeObj(`n${String(i).padStart(4, '0')}`));
    w.start();
    await w.synced;
    expect(w.size()).toBe(1200);
    expect(api.count({ verb: 'list', resource: 'nodes' })).toBe(3);
    await eventually(() => api.watchCount() === 1, { timeoutMs: 8000, what: 'watch open' });
    await client.create(NODES, nodeObj('new'));
    await client.patch(NODES, 'n0000', { metadata: { labels: { pool: 'b' } } }, 'merge');
    await client.delete(NODES, 'n0001');
    await eventually(() => log.length === 1203, { timeoutMs: 8000, what: 'three events' });
    expect(log.slice(1200)).toEqual(['add new', 'update n0000', 'delete n0001']);
    expect(w.get('n0000')?.metadata.labels).toEqual({ pool: 'b' });
  });

  it('relists after compaction (410) and reports what changed meanwhile', async () => {
    const { api, client, w, log } = await setup({ bookmarkIntervalMs: 60_000 });
    for (const n of ['a', 'b', 'c']) api.store.create('nodes', nodeObj(n));
    w.start();
    await w.synced;
    await eventually(() => api.watchCount() === 1, { timeoutMs: 8000, what: 'watch open' });
    api.pauseWatches();
    await client.patch(NODES, 'a', { metadata: { labels: { pool: 'z' } } }, 'merge');
    await client.delete(NODES, 'b');
    await client.create(NODES, nodeObj('d'));
    api.compactHistory();
    api.closeWatches();
    api.resumeWatches();
    await eventually(() => w.get('d') !== undefined && w.get('b') === undefined, { timeoutMs: 8000, what: 'relisted cache' });
    expect(log).toContain('relist watch expired (410 Gone)');
    expect(log.slice(log.indexOf('relist watch expired (410 Gone)') + 1)).toEqual(['delete b (unknown)', 'update a', 'add d']);
    expect(w.get('a')?.metadata.labels).toEqual({ pool: 'z' });
  });

  it('a relist that finds a name with a new UID reports the old object deleted and the new one added, deletes first', async () => {
    const { api, client, w, log } = await setup({ bookmarkIntervalMs: 60_000 });
    for (const n of ['a', 'b']) api.store.create('nodes', nodeObj(n));
    w.start();
    await w.synced;
    const oldUid = w.get('a')?.metadata.uid;
    await eventually(() => api.watchCount() === 1, { timeoutMs: 8000, what: 'watch open' });
    api.pauseWatches();
    // "a" deleted and created again under its name while the watch was down; "b" only changed.
    await client.delete(NODES, 'a');
    await client.create(NODES, nodeObj('a'));
    await client.patch(NODES, 'b', { metadata: { labels: { pool: 'z' } } }, 'merge');
    api.compactHistory();
    api.closeWatches();
    api.resumeWatches();
    await eventually(() => w.get('a')?.metadata.uid !== oldUid, { timeoutMs: 8000, what: 'relisted cache' });
    expect(log.slice(log.indexOf('relist watch expired (410 Gone)') + 1)).toEqual(['delete a (unknown)', 'add a', 'update b']);
    expect(w.get('a')?.metadata.uid).toBe((api.store.peek('nodes', 'a') as KubeObject).metadata.uid);
  });

  it('bookmarks from the server keep the watch; a silent watch is restarted', async () => {
    const { api, w } = await setup({ bookmarkIntervalMs: 50, staleAfterMs: 300 });
    w.start();
    await w.synced;
    await eventually(() => api.watchCount() === 1, { timeoutMs: 8000, what: 'watch open' });
    // Twice the stale limit: only the bookmarks keep the watch from being restarted.
    await new Promise((r) => setTimeout(r, 700));
    expect(watches(api)).toBe(1);
    api.pauseWatches();
    await eventually(() => watches(api) >= 2, { timeoutMs: 3000, what: 'watch restarted' });
    api.resumeWatches();
  });

  it('survives an API server restart and catches up', async () => {
    const { api, client, w, log } = await setup();
    api.store.create('nodes', nodeObj('a'));
    w.start();
    await w.synced;
    await eventually(() => api.watchCount() === 1, { timeoutMs: 8000, what: 'watch open' });
    const errors: unknown[] = [];
    w.on('error', (e) => errors.push(e));
    await api.stop();
    await eventually(() => errors.length > 0, { timeoutMs: 8000, what: 'the watcher reports the outage' });
    await api.restart();
    await eventually(() => api.watchCount() === 1, { timeoutMs: 8000, what: 'watch reopened' });
    await client.create(NODES, nodeObj('b'));
    await eventually(() => w.get('b') !== undefined, { timeoutMs: 8000, what: 'event after restart' });
    expect(errors.length).toBeGreaterThan(0);
    expect(log).toEqual(['add a', 'add b']);
  });

  it('reports a connection problem while the API server is away, and none once it is back', async () => {
    const { api, client, w } = await setup();
    w.start();
    await w.synced;
    expect(w.connectionProblem()).toBeUndefined();
    await eventually(() => api.watchCount() === 1, { timeoutMs: 8000, what: 'watch open' });
    await api.stop();
    await eventually(() => w.connectionProblem() !== undefined, { timeoutMs: 8000, what: 'a connection problem' });
    await api.restart();
    await eventually(() => api.watchCount() === 1, { timeoutMs: 8000, what: 'watch reopened' });
    await client.create(NODES, nodeObj('b'));
    await eventually(() => w.get('b') !== undefined, { timeoutMs: 8000, what: 'event after restart' });
    expect(w.connectionProblem()).toBeUndefined();
  });

  it('waitForResourceVersion: true once a bookmark passes a quorum read made after writes to other resources; false when it cannot tell', async () => {
    const { api, client, w } = await setup({ bookmarkIntervalMs: 100 });
    api.store.create('nodes', nodeObj('a'));
    w.start();
    await w.synced;
    // Writes elsewhere move the store's version past every node event: only a bookmark carries the watch there.
    for (let i = 0; i < 3; i++) api.store.create('configmaps', { metadata: { name: `cm${i}` }, data: {} }, 'default');
    const quorum = (await client.list(NODES, { limit: 1 })).metadata?.resourceVersion ?? '';
    expect(BigInt(quorum)).toBeGreaterThan(BigInt(w.resourceVersion));
    expect(await w.waitForResourceVersion(quorum, 5000)).toBe(true);
    expect(BigInt(w.resourceVersion)).toBeGreaterThanOrEqual(BigInt(quorum));
    // Already there: at once. Not comparable, aborted or out of time: false (the caller lists instead).
    expect(await w.waitForResourceVersion(quorum, 0)).toBe(true);
    expect(await w.waitForResourceVersion('opaque-v1', 5000)).toBe(false);
    const ahead = String(BigInt(quorum) + 1000n);
    expect(await w.waitForResourceVersion(ahead, 200)).toBe(false);
    const aborted = new AbortController();
    const waiting = w.waitForResourceVersion(ahead, 60_000, aborted.signal);
    aborted.abort();
    expect(await waiting).toBe(false);
  });

  it('waitForResourceVersion: a held-back watch never reads as current', async () => {
    const { api, client, w } = await setup({ bookmarkIntervalMs: 50 });
    w.start();
    await w.synced;
    api.pauseWatches();
    api.store.create('nodes', nodeObj('late'));
    const quorum = (await client.list(NODES, { limit: 1 })).metadata?.resourceVersion ?? '';
    expect(await w.waitForResourceVersion(quorum, 300)).toBe(false);
    expect(w.get('late')).toBeUndefined();
    api.resumeWatches();
    expect(await w.waitForResourceVersion(quorum, 5000)).toBe(true);
    expect(w.list().some((n) => n.metadata.name === 'late')).toBe(true);
  });
});
