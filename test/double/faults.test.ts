// Fault injection, counters, and restart of the double, observed through client-node.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { Faults, kubeConfigFor, startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { parseFaultPlan, parseFaultPlanText, type RequestInfo } from '../../src/double/faults.js';
import { eventually } from '../kit/wait.js';
import { collectWatch, expectStatus, fakeNode, rawRequest } from './target.js';

let s: ApiServerDouble;
let core: CoreV1Api;

beforeEach(async () => {
  s = await startApiServerDouble({ bookmarkIntervalMs: 50 });
  core = kubeConfigFor(s).makeApiClient(CoreV1Api);
});

afterEach(async () => {
  await s.stop();
});

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('fault injection', () => {
  it('answers injected 500, 409 and 429 (with Retry-After) as Status bodies, then stops after count', async () => {
    s.faults.inject({ verb: 'get', resource: 'nodes', status: 429, retryAfterSeconds: 7, count: 1 });
    s.store.create('nodes', fakeNode('a'));
    const res = await rawRequest(kubeConfigFor(s), 'GET', '/api/v1/nodes/a');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 7 } });
    expect((await core.readNode({ name: 'a' })).metadata?.name).toBe('a');

    const h409 = s.faults.inject({ verb: 'update', status: 409 });
    const n = await core.readNode({ name: 'a' });
    await expectStatus(core.replaceNode({ name: 'a', body: n }), 409, 'Conflict');
    expect(h409.fired).toBe(1);
    h409.remove();
    s.faults.inject({ verb: 'create', resource: 'nodes', status: 500 });
    await expectStatus(core.createNode({ body: fakeNode('b') as V1Node }), 500, 'InternalError');
    // The failed create did not happen.
    expect(s.store.list('nodes').map((x) => x.metadata?.name)).toEqual(['a']);
    s.faults.clear();
    await core.createNode({ body: fakeNode('b') as V1Node });
  });

  it('fails about errorRate of matching requests', async () => {
    s.store.create('nodes', fakeNode('a'));
    s.faults.inject({ verb: 'get', errorRate: 0.3, status: 500 });
    let failed = 0;
    for (let i = 0; i < 100; i++) {
      const r = await rawRequest(kubeConfigFor(s), 'GET', '/api/v1/nodes/a');
      if (r.status === 500) failed++;
    }
    expect(failed).toBeGreaterThan(12);
    expect(failed).toBeLessThan(50);
  });

  it('draws the same failures for the same seed', () => {
    const info = { verb: 'get' as const, resource: 'nodes', group: '', subresource: '', namespace: '', name: 'a', userAgent: '', user: 'admin' };
    const run = (seed: number): boolean[] => {
      const f = new Faults(seed);
      f.inject({ errorRate: 0.5 });
      return Array.from({ length: 64 }, () => f.decide(info).error !== undefined);
    };
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
  });

  it('adds latency per verb', async () => {
    s.store.create('nodes', fakeNode('a'));
    s.faults.inject({ verb: 'list', latencyMs: 150 });
    const t0 = Date.now();
    await core.readNode({ name: 'a' });
    const fast = Date.now() - t0;
    const t1 = Date.now();
    await core.listNode();
    expect(Date.now() - t1).toBeGreaterThanOrEqual(145);
    expect(fast).toBeLessThan(145);
  });

  it('apply-then-drop: the write happens, the response is lost', async () => {
    s.store.create('nodes', fakeNode('a'));
    s.faults.inject({ verb: 'patch', resource: 'nodes', dropResponse: true, count: 1 });
    await expect(core.patchNode({ name: 'a', body: { metadata: { labels: { dropped: 'but-written' } } } }, merge)).rejects.toThrow();
    expect(s.store.get('nodes', 'a').metadata?.labels?.dropped).toBe('but-written');
  });

  it('rejects fault specs that make no sense, naming the field', () => {
    expect(() => s.faults.inject({ errorRate: 2 })).toThrow(/errorRate/);
    expect(() => s.faults.inject({ status: 418 as 500 })).toThrow(/status/);
    expect(() => s.faults.inject({ verb: 'frobnicate' as 'get', latencyMs: 1 })).toThrow(/verb/);
    expect(() => s.faults.inject({ resource: 'nodes' })).toThrow(/at least one/);
  });
});

