// The metrics and health endpoints: /metrics (a prom-client Registry passed in), /livez, /readyz and
// /healthz with named checks, answering like Kubernetes components ("ok", or "[+]/[-]" lines with
// ?verbose or on failure). Port 0 turns the server off. With `tls` it serves HTTPS; a `guard`
// (src/serving/server.ts) checks each request before it is served.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { silentLogger, type Logger } from '../log.js';
import type { RequestGuard } from './server.js';

/** A named check; it fails by throwing (the message is shown) or returning a failure string. */
export interface HealthCheck {
  name: string;
  check(): void | string | Promise<void | string>;
}

export type HealthEndpoint = 'livez' | 'readyz';

export interface HealthServerOptions {
  /** Address to bind, e.g. 127.0.0.1, or 0.0.0.0 / :: for every interface of both families (default 127.0.0.1). */
  address?: string;
  /** TCP port; 0 turns the server off; 'ephemeral' lets the OS pick (tests). */
  port: number | 'ephemeral';
  registry: Registry;
  livez?: HealthCheck[];
  readyz?: HealthCheck[];
  /** A check slower than this fails (default 5000 ms). */
  checkTimeoutMs?: number;
  logger?: Logger;
  /** Serve HTTPS with this PEM certificate and key (default: plain HTTP). */
  tls?: { cert: string; key: string };
  /** Authentication and authorization of each request (default: none). */
  guard?: RequestGuard;
}

interface CheckResult {
  name: string;
  ok: boolean;
  detail?: string;
}

async function runCheck(c: HealthCheck, timeoutMs: number): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      Promise.resolve().then(() => c.check()),
      new Promise<string>((resolve) => { timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs); }),
    ]);
    return typeof result === 'string' ? { name: c.name, ok: false, detail: result } : { name: c.name, ok: true };
  } catch (err) {
    return { name: c.name, ok: false, detail: err instanceof Error ? err.message : String(err) };
  } finally {
    if (timer) clearTimeout(timer);
  }
}

export class HealthServer {
  readonly #server: http.Server | https.Server;
  readonly #guard: RequestGuard | undefined;
  readonly #checks: Record<HealthEndpoint, HealthCheck[]>;
  readonly #registry: Registry;
  readonly #timeoutMs: number;
  readonly #log: Logger;
  #url = '';

  private constructor(options: HealthServerOptions) {
    this.#registry = options.registry;
    this.#checks = { livez: [...(options.livez ?? [])], readyz: [...(options.readyz ?? [])] };
    this.#timeoutMs = options.checkTimeoutMs ?? 5000;
    this.#log = options.logger ?? silentLogger;
    this.#guard = options.guard;
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      this.#handle(req, res).catch((err: unknown) => {
        this.#log.error({ err, url: req.url }, 'health endpoint failed');
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('internal error\n');
      });
    };
    this.#server = options.tls ? https.createServer({ cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2' }, handler) : http.createServer(handler);
  }

  /** Starts listening; resolves to undefined when the port is 0 (off). */
  static async start(options: HealthServerOptions): Promise<HealthServer | undefined> {
    if (options.port === 0) return undefined;
    const port = options.port === 'ephemeral' ? 0 : options.port;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`health port: must be 0..65535, got ${options.port}`);
    const s = new HealthServer(options);
    const address = options.address ?? '127.0.0.1';
    // An unspecified address (0.0.0.0 or ::) means every interface of both families, as Kubernetes
    // components' --bind-address does: listening without a host gives Node's dual-stack socket on
    // :: (IPv4 arrives mapped), or 0.0.0.0 where the host has no IPv6.
    const everyInterface = address === '0.0.0.0' || address === '::';
    await new Promise<void>((resolve, reject) => {
      s.#server.once('error', (err) => reject(new Error(`health server: cannot listen on ${address}:${port}: ${err.message}`, { cause: err })));
      if (everyInterface) s.#server.listen(port, () => resolve());
      else s.#server.listen(port, address, () => resolve());
    });
    const a = s.#server.address() as AddressInfo;
    s.#url = `${options.tls ? 'https' : 'http'}://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
    return s;
  }

  get url(): string {
    return this.#url;
  }

  addCheck(endpoint: HealthEndpoint, check: HealthCheck): void {
    this.#checks[endpoint].push(check);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const denial = await this.#guard?.(req);
    if (denial) {
      res.writeHead(denial.status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
      res.end(`${denial.message}\n`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('method not allowed\n');
      return;
    }
    if (url.pathname === '/metrics') {
      const body = await this.#registry.metrics();
      res.writeHead(200, { 'Content-Type': this.#registry.contentType });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    const [, endpoint, single] = url.pathname.split('/');
    let checks: HealthCheck[];
    if (endpoint === 'livez' || endpoint === 'readyz') checks = this.#checks[endpoint];
    // /healthz is /livez: liveness probes often point at it, and a follower that has not seen a
    // leader yet (a readyz failure) must not be restarted for that.
    else if (endpoint === 'healthz') checks = this.#checks.livez;
    else {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('not found\n');
      return;
    }
    if (single) {
      checks = checks.filter((c) => c.name === single);
      if (checks.length === 0) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`no check named ${JSON.stringify(single)}\n`);
        return;
      }
    }
    const results = await Promise.all(checks.map((c) => runCheck(c, this.#timeoutMs)));
    const ok = results.every((r) => r.ok);
    const verbose = url.searchParams.has('verbose');
    let body: string;
    if (ok && !verbose) body = 'ok\n';
    else {
      body = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.detail ?? 'reason withheld'}`)).join('\n') + '\n';
      body += ok ? `${endpoint} check passed\n` : `${endpoint} check failed\n`;
    }
    if (!ok) this.#log.info({ endpoint, failed: results.filter((r) => !r.ok) }, 'health check failed');
    res.writeHead(ok ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}

/** Live while `alive()` reports the expected number of running workers. */
export function workersCheck(name: string, alive: () => number, expected: number): HealthCheck {
  return {
    name,
    check: () => {
      const n = alive();
      if (n < expected) return `${n} of ${expected} workers running`;
    },
  };
}

/** Ready when this process leads or has seen who does (a follower connected to the API server). */
export function leaderElectionCheck(elector: { isLeader(): boolean; leader(): string }): HealthCheck {
  return {
    name: 'leader-election',
    check: () => {
      if (!elector.isLeader() && elector.leader() === '') return 'no leader observed yet';
    },
  };
}

/** Ready once the watcher's cache has synced. */
export function syncedCheck(name: string, watcher: { hasSynced(): boolean }): HealthCheck {
  return {
    name,
    check: () => {
      if (!watcher.hasSynced()) return 'cache not synced';
    },
  };
}
