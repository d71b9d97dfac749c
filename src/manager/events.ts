// The controllers' NodeEventSink over the runtime's EventRecorder (client-go style correlator:
// repeats bump `count`, floods are combined and rate-limited). Writes go through the same client,
// so they are fenced with every other write.
import { Counter, type Registry } from 'prom-client';
import type { KubeClient } from '../kube/client.js';
import { EventRecorder, type EventDropReason } from '../kube/events.js';
import type { KubeObject } from '../kube/types.js';
import type { NodeEventSink } from '../controllers/seams.js';
import type { Logger } from '../log.js';

export interface NodeEvents extends NodeEventSink {
  recorder: EventRecorder;
}

/**
 * Event writes of the whole process: a burst of 100, then 10 a second. A round over 100,000 nodes
 * that all warn posts a bounded number of events; every warning is still in the log.
 */
export const EVENT_RATE = { qps: 10, burst: 100 } as const;

export const EVENTS_DROPPED_METRIC = 'node_address_ccm_events_dropped_total';

/** The drop counter; one per registry, shared by every leadership term's recorder. */
function droppedCounter(registry: Registry): Counter<'reason'> {
  const existing = registry.getSingleMetric(EVENTS_DROPPED_METRIC);
  if (existing) return existing as Counter<'reason'>;
  return new Counter({ name: EVENTS_DROPPED_METRIC, help: 'Events not written, by why: spam (the per-object filter), rate (the process-wide limit), full (the queue), fenced (the lease was lost).', labelNames: ['reason'], registers: [registry] });
}

export function createNodeEventSink(client: KubeClient, options: { component: string; host?: string; logger?: Logger; rate?: { qps: number; burst: number } | null; registry?: Registry }): NodeEvents {
  const rate = options.rate === undefined ? EVENT_RATE : options.rate;
  const dropped = options.registry ? droppedCounter(options.registry) : undefined;
  const recorder = new EventRecorder({
    client,
    // A burst of new nodes emits one Synced event each; keep them rather than dropping at 1,000.
    maxPending: 20_000,
    ...(rate ? { rate } : {}),
    component: options.component,
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(dropped ? { onDropped: (reason: EventDropReason) => dropped.inc({ reason }) } : {}),
  });
  return {
    recorder,
    emit: (node, type, reason, message) => recorder.nodeEvent(node as KubeObject, type, reason, message),
  };
}
