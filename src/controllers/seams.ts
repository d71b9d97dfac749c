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

/** The node writes the controllers make. */
export interface NodeWriter {
  get(name: string): Promise<NodeObject>;
  /** JSON merge patch of node/status. */
  patchStatus(name: string, patch: unknown): Promise<NodeObject>;
  /** JSON merge patch of the node (metadata and spec). */
  patch(name: string, patch: unknown): Promise<NodeObject>;
  /**
   * The same patch when the caller has no use for the node it returns: the answer is read but not
   * parsed (most of the garbage a joining node makes is parsing the 12 KB Nodes the server sends).
   */
  patchDiscardingResult(name: string, patch: unknown): Promise<void>;
}

/** Node deletion, kept apart from NodeWriter: only the lifecycle controller deletes. */
export interface NodeDeleter {
  /** DELETE the node only if it still has this uid (preconditions.uid): a re-created Node of the same name stays. */
  delete(name: string, uid: string): Promise<void>;
}
