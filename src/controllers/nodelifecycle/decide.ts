// Pure decisions of the cloud node lifecycle controller: for one node, given what the provider
// said about its instance so far, what to do next. The controller asks the provider in rounds
// (existence first, shutdown only for instances that exist), calling decideLifecycle again with
// each answer, and turns the final decision into at most one API write.
import type { InstanceResult } from '../../../providers/types.js';
import type { NodeObject, Taint } from '../../model/node.js';

/** The taint a node gets while its instance is shut down (key as the cloud-provider library sets it). */
export const SHUTDOWN_TAINT_KEY = 'node.cloudprovider.kubernetes.io/shutdown';
export const SHUTDOWN_TAINT: Readonly<Taint> = Object.freeze({ key: SHUTDOWN_TAINT_KEY, effect: 'NoSchedule' });

/** A node carrying this label (any value) is never deleted or tainted by the lifecycle controller. */
export const LIFECYCLE_EXCLUDE_LABEL = 'node.kubernetes.io/exclude-from-lifecycle-management';

export const LifecycleEventReason = {
  /** Normal: the node's instance is gone and the Node is being deleted. */
  Deleting: 'DeletingNode',
  /** Warning: the DELETE failed (other than "already gone" or "re-created"). */
  DeleteFailed: 'DeletingNodeFailed',
} as const;

export type ReadyStatus = 'True' | 'False' | 'Unknown';

/** The node's Ready condition status; a missing condition (or an odd value) counts as Unknown. */
export function readyStatus(node: NodeObject): ReadyStatus {
  const conditions = node.status?.conditions;
  if (!Array.isArray(conditions)) return 'Unknown';
  const ready = conditions.find((c: { type?: unknown }) => c?.type === 'Ready') as { status?: unknown } | undefined;
  return ready?.status === 'True' || ready?.status === 'False' ? ready.status : 'Unknown';
}

/** Matched by key and effect, as Kubernetes matches taints. */
function isShutdownTaint(t: Taint): boolean {
  return t.key === SHUTDOWN_TAINT_KEY && t.effect === SHUTDOWN_TAINT.effect;
}

export function hasShutdownTaint(node: NodeObject): boolean {
  return (node.spec?.taints ?? []).some(isShutdownTaint);
}

/** What the provider said so far; undefined: not asked yet (or it gave no entry for this node). */
export interface LifecycleAnswers {
  /** instancesExist; `null`: asked, and the provider left this node out of its answer. */
  exists?: InstanceResult<boolean> | null;
  /** instancesShutdown; `null`: asked, and the provider left this node out of its answer. */
  shutdown?: InstanceResult<boolean> | null;
}

export type LifecycleDecision =
  /** Nothing to do this period. */
  | { kind: 'none'; why: 'excluded' | 'ready' | 'running' | 'alreadyTainted' | 'beingDeleted' }
  /** Ready again: drop the shutdown taint. */
  | { kind: 'removeTaint' }
  /** Not Ready: ask the provider whether the instance exists. */
  | { kind: 'askExists' }
  /** The instance exists: ask whether it is shut down. */
  | { kind: 'askShutdown' }
  /** The instance is gone: delete this Node (only the object with this uid). */
  | { kind: 'delete'; uid: string; message: string }
  /** The instance is shut down: add the shutdown taint. */
  | { kind: 'addTaint' }
  /** The provider could not answer (error, no answer, no uid to guard with): leave it, ask again next period. */
  | { kind: 'leave'; reason: 'providerError' | 'noAnswer' | 'noUID' | 'vanished'; detail: string };

/** The DeletingNode event message. */
export function deletingMessage(nodeName: string, provider: string, reason?: string): string {
  return `Deleting node ${nodeName}: its instance no longer exists in cloud provider ${provider}${reason ? ` (${reason})` : ''}`;
}

/**
 * The next step for one node. Ready nodes never cost a provider call; a node whose existence the
 * provider could not establish is never deleted; shut down is only asked of instances that exist.
 */
export function decideLifecycle(node: NodeObject, answers: LifecycleAnswers, provider: string): LifecycleDecision {
  if (Object.prototype.hasOwnProperty.call(node.metadata.labels ?? {}, LIFECYCLE_EXCLUDE_LABEL)) return { kind: 'none', why: 'excluded' };
  if (readyStatus(node) === 'True') return hasShutdownTaint(node) ? { kind: 'removeTaint' } : { kind: 'none', why: 'ready' };
  // Already on its way out (finalizers pending): a second DELETE or a taint would change nothing.
  if (node.metadata.deletionTimestamp) return { kind: 'none', why: 'beingDeleted' };

  const exists = answers.exists;
  if (exists === undefined) return { kind: 'askExists' };
  if (exists === null) return { kind: 'leave', reason: 'noAnswer', detail: `cloud provider ${provider} gave no answer for this node` };
  if (exists.kind === 'error') return { kind: 'leave', reason: 'providerError', detail: exists.error.message };
  if (exists.kind === 'notFound' || !exists.value) {
    const uid = node.metadata.uid;
    // Without a uid the DELETE could not be guarded against a re-created Node of the same name.
    if (!uid) return { kind: 'leave', reason: 'noUID', detail: 'the cached node has no metadata.uid; not deleting unguarded' };
    return { kind: 'delete', uid, message: deletingMessage(node.metadata.name, provider, exists.kind === 'notFound' ? exists.reason : undefined) };
  }

  const shutdown = answers.shutdown;
  if (shutdown === undefined) return { kind: 'askShutdown' };
  if (shutdown === null) return { kind: 'leave', reason: 'noAnswer', detail: `cloud provider ${provider} gave no shutdown answer for this node` };
  if (shutdown.kind === 'error') return { kind: 'leave', reason: 'providerError', detail: shutdown.error.message };
  // Gone between the two calls: the next period's existence check decides.
  if (shutdown.kind === 'notFound') return { kind: 'leave', reason: 'vanished', detail: `instance not found when asked whether it is shut down${shutdown.reason ? `: ${shutdown.reason}` : ''}` };
  if (!shutdown.value) return { kind: 'none', why: 'running' };
  return hasShutdownTaint(node) ? { kind: 'none', why: 'alreadyTainted' } : { kind: 'addTaint' };
}

/** The node's taints with the shutdown taint added (once) or removed; undefined when nothing changes. */
export function shutdownTaints(node: NodeObject, want: 'add' | 'remove'): Taint[] | undefined {
  const taints = node.spec?.taints ?? [];
  const has = taints.some(isShutdownTaint);
  if (want === 'add') return has ? undefined : [...taints.map((t) => ({ ...t })), { ...SHUTDOWN_TAINT }];
  return has ? taints.filter((t) => !isShutdownTaint(t)).map((t) => ({ ...t })) : undefined;
}

/**
 * JSON merge patch replacing the taint list, guarded by the node's resourceVersion: the list is
 * replaced as a whole, so a taint another writer added meanwhile must turn this into a 409.
 */
export function taintPatch(node: NodeObject, taints: readonly Taint[]): { metadata: { resourceVersion: string }; spec: { taints: Taint[] | null } } {
  const resourceVersion = node.metadata.resourceVersion;
  if (!resourceVersion) throw new Error(`node ${node.metadata.name}: metadata.resourceVersion is empty; cannot guard the taint write`);
  return { metadata: { resourceVersion }, spec: { taints: taints.length > 0 ? taints.map((t) => ({ ...t })) : null } };
}
