// client-go's rest_client_* metrics from a real KubeClient against the double: status codes,
// "<error>" for a request that got no answer, latency per verb, and time waiting for the limiter.
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { restClientMetrics } from '../../src/kube/client-metrics.js';
import { TokenBucket } from '../../src/kube/token-bucket.js';
import { NODES } from '../../src/kube/types.js';
import { startApiServerDouble, type ApiServerDouble } from '../../src/double/server.js';

let api: ApiServerDouble | undefined;
let client: KubeClient | undefined;

afterEach(async () => {
  client?.close();
  await api?.stop();
  api = undefined;
});

const value = async (registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> => {
  const m = await registry.getSingleMetric(name)?.get();
  return m?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
};

describe('restClientMetrics', () => {
  it('counts requests by code, method and host, and their latency by verb and host', async () => {
    api = await startApiServerDouble();
    const host = `127.0.0.1:${api.port}`;
    const registry = new Registry();
    client = new KubeClient(kubeConfigFromString(api.kubeconfig), restClientMetrics(registry, host));
    await client.list(NODES);
    await client.list(NODES);
    await expect(client.get(NODES, 'missing')).rejects.toThrow();
    expect(await value(registry, 'rest_client_requests_total', { code: '200', method: 'GET', host })).toBe(2);
    expect(await value(registry, 'rest_client_requests_total', { code: '404', method: 'GET', host })).toBe(1);
    expect(await value(registry, 'rest_client_request_duration_seconds', { verb: 'GET', host, le: '+Inf' })).toBe(3);
    await api.stop();
    await expect(client.list(NODES)).rejects.toThrow();
    // A pooled connection the stopping server reset makes the GET go once more, refused too: one
    // or two attempts, each counted.
    const errors = await value(registry, 'rest_client_requests_total', { code: '<error>', method: 'GET', host });
    expect(errors).toBeGreaterThanOrEqual(1);
    expect(errors).toBeLessThanOrEqual(2);
  });

  it('records the time each request waited for the rate limiter', async () => {
    api = await startApiServerDouble();
    const host = `127.0.0.1:${api.port}`;
    const registry = new Registry();
    // Burst 1 at 20/s: the second and third requests wait about 50 ms each.
    client = new KubeClient(kubeConfigFromString(api.kubeconfig), { rateLimiter: new TokenBucket(20, 1), ...restClientMetrics(registry, host) });
    for (let i = 0; i < 3; i++) await client.list(NODES);
    expect(await value(registry, 'rest_client_rate_limiter_duration_seconds', { verb: 'GET', host, le: '+Inf' })).toBe(3);
    const waited = (await registry.getSingleMetric('rest_client_rate_limiter_duration_seconds')?.get())?.values.find((v) => (v as { metricName?: string }).metricName === 'rest_client_rate_limiter_duration_seconds_sum')?.value;
    expect(waited).toBeGreaterThan(0.03);
  });
});