describe('fault plans (what --faults and the admin endpoint take)', () => {
  it.each([
    [[], /^plan: must be an object/],
    [{ rule: [] }, /^rule: unknown field \(known: seed, rules, blackout, watchCloses\)/],
    [{ seed: -1 }, /^seed: must be an integer ≥ 0, got -1/],
    [{ rules: {} }, /^rules: must be a list of rules/],
    [{ rules: ['x'] }, /^rules\[0\]: must be an object, got "x"/],
    [{ rules: [{ latencyMs: 1 }, { status: 418 }] }, /^rules\[1\]\.status: must be one of 409, 429, 500, 503, 504, got 418/],
    [{ rules: [{ errorrate: 0.5 }] }, /^rules\[0\]\.errorrate: unknown field \(known: verb, .*errorRate/],
    [{ rules: [{ errorRate: '0.5' }] }, /^rules\[0\]\.errorRate: must be a number, got "0.5"/],
    [{ rules: [{ verb: ['get', 'fetch'], status: 500 }] }, /^rules\[0\]\.verb: must be one of get, list/],
    [{ rules: [{ verb: [], status: 500 }] }, /^rules\[0\]\.verb: must be a verb or a non-empty list of verbs, got \[\]/],
    [{ rules: [{ resource: 'nodes' }] }, /^rules\[0\]: needs at least one of latencyMs/],
    [{ rules: [{ dropResponse: true, status: 500 }] }, /^rules\[0\]\.dropResponse: cannot be combined/],
    [{ blackout: true }, /^blackout: must be an object/],
    [{ blackout: { mode: 'refuse' } }, /^blackout\.mode: must be one of reset, hang, got "refuse"/],
    [{ blackout: { durationMs: 0 } }, /^blackout\.durationMs: must be a number > 0, got 0/],
    [{ blackout: { for: 3 } }, /^blackout\.for: unknown field/],
    [{ watchCloses: { everyMs: 10 } }, /^watchCloses\.everyMs: must be a number ≥ 50, got 10/],
    [{ watchCloses: { everyMs: 100, expireHistory: 'yes' } }, /^watchCloses\.expireHistory: must be a boolean, got "yes"/],
  ])('rejects %j, naming the field and the value', (raw, message) => {
    expect(() => parseFaultPlan(raw)).toThrow(message);
  });

  it('reads YAML and JSON alike; empty is no fault', () => {
    const yaml = 'seed: 3\nrules:\n  - verb: [update, patch]\n    resource: nodes\n    errorRate: 0.2\n    status: 503\nblackout: {mode: hang, durationMs: 500}\nwatchCloses: {everyMs: 1000, expireHistory: true}\n';
    const plan = { seed: 3, rules: [{ verb: ['update', 'patch'], resource: 'nodes', errorRate: 0.2, status: 503 }], blackout: { mode: 'hang', durationMs: 500 }, watchCloses: { everyMs: 1000, expireHistory: true } };
    expect(parseFaultPlanText(yaml)).toEqual(plan);
    expect(parseFaultPlanText(JSON.stringify(plan))).toEqual(plan);
    expect(parseFaultPlanText('')).toEqual({});
    expect(() => parseFaultPlanText('rules: [')).toThrow(/^plan: not valid YAML or JSON/);
  });

  it('applyPlan replaces every rule; a bad plan changes nothing', async () => {
    s.store.create('nodes', fakeNode('a'));
    s.faults.inject({ verb: 'get', status: 500 });
    s.faults.applyPlan({ rules: [{ verb: 'list', resource: 'nodes', status: 429, retryAfterSeconds: 0 }] });
    expect((await core.readNode({ name: 'a' })).metadata?.name).toBe('a');
    await expectStatus(core.listNode(), 429, 'TooManyRequests');
    expect(() => s.faults.applyPlan({ rules: [{ status: 418 as 500 }] })).toThrow(/rules\[0\]\.status/);
    await expectStatus(core.listNode(), 429, 'TooManyRequests');
    expect(s.faults.status().rules).toEqual([{ spec: { verb: 'list', resource: 'nodes', status: 429, retryAfterSeconds: 0 }, fired: 2 }]);
    // `fired` sums every rule of the plan, also those spent and removed.
    s.faults.applyPlan({ rules: [{ verb: 'get', resource: 'nodes', status: 500, count: 1 }] });
    await expectStatus(core.readNode({ name: 'a' }), 500, 'InternalError');
    expect(s.faults.status()).toMatchObject({ rules: [], fired: 1 });
    s.faults.applyPlan({});
    expect((await core.listNode()).items).toHaveLength(1);
  });

  it('a plan seed restarts the draws, so a session repeats', () => {
    const info: RequestInfo = { verb: 'get', resource: 'nodes', group: '', subresource: '', namespace: '', name: 'a', userAgent: '', user: 'admin' };
    const f = new Faults(99);
    const draws = (): boolean[] => Array.from({ length: 32 }, () => f.decide(info).error !== undefined);
    f.applyPlan({ seed: 5, rules: [{ errorRate: 0.5 }] });
    const first = draws();
    f.applyPlan({ seed: 5, rules: [{ errorRate: 0.5 }] });
    expect(draws()).toEqual(first);
  });

  it('blackout reset: every request is cut (health too), open watches end, and it ends by itself', async () => {
    s.store.create('nodes', fakeNode('a'));
    const w = await collectWatch(kubeConfigFor(s), '/api/v1/nodes', { resourceVersion: String(s.store.resourceVersion) });
    s.resetCounters();
    s.faults.applyPlan({ blackout: { durationMs: 400 } });
    await w.ended;
    await expect(core.readNode({ name: 'a' })).rejects.toThrow();
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow();
    expect(s.faults.status().blackout).toMatchObject({ mode: 'reset' });
    expect(s.count()).toBe(0);
    await eventually(async () => expect((await core.readNode({ name: 'a' })).metadata?.name).toBe('a'), { timeoutMs: 3000, intervalMs: 20 });
    expect(s.faults.status().blackout).toBeUndefined();
  });

  it('blackout hang: a request waits unanswered until the blackout ends, then its connection is cut', async () => {
    s.faults.applyPlan({ blackout: { mode: 'hang' } });
    const t0 = Date.now();
    const pending = fetch(`${s.url}/version`).then(() => 'answered', () => 'cut');
    setTimeout(() => s.faults.applyPlan({}), 300);
    expect(await pending).toBe('cut');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect((await fetch(`${s.url}/version`)).status).toBe(200);
  });

  it('watchCloses with expireHistory: streams are cut on schedule and a resume from the old resourceVersion gets 410', async () => {
    const rv = String(s.store.resourceVersion);
    s.store.create('nodes', fakeNode('a'));
    const w = await collectWatch(kubeConfigFor(s), '/api/v1/nodes', { resourceVersion: rv });
    s.faults.applyPlan({ watchCloses: { everyMs: 100, expireHistory: true } });
    await w.ended;
    const resumed = await collectWatch(kubeConfigFor(s), '/api/v1/nodes', { resourceVersion: rv });
    await resumed.ended;
    expect(resumed.events.at(-1)).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
    await eventually(() => expect(s.faults.status().watchCloses).toBeGreaterThanOrEqual(2), { timeoutMs: 3000 });
    s.faults.applyPlan({});
    const n = s.faults.status().watchCloses;
    // Longer than two of the plan's 100 ms periods: no close may come any more.
    await new Promise((r) => setTimeout(r, 250));
    expect(s.faults.status().watchCloses).toBe(n);
  });

  it('onRequest sees each authorized resource request as it arrives, with its user', async () => {
    const seen: RequestInfo[] = [];
    const off = s.onRequest((i) => seen.push(i));
    s.store.create('nodes', fakeNode('a'));
    await core.patchNode({ name: 'a', body: { metadata: { labels: { x: 'y' } } } }, merge);
    off();
    await core.readNode({ name: 'a' });
    expect(seen).toEqual([expect.objectContaining({ verb: 'patch', resource: 'nodes', name: 'a', user: 'admin' })]);
  });
});

describe('the admin endpoint', () => {
  const call = (method: string, path: string, token: string | undefined, body?: string) =>
    fetch(`${s.url}${path}`, { method, body, headers: token ? { Authorization: `Bearer ${token}` } : {} });

  it('reads and replaces the plan with the admin token; others get 401/403 and change nothing', async () => {
    const other = await startApiServerDouble({ users: [{ name: 'replica-0', token: 'r0' }] });
    try {
      expect((await call('GET', '/_double/faults', undefined)).status).toBe(401);
      const r0 = await fetch(`${other.url}/_double/faults`, { method: 'PUT', body: 'blackout: {}', headers: { Authorization: 'Bearer r0' } });
      expect(r0.status).toBe(403);
      expect(other.faults.status().blackout).toBeUndefined();
    } finally {
      await other.stop();
    }
    const put = await call('PUT', '/_double/faults', s.adminToken, 'rules:\n  - verb: get\n    resource: nodes\n    status: 503\n');
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ plan: { rules: [{ verb: 'get', resource: 'nodes', status: 503 }] }, rules: [{ fired: 0 }] });
    s.store.create('nodes', fakeNode('a'));
    await expectStatus(core.readNode({ name: 'a' }), 503, 'ServiceUnavailable');
    const got = (await (await call('GET', '/_double/faults', s.adminToken)).json()) as { rules: { fired: number }[] };
    expect(got.rules[0].fired).toBe(1);
    expect((await call('DELETE', '/_double/faults', s.adminToken)).status).toBe(200);
    expect((await core.readNode({ name: 'a' })).metadata?.name).toBe('a');
  });

  it('answers 400 naming the field for a bad plan, and keeps the plan in force', async () => {
    s.faults.applyPlan({ rules: [{ verb: 'list', status: 500 }] });
    const r = await call('PUT', '/_double/faults', s.adminToken, '{"rules":[{"verb":"list","status":"500"}]}');
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: 'fault plan rules[0].status: must be a number, got "500"' });
    expect(s.faults.status().plan).toEqual({ rules: [{ verb: 'list', status: 500 }] });
  });

  it('keeps answering during a blackout, which it can end; close-watches cuts streams on demand', async () => {
    s.faults.applyPlan({ blackout: {} });
    expect((await call('GET', '/_double/faults', s.adminToken)).status).toBe(200);
    expect((await call('DELETE', '/_double/faults', s.adminToken)).status).toBe(200);
    const w = await collectWatch(kubeConfigFor(s), '/api/v1/nodes', {});
    expect((await call('POST', '/_double/close-watches?expireHistory=maybe', s.adminToken)).status).toBe(400);
    expect((await call('POST', '/_double/close-watches?expireHistory=true', s.adminToken)).status).toBe(200);
    await w.ended;
    expect((await call('GET', '/_double/nothing', s.adminToken)).status).toBe(404);
  });
});

