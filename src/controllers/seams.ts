// The narrow interfaces the controllers depend on, so the loops stay thin and testable: a node
// cache fed by a supervised watch, an event sink, and node writes. The manager adapts the runtime
// (src/kube) to these.
import type { NodeObject } from '../model/node.js';

export interface NodeHandlers {
  add?(node: NodeObject): void;
  update?(oldNode: NodeObject, node: NodeObject): void;
  delete?(node: NodeObject): void;
}

/** A read-only view of the nodes, kept current by a list+watch. */
export interface NodeCache {
  get(name: string): NodeObject | undefined;
  list(): NodeObject[];
  /** Registers handlers; objects already in the cache are replayed as adds. */
  addHandlers(handlers: NodeHandlers): void;
}

export type EventType = 'Normal' | 'Warning';

/** Records events about nodes; repeats are aggregated by the implementation. Never throws. */
export interface NodeEventSink {
  emit(node: NodeObject, type: EventType, reason: string, message: string): void;
}

/** The node writes the controllers make, as JSON merge patches. */
export interface NodeWriter {
  get(name: string): Promise<NodeObject>;
  /** Patch of node/status; the node it returns plans the next write (its new resourceVersion). */
  patchStatus(name: string, patch: unknown): Promise<NodeObject>;
  /** Patch of the node (metadata and spec). No controller reads the node it writes, so none is returned. */
  patch(name: string, patch: unknown): Promise<void>;
}

/** Node deletion, kept apart from NodeWriter: only the lifecycle controller deletes. */
export interface NodeDeleter {
  /** DELETE the node only if it still has this uid (preconditions.uid): a re-created Node of the same name stays. */
  delete(name: string, uid: string): Promise<void>;
}
