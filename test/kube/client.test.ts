import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import diagnostics_channel from 'node:diagnostics_channel';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it, expect, afterEach } from 'vitest';
import { KubeClient, jsonPatchWithResourceVersion, kubeConfigFromFile, kubeConfigFromString } from '../../src/kube/client.js';
import { ApiError, FencedError, TransportError, isGone, isNotFound, writeOutcome } from '../../src/kube/errors.js';
import { NODES } from '../../src/kube/types.js';
import { TokenBucket } from '../../src/kube/token-bucket.js';
import { kubeconfigFor, sendJson, startScriptedServer, type Route } from './helpers.js';
import { makeNode } from '../kit/nodes.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(route: Route, options: ConstructorParameters<typeof KubeClient>[1] = {}) {
  const srv = await startScriptedServer(route);
  const client = new KubeClient(kubeConfigFromString(kubeconfigFor(srv.url)), options);
  cleanups.push(() => client.close(), srv.stop);
  return { srv, client };
}

const node = (name: string, resourceVersion = '1') => makeNode({ name, resourceVersion });

describe('kubeconfig loading', () => {
  it.each([
    ['not yaml: [', 'cannot parse'],
    ['apiVersion: v1\nclusters: []\ncontexts: []\nusers: []\ncurrent-context: nope\n', 'it names no cluster'],
    [kubeconfigFor('http://127.0.0.1:1').replace(/current-context: .*/, 'current-context: nope'), 'no cluster for current-context "nope"'],
    [kubeconfigFor('ftp://x'), 'server must be http(s)'],
  ])('rejects %j', (text, message) => {
    expect(() => kubeConfigFromString(text)).toThrow(message);
  });

  it('names a missing file', () => {
    expect(() => kubeConfigFromFile('/nonexistent/kubeconfig')).toThrow('--kubeconfig /nonexistent/kubeconfig: cannot read: no such file');
  });
});

