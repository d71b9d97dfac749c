// The webhook provider's --cloud-config (YAML), checked against a JSON Schema and then for what a
// schema cannot say (an HTTPS URL, plain HTTP only to loopback and only when asked for). Errors
// name the field and the value. Pure: the files it names are read by the factory.
import { isIP } from 'node:net';
import { parse as parseYAML } from 'yaml';
import { showValue } from '../answers.js';
import { compileSchema, type Validator } from './validate.js';

export interface WebhookConfig {
  url: URL;
  /** PEM CA bundle the server's certificate must chain to (default: Node's public CAs). */
  caFile?: string;
  /** Bearer token, read again whenever the file changes (a projected ServiceAccount token). */
  tokenFile?: string;
  /** Client certificate and key (PEM) for mutual TLS. */
  clientCertFile?: string;
  clientKeyFile?: string;
  /** Per POST attempt. */
  timeoutMs: number;
  /** Nodes per POST. */
  batchSize: number;
  /** POSTs per batch, the first included: timeouts, connection errors, 429 and 5xx are tried again. */
  attempts: number;
  /** Plain http:// to a loopback address (a sidecar); refused without it. */
  insecurePlainHTTP: boolean;
}

export const WEBHOOK_DEFAULTS = { timeout: '10s', batchSize: 100, attempts: 4 } as const;

const CONFIG_SCHEMA = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', minLength: 1 },
    caFile: { type: 'string', minLength: 1 },
    tokenFile: { type: 'string', minLength: 1 },
    clientCertFile: { type: 'string', minLength: 1 },
    clientKeyFile: { type: 'string', minLength: 1 },
    timeout: { type: 'string', pattern: '^[0-9]+(ms|s|m)$' },
    batchSize: { type: 'integer', minimum: 1, maximum: 500 },
    attempts: { type: 'integer', minimum: 1, maximum: 10 },
    insecurePlainHTTP: { type: 'boolean' },
  },
} as const;

let validator: Validator | undefined;

function fail(field: string, message: string, value: unknown): never {
  throw new Error(`cloud-config ${field}: ${message} (value ${showValue(value)})`);
}

function durationMs(text: string): number {
  const m = /^([0-9]+)(ms|s|m)$/.exec(text) as RegExpExecArray;
  return Number(m[1]) * (m[2] === 'ms' ? 1 : m[2] === 's' ? 1000 : 60_000);
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

export function parseWebhookConfig(text: string): WebhookConfig {
  let raw: unknown;
  try {
    raw = parseYAML(text, { uniqueKeys: true });
  } catch (err) {
    throw new Error(`cloud-config: not valid YAML: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
  validator ??= compileSchema(CONFIG_SCHEMA);
  const problems = validator(raw ?? {});
  if (problems.length > 0) throw new Error(`cloud-config ${problems[0]}`);
  const c = raw as Record<string, unknown> & { url: string };
  let url: URL;
  try {
    url = new URL(c.url);
  } catch {
    fail('url', 'not a URL', c.url);
  }
  const insecurePlainHTTP = c.insecurePlainHTTP === true;
  if (url.protocol === 'http:') {
    if (!insecurePlainHTTP) fail('url', 'plain http:// needs insecurePlainHTTP: true (and a loopback address); use https://', c.url);
    if (!isLoopback(url.hostname)) fail('url', 'plain http:// only to a loopback address (127.0.0.0/8, ::1, localhost)', c.url);
  } else if (url.protocol !== 'https:') {
    fail('url', 'must be https://', c.url);
  }
  if (url.username || url.password) fail('url', 'must not hold credentials (use tokenFile or a client certificate)', `${url.protocol}//…@${url.host}`);
  if ((c.clientCertFile === undefined) !== (c.clientKeyFile === undefined)) {
    const [missing, given] = c.clientCertFile === undefined ? ['clientCertFile', 'clientKeyFile'] : ['clientKeyFile', 'clientCertFile'];
    throw new Error(`cloud-config ${missing}: required with ${given} (${given} ${showValue(c[given])})`);
  }
  if (url.protocol === 'http:' && (c.caFile !== undefined || c.clientCertFile !== undefined)) fail('url', 'caFile and a client certificate need https://', c.url);
  const timeoutMs = durationMs((c.timeout as string | undefined) ?? WEBHOOK_DEFAULTS.timeout);
  if (timeoutMs <= 0) fail('timeout', 'must be positive', c.timeout);
  return {
    url,
    ...(c.caFile !== undefined ? { caFile: c.caFile as string } : {}),
    ...(c.tokenFile !== undefined ? { tokenFile: c.tokenFile as string } : {}),
    ...(c.clientCertFile !== undefined ? { clientCertFile: c.clientCertFile as string, clientKeyFile: c.clientKeyFile as string } : {}),
    timeoutMs,
    batchSize: (c.batchSize as number | undefined) ?? WEBHOOK_DEFAULTS.batchSize,
    attempts: (c.attempts as number | undefined) ?? WEBHOOK_DEFAULTS.attempts,
    insecurePlainHTTP,
  };
}
