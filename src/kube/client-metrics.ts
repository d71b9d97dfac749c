// client-go's REST client metrics under its names and labels, so dashboards and alerts written
// for Kubernetes components work unchanged: requests by status code, request latency, and the
// time spent waiting for the client-side rate limiter (--kube-api-qps/--kube-api-burst).
import { Counter, Histogram, type Registry } from 'prom-client';
import type { KubeClientOptions } from './client.js';

// client-go's buckets (k8s.io/component-base/metrics/prometheus/restclient).
const LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

function getOrCreate<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

/** The KubeClient hooks that feed the metrics (one registry may serve several clients). */
export function restClientMetrics(registry: Registry, host: string): Pick<KubeClientOptions, 'onRequest' | 'onRateLimited'> {
  const registers = [registry];
  const requests = getOrCreate(registry, 'rest_client_requests_total', () => new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'] as const, registers,
  }));
  const duration = getOrCreate(registry, 'rest_client_request_duration_seconds', () => new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'] as const, buckets: LATENCY_BUCKETS, registers,
  }));
  const limiter = getOrCreate(registry, 'rest_client_rate_limiter_duration_seconds', () => new Histogram({
    name: 'rest_client_rate_limiter_duration_seconds',
    help: 'Client side rate limiter latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'] as const, buckets: LATENCY_BUCKETS, registers,
  }));
  return {
    onRequest: (r) => {
      requests.inc({ code: r.code, method: r.method, host: r.host });
      duration.observe({ verb: r.method, host: r.host }, r.seconds);
    },
    onRateLimited: (waitedMs, method) => limiter.observe({ verb: method, host }, waitedMs / 1000),
  };
}
