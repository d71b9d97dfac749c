// The request layer against the API server double: patch flavours, status subresource, typed
// errors and write outcomes under injected faults.
import { describe, it, expect, afterEach } from 'vitest';
import { startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { KubeClient, jsonPatchWithResourceVersion, kubeConfigFromString } from '../../src/kube/client.js';
import { ApiError, TransportError, isConflict, isInvalid, isNotFound, isTooManyRequests, writeOutcome } from '../../src/kube/errors.js';
import { CLUSTERCIDRS, NODES, SERVICECIDRS, type KubeObject } from '../../src/kube/types.js';
import { TokenBucket } from '../../src/kube/token-bucket.js';

interface Node extends KubeObject {
  spec?: { podCIDR?: string; podCIDRs?: string[] };
  status?: { addresses?: Array<{ type: string; address: string }> };
}

let api: ApiServerDouble;
let client: KubeClient;
afterEach(async () => {
  client.close();
  await api.stop();
});

async function setup(): Promise<void> {
  api = await startApiServerDouble();
  client = new KubeClient(kubeConfigFromString(api.kubeconfig), { writeTimeoutMs: 300 });
}

describe('KubeClient against the API server double', () => {
  it('merge-patches status.addresses through the status subresource, replacing the list', async () => {
    await setup();
    await client.create<Node>(NODES, { metadata: { name: 'n1' }, status: { addresses: [{ type: 'Hostname', address: 'n1' }] } });
    await client.patch(NODES, 'n1', { status: { addresses: [{ type: 'Hostname', address: 'n1' }, { type: 'InternalIP', address: '10.0.0.5' }] } }, 'merge', { subresource: 'status' });
    await client.patch(NODES, 'n1', { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.6' }] } }, 'merge', { subresource: 'status' });
    const n = await client.get<Node>(NODES, 'n1');
    expect(n.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.0.0.6' }]);
  });

  it('a json patch guarded by resourceVersion applies once and is refused when stale', async () => {
    await setup();
    const created = await client.create<Node>(NODES, { metadata: { name: 'n1' }, spec: {} });
    const rv = created.metadata.resourceVersion ?? '';
    const patch = jsonPatchWithResourceVersion(rv, [{ op: 'add', path: '/spec/podCIDR', value: '10.244.1.0/24' }]);
    const updated = await client.patch<Node>(NODES, 'n1', patch, 'json');
    expect(updated.spec?.podCIDR).toBe('10.244.1.0/24');
    const err = await client.patch(NODES, 'n1', jsonPatchWithResourceVersion(rv, [{ op: 'add', path: '/spec/podCIDR', value: '10.244.2.0/24' }]), 'json')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    // kube-apiserver answers a failed `test` op with 422 Invalid (older versions: 409); both mean "re-read".
    expect(isInvalid(err) || isConflict(err)).toBe(true);
    expect(writeOutcome(err)).toBe('not-applied');
    expect((await client.get<Node>(NODES, 'n1')).spec?.podCIDR).toBe('10.244.1.0/24');
  });

  it('update with a stale resourceVersion is a Conflict; get of a missing node is NotFound', async () => {
    await setup();
    const created = await client.create<Node>(NODES, { metadata: { name: 'n1' } });
    await client.update<Node>(NODES, { ...created, metadata: { ...created.metadata, labels: { a: '1' } } });
    const err = await client.update<Node>(NODES, { ...created, metadata: { ...created.metadata, labels: { a: '2' } } }).catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    expect(isNotFound(await client.get(NODES, 'nope').catch((e: unknown) => e))).toBe(true);
  });

  it('a write whose answer is lost is reported with an unknown outcome, and did happen', async () => {
    await setup();
    await client.create<Node>(NODES, { metadata: { name: 'n1' } });
    api.faults.inject({ resource: 'nodes', verb: 'patch', dropResponse: true, count: 1 });
    const err = await client.patch(NODES, 'n1', { metadata: { labels: { x: 'y' } } }, 'merge').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(writeOutcome(err)).toBe('unknown');
    expect((await client.get(NODES, 'n1')).metadata.labels).toEqual({ x: 'y' });
  });

  it('a slow write times out with an unknown outcome', async () => {
    await setup();
    await client.create<Node>(NODES, { metadata: { name: 'n1' } });
    api.faults.inject({ resource: 'nodes', verb: 'patch', latencyMs: 1000, count: 1 });
    const err = await client.patch(NODES, 'n1', { metadata: { labels: { x: 'y' } } }, 'merge').catch((e: unknown) => e);
    expect((err as TransportError).kind).toBe('timeout');
    expect(writeOutcome(err)).toBe('unknown');
  });

  it('throttling carries Retry-After and means not applied (when retries are used up)', async () => {
    api = await startApiServerDouble();
    client = new KubeClient(kubeConfigFromString(api.kubeconfig), { writeTimeoutMs: 300, throttledRetries: 0 });
    api.faults.inject({ resource: 'nodes', verb: 'create', status: 429, retryAfterSeconds: 3, count: 1 });
    const err = await client.create<Node>(NODES, { metadata: { name: 'n1' } }).catch((e: unknown) => e);
    expect(isTooManyRequests(err)).toBe(true);
    expect((err as ApiError).retryAfterSeconds).toBe(3);
    expect(writeOutcome(err)).toBe('not-applied');
  });

  it('a 429 is sent again after its Retry-After (API Priority and Fairness), not failed', async () => {
    await setup();
    api.faults.inject({ resource: 'nodes', verb: 'create', status: 429, retryAfterSeconds: 1, count: 2 });
    const started = Date.now();
    const created = await client.create<Node>(NODES, { metadata: { name: 'n1' } });
    expect(created.metadata.name).toBe('n1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(api.count({ verb: 'create', resource: 'nodes' })).toBe(3);
  });

  it('every request waits for the shared QPS limiter; lease calls (ungated) do not', async () => {
    api = await startApiServerDouble();
    const waits: number[] = [];
    const limiter = new TokenBucket(20, 2);
    client = new KubeClient(kubeConfigFromString(api.kubeconfig), { rateLimiter: limiter, onRateLimited: (ms) => waits.push(ms) });
    const started = Date.now();
    await Promise.all(Array.from({ length: 12 }, (_, i) => client.create<Node>(NODES, { metadata: { name: `q${i}` } })));
    // A burst of 2, then 20 per second: the 12th request goes out about 500 ms after the first.
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(waits).toHaveLength(12);
    expect(waits.filter((w) => w === 0)).toHaveLength(2);
    const before = waits.length;
    await client.get<Node>(NODES, 'q0', { ungated: true });
    expect(waits).toHaveLength(before);
  });

  it('serves clustercidrs and servicecidrs at the descriptor paths', async () => {
    await setup();
    const list = await client.list(CLUSTERCIDRS);
    expect(list.items).toEqual(expect.any(Array));
    expect((await client.list(SERVICECIDRS)).items).toEqual(expect.any(Array));
    expect(api.count({ verb: 'list', resource: 'clustercidrs' })).toBe(1);
  });
});