describe('watch control', () => {
  it('closeWatches ends streams; pause holds events back and resume delivers them in order', async () => {
    const rv = String(s.store.resourceVersion);
    const w = await collectWatch(kubeConfigFor(s), '/api/v1/nodes', { resourceVersion: rv });
    s.pauseWatches();
    s.store.create('nodes', fakeNode('p1'));
    s.store.create('nodes', fakeNode('p2'));
    // Time the events would need to arrive, were the watches not paused.
    await new Promise((r) => setTimeout(r, 100));
    expect(w.events).toEqual([]);
    s.resumeWatches();
    await w.waitFor((es) => es.length === 2);
    expect(w.events.map((e) => e.object.metadata?.name)).toEqual(['p1', 'p2']);
    expect(s.watchCount()).toBe(1);
    s.closeWatches();
    await w.ended;
    expect(s.watchCount()).toBe(0);
  });
});

describe('counters', () => {
  it('counts by verb, resource, subresource and user agent', async () => {
    s.store.create('nodes', fakeNode('a'));
    s.resetCounters();
    await core.readNode({ name: 'a' });
    await core.readNode({ name: 'a' });
    await core.patchNodeStatus({ name: 'a', body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } } }, merge);
    await fetch(`${s.url}/api/v1/nodes`, { headers: { 'User-Agent': 'bench-client/1', Authorization: `Bearer ${s.adminToken}` } });
    expect(s.count({ verb: 'get', resource: 'nodes' })).toBe(2);
    expect(s.count({ verb: 'patch', subresource: 'status' })).toBe(1);
    expect(s.count({ userAgent: 'bench-client' })).toBe(1);
    expect(s.counters()).toContainEqual({ verb: 'list', resource: 'nodes', group: '', subresource: '', userAgent: 'bench-client/1', count: 1 });
    s.resetCounters();
    expect(s.counters()).toEqual([]);
  });

  it('also counts answered requests by user and HTTP status (injected errors, 404, apply-then-drop, watch)', async () => {
    s.store.create('nodes', fakeNode('a'));
    s.resetCounters();
    await core.readNode({ name: 'a' });
    await expectStatus(core.readNode({ name: 'missing' }), 404, 'NotFound');
    s.faults.inject({ verb: 'get', resource: 'nodes', status: 429, count: 1 });
    await expectStatus(core.readNode({ name: 'a' }), 429, 'TooManyRequests');
    s.faults.inject({ verb: 'patch', resource: 'nodes', dropResponse: true, count: 1 });
    await expect(core.patchNode({ name: 'a', body: { metadata: { labels: { x: 'y' } } } }, merge)).rejects.toThrow();
    const anonymous = await fetch(`${s.url}/api/v1/nodes/a`, { headers: { 'User-Agent': 'anon/1' } });
    expect(anonymous.status).toBe(200);
    const w = await collectWatch(kubeConfigFor(s), '/api/v1/nodes', {});
    w.stop();

    expect(s.count({ verb: 'get', resource: 'nodes' })).toBe(4);
    expect(s.count({ verb: 'get', resource: 'nodes', code: 200 })).toBe(2);
    expect(s.count({ verb: 'get', resource: 'nodes', code: 404 })).toBe(1);
    expect(s.count({ verb: 'get', resource: 'nodes', code: 429 })).toBe(1);
    expect(s.count({ verb: 'get', user: 'system:anonymous' })).toBe(1);
    expect(s.count({ user: 'admin', verb: 'get', resource: 'nodes' })).toBe(3);
    // The dropped patch was applied: it counts with the status it would have answered.
    expect(s.count({ verb: 'patch', code: 200 })).toBe(1);
    expect(s.count({ verb: 'watch', code: 200, user: 'admin' })).toBe(1);
    expect(s.detailedCounters()).toContainEqual({ verb: 'get', resource: 'nodes', group: '', subresource: '', userAgent: 'anon/1', user: 'system:anonymous', code: 200, count: 1 });
    // The rows without user and code are unchanged.
    expect(s.counters().every((r) => !('user' in r) && !('code' in r))).toBe(true);
    s.resetCounters();
    expect(s.detailedCounters()).toEqual([]);
  });
});

