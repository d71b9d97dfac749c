// KubeConfig loading and a thin JSON request layer over node:http(s). Authentication (tokens, token
// files, client certificates, exec plugins, CA) comes from client-node's KubeConfig; requests are sent
// here so every call has its own timeout and cancel signal, a write gate for fencing, typed errors
// and a streaming watch. (client-node 1.4.0's generated APIs take no per-call signal or timeout.)
import http from 'node:http';
import https from 'node:https';
import { dirname } from 'node:path';
import { setMaxListeners } from 'node:events';
import { KubeConfig } from '@kubernetes/client-node';
import { FencedError, TransportError, apiErrorFromResponse, type TransportErrorKind } from './errors.js';
import { resourcePath, type KubeList, type KubeObject, type ResourceType, type WatchEvent } from './types.js';
import { sleep } from '../util/sleep.js';
import { fileArgumentError } from '../util/file-argument.js';
import { KUBECONFIG_EXPECTED, readKubeconfigFile } from './kubeconfig-file.js';
import { linkSignals } from '../util/abort.js';
import type { TokenBucket } from './token-bucket.js';
import { nextPageLimit } from './page-size.js';
import { requestPath } from './request-path.js';

function checkConfig(kc: KubeConfig, source: string): KubeConfig {
  if (kc.getClusters().length === 0) throw new Error(`${source}: it names no cluster; expected a kubeconfig with clusters, contexts and users`);
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new Error(`${source}: no cluster for current-context ${JSON.stringify(kc.getCurrentContext() ?? '')}`);
  }
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new Error(`${source}: cluster ${JSON.stringify(cluster.name)} has an invalid server URL ${JSON.stringify(cluster.server)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`${source}: cluster ${JSON.stringify(cluster.name)} server must be http(s), got ${JSON.stringify(cluster.server)}`);
  }
  return kc;
}

/** Reads a kubeconfig file (relative certificate paths resolve against its directory). */
export function kubeConfigFromFile(path: string): KubeConfig {
  const text = readKubeconfigFile(path);
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
    kc.makePathsAbsolute(dirname(path));
  } catch (err) {
    // A YAML scalar or list reaches client-node's field reads as a TypeError: say what the file is not.
    const problem = err instanceof TypeError ? `not ${KUBECONFIG_EXPECTED}` : `cannot parse: ${(err as Error).message.split('\n')[0]}`;
    throw fileArgumentError('--kubeconfig', path, problem, err);
  }
  return checkConfig(kc, `--kubeconfig ${path}`);
}

/** Parses kubeconfig YAML text. */
export function kubeConfigFromString(yamlText: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(yamlText);
  } catch (err) {
    throw new Error(`kubeconfig: cannot parse YAML: ${(err as Error).message}`, { cause: err });
  }
  return checkConfig(kc, 'kubeconfig');
}

/** The pod's service account config (KUBERNETES_SERVICE_HOST/PORT, token and CA files). */
export function kubeConfigInCluster(): KubeConfig {
  if (!process.env.KUBERNETES_SERVICE_HOST || !process.env.KUBERNETES_SERVICE_PORT) {
    throw new Error('in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (not running in a pod?)');
  }
  const kc = new KubeConfig();
  kc.loadFromCluster();
  return checkConfig(kc, 'in-cluster config');
}

/** `--kubeconfig` if given, otherwise in-cluster. */
export function loadKubeConfig(options: { kubeconfig?: string } = {}): KubeConfig {
  return options.kubeconfig ? kubeConfigFromFile(options.kubeconfig) : kubeConfigInCluster();
}

/**
 * Checked before every write. Throws (normally a FencedError) when this process must not write;
 * may return the ms left before it must stop writing, which caps the request's timeout.
 */
export type WriteGate = () => number | void;

export const PATCH_CONTENT_TYPES = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
} as const;
export type PatchType = keyof typeof PATCH_CONTENT_TYPES;

export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

/** A JSON patch that applies only if the object is still at `resourceVersion` (optimistic concurrency). */
export function jsonPatchWithResourceVersion(resourceVersion: string, ops: JsonPatchOp[]): JsonPatchOp[] {
  if (!resourceVersion) throw new Error('resourceVersion: required for a guarded json patch');
  return [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, ...ops];
}

export interface KubeClientOptions {
  /** Timeout for reads in ms (default 30 000). */
  readTimeoutMs?: number;
  /** Timeout for writes in ms (default 4 000; keep it below leaseDuration − renewDeadline). */
  writeTimeoutMs?: number;
  writeGate?: WriteGate;
  userAgent?: string;
  /** fieldManager sent with writes (default node-address-ccm). */
  fieldManager?: string;
  /**
   * Client-side rate limit (--kube-api-qps/--kube-api-burst), shared by every client of the
   * process; none: unlimited. Leader-election calls (`ungated`) never wait on it.
   */
  rateLimiter?: TokenBucket;
  /** Called with the time each request waited for the rate limiter (rest_client_rate_limiter_duration_seconds). */
  onRateLimited?: (waitedMs: number, method: string) => void;
  /**
   * Called once per HTTP request sent, when its answer's headers arrive or it fails
   * (rest_client_requests_total, rest_client_request_duration_seconds): code is the status, or
   * "<error>" when none came.
   */
  onRequest?: (r: { method: string; host: string; code: string; seconds: number }) => void;
  /** Retries of a request answered 429 Too Many Requests, each after its Retry-After (default 10, as client-go). */
  throttledRetries?: number;
}

/** Longest Retry-After honoured before a 429 is retried (a larger value is capped, not obeyed blindly). */
const MAX_RETRY_AFTER_MS = 30_000;

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Overrides the read/write default timeout. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Skips the write gate and the rate limiter (leader election's own lease calls). */
  ungated?: boolean;
  /** Told the length (in characters) of a successful response's body, before it is parsed. */
  onBodyLength?: (chars: number) => void;
  /**
   * A write whose result the caller does not need: a successful answer is read to its end but
   * neither decoded nor parsed (a 12 KB Node is 300-odd objects of garbage), and the call
   * resolves to undefined. An error answer is parsed as always.
   */
  discardBody?: boolean;
}

export interface CallOptions {
  namespace?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Skips the write gate and the rate limiter (leader election's own lease calls). */
  ungated?: boolean;
}

export interface ListOptions extends CallOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions {
  namespace?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** Server-side watch timeout; the server ends the watch cleanly after it. */
  timeoutSeconds?: number;
  labelSelector?: string;
  fieldSelector?: string;
  /** Aborting ends the watch. */
  signal?: AbortSignal;
}

interface Connection {
  base: URL;
  /** What Node's urlToHttpOptions would take from `base` for every request, taken once. */
  target: { protocol: string; hostname: string; port?: number; auth?: string };
  headers: Record<string, string>;
  agent: http.Agent;
}

const USER_AGENT = 'node-address-ccm';
/** How long one reading of the kubeconfig's credentials serves requests (see #connection). */
const CONNECTION_TTL_MS = 1000;

type SendOnce = (
  method: string,
  path: string,
  query: RequestOptions['query'],
  body: unknown,
  contentType: string | undefined,
  /** A number, or a function asked at the last moment before sending (a gated write's time left). */
  timeoutMs: number | undefined | (() => number),
  signal: AbortSignal | undefined,
  /** What to do with a successful answer's body: read it as text, hand over the stream, or read and drop it. */
  answer: BodyHandling,
) => Promise<{ res: http.IncomingMessage; body: string | undefined; cancel: () => void }>;

type BodyHandling = 'text' | 'stream' | 'discard';

export class KubeClient {
  readonly #kc: KubeConfig;
  readonly #readTimeoutMs: number;
  readonly writeTimeoutMs: number;
  readonly #userAgent: string;
  readonly #fieldManager: string;
  readonly #options: KubeClientOptions;
  /** Shared with every withSignal() view: the fencing check and the keep-alive connections. */
  #shared: { gate: WriteGate | undefined; agent: http.Agent | undefined; connection: { promise: Promise<Connection>; at: number } | undefined };
  /** A view's signal: every request, watch and wait of this client ends when it aborts. */
  #signal: AbortSignal | undefined;
  readonly #limiter: TokenBucket | undefined;
  readonly #onRateLimited: ((waitedMs: number, method: string) => void) | undefined;
  readonly #onRequest: KubeClientOptions['onRequest'];
  readonly #throttledRetries: number;
  /** The host the request metrics name, with the server URL it was read from. */
  #host: { server: string; host: string } | undefined;

  constructor(kubeConfig: KubeConfig, options: KubeClientOptions = {}) {
    this.#kc = checkConfig(kubeConfig, 'kubeconfig');
    this.#readTimeoutMs = options.readTimeoutMs ?? 30_000;
    this.writeTimeoutMs = options.writeTimeoutMs ?? 4_000;
    for (const [field, v] of [['readTimeoutMs', this.#readTimeoutMs], ['writeTimeoutMs', this.writeTimeoutMs]] as const) {
      if (!Number.isFinite(v) || v <= 0) throw new Error(`${field}: must be a positive number of ms, got ${v}`);
    }
    this.#options = options;
    this.#shared = { gate: options.writeGate, agent: undefined, connection: undefined };
    this.#limiter = options.rateLimiter;
    this.#onRateLimited = options.onRateLimited;
    this.#onRequest = options.onRequest;
    this.#throttledRetries = options.throttledRetries ?? 10;
    this.#userAgent = options.userAgent ?? USER_AGENT;
    this.#fieldManager = options.fieldManager ?? USER_AGENT;
  }

  /** The API server URL. */
  get server(): string {
    return this.#kc.getCurrentCluster()?.server ?? '';
  }

  /** Installs (or removes) the fencing check run before every write (this client and its views). */
  setWriteGate(gate: WriteGate | undefined): void {
    this.#shared.gate = gate;
  }

  /**
   * A view of this client whose every request, watch, rate-limiter wait and 429 wait also ends
   * when `signal` aborts: the client of one leadership term, so that ending the term cancels
   * everything it had in flight. Connections, rate limiter, write gate and metrics are shared.
   */
  withSignal(signal: AbortSignal): KubeClient {
    const view = new KubeClient(this.#kc, this.#options);
    view.#shared = this.#shared;
    view.#signal = linkSignals(this.#signal, signal).signal;
    // Every request in flight listens on it (hundreds at once in a large cluster): that is the
    // design, not a leak, so Node's 10-listener warning is turned off for this signal.
    if (view.#signal) setMaxListeners(0, view.#signal);
    return view;
  }

  /** Closes idle keep-alive connections. In-flight requests are not affected. */
  close(): void {
    this.#shared.agent?.destroy();
    this.#shared.agent = undefined;
  }

  /**
   * The server URL, auth headers and agent for the next request. Credentials are read again at
   * most every CONNECTION_TTL_MS (token files rotate, exec credentials expire; client-go re-reads a
   * token file once a minute), and at once after a 401: client-node's applyToHTTPSOptions builds a
   * new agent and reads the credentials on every call, which a burst of writes would pay for each
   * write. Concurrent requests share one reading.
   */
  #connection(): Promise<Connection> {
    const cached = this.#shared.connection;
    const now = Date.now();
    if (cached && now - cached.at < CONNECTION_TTL_MS) return cached.promise;
    const promise = this.#readConnection();
    const entry = { promise, at: now };
    this.#shared.connection = entry;
    promise.catch(() => {
      if (this.#shared.connection === entry) this.#shared.connection = undefined;
    });
    return promise;
  }

  async #readConnection(): Promise<Connection> {
    const opts: https.RequestOptions = { headers: {} };
    // client-node reads the credentials anew (and builds an agent) on each call; #connection
    // calls this at most once per CONNECTION_TTL_MS.
    await this.#kc.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
    }
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    const cluster = this.#kc.getCurrentCluster();
    const base = new URL(cluster?.server ?? '');
    if (!this.#shared.agent) {
      if (cluster?.proxyUrl) {
        this.#shared.agent = opts.agent as http.Agent;
      } else if (base.protocol === 'http:') {
        this.#shared.agent = new http.Agent({ keepAlive: true });
      } else {
        // client-node builds a fresh non-keep-alive agent per call; reuse one with keep-alive instead.
        this.#shared.agent = new https.Agent({
          keepAlive: true,
          ca: opts.ca, cert: opts.cert, key: opts.key, pfx: opts.pfx, passphrase: opts.passphrase,
          servername: opts.servername,
          ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
        });
      }
    }
    const target: Connection['target'] = {
      protocol: base.protocol,
      hostname: base.hostname.startsWith('[') ? base.hostname.slice(1, -1) : base.hostname,
    };
    if (base.port !== '') target.port = Number(base.port);
    if (base.username || base.password) target.auth = `${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`;
    return { base, target, headers, agent: this.#shared.agent };
  }

  /** Sends one request and returns the parsed JSON body. Throws ApiError, TransportError or FencedError. */
  async request<T>(req: RequestOptions): Promise<T> {
    const { signal, unlink } = linkSignals(req.signal, this.#signal);
    try {
      return await this.#request<T>(signal ? { ...req, signal } : req);
    } finally {
      unlink();
    }
  }

  async #request<T>(req: RequestOptions): Promise<T> {
    const isWrite = req.method !== 'GET';
    const query = isWrite && req.method !== 'DELETE' ? { fieldManager: this.#fieldManager, ...req.query } : req.query;
    let text: string;
    let staleRetried = false;
    for (let attempt = 0; ; attempt++) {
      await this.#throttle(req);
      // The write gate is asked right before each send: a retry must not outlive the lease either.
      const baseTimeoutMs = req.timeoutMs ?? (isWrite ? this.writeTimeoutMs : this.#readTimeoutMs);
      const gate = this.#shared.gate;
      let timeoutMs: number | (() => number) = baseTimeoutMs;
      if (isWrite && gate && !req.ungated) {
        const gated = (): number => {
          const left = gate();
          if (typeof left !== 'number') return baseTimeoutMs;
          if (left <= 0) throw new FencedError(`${req.method} ${req.path}: write deadline passed`);
          return Math.min(baseTimeoutMs, left);
        };
        gated(); // fenced already: do not even wait for credentials
        // Asked again once the credentials are in hand (an exec plugin can take seconds): the
        // time left is what it is when the request goes out, not when it was queued.
        timeoutMs = gated;
      }
      let sent: Awaited<ReturnType<SendOnce>>;
      try {
        sent = await this.#send(req.method, req.path, query, req.body, req.contentType, timeoutMs, req.signal, req.discardBody ? 'discard' : 'text');
      } catch (err) {
        // A read on a connection the server had just closed as idle: send it again on a fresh one,
        // once. Writes are not sent again: the same reset can come after the server applied one
        // (a dropped answer), and only the caller can tell whether a second copy is harmless (Go's
        // transport replays only requests it knows to be idempotent, too).
        if (err instanceof TransportError && err.staleConnection && !staleRetried && req.method === 'GET') {
          staleRetried = true;
          attempt--;
          continue;
        }
        throw err;
      }
      const { res, body } = sent;
      text = body as string;
      if (res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode <= 299) {
        if (req.discardBody) return undefined as T;
        break;
      }
      // Refused credentials: the next request reads them again (a rotated token, an expired one).
      if (res.statusCode === 401) this.#shared.connection = undefined;
      const err = apiErrorFromResponse(req.method, req.path, res.statusCode ?? 0, text, res.headers['retry-after'] as string | undefined);
      // API Priority and Fairness rejected the request before running it: wait as told and send it
      // again, as client-go does, instead of failing the node's sync.
      if (err.code !== 429 || attempt >= this.#throttledRetries) throw err;
      await sleep(Math.min((err.retryAfterSeconds ?? 1) * 1000, MAX_RETRY_AFTER_MS), req.signal);
    }
    // No trim() of the whole body: it would copy it (a whole LIST page) for nothing, since
    // JSON.parse skips surrounding whitespace itself.
    req.onBodyLength?.(text.length);
    if (text.length <= 64 && text.trim() === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new TransportError({ kind: 'protocol', requestSent: true, method: req.method, path: req.path, cause: err, detail: 'response is not JSON' });
    }
  }

  /** Waits for the shared rate limiter; leader election's calls skip it (the lease must never queue behind node writes). */
  async #throttle(req: RequestOptions): Promise<void> {
    if (!this.#limiter || req.ungated) return;
    const waited = await this.#limiter.take(req.signal);
    this.#onRateLimited?.(waited, req.method);
  }

  /** The server URL's host, for the request metrics: parsed again only when the server changes. */
  #serverHost(): string {
    const server = this.server;
    if (this.#host?.server !== server) {
      let host = '';
      try {
        host = new URL(server).host;
      } catch { /* an unusable server URL fails the request itself */ }
      this.#host = { server, host };
    }
    return this.#host.host;
  }

  /** #sendOnce, measured for onRequest. */
  async #send(...args: Parameters<SendOnce>): ReturnType<SendOnce> {
    if (!this.#onRequest) return this.#sendOnce(...args);
    const started = performance.now();
    const report = (code: string): void => {
      this.#onRequest?.({ method: args[0], host: this.#serverHost(), code, seconds: (performance.now() - started) / 1000 });
    };
    try {
      const r = await this.#sendOnce(...args);
      report(String(r.res.statusCode ?? '<error>'));
      return r;
    } catch (err) {
      report('<error>');
      throw err;
    }
  }

  async #sendOnce(
    method: string,
    path: string,
    query: RequestOptions['query'],
    body: unknown,
    contentType: string | undefined,
    timeout: number | undefined | (() => number),
    signal: AbortSignal | undefined,
    answer: BodyHandling,
  ): Promise<{ res: http.IncomingMessage; body: string | undefined; cancel: () => void }> {
    const conn = await this.#connection();
    // Nothing awaits between this and the request below, so the gate's answer (timeout()) holds
    // until the request is made; a gated write asks it once more as its bytes leave (flush below).
    const timeoutMs = typeof timeout === 'function' ? timeout() : timeout;
    const line = requestPath(conn.base, path, query);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    // Not `{ ...conn.headers, Accept, … }`: on Node 20 that costs ~2.5 µs and a hidden class in old
    // space per request (see addressDecision in src/controllers/cloudnode/decide.ts).
    const headers: Record<string, string> = Object.assign({}, conn.headers, { Accept: 'application/json', 'User-Agent': this.#userAgent });
    if (payload) {
      headers['Content-Type'] = contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const mod = conn.target.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      let sent = false;
      let settled = false;
      let abortKind: TransportErrorKind | undefined;
      if (signal?.aborted) {
        reject(new TransportError({ kind: 'aborted', requestSent: false, method, path, detail: 'cancelled before sending' }));
        return;
      }
      const { protocol, hostname, port, auth } = conn.target;
      const req = mod.request({ protocol, hostname, port, auth, path: line, method, headers, agent: conn.agent });
      const timer = timeoutMs !== undefined ? setTimeout(() => abort('timeout'), timeoutMs) : undefined;
      const onAbort = () => abort('aborted');
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      let answered = false;
      const fail = (kind: TransportErrorKind, cause: unknown, detail: string) => {
        cleanup();
        if (settled) return;
        settled = true;
        // A kept-alive connection the server reset before answering anything: most likely it had
        // just closed it as idle (see TransportError.staleConnection).
        const staleConnection = kind === 'connection' && !answered && req.reusedSocket && (cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNRESET';
        reject(new TransportError({ kind, requestSent: sent, method, path, cause, detail, staleConnection }));
      };
      function abort(kind: TransportErrorKind) {
        abortKind ??= kind;
        req.destroy(new Error(kind === 'timeout' ? `no answer within ${timeoutMs} ms` : 'cancelled'));
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('finish', () => { sent = true; });
      req.on('error', (err) => fail(abortKind ?? 'connection', err, abortKind ? err.message : `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}`.trim()));
      req.on('response', (res) => {
        answered = true;
        const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode <= 299;
        if (answer === 'stream' && ok) {
          // The caller reads the stream; the timeout only covered getting the headers.
          if (timer) clearTimeout(timer);
          settled = true;
          resolve({ res, body: undefined, cancel: () => { signal?.removeEventListener('abort', onAbort); req.destroy(); } });
          return;
        }
        let text = '';
        if (answer === 'discard' && ok) res.resume();
        else {
          res.setEncoding('utf8');
          res.on('data', (c: string) => { text += c; });
        }
        res.on('error', (err) => fail(abortKind ?? 'connection', err, `response cut: ${err.message}`));
        // A socket torn down mid-body may only close the response; never leave the caller hanging.
        res.on('close', () => {
          if (!res.complete) fail(abortKind ?? 'connection', undefined, 'response cut before its end');
        });
        res.on('end', () => {
          cleanup();
          if (settled) return;
          settled = true;
          // This listener's closure lives as long as whatever still holds `res`: let go of the body
          // here, or a LIST page's text (2 MB, a large object) outlives the page, is promoted by
          // the next scavenge, and only a full collection frees it.
          const body = text;
          text = '';
          resolve({ res, body, cancel: () => {} });
        });
      });
      if (typeof timeout !== 'function') {
        req.end(payload);
        return;
      }
      // A gated write is asked once more when its bytes are about to leave: a request can wait
      // for a socket (the agent's limit, a connect, a TLS handshake), and a process paused there
      // (SIGSTOP, a frozen VM) would otherwise send, on waking, a write its lease no longer
      // covered (chaos seed 1302 caught one 7 ms after a 7.9 s SIGSTOP). Nothing is written
      // before end(), so a write fenced here never reaches the server.
      const flush = () => {
        if (settled) return;
        try {
          timeout();
        } catch (err) {
          cleanup();
          settled = true;
          req.destroy();
          reject(err as Error);
          return;
        }
        req.end(payload);
      };
      req.once('socket', (socket) => {
        if (!socket.connecting) flush();
        else socket.once(conn.target.protocol === 'https:' ? 'secureConnect' : 'connect', flush);
      });
    });
  }

  /**
   * Opens a watch and yields its events until the server ends it, the signal aborts (returns
   * quietly) or the connection breaks (throws TransportError). A non-2xx answer throws ApiError.
   */
  async *watch<T>(path: string, query: Record<string, string | number | boolean | undefined>, callerSignal?: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const { signal, unlink } = linkSignals(callerSignal, this.#signal);
    try {
      yield* this.#watch<T>(path, query, signal);
    } finally {
      unlink();
    }
  }

  async *#watch<T>(path: string, query: Record<string, string | number | boolean | undefined>, signal: AbortSignal | undefined): AsyncGenerator<WatchEvent<T>> {
    let opened: { res: http.IncomingMessage; body: string | undefined; cancel: () => void };
    try {
      await this.#throttle({ method: 'GET', path, ...(signal ? { signal } : {}) });
      opened = await this.#send('GET', path, { ...query, watch: true }, undefined, undefined, this.#readTimeoutMs, signal, 'stream');
    } catch (err) {
      // Aborted before the stream opened (a relist asked for while the watch was being sent):
      // the same quiet end as an abort mid-stream, not a failure to log and back off from.
      if (signal?.aborted) return;
      throw err;
    }
    const { res, body, cancel } = opened;
    if (body !== undefined) {
      throw apiErrorFromResponse('GET', path, res.statusCode ?? 0, body, res.headers['retry-after'] as string | undefined);
    }
    res.setEncoding('utf8');
    let buf = '';
    try {
      for await (const chunk of res as AsyncIterable<string>) {
        buf += chunk;
        // Walk the lines by index and cut the buffer once per chunk (a chunk can hold thousands).
        let start = 0;
        let nl: number;
        const lines: string[] = [];
        while ((nl = buf.indexOf('\n', start)) >= 0) {
          lines.push(buf.slice(start, nl).trim());
          start = nl + 1;
        }
        buf = buf.slice(start);
        for (const line of lines) {
          if (line === '') continue;
          let ev: WatchEvent<T>;
          try {
            ev = JSON.parse(line) as WatchEvent<T>;
          } catch (err) {
            throw new TransportError({ kind: 'protocol', requestSent: true, method: 'GET', path, cause: err, detail: `bad watch line: ${line.slice(0, 200)}` });
          }
          yield ev;
        }
      }
    } catch (err) {
      if (signal?.aborted) return;
      if (err instanceof TransportError) throw err;
      throw new TransportError({ kind: 'connection', requestSent: true, method: 'GET', path, cause: err, detail: `watch stream broke: ${(err as Error).message}` });
    } finally {
      cancel();
    }
    if (buf.trim() !== '' && !signal?.aborted) {
      throw new TransportError({ kind: 'protocol', requestSent: true, method: 'GET', path, detail: 'watch ended inside an event' });
    }
  }

  // Typed resource helpers.

  get<T extends KubeObject>(res: ResourceType, name: string, opts: CallOptions = {}): Promise<T> {
    return this.request<T>({ method: 'GET', path: resourcePath(res, { namespace: opts.namespace, name }), signal: opts.signal, timeoutMs: opts.timeoutMs, ungated: opts.ungated });
  }

  list<T extends KubeObject>(res: ResourceType, opts: ListOptions & { onBodyLength?: (chars: number) => void } = {}): Promise<KubeList<T>> {
    return this.request<KubeList<T>>({
      method: 'GET',
      path: resourcePath(res, { namespace: opts.namespace }),
      query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.limit, continue: opts.continue, resourceVersion: opts.resourceVersion },
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      onBodyLength: opts.onBodyLength,
    });
  }

  /**
   * Every page of a LIST, with all items and the list's resourceVersion. `transform` is applied
   * page by page, so only one page of whole objects is held at a time however large the
   * collection is. `pageSize` (default 500) is the most a page asks for; pages of large objects ask
   * for fewer, so each holds about PAGE_TARGET_CHARS of JSON (see page-size.ts). `afterPage` is
   * called once each page's objects are transformed (and the page is garbage).
   */
  async listAll<T extends KubeObject>(res: ResourceType, opts: Omit<ListOptions, 'continue'> & { pageSize?: number; transform?: (obj: T) => T; afterPage?: () => void } = {}): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    const { transform, pageSize, afterPage, ...listOpts } = opts;
    const maxLimit = pageSize ?? opts.limit ?? 500;
    let limit = maxLimit;
    let chars = 0;
    do {
      const page = await this.list<T>(res, { ...listOpts, limit, continue: cont, onBodyLength: (n) => (chars = n) });
      for (const item of page.items ?? []) items.push(transform ? transform(item) : item);
      afterPage?.();
      rv = page.metadata?.resourceVersion ?? rv;
      cont = page.metadata?.continue || undefined;
      limit = nextPageLimit(limit, maxLimit, chars);
    } while (cont);
    return { items, resourceVersion: rv };
  }

  create<T extends KubeObject>(res: ResourceType, obj: T, opts: CallOptions = {}): Promise<T> {
    return this.request<T>({ method: 'POST', path: resourcePath(res, { namespace: opts.namespace }), body: obj, signal: opts.signal, timeoutMs: opts.timeoutMs, ungated: opts.ungated });
  }

  /** PUT; the object's metadata.resourceVersion makes it conditional (409 Conflict if stale). */
  update<T extends KubeObject>(res: ResourceType, obj: T, opts: CallOptions & { subresource?: string } = {}): Promise<T> {
    return this.request<T>({
      method: 'PUT',
      path: resourcePath(res, { namespace: opts.namespace, name: obj.metadata.name, subresource: opts.subresource }),
      body: obj,
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      ungated: opts.ungated,
    });
  }

  /** PATCH; with `discardResult` the answer is read but not parsed, and the call resolves to undefined. */
  patch<T extends KubeObject>(res: ResourceType, name: string, patch: unknown, type: PatchType, opts?: CallOptions & { subresource?: string; discardResult?: false }): Promise<T>;
  patch(res: ResourceType, name: string, patch: unknown, type: PatchType, opts: CallOptions & { subresource?: string; discardResult: true }): Promise<undefined>;
  patch<T extends KubeObject>(res: ResourceType, name: string, patch: unknown, type: PatchType, opts: CallOptions & { subresource?: string; discardResult?: boolean } = {}): Promise<T | undefined> {
    return this.request<T>({
      ...(opts.discardResult ? { discardBody: true } : {}),
      method: 'PATCH',
      path: resourcePath(res, { namespace: opts.namespace, name, subresource: opts.subresource }),
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      ungated: opts.ungated,
    });
  }

  /** DELETE, optionally only if the object still has this uid / resourceVersion. */
  delete(res: ResourceType, name: string, opts: CallOptions & { preconditions?: { uid?: string; resourceVersion?: string } } = {}): Promise<unknown> {
    return this.request<unknown>({
      method: 'DELETE',
      path: resourcePath(res, { namespace: opts.namespace, name }),
      body: opts.preconditions ? { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: opts.preconditions } : undefined,
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      ungated: opts.ungated,
    });
  }

  watchResource<T extends KubeObject>(res: ResourceType, opts: WatchOptions = {}): AsyncGenerator<WatchEvent<T>> {
    return this.watch<T>(resourcePath(res, { namespace: opts.namespace }), {
      resourceVersion: opts.resourceVersion,
      allowWatchBookmarks: opts.allowWatchBookmarks ?? true,
      timeoutSeconds: opts.timeoutSeconds,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    }, opts.signal);
  }
}

