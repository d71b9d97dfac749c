// Where the conformance suite runs: the API server double (default), or a real cluster when
// E2E_REAL_CLUSTER=1 (KUBECONFIG, and a context listed in E2E_ALLOWED_CONTEXTS, the same guard
// the e2e suite uses).
import { randomBytes } from 'node:crypto';
import { ApiException, KubeConfig, Watch } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { kubeConfigFor, type ApiServerDouble, type ApiServerDoubleOptions } from '../../src/double/index.js';
import { loadRealClusterConfig } from '../e2e/support/target.js';
import { startDouble } from '../kit/double.js';
import { eventually } from '../kit/wait.js';

export interface Target {
  kc: KubeConfig;
  /** Present when the suite runs against the double (faults, compaction, counters). */
  double?: ApiServerDouble;
  /** Random prefix for every name the suite creates. */
  prefix: string;
  /** Remembers an object to delete at the end (real clusters: only what we created). */
  track(path: string): void;
  close(): Promise<void>;
}

export const REAL = process.env.E2E_REAL_CLUSTER === '1';

/** Starts the target; on a real cluster, refuses contexts not on the allow-list. */
export async function openTarget(options: ApiServerDoubleOptions = {}): Promise<Target> {
  const prefix = `e2e-${randomBytes(3).toString('hex')}-`;
  const tracked: string[] = [];
  if (REAL) {
    const { kubeConfig: kc, context: ctx } = loadRealClusterConfig();
    console.log(`apiserver conformance: targeting real cluster context "${ctx}", names prefixed "${prefix}"`);
    return {
      kc,
      prefix,
      track: (p) => tracked.push(p),
      close: async () => {
        // Only what this run created: drop finalizers we may have left, then delete.
        for (const p of tracked.reverse()) {
          await rawRequest(kc, 'PATCH', p, '{"metadata":{"finalizers":null}}', 'application/merge-patch+json').catch(() => undefined);
          await rawRequest(kc, 'DELETE', p).catch(() => undefined);
        }
      },
    };
  }
  const double = await startDouble({ bookmarkIntervalMs: 100, ...options });
  if (!options.rbac) console.log(`apiserver conformance: targeting the API server double at ${double.url} (set E2E_REAL_CLUSTER=1 for a real cluster)`);
  return { kc: kubeConfigFor(double), double, prefix, track: (p) => tracked.push(p), close: () => double.stop() };
}

/** A fake Node body: tainted NoSchedule so a real scheduler never places pods on it. */
export function fakeNode(name: string, extra: { labels?: Record<string, string>; status?: object; spec?: object } = {}): object {
  return {
    metadata: { name, labels: { 'e2e.node-address-ccm.io/fake': 'true', ...(extra.labels ?? {}) } },
    spec: { taints: [{ key: 'e2e.node-address-ccm.io/fake', effect: 'NoSchedule' }], ...(extra.spec ?? {}) },
    ...(extra.status ? { status: extra.status } : {}),
  };
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
}

/** A plain HTTP request with the kubeconfig's bearer token (for what client-node does not wrap). */
export async function rawRequest(kc: KubeConfig, method: string, path: string, body?: string, contentType = 'application/json'): Promise<RawResponse> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster');
  const headers: Record<string, string> = { Accept: 'application/json' };
  const token = kc.getCurrentUser()?.token;
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = contentType;
  const res = await fetch(cluster.server + path, { method, headers, body });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** Awaits a client-node call that must fail, and checks the Status body's code and reason. */
export async function expectStatus(call: Promise<unknown>, code: number, reason: string): Promise<{ message: string; details?: { causes?: { field?: string; message?: string }[] } }> {
  let err: unknown;
  try {
    await call;
  } catch (e) {
    err = e;
  }
  expect(err, `expected a ${code} ${reason} error`).toBeInstanceOf(ApiException);
  const ex = err as ApiException<unknown>;
  expect(ex.code).toBe(code);
  const status = JSON.parse(String(ex.body)) as { kind: string; code: number; reason: string; status: string; message: string };
  expect(status).toMatchObject({ kind: 'Status', status: 'Failure', code, reason });
  return status;
}

export interface WatchEvent {
  type: string;
  object: { kind?: string; metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> }; code?: number; reason?: string; [k: string]: unknown };
}

/** A running watch that collects its events; `ended` resolves when the server closes it. */
export interface Collector {
  events: WatchEvent[];
  ended: Promise<unknown>;
  waitFor(pred: (events: WatchEvent[]) => boolean, timeoutMs?: number): Promise<WatchEvent[]>;
  stop(): void;
}

export async function collectWatch(kc: KubeConfig, path: string, params: Record<string, string | number | boolean | undefined>): Promise<Collector> {
  const events: WatchEvent[] = [];
  let resolveEnded!: (v: unknown) => void;
  const ended = new Promise((r) => (resolveEnded = r));
  const controller = await new Watch(kc).watch(path, params, (type, object) => events.push({ type, object: object as WatchEvent['object'] }), (err) => resolveEnded(err ?? 'closed'));
  return {
    events,
    ended,
    stop: () => controller.abort(),
    waitFor: async (pred, timeoutMs = 5000) => {
      await eventually(() => pred(events), {
        timeoutMs, intervalMs: 10, what: `watch ${path}: the condition`,
        describe: () => `events: ${JSON.stringify(events.map((e) => [e.type, e.object.metadata?.name]))}`,
      });
      return events;
    },
  };
}
