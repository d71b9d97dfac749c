// Metrics of the cloud node lifecycle controller, on the manager's registry. Provider calls are
// counted in the shared cloudprovider_requests_total (operations instancesExist, instancesShutdown).
import { Counter, Histogram, type Registry } from 'prom-client';

export interface LifecycleMetrics {
  /** One per decision acted on: delete, taint, untaint; result success, error, conflict, gone. */
  actions: Counter<'action' | 'result'>;
  /** Nodes the provider could not answer for in a period (left alone, asked again). */
  unanswered: Counter<'reason'>;
  monitorDuration: Histogram;
}

function getOrCreate<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

export function lifecycleMetrics(registry: Registry): LifecycleMetrics {
  const registers = [registry];
  return {
    actions: getOrCreate(registry, 'cloud_node_lifecycle_actions_total', () => new Counter({
      name: 'cloud_node_lifecycle_actions_total',
      help: 'Actions of the cloud node lifecycle controller by action (delete, taint, untaint) and result (success, error, conflict, gone).',
      labelNames: ['action', 'result'] as const, registers,
    })),
    unanswered: getOrCreate(registry, 'cloud_node_lifecycle_unanswered_total', () => new Counter({
      name: 'cloud_node_lifecycle_unanswered_total',
      help: 'Not-Ready nodes left alone for a period because the cloud provider could not answer for them, or (reason sharedInstance) another Node has the same instance, by reason.',
      labelNames: ['reason'] as const, registers,
    })),
    monitorDuration: getOrCreate(registry, 'cloud_node_lifecycle_monitor_duration_seconds', () => new Histogram({
      name: 'cloud_node_lifecycle_monitor_duration_seconds',
      help: 'Duration of one pass of the cloud node lifecycle controller over the cached nodes.',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers,
    })),
  };
}
