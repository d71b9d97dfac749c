// A loopback HTTP proxy in front of the API server double that records every request with who
// made it (by bearer token), what it asked for (Kubernetes request attributes, parsed here
// independently of the double's router) and the status code it got. The double's own counters
// carry neither the user nor the response code; this does, so a test can prove "no 403".
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  user: string;
  method: string;
  path: string;
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** HTTP status (0 when the upstream connection failed). */
  status: number;
}

export interface RequestAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/**
 * kube-apiserver's request-info rules: /api/v1/… (core) and /apis/<group>/<version>/…, an optional
 * namespaces/<ns> scope, then resource[/name[/subresource]]; GET is get/list/watch by name and
 * ?watch, POST create, PUT update, PATCH patch, DELETE delete or deletecollection. Returns
 * undefined for non-resource paths (discovery, /version, /healthz).
 */
export function requestAttributes(method: string, rawUrl: string): RequestAttributes | undefined {
  const url = new URL(rawUrl, 'http://x');
  const parts = url.pathname.split('/').filter((p) => p !== '');
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1] as string;
    rest = parts.slice(3);
  } else return undefined;
  if (rest.length === 0) return undefined;
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1] as string;
    rest = rest.slice(2);
  }
  const [resource = '', name = '', subresource = ''] = rest;
  const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  let verb: string;
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = watch ? 'watch' : name ? 'get' : 'list';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name ? 'delete' : 'deletecollection';
      break;
    default:
      verb = method.toLowerCase();
  }
  return { verb, group, resource, subresource, namespace, name };
}

export interface RecordingProxy {
  readonly url: string;
  requests(): RecordedRequest[];
  stop(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1; `users` maps bearer tokens to user names. */
export async function startRecordingProxy(upstream: string, users: Record<string, string>): Promise<RecordingProxy> {
  const target = new URL(upstream);
  const log: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const auth = String(req.headers.authorization ?? '');
    const token = auth.match(/^Bearer\s+(\S+)$/i)?.[1];
    const user = token === undefined ? 'system:anonymous' : (users[token] ?? 'unknown-token');
    const attrs = requestAttributes(req.method ?? 'GET', req.url ?? '/');
    const entry: RecordedRequest | undefined = attrs ? { user, method: req.method ?? 'GET', path: req.url ?? '/', ...attrs, status: 0 } : undefined;
    if (entry) log.push(entry);
    const up = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host }, agent },
      (upRes) => {
        if (entry) entry.status = upRes.statusCode ?? 0;
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end();
    });
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => log.map((r) => ({ ...r })),
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      agent.destroy();
      await closed;
    },
  };
}
