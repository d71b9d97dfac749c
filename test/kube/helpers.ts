// A tiny scripted HTTP server on loopback for request-level client tests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Route = (req: Recorded, res: http.ServerResponse) => void;

export async function startScriptedServer(route: Route): Promise<{ url: string; requests: Recorded[]; stop(): Promise<void> }> {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { body += c; });
    req.on('end', () => {
      const rec = { method: req.method ?? '', url: new URL(req.url ?? '/', 'http://x'), headers: req.headers, body };
      requests.push(rec);
      route(rec, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stop: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

export function kubeconfigFor(server: string, token = 'secret-token'): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ${server}
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: ${token}
contexts:
- name: ctx
  context: { cluster: c, user: u }
current-context: ctx
`;
}

export function sendJson(res: http.ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

interface Obj {
  metadata: { name: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/**
 * A scripted list+watch endpoint for one cluster-scoped collection: tests change objects and
 * decide what open watches see (events, bookmarks, 410 errors, silence, dropped connections).
 */
export class ScriptedCollection {
  rv = 100;
  readonly objects = new Map<string, Obj>();
  readonly watches = new Set<http.ServerResponse>();
  /** Watches asking for a resourceVersion below this get 410 Gone. */
  minWatchRv = 0;
  lists = 0;
  watchRequests: string[] = [];
  /** When false, watch events are not delivered (a silent, hung watch). */
  deliver = true;

  readonly route: Route = (req, res) => {
    if (req.url.searchParams.get('watch') === 'true') {
      const from = Number(req.url.searchParams.get('resourceVersion') ?? '0');
      this.watchRequests.push(String(from));
      if (from < this.minWatchRv) {
        sendJson(res, 410, { kind: 'Status', code: 410, reason: 'Expired', message: `too old resource version: ${from}` });
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders();
      this.watches.add(res);
      res.on('close', () => this.watches.delete(res));
      return;
    }
    this.lists++;
    const limit = Number(req.url.searchParams.get('limit') ?? '0');
    const all = [...this.objects.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const start = Number(req.url.searchParams.get('continue') ?? '0');
    const page = limit > 0 ? all.slice(start, start + limit) : all;
    const next = limit > 0 && start + limit < all.length ? String(start + limit) : undefined;
    sendJson(res, 200, { metadata: { resourceVersion: String(this.rv), continue: next }, items: page });
  };

  #send(type: string, object: unknown): void {
    if (!this.deliver) return;
    for (const w of this.watches) w.write(JSON.stringify({ type, object }) + '\n');
  }

  put(name: string, extra: Record<string, unknown> = {}): Obj {
    const existed = this.objects.has(name);
    const obj: Obj = { apiVersion: 'v1', kind: 'Node', metadata: { name, resourceVersion: String(++this.rv) }, ...extra };
    this.objects.set(name, obj);
    this.#send(existed ? 'MODIFIED' : 'ADDED', obj);
    return obj;
  }

  /** Changes an object without telling watchers (as if the event was lost to compaction). */
  putQuietly(name: string, extra: Record<string, unknown> = {}): void {
    this.objects.set(name, { apiVersion: 'v1', kind: 'Node', metadata: { name, resourceVersion: String(++this.rv) }, ...extra });
  }

  remove(name: string): void {
    const obj = this.objects.get(name);
    if (!obj) return;
    this.objects.delete(name);
    this.#send('DELETED', { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } });
  }

  bookmark(): void {
    this.#send('BOOKMARK', { kind: 'Node', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } });
  }

  /** Sends a 410 ERROR event on open watches and expires all older resourceVersions. */
  expire(): void {
    this.minWatchRv = this.rv;
    for (const w of this.watches) {
      w.write(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } }) + '\n');
      w.end();
    }
  }

  endWatches(): void {
    for (const w of this.watches) w.end();
  }

  dropWatches(): void {
    for (const w of this.watches) w.destroy();
  }
}
