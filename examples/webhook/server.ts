// The reference webhook: answers node-address-ccm's v1 requests (docs/webhook.md) from an
// inventory file in the static provider's format, read again on every request so an edit takes
// effect at once. HTTPS with a given certificate (optionally requiring client certificates),
// or plain HTTP on loopback; an optional bearer token file, read on every request too.
// It is what the tests run the webhook provider against, and a starting point for a real one.
import { readFile } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parseStaticCloudConfig } from 'node-address-ccm/providers/static';
import { requestProblems, WEBHOOK_API_VERSION, type InstancesRequest } from 'node-address-ccm/providers/webhook';

export interface ReferenceWebhookOptions {
  /** The inventory: YAML or JSON as for --cloud-provider static (`nodes: {name: {...}}`). */
  inventory: string;
  host?: string;
  port?: number;
  /** PEM certificate and key: HTTPS. Without them, plain HTTP (bind it to loopback). */
  tls?: { cert: string; key: string; clientCA?: string };
  /** Requests must carry `Authorization: Bearer <content of this file>`. */
  tokenFile?: string;
  /**
   * For tests: a fault instead of (or on top of) the answer: a status and body, a delay, or a
   * body of its own. Called with the checked request and the answer the inventory gives.
   */
  intercept?: (request: InstancesRequest, answer: InstancesResponse) => Intercepted | undefined | Promise<Intercepted | undefined>;
}

export interface Intercepted { status?: number; body?: string; delayMs?: number }

export interface InstancesResponse {
  apiVersion: string;
  kind: 'InstancesResponse';
  nodes: Record<string, unknown>;
}

export interface ReferenceWebhook {
  url: string;
  /** Requests received (any outcome). */
  requests: number;
  /** The nodes of every checked request, in order. */
  batches: string[][];
  close(): Promise<void>;
}

const MAX_BODY = 4 * 1024 * 1024;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY) throw new Error('request body too large');
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The answer the inventory gives for a checked request. */
export async function answerFromInventory(inventoryFile: string, request: InstancesRequest): Promise<InstancesResponse> {
  const inventory = parseStaticCloudConfig(await readFile(inventoryFile, 'utf8'));
  const nodes: Record<string, unknown> = {};
  for (const { name } of request.nodes) {
    const n = inventory.nodes.get(name);
    if (!n) {
      nodes[name] = { notFound: { reason: `${name} is not in the inventory` } };
      continue;
    }
    nodes[name] = {
      found: {
        providerID: n.providerID,
        addresses: n.addresses,
        ...(n.zone !== undefined ? { zone: n.zone } : {}),
        ...(n.region !== undefined ? { region: n.region } : {}),
        ...(n.instanceType !== undefined ? { instanceType: n.instanceType } : {}),
        ...(n.podCIDRs !== undefined ? { podCIDRs: n.podCIDRs } : {}),
        ...(n.labels !== undefined ? { labels: n.labels } : {}),
        shutdown: n.shutdown,
      },
    };
  }
  return { apiVersion: WEBHOOK_API_VERSION, kind: 'InstancesResponse', nodes };
}

export async function startReferenceWebhook(o: ReferenceWebhookOptions): Promise<ReferenceWebhook> {
  const state = { requests: 0, batches: [] as string[][] };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    state.requests++;
    if (req.method !== 'POST') return send(res, 405, { error: 'POST only' });
    if (o.tokenFile !== undefined) {
      const token = (await readFile(o.tokenFile, 'utf8')).trim();
      if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'missing or wrong bearer token' });
    }
    let request: unknown;
    try {
      request = JSON.parse(await readBody(req));
    } catch (err) {
      return send(res, 400, { error: `not JSON: ${(err as Error).message}` });
    }
    const problems = requestProblems(request);
    if (problems.length > 0) return send(res, 400, { error: problems.join('; ') });
    const checked = request as InstancesRequest;
    state.batches.push(checked.nodes.map((n) => n.name));
    let answer: InstancesResponse;
    try {
      answer = await answerFromInventory(o.inventory, checked);
    } catch (err) {
      // An inventory being rewritten: a 503 is retried, never read as "not found".
      return send(res, 503, { error: `inventory ${o.inventory}: ${(err as Error).message}` });
    }
    const fault = await o.intercept?.(checked, answer);
    if (fault?.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
    if (res.destroyed) return;
    send(res, fault?.status ?? 200, fault?.body ?? answer);
  };
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: (err as Error).message });
    });
  };
  const server = o.tls
    ? https.createServer({ cert: o.tls.cert, key: o.tls.key, ...(o.tls.clientCA ? { ca: o.tls.clientCA, requestCert: true, rejectUnauthorized: true } : {}) }, listener)
    : http.createServer(listener);
  const host = o.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    url: `${o.tls ? 'https' : 'http'}://${hostPart}:${port}/v1/instances`,
    get requests() { return state.requests; },
    batches: state.batches,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
