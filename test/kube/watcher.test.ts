import { describe, it, expect, afterEach } from 'vitest';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { NODES, type KubeObject } from '../../src/kube/types.js';
import { StaleWatchError, Watcher, WatcherStoppedError } from '../../src/kube/watcher.js';
import { ScriptedCollection, kubeconfigFor, startScriptedServer } from './helpers.js';
import { eventually } from '../kit/wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: { staleAfterMs?: number; pageSize?: number } = {}) {
  const coll = new ScriptedCollection();
  const srv = await startScriptedServer(coll.route);
  const client = new KubeClient(kubeConfigFromString(kubeconfigFor(srv.url)));
  const log: string[] = [];
  const errors: unknown[] = [];
  const w = new Watcher<KubeObject>({
    client,
    resource: NODES,
    backoff: { initialMs: 10, maxMs: 50 },
    staleAfterMs: opts.staleAfterMs ?? 10_000,
    pageSize: opts.pageSize,
  });
  w.on('add', (o) => log.push(`add ${o.metadata.name}`));
  w.on('update', (o, old) => log.push(`update ${o.metadata.name} ${old.metadata.resourceVersion}->${o.metadata.resourceVersion}`));
  w.on('delete', (o, info) => log.push(`delete ${o.metadata.name}${info.finalStateUnknown ? ' (unknown)' : ''}`));
  w.on('synced', (i) => log.push(`synced ${i.initial ? 'initial' : 'again'} ${i.count}`));
  w.on('relist', (reason) => log.push(`relist ${reason}`));
  w.on('error', (err) => errors.push(err));
  cleanups.push(srv.stop, () => client.close(), () => w.stop());
  return { coll, srv, w, log, errors };
}

