// The controllers' NodeEventSink over the API: core/v1 Events about nodes, aggregated so a
// repeated (node, type, reason, message) bumps `count` on the existing Event instead of creating
// a new one. Writes are fire-and-forget (an event must never block or fail a sync) and go through
// the same client, so they are fenced with every other write.
import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { EVENTS, type EventObject } from '../kube/types.js';
import type { NodeObject } from '../controllers/node.js';
import type { EventType, NodeEventSink } from '../controllers/seams.js';
import { silentLogger, type Logger } from '../log.js';

export interface NodeEventSinkOptions {
  component: string;
  host?: string;
  /** Node events live in the default namespace, as the kubelet's and the reference's do. */
  namespace?: string;
  logger?: Logger;
  /** Aggregation entries kept (least recently used dropped first; default 4096). */
  maxEntries?: number;
}

interface Entry {
  name: string;
  count: number;
  chain: Promise<void>;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

export function createNodeEventSink(client: KubeClient, options: NodeEventSinkOptions): NodeEventSink & { flush(): Promise<void> } {
  const namespace = options.namespace ?? 'default';
  const log = options.logger ?? silentLogger;
  const max = options.maxEntries ?? 4096;
  const entries = new Map<string, Entry>();
  const pending = new Set<Promise<void>>();

  const track = (p: Promise<void>): void => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  const create = async (node: NodeObject, type: EventType, reason: string, message: string, entry: Entry): Promise<void> => {
    const now = Date.now();
    const ev: EventObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: entry.name, namespace },
      involvedObject: { kind: 'Node', apiVersion: 'v1', name: node.metadata.name, ...(node.metadata.uid ? { uid: node.metadata.uid } : {}) },
      reason, message, type,
      source: { component: options.component, ...(options.host ? { host: options.host } : {}) },
      firstTimestamp: rfc3339(now),
      lastTimestamp: rfc3339(now),
      count: 1,
      reportingComponent: options.component,
      reportingInstance: options.host ?? '',
    };
    await client.create<EventObject>(EVENTS, ev, { namespace });
  };

  const emit = (node: NodeObject, type: EventType, reason: string, message: string): void => {
    const key = JSON.stringify([node.metadata.name, node.metadata.uid ?? '', type, reason, message]);
    let entry = entries.get(key);
    if (entry) {
      entries.delete(key);
      entries.set(key, entry);
      entry.count++;
      const count = entry.count;
      const e = entry;
      entry.chain = entry.chain.then(async () => {
        try {
          await client.patch<EventObject>(EVENTS, e.name, { count, lastTimestamp: rfc3339(Date.now()) }, 'merge', { namespace });
        } catch (err) {
          if (isNotFound(err)) await create(node, type, reason, message, e).catch(() => undefined);
          else log.debug({ err, node: node.metadata.name, reason }, 'event update failed');
        }
      });
      track(entry.chain);
      return;
    }
    const name = `${node.metadata.name}.${Date.now().toString(16)}${randomBytes(3).toString('hex')}`;
    entry = { name, count: 1, chain: Promise.resolve() };
    entries.set(key, entry);
    if (entries.size > max) entries.delete(entries.keys().next().value as string);
    const e = entry;
    entry.chain = create(node, type, reason, message, e).catch((err: unknown) => {
      log.debug({ err, node: node.metadata.name, reason }, 'event create failed');
    });
    track(entry.chain);
  };

  return {
    emit,
    async flush() {
      await Promise.all([...pending]);
    },
  };
}