describe('restart', () => {
  it('stops and restarts on the same port keeping state; watches resume from their resourceVersion', async () => {
    const port = s.port;
    await core.createNode({ body: fakeNode('kept') as V1Node });
    const w = await collectWatch(kubeConfigFor(s), '/api/v1/nodes', { resourceVersion: String(s.store.resourceVersion) });
    await s.stop();
    await w.ended;
    await expect(core.readNode({ name: 'kept' })).rejects.toThrow();
    const rv = String(s.store.resourceVersion);
    await s.restart();
    expect(s.port).toBe(port);
    expect((await core.readNode({ name: 'kept' })).metadata?.name).toBe('kept');
    const w2 = await collectWatch(kubeConfigFor(s), '/api/v1/nodes', { resourceVersion: rv });
    await core.deleteNode({ name: 'kept' });
    await w2.waitFor((es) => es.some((e) => e.type === 'DELETED'));
    w2.stop();
  });
});

describe('HTTPS', () => {
  it('serves client-node over TLS with a self-signed certificate the kubeconfig trusts', async () => {
    const tls = await startApiServerDouble({ tls: true });
    try {
      expect(tls.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(tls.kubeconfig).toContain('certificate-authority-data:');
      expect(tls.kubeconfig).not.toContain('insecure-skip-tls-verify');
      const kc = kubeConfigFor(tls);
      const api = kc.makeApiClient(CoreV1Api);
      await api.createNode({ body: fakeNode('secure') as V1Node });
      const w = await collectWatch(kc, '/api/v1/nodes', {});
      await w.waitFor((es) => es.some((e) => e.object.metadata?.name === 'secure'));
      w.stop();
      // Without the CA, the certificate is refused.
      await expect(fetch(`${tls.url}/version`)).rejects.toThrow();
    } finally {
      await tls.stop();
    }
  });
});

describe('slow watchers', () => {
  it('ends the stream of a watcher that stops reading once its backlog passes the limit', async () => {
    const small = await startApiServerDouble({ maxWatchBufferBytes: 64 * 1024 });
    try {
      const { request } = await import('node:http');
      const req = request(`${small.url}/api/v1/nodes?watch=true&resourceVersion=${small.store.resourceVersion}`, { headers: { Authorization: `Bearer ${small.adminToken}` } }, (res) => {
        res.pause(); // never reads
      });
      req.on('error', () => undefined);
      req.end();
      await eventually(() => small.watchCount() === 1, { what: 'the watch open' });
      const big = 'x'.repeat(4096);
      for (let i = 0; i < 2000 && small.watchCount() > 0; i++) {
        small.store.create('nodes', { metadata: { name: `slow-${i}`, annotations: { big } } });
        if (i % 100 === 0) await new Promise((r) => setTimeout(r, 5));
      }
      // A reading watcher would have taken all 2,000 events; this one was cut off early.
      expect(small.watchCount()).toBe(0);
      expect(small.store.list('nodes').length).toBeLessThan(2000);
      req.destroy();
    } finally {
      await small.stop();
    }
  });
});
