// An in-memory node store for controller unit tests: RFC 7386 merge patches, resourceVersion
// preconditions (409 like the API server), synchronous handler delivery, and a log of writes.
import { ApiError } from '../../src/kube/errors.js';
import type { NodeObject } from '../../src/model/node.js';
import type { NodeCache, NodeEventSink, NodeHandlers, NodeWriter, EventType } from '../../src/controllers/seams.js';

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export interface WriteRecord {
  kind: 'status' | 'patch';
  name: string;
  body: unknown;
}

export class MemoryNodes implements NodeCache {
  readonly nodes = new Map<string, NodeObject>();
  readonly writes: WriteRecord[] = [];
  readonly #handlers: NodeHandlers[] = [];
  #rv = 100;
  /** Called before each write is applied; may mutate the store (a concurrent writer) or throw. */
  beforeWrite: ((w: WriteRecord) => void) | undefined;

  put(node: NodeObject): NodeObject {
    const old = this.nodes.get(node.metadata.name);
    const stored = structuredClone(node);
    stored.metadata.resourceVersion = String(++this.#rv);
    stored.metadata.creationTimestamp ??= new Date().toISOString();
    this.nodes.set(stored.metadata.name, stored);
    for (const h of this.#handlers) {
      if (old) h.update?.(old, stored);
      else h.add?.(stored);
    }
    return stored;
  }

  /** Deletes a node, as a watch DELETED event would report it. */
  remove(name: string): void {
    const old = this.nodes.get(name);
    if (!old) return;
    this.nodes.delete(name);
    for (const h of this.#handlers) h.delete?.(old);
  }

  get(name: string): NodeObject | undefined {
    return this.nodes.get(name);
  }

  list(): NodeObject[] {
    return [...this.nodes.values()];
  }

  addHandlers(h: NodeHandlers): void {
    this.#handlers.push(h);
    for (const n of this.nodes.values()) h.add?.(n);
  }

  #write(w: WriteRecord): NodeObject {
    this.beforeWrite?.(w);
    const current = this.nodes.get(w.name);
    if (!current) throw new ApiError({ code: 404, message: `nodes "${w.name}" not found`, method: 'PATCH', path: `/api/v1/nodes/${w.name}` });
    const body = structuredClone(w.body) as { metadata?: { resourceVersion?: string } };
    const rv = body.metadata?.resourceVersion;
    if (rv !== undefined && rv !== current.metadata.resourceVersion) {
      throw new ApiError({ code: 409, reason: 'Conflict', message: 'the object has been modified', method: 'PATCH', path: `/api/v1/nodes/${w.name}` });
    }
    if (body.metadata) delete body.metadata.resourceVersion;
    this.writes.push(w);
    return this.put(mergePatch(current, body) as NodeObject);
  }

  patchStatus(name: string, patch: unknown): Promise<NodeObject> {
    return Promise.resolve().then(() => this.#write({ kind: 'status', name, body: patch }));
  }

  patch(name: string, patch: unknown): Promise<NodeObject> {
    return Promise.resolve().then(() => this.#write({ kind: 'patch', name, body: patch }));
  }

  /** NodeWriter.get (async read of the latest object). */
  read: NodeWriter['get'] = (name) => {
    const n = this.nodes.get(name);
    if (!n) return Promise.reject(new ApiError({ code: 404, message: 'not found', method: 'GET', path: `/api/v1/nodes/${name}` }));
    return Promise.resolve(structuredClone(n));
  };

  writer(): NodeWriter {
    return {
      get: this.read,
      patch: async (n, p) => {
        await this.patch(n, p);
      },
      patchStatus: (n, p) => this.patchStatus(n, p),
    };
  }
}

export interface RecordedEvent {
  node: string;
  type: EventType;
  reason: string;
  message: string;
}

export class MemoryEvents implements NodeEventSink {
  readonly events: RecordedEvent[] = [];
  emit(node: NodeObject, type: EventType, reason: string, message: string): void {
    this.events.push({ node: node.metadata.name, type, reason, message });
  }
  for(node: string): RecordedEvent[] {
    return this.events.filter((e) => e.node === node);
  }
}
