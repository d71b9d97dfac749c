// Pure decisions of the cloud node lifecycle controller: for one node, given what the provider
// said about its instance so far, what to do next. The controller asks the provider in rounds
// (existence first, shutdown only for instances that exist), calling decideLifecycle again with
// each answer, and turns the final decision into at most one API write.
import type { InstanceResult } from '../../../providers/types.js';
import type { NodeObject, Taint } from '../../model/node.js';
import { ProviderIDEventReason, sharedInstanceMessage, type InstanceHolder } from '../provider-ids/decide.js';

/** The taint a node gets while its instance is shut down (key as the cloud-provider library sets it). */
export const SHUTDOWN_TAINT_KEY = 'node.cloudprovider.kubernetes.io/shutdown';
export const SHUTDOWN_TAINT: Readonly<Taint> = Object.freeze({ key: SHUTDOWN_TAINT_KEY, effect: 'NoSchedule' });

/** A node carrying this label (any value) is never deleted or tainted by the lifecycle controller. */
export const LIFECYCLE_EXCLUDE_LABEL = 'node.kubernetes.io/exclude-from-lifecycle-management';

export const LifecycleEventReason = {
  /** Normal: the node's instance is gone and the Node is being deleted. */
  Deleting: 'DeletingNode',
  /** Warning: the instance was reported missing, and the deletion waits (a young node, or one answer only). */
  DeleteDeferred: 'DeletingNodeDeferred',
  /** Warning: the DELETE failed (other than "already gone" or "re-created"). */
  DeleteFailed: 'DeletingNodeFailed',
  /** Warning: another Node has the same instance: this one is neither deleted nor tainted. */
  SharedInstance: ProviderIDEventReason.InUse,
} as const;

/**
 * When a missing instance is trusted. Clouds are eventually consistent (an instance can be
 * missing from a listing for seconds after launch), so a Node is deleted only once it is older
 * than the start-up grace period and its instance was reported missing by two answers at least
 * one monitor period apart.
 */
export interface DeletionGuard {
  /** Now, in ms since the epoch. */
  now: number;
  /** --node-startup-grace-period: a younger Node is never deleted. */
  startupGraceMs: number;
  /** The second missing answer must come at least this long after the first (--node-monitor-period). */
  confirmAfterMs: number;
  /** When this Node's instance was first reported missing (and not found again since), if it was. */
  missingSince?: number;
}

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
  /** The instance was reported missing, but it is not trusted yet (DeletionGuard): a Warning event says why. */
  | { kind: 'deferDelete'; why: 'young' | 'unconfirmed'; message: string }
  /** The instance is shut down: add the shutdown taint. */
  | { kind: 'addTaint' }
  /** The provider could not answer (error, no answer, no uid to guard with): leave it, ask again next period. */
  | { kind: 'leave'; reason: 'providerError' | 'noAnswer' | 'noUID' | 'vanished'; detail: string }
  /** Another live Node has the same instance: which of them the instance's state is about is unknown. */
  | { kind: 'leave'; reason: 'sharedInstance'; detail: string; message: string };

/** The DeletingNode event message. */
export function deletingMessage(nodeName: string, provider: string, reason?: string): string {
  return `Deleting node ${nodeName}: its instance no longer exists in cloud provider ${provider}${reason ? ` (${reason})` : ''}`;
}

/** Go's form of a duration ("4m37s", "5m0s", "750ms"), as Kubernetes prints one. */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  return h > 0 ? `${h}h${m}m${sec}s` : m > 0 ? `${m}m${sec}s` : `${sec}s`;
}

/** Whether a missing instance may be trusted yet; the deferral when not. */
function deferral(node: NodeObject, provider: string, guard: DeletionGuard): LifecycleDecision | undefined {
  const created = Date.parse(node.metadata.creationTimestamp ?? '');
  const age = Number.isFinite(created) ? guard.now - created : Infinity;
  const missing = `instance not found by cloud provider ${provider}`;
  if (age < guard.startupGraceMs) {
    return { kind: 'deferDelete', why: 'young', message: `${missing}, but the Node is ${goDuration(age)} old: it is not deleted before it is ${goDuration(guard.startupGraceMs)} old (--node-startup-grace-period)` };
  }
  const missingFor = guard.now - (guard.missingSince ?? guard.now);
  if (missingFor < guard.confirmAfterMs) {
    return { kind: 'deferDelete', why: 'unconfirmed', message: `${missing}: the Node is deleted if the instance is still missing ${goDuration(guard.confirmAfterMs)} after the first such answer (--node-monitor-period)` };
  }
  return undefined;
}

/**
 * The next step for one node. Ready nodes never cost a provider call; a node whose existence the
 * provider could not establish is never deleted, nor one whose missing instance the guard does
 * not trust yet; shut down is only asked of instances that exist.
 */
export function decideLifecycle(node: NodeObject, answers: LifecycleAnswers, provider: string, guard?: DeletionGuard, sharedWith?: InstanceHolder): LifecycleDecision {
  if (Object.prototype.hasOwnProperty.call(node.metadata.labels ?? {}, LIFECYCLE_EXCLUDE_LABEL)) return { kind: 'none', why: 'excluded' };
  if (readyStatus(node) === 'True') return hasShutdownTaint(node) ? { kind: 'removeTaint' } : { kind: 'none', why: 'ready' };
  // Already on its way out (finalizers pending): a second DELETE or a taint would change nothing.
  if (node.metadata.deletionTimestamp) return { kind: 'none', why: 'beingDeleted' };
  // Deliberate deviation (README): two Nodes claim one instance; an answer about it could be about
  // either, so neither is deleted or tainted on it.
  if (sharedWith) {
    const message = sharedInstanceMessage(node, sharedWith);
    return { kind: 'leave', reason: 'sharedInstance', detail: message, message };
  }

  const exists = answers.exists;
  if (exists === undefined) return { kind: 'askExists' };
  if (exists === null) return { kind: 'leave', reason: 'noAnswer', detail: `cloud provider ${provider} gave no answer for this node` };
  if (exists.kind === 'error') return { kind: 'leave', reason: 'providerError', detail: exists.error.message };
  if (exists.kind === 'notFound' || !exists.value) {
    const uid = node.metadata.uid;
    // Without a uid the DELETE could not be guarded against a re-created Node of the same name.
    if (!uid) return { kind: 'leave', reason: 'noUID', detail: 'the cached node has no metadata.uid; not deleting unguarded' };
    const deferred = guard && deferral(node, provider, guard);
    if (deferred) return deferred;
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
