// Plain HTTP(S) for the probe: one request, or one watch stream read as newline-delimited JSON.
// No client library in between, so what is recorded is what each server answered, byte for byte
// parsed as JSON. Credentials are a bearer token (the double; a ServiceAccount token on the real
// server) or a client certificate (the real server's admin).
import http from 'node:http';
import https from 'node:https';

export interface Credentials {
  token?: string;
  /** PEM client certificate and key. */
  cert?: string;
  key?: string;
}

export interface Endpoint {
  /** http(s)://host:port */
  url: string;
  /** PEM CA the server's certificate must chain to (https). */
  ca?: string;
}

export interface HttpRequest {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface HttpAnswer {
  code: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

function requestOptions(endpoint: Endpoint, creds: Credentials, req: HttpRequest): https.RequestOptions {
  const u = new URL(req.path, endpoint.url);
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (creds.token) headers.Authorization = `Bearer ${creds.token}`;
  if (req.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(req.body));
  return {
    method: req.method,
    hostname: u.hostname,
    port: u.port,
    path: u.pathname + u.search,
    headers,
    ca: endpoint.ca,
    cert: creds.cert,
    key: creds.key,
    agent: false,
  };
}

function transport(endpoint: Endpoint): typeof https.request {
  return endpoint.url.startsWith('https:') ? https.request : http.request;
}

/** One request; resolves with the status, headers and body text (never rejects on an HTTP error). */
export function send(endpoint: Endpoint, creds: Credentials, req: HttpRequest, timeoutMs = 30_000): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const r = transport(endpoint)(requestOptions(endpoint, creds, req), (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`${req.method} ${req.path}: no answer within ${timeoutMs} ms`)));
    r.on('error', reject);
    r.end(req.body);
  });
}

export interface OpenWatch {
  code: number;
  headers: http.IncomingHttpHeaders;
  /** Events parsed so far (each line of the stream). */
  events: unknown[];
  /** Resolves when `predicate` holds for the events so far, the stream ends, or `timeoutMs` passes. */
  until(predicate: (events: unknown[]) => boolean, timeoutMs: number): Promise<'matched' | 'ended' | 'timeout'>;
  /** The body text when the answer was not a stream (an error before the watch began). */
  text(): string;
  close(): void;
}

/** Opens a watch; resolves once the response headers arrived (the watch is registered by then). */
export function openWatch(endpoint: Endpoint, creds: Credentials, req: HttpRequest): Promise<OpenWatch> {
  return new Promise((resolve, reject) => {
    const r = transport(endpoint)(requestOptions(endpoint, creds, req), (res) => {
      const events: unknown[] = [];
      let buffered = '';
      let raw = '';
      let ended = false;
      const waiters = new Set<() => void>();
      const wake = (): void => {
        for (const w of [...waiters]) w();
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        if (res.statusCode !== 200) return;
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (line) events.push(JSON.parse(line));
        }
        wake();
      });
      const end = (): void => {
        ended = true;
        if (buffered.trim() && (res.statusCode ?? 0) === 200) {
          try {
            events.push(JSON.parse(buffered));
            buffered = '';
          } catch {
            // an incomplete last line: the stream was cut mid-event
          }
        }
        wake();
      };
      res.on('end', end);
      res.on('close', end);
      res.on('error', end);
      resolve({
        code: res.statusCode ?? 0,
        headers: res.headers,
        events,
        text: () => raw,
        until: (predicate, timeoutMs) =>
          new Promise((done) => {
            const check = (): void => {
              if (predicate(events)) finish('matched');
              else if (ended) finish('ended');
            };
            const timer = setTimeout(() => finish('timeout'), timeoutMs);
            const finish = (why: 'matched' | 'ended' | 'timeout'): void => {
              clearTimeout(timer);
              waiters.delete(check);
              done(why);
            };
            waiters.add(check);
            check();
          }),
        close: () => {
          r.destroy();
        },
      });
    });
    r.on('error', (err) => {
      if (!r.destroyed || (err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
    r.end(req.body);
  });
}
