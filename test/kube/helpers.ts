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
