// One POST of a batch to the webhook, tried again the way a cloud's SDK would: a timeout, a
// connection error, 429 and 5xx are retried with jittered exponential backoff, up to `attempts`
// POSTs; any other answer is final. Whatever the outcome, a failed call is an error for the batch,
// never "not found". The bearer token file is read again whenever it changes (a rotated
// ServiceAccount token), checked by its stat on every POST.
import { readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { sleep } from '../../src/util/sleep.js';

/** Bodies above this are refused: a batch of 500 nodes answers in well under a megabyte. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const BACKOFF_BASE_MS = 200;
const BACKOFF_MAX_MS = 5_000;

export interface WebhookClientOptions {
  url: URL;
  ca?: string;
  cert?: string;
  key?: string;
  tokenFile?: string;
  timeoutMs: number;
  attempts: number;
  /** For tests: the backoff before attempt n (1-based), default jittered exponential. */
  backoffMs?: (attempt: number) => number;
}

/** A POST that got no usable answer; `status` when the server answered. */
export class WebhookCallError extends Error {
  constructor(message: string, readonly retryable: boolean, readonly status?: number) {
    super(message);
  }
}

function defaultBackoff(attempt: number): number {
  return Math.random() * Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
}

export class WebhookClient {
  readonly #o: WebhookClientOptions;
  readonly #agent: http.Agent;
  #token: { key: string; value: string } | undefined;
  /** POSTs sent, attempts included (for logs and tests). */
  posts = 0;

  constructor(options: WebhookClientOptions) {
    this.#o = options;
    this.#agent = options.url.protocol === 'https:'
      ? new https.Agent({ keepAlive: true, maxSockets: 8, ...(options.ca ? { ca: options.ca } : {}), ...(options.cert ? { cert: options.cert, key: options.key } : {}) })
      : new http.Agent({ keepAlive: true, maxSockets: 8 });
  }

  async #bearer(): Promise<string | undefined> {
    const file = this.#o.tokenFile;
    if (!file) return undefined;
    try {
      const s = await stat(file);
      const key = `${s.ino}:${s.size}:${s.mtimeMs}`;
      if (this.#token?.key !== key) this.#token = { key, value: (await readFile(file, 'utf8')).trim() };
    } catch (err) {
      throw new WebhookCallError(`tokenFile ${file}: cannot read: ${(err as Error).message}`, true);
    }
    if (this.#token.value === '') throw new WebhookCallError(`tokenFile ${file}: the file is empty`, true);
    return this.#token.value;
  }

  /** One POST attempt: the body of a 2xx answer, or a WebhookCallError. */
  async #once(body: string, signal: AbortSignal | undefined): Promise<string> {
    const token = await this.#bearer();
    this.posts++;
    const mod = this.#o.url.protocol === 'https:' ? https : http;
    return new Promise<string>((resolve, reject) => {
      const req = mod.request(this.#o.url, {
        method: 'POST',
        agent: this.#agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        ...(signal ? { signal } : {}),
      }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new WebhookCallError(`the answer is larger than ${MAX_RESPONSE_BYTES} bytes`, false));
            return;
          }
          chunks.push(c);
        });
        res.on('error', (err) => reject(new WebhookCallError(`reading the answer: ${err.message}`, true)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve(text);
          const snippet = text.trim().split('\n')[0]?.slice(0, 200) ?? '';
          reject(new WebhookCallError(`HTTP ${status}${snippet ? `: ${snippet}` : ''}`, status === 429 || status >= 500, status));
        });
      });
      req.setTimeout(this.#o.timeoutMs, () => req.destroy(new WebhookCallError(`no answer within ${this.#o.timeoutMs / 1000}s`, true)));
      req.on('error', (err) => {
        if (err instanceof WebhookCallError) return reject(err);
        if (signal?.aborted) return reject(signal.reason instanceof Error ? signal.reason : err);
        // Connection refused or reset, TLS refused (an unknown CA, a wrong name): tried again, since
        // a server being restarted or a certificate being rotated is over in seconds.
        reject(new WebhookCallError(`${(err as NodeJS.ErrnoException).code ? `${(err as NodeJS.ErrnoException).code}: ` : ''}${err.message}`, true));
      });
      req.end(body);
    });
  }

  /** POSTs `body` until an attempt succeeds, a final error, `attempts` run out or `signal` aborts. */
  async post(body: string, signal?: AbortSignal): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once(body, signal);
      } catch (err) {
        if (signal?.aborted) throw err;
        const e = err instanceof WebhookCallError ? err : new WebhookCallError((err as Error).message, true);
        if (!e.retryable || attempt >= this.#o.attempts) {
          throw new WebhookCallError(`${e.message}${attempt > 1 ? ` (after ${attempt} attempts)` : ''}`, e.retryable, e.status);
        }
        await sleep((this.#o.backoffMs ?? defaultBackoff)(attempt), signal);
      }
    }
  }

  close(): void {
    this.#agent.destroy();
  }
}