describe('KubeClient requests', () => {
  it('authenticates through the kubeconfig and sends JSON', async () => {
    const { srv, client } = await setup((_req, res) => sendJson(res, 200, node('n1')));
    const got = await client.get(NODES, 'n1');
    expect(got.metadata.name).toBe('n1');
    expect(srv.requests[0]?.headers.authorization).toBe('Bearer secret-token');
    expect(srv.requests[0]?.headers['user-agent']).toBe('node-address-ccm');
    expect(srv.requests[0]?.url.pathname).toBe('/api/v1/nodes/n1');
  });

  it.each([
    ['merge', 'application/merge-patch+json'],
    ['json', 'application/json-patch+json'],
    ['strategic', 'application/strategic-merge-patch+json'],
  ] as const)('patch %s sets Content-Type %s and fieldManager', async (type, contentType) => {
    const { srv, client } = await setup((_req, res) => sendJson(res, 200, node('n1', '2')));
    const body = type === 'json' ? jsonPatchWithResourceVersion('1', [{ op: 'add', path: '/spec/podCIDR', value: '10.0.0.0/24' }]) : { status: { addresses: [] } };
    await client.patch(NODES, 'n1', body, type, { subresource: type === 'merge' ? 'status' : undefined });
    const req = srv.requests[0];
    expect(req?.method).toBe('PATCH');
    expect(req?.headers['content-type']).toBe(contentType);
    expect(req?.url.searchParams.get('fieldManager')).toBe('node-address-ccm');
    expect(JSON.parse(req?.body ?? '')).toEqual(body);
    if (type === 'json') expect(JSON.parse(req?.body ?? '')[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '1' });
  });

  it('turns a Status body into a typed ApiError', async () => {
    const { client } = await setup((_req, res) =>
      sendJson(res, 404, { kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, message: 'nodes "x" not found' }));
    const err = await client.get(NODES, 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(isNotFound(err)).toBe(true);
    expect((err as ApiError).message).toContain('nodes "x" not found');
  });

  it('a patch with discardResult reads its answer without parsing it; an error answer is still an ApiError', async () => {
    let calls = 0;
    const { client } = await setup((req, res) => {
      calls++;
      if (req.url.pathname.includes('conflict')) return sendJson(res, 409, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409, message: 'the object has been modified' });
      // Not JSON: only a client that parses the body notices.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('x'.repeat(20_000));
    });
    await expect(client.patch(NODES, 'n1', { metadata: { labels: { a: 'b' } } }, 'merge', { discardResult: true })).resolves.toBeUndefined();
    await expect(client.patch(NODES, 'n1', { metadata: { labels: { a: 'b' } } }, 'merge')).rejects.toThrow('response is not JSON');
    const err = await client.patch(NODES, 'conflict', {}, 'merge', { discardResult: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(409);
    expect((err as ApiError).message).toContain('the object has been modified');
    // The drained answers left the connection usable.
    await expect(client.patch(NODES, 'n2', {}, 'merge', { discardResult: true })).resolves.toBeUndefined();
    expect(calls).toBe(4);
  });

  it('a kept-alive connection the server reset before answering is a stale one: a read goes again on a fresh connection, once; a write does not', async () => {
    // Minimal HTTP/1.1 over TCP: the first request on each connection is answered (kept alive);
    // a second one on the same connection is reset unanswered, as a server that had just closed
    // the idle connection does.
    const bodies: string[] = [];
    let connections = 0;
    const server = net.createServer((sock) => {
      connections++;
      let served = 0;
      let buf = '';
      sock.on('data', (d) => {
        buf += d.toString();
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        bodies.push(buf.slice(end + 4, end + 4 + length));
        buf = '';
        if (served++ > 0) {
          sock.resetAndDestroy();
          return;
        }
        const json = JSON.stringify(node('n1', String(bodies.length)));
        sock.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\nConnection: keep-alive\r\n\r\n${json}`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new KubeClient(kubeConfigFromString(kubeconfigFor(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`)));
    cleanups.push(() => client.close(), () => new Promise<void>((r) => server.close(() => r())));
    await client.get(NODES, 'n1');
    // Sent on the kept-alive connection, reset there, sent again on a new one: it succeeds.
    const second = await client.get(NODES, 'n1');
    expect(second.metadata.resourceVersion).toBe('3');
    expect(connections).toBe(2);
    // A write on the kept-alive connection, reset there: not sent again, its outcome unknown.
    const err = await client.patch(NODES, 'n1', { a: 2 }, 'merge').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).staleConnection).toBe(true);
    expect(writeOutcome(err)).toBe('unknown');
    expect(bodies).toEqual(['', '', '', '{"a":2}']);
    expect(connections).toBe(2);
  });

  it('a reset on a fresh connection is no stale one: the write fails, its outcome not known', async () => {
    const server = net.createServer((sock) => {
      sock.once('data', () => sock.resetAndDestroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    let accepted = 0;
    server.on('connection', () => accepted++);
    const client = new KubeClient(kubeConfigFromString(kubeconfigFor(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`)));
    cleanups.push(() => client.close(), () => new Promise<void>((r) => server.close(() => r())));
    const err = await client.patch(NODES, 'n1', { a: 1 }, 'merge').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).staleConnection).toBe(false);
    expect(writeOutcome(err)).toBe('unknown');
    expect(accepted).toBe(1);
  });

  it('reads the credentials once per second at most, and again right after a 401', async () => {
    // An exec credential plugin whose credential is already expired: client-node runs it on every
    // reading of the credentials. Each run hands out the next token: t1, t2, …
    const dir = mkdtempSync(path.join(tmpdir(), 'exec-cred-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const plugin = path.join(dir, 'cred.sh');
    const runs = path.join(dir, 'runs');
    writeFileSync(plugin, `#!/bin/sh\necho x >> ${runs}\nn=$(wc -l < ${runs} | tr -d ' ')\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t'$n'","expirationTimestamp":"2000-01-01T00:00:00Z"}}'\n`);
    chmodSync(plugin, 0o755);
    let refuse = '';
    const srv = await startScriptedServer((req, res) => {
      if (req.headers.authorization === `Bearer ${refuse}`) return sendJson(res, 401, { kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401, message: 'Unauthorized' });
      sendJson(res, 200, node('n1'));
    });
    const kubeconfig = kubeconfigFor(srv.url).replace('    token: secret-token', `    exec: { apiVersion: client.authentication.k8s.io/v1, command: ${plugin}, interactiveMode: Never }`);
    const client = new KubeClient(kubeConfigFromString(kubeconfig));
    cleanups.push(() => client.close(), srv.stop);
    // A burst: one reading.
    await Promise.all([1, 2, 3, 4, 5].map(() => client.get(NODES, 'n1')));
    await client.get(NODES, 'n1');
    // Refused: the next request reads the credentials again.
    refuse = 't1';
    expect(((await client.get(NODES, 'n1').catch((e: unknown) => e)) as ApiError).code).toBe(401);
    await client.get(NODES, 'n1');
    // A second later, read again.
    await new Promise((r) => setTimeout(r, 1100));
    await client.get(NODES, 'n1');
    expect(srv.requests.map((r) => r.headers.authorization)).toEqual([...Array(6).fill('Bearer t1'), 'Bearer t1', 'Bearer t2', 'Bearer t3']);
  });

  it('times out a write whose answer never comes, with outcome unknown', async () => {
    const { client } = await setup(() => { /* never answers */ }, { writeTimeoutMs: 100 });
    const err = await client.patch(NODES, 'n1', {}, 'merge').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).kind).toBe('timeout');
    expect(writeOutcome(err)).toBe('unknown');
  });

  it('reports a refused connection as not applied', async () => {
    const srv = await startScriptedServer(() => {});
    const url = srv.url;
    await srv.stop();
    const client = new KubeClient(kubeConfigFromString(kubeconfigFor(url)));
    cleanups.push(() => client.close());
    const err = await client.patch(NODES, 'n1', {}, 'merge').catch((e: unknown) => e);
    expect((err as TransportError).kind).toBe('connection');
    expect(writeOutcome(err)).toBe('not-applied');
  });

  it('cancels on the caller signal', async () => {
    const { client } = await setup(() => {});
    const ac = new AbortController();
    const p = client.get(NODES, 'n1', { signal: ac.signal }).catch((e: unknown) => e);
    setTimeout(() => ac.abort(), 20);
    expect((await p as TransportError).kind).toBe('aborted');
  });

  it('write gate: refuses writes before sending, lets reads through, caps the timeout', async () => {
    let allowed = false;
    let leftMs = 50;
    const { srv, client } = await setup((req, res) => {
      if (req.method === 'GET') sendJson(res, 200, node('n1'));
      // writes hang so the capped timeout shows
    }, {
      writeTimeoutMs: 10_000,
      writeGate: () => {
        if (!allowed) throw new FencedError('not leading');
        return leftMs;
      },
    });
    const fenced = await client.patch(NODES, 'n1', {}, 'merge').catch((e: unknown) => e);
    expect(fenced).toBeInstanceOf(FencedError);
    expect(writeOutcome(fenced)).toBe('not-applied');
    expect(srv.requests).toHaveLength(0);
    await client.get(NODES, 'n1');
    allowed = true;
    const started = Date.now();
    const capped = await client.patch(NODES, 'n1', {}, 'merge').catch((e: unknown) => e);
    expect((capped as TransportError).kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5000);
    leftMs = 0;
    expect(await client.patch(NODES, 'n1', {}, 'merge').catch((e: unknown) => e)).toBeInstanceOf(FencedError);
  });

  it('write gate: asked again when the bytes are about to leave, so a pause after the first ask cannot send an expired write', async () => {
    // The pause (a SIGSTOP, a frozen VM) is a busy wait while the write's connection is being
    // opened: the gate said yes just before, and its deadline passes during the pause.
    const { srv, client } = await setup((_req, res) => sendJson(res, 200, node('n1')), {
      writeTimeoutMs: 10_000,
      writeGate: () => {
        const left = deadline - Date.now();
        if (left <= 0) throw new FencedError('lease lost');
        return left;
      },
    });
    let deadline = Date.now() + 10_000;
    const pause = () => {
      deadline = Date.now() + 5;
      const until = Date.now() + 60;
      while (Date.now() < until) { /* paused */ }
    };
    const channel = diagnostics_channel.channel('net.client.socket');
    channel.subscribe(pause);
    try {
      const err = await client.patch(NODES, 'n1', {}, 'merge').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FencedError);
      expect(writeOutcome(err)).toBe('not-applied');
    } finally {
      channel.unsubscribe(pause);
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(srv.requests.filter((r) => r.method === 'PATCH')).toHaveLength(0);
  });

  it('listAll follows continue tokens', async () => {
    const { srv, client } = await setup((req, res) => {
      const cont = req.url.searchParams.get('continue');
      if (!cont) sendJson(res, 200, { metadata: { resourceVersion: '10', continue: 'p2' }, items: [node('a'), node('b')] });
      else sendJson(res, 200, { metadata: { resourceVersion: '10' }, items: [node('c')] });
    });
    // afterPage comes once per page, once its objects are transformed (the run process checks its heap budget there).
    const seen: string[][] = [];
    const got: string[] = [];
    const all = await client.listAll(NODES, { pageSize: 2, transform: (n) => (got.push(n.metadata.name), n), afterPage: () => seen.push([...got]) });
    expect(seen).toEqual([['a', 'b'], ['a', 'b', 'c']]);
    expect(all.items.map((n) => n.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(all.resourceVersion).toBe('10');
    expect(srv.requests.map((r) => [r.url.searchParams.get('limit'), r.url.searchParams.get('continue')])).toEqual([['2', null], ['2', 'p2']]);
  });
});

describe('KubeClient.watch', () => {
  it('ends quietly when its signal aborts before the stream opens (waiting for the rate limiter), as it does mid-stream', async () => {
    const { srv, client } = await setup((_req, res) => sendJson(res, 200, node('a')), { rateLimiter: new TokenBucket(0.01, 1) });
    await client.get(NODES, 'a'); // takes the only token: the watch waits for the next one
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const events: unknown[] = [];
    for await (const ev of client.watchResource(NODES, { signal: ac.signal })) events.push(ev);
    expect(events).toEqual([]);
    expect(srv.requests.map((r) => r.url.searchParams.get('watch'))).toEqual([null]);
  });

  it('yields events split across chunks and asks for bookmarks', async () => {
    const { srv, client } = await setup((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const text = [
        JSON.stringify({ type: 'ADDED', object: node('a', '11') }),
        JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '12' } } }),
        JSON.stringify({ type: 'DELETED', object: node('a', '13') }),
      ].join('\n') + '\n';
      res.write(text.slice(0, 30));
      setTimeout(() => res.end(text.slice(30)), 20);
    });
    const events = [];
    for await (const ev of client.watchResource(NODES, { resourceVersion: '10' })) events.push([ev.type, ev.object.metadata.resourceVersion]);
    expect(events).toEqual([['ADDED', '11'], ['BOOKMARK', '12'], ['DELETED', '13']]);
    const q = srv.requests[0]?.url.searchParams;
    expect([q?.get('watch'), q?.get('allowWatchBookmarks'), q?.get('resourceVersion')]).toEqual(['true', 'true', '10']);
  });

  it('throws a Gone ApiError for HTTP 410', async () => {
    const { client } = await setup((_req, res) => sendJson(res, 410, { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' }));
    const err = await (async () => {
      for await (const _ of client.watchResource(NODES, { resourceVersion: '1' })) { /* none */ }
    })().catch((e: unknown) => e);
    expect(isGone(err)).toBe(true);
  });

  it('ends quietly when the signal aborts', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200);
      res.write(JSON.stringify({ type: 'ADDED', object: node('a') }) + '\n');
    });
    const ac = new AbortController();
    const seen: string[] = [];
    for await (const ev of client.watchResource(NODES, { signal: ac.signal })) {
      seen.push(ev.object.metadata.name);
      ac.abort();
    }
    expect(seen).toEqual(['a']);
  });
});