describe('Watcher', () => {
  it('lists in pages, syncs, then follows the watch from the list resourceVersion', async () => {
    const { coll, w, log } = await setup({ pageSize: 2 });
    for (const n of ['a', 'b', 'c']) coll.put(n);
    w.start();
    await w.synced;
    expect(w.hasSynced()).toBe(true);
    expect(w.list().map((o) => o.metadata.name).sort()).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['add a', 'add b', 'add c', 'synced initial 3']);
    await eventually(() => coll.watches.size === 1, { what: 'watch' });
    expect(coll.watchRequests).toEqual(['103']);
    coll.put('d');
    coll.put('a');
    coll.remove('b');
    await eventually(() => log.length === 7, { what: 'events' });
    expect(log.slice(4)).toEqual(['add d', 'update a 101->105', 'delete b']);
    expect(w.get('a')?.metadata.resourceVersion).toBe('105');
    expect(w.get('b')).toBeUndefined();
    expect(w.resourceVersion).toBe('106');
  });

  it('re-watches from the last resourceVersion (or bookmark) when the watch ends', async () => {
    const { coll, w } = await setup();
    coll.put('a');
    w.start();
    await eventually(() => coll.watches.size === 1, { what: 'watch' });
    coll.putQuietly('x'); // rv 102, never seen by the watch
    coll.bookmark();
    await eventually(() => w.resourceVersion === '102', { what: 'bookmark' });
    coll.endWatches();
    await eventually(() => coll.watchRequests.length === 2 && coll.watches.size === 1, { what: 're-watch' });
    expect(coll.watchRequests).toEqual(['101', '102']);
    expect(coll.lists).toBe(1);
  });

  it('relists on a 410 ERROR event and reports the differences', async () => {
    const { coll, w, log } = await setup();
    coll.put('a');
    coll.put('b');
    w.start();
    await eventually(() => coll.watches.size === 1, { what: 'watch' });
    coll.putQuietly('a');
    coll.objects.delete('b');
    coll.putQuietly('c');
    coll.expire();
    await eventually(() => log.includes('synced again 2'), { what: 'relist' });
    expect(log.slice(3)).toEqual(['relist watch expired (410 Gone)', 'delete b (unknown)', 'update a 101->103', 'add c', 'synced again 2']);
    expect(coll.lists).toBe(2);
    await eventually(() => coll.watches.size === 1, { what: 'watch after relist' });
    expect(coll.watchRequests.at(-1)).toBe('104');
  });

  it('relists on HTTP 410 when re-watching with an expired resourceVersion', async () => {
    const { coll, w, log } = await setup();
    coll.put('a');
    w.start();
    await eventually(() => coll.watches.size === 1, { what: 'watch' });
    coll.minWatchRv = 1000;
    coll.endWatches();
    await eventually(() => log.includes('synced again 1'), { what: 'relist' });
    // Still expired after the relist: further relists are spaced by the backoff, not a hot loop.
    // With 10 → 50 ms backoff about 7 lists fit in 300 ms; a hot loop would make hundreds.
    const before = coll.lists;
    await new Promise((r) => setTimeout(r, 300));
    expect(coll.lists - before).toBeGreaterThanOrEqual(1);
    expect(coll.lists - before).toBeLessThan(15);
    coll.minWatchRv = 0;
    await eventually(() => coll.watches.size === 1, { what: 'watch again' });
  });

  it('restarts a silent watch after staleAfterMs', async () => {
    const { coll, w, errors } = await setup({ staleAfterMs: 150 });
    coll.put('a');
    w.start();
    await eventually(() => coll.watches.size === 1, { what: 'watch' });
    coll.deliver = false;
    await eventually(() => coll.watchRequests.length >= 2, { what: 'restart' });
    expect(errors[0]).toBeInstanceOf(StaleWatchError);
    coll.deliver = true;
    coll.put('b');
    await eventually(() => w.get('b') !== undefined, { what: 'event after restart' });
  });

  it('bookmarks keep a quiet watch alive', async () => {
    const { coll, w } = await setup({ staleAfterMs: 200 });
    w.start();
    await eventually(() => coll.watches.size === 1, { what: 'watch' });
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, 80));
      coll.bookmark();
    }
    expect(coll.watchRequests).toHaveLength(1);
  });

  it('backs off and retries after the server drops connections or fails lists', async () => {
    const coll = new ScriptedCollection();
    let failLists = 2;
    const srv = await startScriptedServer((req, res) => {
      if (req.url.searchParams.get('watch') !== 'true' && failLists > 0) {
        failLists--;
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd down' }));
        return;
      }
      coll.route(req, res);
    });
    const client = new KubeClient(kubeConfigFromString(kubeconfigFor(srv.url)));
    const w = new Watcher<KubeObject>({ client, resource: NODES, backoff: { initialMs: 10, maxMs: 20 } });
    const errors: Array<{ err: unknown; retryInMs: number }> = [];
    w.on('error', (err, info) => errors.push({ err, retryInMs: info.retryInMs }));
    cleanups.push(srv.stop, () => client.close(), () => w.stop());
    coll.put('a');
    w.start();
    await w.synced;
    expect(errors).toHaveLength(2);
    expect(errors.every((e) => e.retryInMs >= 10 && e.retryInMs <= 24)).toBe(true);
    await eventually(() => coll.watches.size === 1, { what: 'watch' });
    coll.dropWatches();
    await eventually(() => coll.watchRequests.length === 2, { what: 're-watch after drop' });
    expect(coll.lists).toBe(1);
  });

  it('relist() re-reads and resolves when the cache matches', async () => {
    const { coll, w } = await setup();
    coll.put('a');
    w.start();
    await w.synced;
    coll.putQuietly('z');
    await w.relist('new leader');
    expect(w.get('z')).toBeDefined();
    expect(coll.lists).toBe(2);
  });

  it('relist() asked for during an in-flight list waits for a list that started after it', async () => {
    const coll = new ScriptedCollection();
    let listsArrived = 0;
    const srv = await startScriptedServer((req, res) => {
      if (req.url.searchParams.get('watch') === 'true') return coll.route(req, res);
      listsArrived++;
      setTimeout(() => coll.route(req, res), 100);
    });
    const client = new KubeClient(kubeConfigFromString(kubeconfigFor(srv.url)));
    const w = new Watcher<KubeObject>({ client, resource: NODES });
    cleanups.push(srv.stop, () => client.close(), () => w.stop());
    coll.put('a');
    w.start();
    await eventually(() => listsArrived === 1, { what: 'the first list in flight' });
    coll.putQuietly('b');
    await w.relist('wants b');
    expect(coll.lists).toBe(2);
    expect(w.get('b')).toBeDefined();
  });

  it('a throwing listener does not stop the watcher', async () => {
    const { coll, w } = await setup();
    w.on('add', () => { throw new Error('controller bug'); });
    w.start();
    await eventually(() => coll.watches.size === 1, { what: 'watch' });
    coll.put('a');
    coll.put('b');
    await eventually(() => w.size() === 2, { what: 'both added' });
  });

  it('stop before sync rejects synced; stop is idempotent', async () => {
    // Nothing listens on port 9 on loopback: every list fails, so the watcher never syncs.
    const client = new KubeClient(kubeConfigFromString(kubeconfigFor('http://127.0.0.1:9')));
    cleanups.push(() => client.close());
    const pending = new Watcher<KubeObject>({ client, resource: NODES });
    const errors: unknown[] = [];
    pending.on('error', (err) => errors.push(err));
    pending.start();
    await eventually(() => errors.length > 0, { what: 'a failed list' });
    await pending.stop();
    await pending.stop();
    await expect(pending.synced).rejects.toBeInstanceOf(WatcherStoppedError);
    expect(pending.hasSynced()).toBe(false);
  });

  it.each([
    [{ staleAfterMs: 0 }, 'staleAfterMs'],
    [{ pageSize: 0 }, 'pageSize'],
  ])('rejects %o naming %s', (opts, field) => {
    const client = new KubeClient(kubeConfigFromString(kubeconfigFor('http://127.0.0.1:9')));
    expect(() => new Watcher({ client, resource: NODES, ...opts })).toThrow(field);
  });
});
