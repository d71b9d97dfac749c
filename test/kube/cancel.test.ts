// Cancellation: a term's client (KubeClient.withSignal) ends every call it has in flight, rate
// limited or retried when its signal aborts, while the process client goes on; a relist waiter
// gives up at its signal while the watcher keeps retrying; abortable/linkSignals as a table.
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { TransportError } from '../../src/kube/errors.js';
import { TokenBucket } from '../../src/kube/token-bucket.js';
import { Watcher } from '../../src/kube/watcher.js';
import { NODES, type KubeObject } from '../../src/kube/types.js';
import { abortable, linkSignals } from '../../src/util/abort.js';
import { eventually } from '../kit/wait.js';

let api: ApiServerDouble | undefined;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await api?.stop();
  api = undefined;
});

async function client(options: ConstructorParameters<typeof KubeClient>[1] = {}): Promise<KubeClient> {
  api ??= await startApiServerDouble();
  const c = new KubeClient(kubeConfigFromString(api.kubeconfig), options);
  cleanups.push(() => c.close());
  return c;
}

const settledWithin = async <T>(p: Promise<T>, ms: number): Promise<{ ok: true; value: T } | { ok: false; err: unknown } | 'pending'> => {
  let t: NodeJS.Timeout | undefined;
  const r = await Promise.race([
    p.then((value) => ({ ok: true as const, value }), (err: unknown) => ({ ok: false as const, err })),
    new Promise<'pending'>((resolve) => (t = setTimeout(() => resolve('pending'), ms))),
  ]);
  clearTimeout(t);
  return r;
};

describe('KubeClient.withSignal: the client of one leadership term', () => {
  it('50 requests at once on one term raise no MaxListenersExceededWarning (seen at 100,000 nodes)', async () => {
    const root = await client();
    const term = new AbortController();
    const view = root.withSignal(term.signal);
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => { warnings.push(w); };
    process.on('warning', onWarning);
    cleanups.push(() => process.off('warning', onWarning));
    const lists = await Promise.all(Array.from({ length: 50 }, () => view.list(NODES)));
    expect(lists).toHaveLength(50);
    await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
  });

  it('aborting the term ends its requests in flight (aborted), the process client is unaffected', async () => {
    const root = await client();
    api!.faults.inject({ resource: 'nodes', verb: 'list', latencyMs: 30_000, userAgent: 'term' });
    const term = new AbortController();
    const view = new KubeClient(kubeConfigFromString(api!.kubeconfig), { userAgent: 'term' }).withSignal(term.signal);
    const listing = view.list(NODES);
    // In flight: the double has it (and holds it for the injected 30 s).
    await eventually(() => api!.count({ userAgent: 'term', verb: 'list', resource: 'nodes' }) === 1, { what: 'the list to arrive' });
    term.abort(new Error('leadership ended'));
    const r = await settledWithin(listing, 1000);
    expect(r).toMatchObject({ ok: false });
    expect((r as { err: unknown }).err).toBeInstanceOf(TransportError);
    expect(((r as { err: TransportError }).err).kind).toBe('aborted');
    // A view of an aborted term fails at once; the root client still answers.
    await expect(view.get(NODES, 'n1')).rejects.toMatchObject({ kind: 'aborted' });
    await expect(root.list(NODES)).resolves.toMatchObject({ items: [] });
    view.close();
  });

  it('shares the write gate with the process client and ends rate-limiter and 429 waits', async () => {
    const root = await client({ rateLimiter: new TokenBucket(0.01, 2) });
    const term = new AbortController();
    const view = root.withSignal(term.signal);
    root.setWriteGate(() => { throw new Error('fenced (test gate)'); });
    await expect(view.patch(NODES, 'n1', {}, 'merge')).rejects.toThrow('fenced (test gate)');
    root.setWriteGate(undefined);
    // The bucket's two tokens went to the refused write and the first read; the next waits ~100 s.
    await view.list(NODES);
    const waiting = view.list(NODES);
    // A moment for it to start waiting in the limiter (nothing outside the client shows it).
    await new Promise((r) => setTimeout(r, 50));
    term.abort(new Error('leadership ended'));
    expect(await settledWithin(waiting, 1000)).toMatchObject({ ok: false });
    // 429 with a long Retry-After: the retry wait ends with the term too.
    const term2 = new AbortController();
    const view2 = (await client()).withSignal(term2.signal);
    api!.faults.inject({ resource: 'nodes', verb: 'get', status: 429, retryAfterSeconds: 20 });
    const throttled = view2.get(NODES, 'n1');
    // Time for the 429 to come back and the client to start its 20 s wait (inside the client).
    await new Promise((r) => setTimeout(r, 100));
    term2.abort(new Error('SIGTERM'));
    expect(await settledWithin(throttled, 1000)).toMatchObject({ ok: false });
  });
});

describe('Watcher.relist(reason, signal)', () => {
  it('gives up waiting when the signal aborts while the API server fails lists; the watcher runs on', async () => {
    const c = await client();
    const w = new Watcher<KubeObject>({ client: c, resource: NODES, backoff: { initialMs: 50, maxMs: 200 } });
    w.start();
    cleanups.push(() => w.stop());
    await w.synced;
    const fault = api!.faults.inject({ resource: 'nodes', verb: 'list', status: 503 });
    const term = new AbortController();
    const relist = w.relist('test', term.signal);
    // Some failed lists' time: the relist must still be waiting.
    await new Promise((r) => setTimeout(r, 300));
    expect(await settledWithin(relist, 10)).toBe('pending');
    term.abort(new Error('leadership ended'));
    expect(await settledWithin(relist, 500)).toEqual({ ok: false, err: new Error('leadership ended') });
    // Once lists work again, another relist completes.
    fault.remove();
    await expect(w.relist('again')).resolves.toBeUndefined();
  });
});

describe('abortable and linkSignals', () => {
  it.each([
    ['resolves when the promise does first', false, 'value'],
    ['rejects with the reason when the signal aborts first', true, 'stop'],
  ])('%s', async (_name, abortFirst, expected) => {
    const ac = new AbortController();
    let resolve!: (v: string) => void;
    const p = abortable(new Promise<string>((r) => (resolve = r)), ac.signal);
    if (abortFirst) ac.abort(new Error('stop'));
    resolve('value');
    const r = await p.then((v) => v, (err: Error) => err.message);
    expect(r).toBe(expected);
  });

  it('an already aborted signal rejects at once; no signal passes the promise through', async () => {
    await expect(abortable(Promise.resolve(1), AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    await expect(abortable(Promise.resolve(1), undefined)).resolves.toBe(1);
  });

  it('linkSignals aborts with whichever input aborts, and unlink detaches it', () => {
    const a = new AbortController();
    const b = new AbortController();
    const l = linkSignals(a.signal, b.signal);
    b.abort('b');
    expect([l.signal?.aborted, l.signal?.reason]).toEqual([true, 'b']);
    const c = new AbortController();
    const d = new AbortController();
    const l2 = linkSignals(c.signal, d.signal);
    l2.unlink();
    c.abort('c');
    expect(l2.signal?.aborted).toBe(false);
    expect(linkSignals(undefined, d.signal).signal).toBe(d.signal);
  });
});
