// Controller metrics on the manager's own prom-client registry.
import { Counter, Histogram, type Registry } from 'prom-client';

// Node sync delays are seconds to minutes; the reference uses exponential buckets the same way.
const DELAY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
const CALL_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface CloudNodeMetrics {
  initialNodeSyncDelay: Histogram;
  taintRemovalDelay: Histogram;
  cloudCalls: Counter<'provider' | 'operation' | 'result'>;
  cloudCallDuration: Histogram<'provider' | 'operation'>;
  nodeWrites: Counter<'kind' | 'result'>;
}

function getOrCreate<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

export function cloudNodeMetrics(registry: Registry): CloudNodeMetrics {
  const registers = [registry];
  return {
    initialNodeSyncDelay: getOrCreate(registry, 'node_controller_initial_node_sync_delay_seconds', () => new Histogram({
      name: 'node_controller_initial_node_sync_delay_seconds',
      help: 'Number of seconds after node creation when the node controller finished the initial synchronization of a single node.',
      buckets: DELAY_BUCKETS, registers,
    })),
    taintRemovalDelay: getOrCreate(registry, 'node_controller_cloud_provider_taint_removal_delay_seconds', () => new Histogram({
      name: 'node_controller_cloud_provider_taint_removal_delay_seconds',
      help: 'Number of seconds after node creation when the node controller removed the cloud-provider taint of a single node.',
      buckets: DELAY_BUCKETS, registers,
    })),
    cloudCalls: getOrCreate(registry, 'cloudprovider_requests_total', () => new Counter({
      name: 'cloudprovider_requests_total',
      help: 'Cloud provider calls by provider, operation and result (success, error, partial).',
      labelNames: ['provider', 'operation', 'result'] as const, registers,
    })),
    cloudCallDuration: getOrCreate(registry, 'cloudprovider_request_duration_seconds', () => new Histogram({
      name: 'cloudprovider_request_duration_seconds',
      help: 'Latency of cloud provider calls by provider and operation.',
      labelNames: ['provider', 'operation'] as const, buckets: CALL_BUCKETS, registers,
    })),
    nodeWrites: getOrCreate(registry, 'node_controller_node_writes_total', () => new Counter({
      name: 'node_controller_node_writes_total',
      help: 'Node writes by the cloud node controller, by kind (status, initialize, labels) and result.',
      labelNames: ['kind', 'result'] as const, registers,
    })),
  };
}
