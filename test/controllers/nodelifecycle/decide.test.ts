// The lifecycle decision per node: Ready × exists × shutdown × provider error × no answer, as a
// table, plus properties over every combination (a Ready node never costs a provider call; only a
// definite "gone" from the provider ever deletes).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InstanceResult } from '../../../providers/types.js';
import {
  decideLifecycle, hasShutdownTaint, LIFECYCLE_EXCLUDE_LABEL, readyStatus, SHUTDOWN_TAINT, SHUTDOWN_TAINT_KEY, shutdownTaints, taintPatch,
  type LifecycleAnswers, type LifecycleDecision,
} from '../../../src/controllers/nodelifecycle/decide.js';
import type { NodeObject } from '../../../src/model/node.js';
import { makeNode, UNINITIALIZED, type MakeNodeOptions } from '../../kit/nodes.js';

const yes: InstanceResult<boolean> = { kind: 'found', value: true };
const no: InstanceResult<boolean> = { kind: 'found', value: false };
const gone: InstanceResult<boolean> = { kind: 'notFound', reason: 'terminated' };
const boom: InstanceResult<boolean> = { kind: 'error', error: new Error('throttled'), retryable: true };

type Ready = 'True' | 'False' | 'Unknown' | undefined;

/** A row's node: n1 with a uid and without the uninitialized taint; `shutdown` puts the shutdown taint on it. */
const node = (ready: Ready, shutdown = false, o: MakeNodeOptions = {}): NodeObject =>
  makeNode({ name: 'n1', uid: 'uid-1', tainted: false, ready, taints: shutdown ? [{ ...SHUTDOWN_TAINT }] : [], ...o });

const ROWS: Array<{ ready: Ready; tainted: boolean; answers: LifecycleAnswers; want: LifecycleDecision['kind']; why?: string }> = [
  // Ready: never asks the provider; the taint goes if present.
  { ready: 'True', tainted: false, answers: {}, want: 'none', why: 'ready' },
  { ready: 'True', tainted: true, answers: {}, want: 'removeTaint' },
  { ready: 'True', tainted: true, answers: { exists: no }, want: 'removeTaint' },
  // Not Ready (False, Unknown, or no condition at all): existence first.
  { ready: 'False', tainted: false, answers: {}, want: 'askExists' },
  { ready: 'Unknown', tainted: false, answers: {}, want: 'askExists' },
  { ready: undefined, tainted: false, answers: {}, want: 'askExists' },
  { ready: 'Unknown', tainted: true, answers: {}, want: 'askExists' },
  // Gone: deleted, whatever the taint.
  { ready: 'False', tainted: false, answers: { exists: no }, want: 'delete' },
  { ready: 'Unknown', tainted: true, answers: { exists: no }, want: 'delete' },
  { ready: undefined, tainted: false, answers: { exists: gone }, want: 'delete' },
  // The provider could not answer: left alone.
  { ready: 'False', tainted: false, answers: { exists: boom }, want: 'leave', why: 'providerError' },
  { ready: 'False', tainted: false, answers: { exists: null }, want: 'leave', why: 'noAnswer' },
  // Exists: is it shut down?
  { ready: 'False', tainted: false, answers: { exists: yes }, want: 'askShutdown' },
  { ready: 'False', tainted: false, answers: { exists: yes, shutdown: yes }, want: 'addTaint' },
  { ready: 'Unknown', tainted: true, answers: { exists: yes, shutdown: yes }, want: 'none', why: 'alreadyTainted' },
  { ready: 'False', tainted: false, answers: { exists: yes, shutdown: no }, want: 'none', why: 'running' },
  // Not Ready and running: the taint stays (only Ready removes it, as in Kubernetes).
  { ready: 'False', tainted: true, answers: { exists: yes, shutdown: no }, want: 'none', why: 'running' },
  { ready: 'False', tainted: false, answers: { exists: yes, shutdown: boom }, want: 'leave', why: 'providerError' },
  { ready: 'False', tainted: false, answers: { exists: yes, shutdown: null }, want: 'leave', why: 'noAnswer' },
  { ready: 'False', tainted: false, answers: { exists: yes, shutdown: gone }, want: 'leave', why: 'vanished' },
];

describe('decideLifecycle', () => {
  it.each(ROWS)('Ready=$ready tainted=$tainted answers=$answers → $want $why', ({ ready, tainted, answers, want, why }) => {
    const d = decideLifecycle(node(ready, tainted), answers, 'static');
    expect(d.kind).toBe(want);
    if (why) expect((d as { why?: string; reason?: string }).why ?? (d as { reason?: string }).reason).toBe(why);
  });

  it('a deletion names the node, the provider and the provider reason, and carries the uid', () => {
    const d = decideLifecycle(node('False'), { exists: gone }, 'static');
    expect(d).toEqual({ kind: 'delete', uid: 'uid-1', message: 'Deleting node n1: its instance no longer exists in cloud provider static (terminated)' });
  });

  it('never deletes without a uid to guard the DELETE with', () => {
    expect(decideLifecycle(node('False', false, { uid: undefined }), { exists: no }, 'static')).toMatchObject({ kind: 'leave', reason: 'noUID' });
  });

  it('leaves excluded nodes and nodes already being deleted alone', () => {
    expect(decideLifecycle(node('False', false, { labels: { [LIFECYCLE_EXCLUDE_LABEL]: '' } }), {}, 'static')).toEqual({ kind: 'none', why: 'excluded' });
    expect(decideLifecycle(node('True', true, { labels: { [LIFECYCLE_EXCLUDE_LABEL]: 'true' } }), {}, 'static')).toEqual({ kind: 'none', why: 'excluded' });
    const deleting = node('False');
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    expect(decideLifecycle(deleting, { exists: no }, 'static')).toEqual({ kind: 'none', why: 'beingDeleted' });
  });

  const result = fc.constantFrom<InstanceResult<boolean> | null | undefined>(yes, no, gone, boom, null, undefined);
  it('property: a Ready node never asks the provider and is never deleted or tainted', () => {
    fc.assert(fc.property(fc.boolean(), result, result, (tainted, exists, shutdown) => {
      const answers: LifecycleAnswers = {};
      if (exists !== undefined) answers.exists = exists;
      if (shutdown !== undefined) answers.shutdown = shutdown;
      const d = decideLifecycle(node('True', tainted), answers, 'p');
      expect(['none', 'removeTaint']).toContain(d.kind);
    }));
  });

  it('property: only a definite "gone" deletes; an error or no answer never does', () => {
    fc.assert(fc.property(fc.constantFrom<Ready>('False', 'Unknown', undefined), fc.boolean(), result, result, (ready, tainted, exists, shutdown) => {
      const answers: LifecycleAnswers = {};
      if (exists !== undefined) answers.exists = exists;
      if (shutdown !== undefined) answers.shutdown = shutdown;
      const d = decideLifecycle(node(ready, tainted), answers, 'p');
      const definitelyGone = exists === gone || exists === no;
      expect(d.kind === 'delete').toBe(definitelyGone);
      // A taint only on a shut-down instance that exists.
      if (d.kind === 'addTaint') expect([exists, shutdown]).toEqual([yes, yes]);
    }));
  });
});

describe('readyStatus', () => {
  it.each([
    [[{ type: 'Ready', status: 'True' }], 'True'],
    [[{ type: 'Ready', status: 'False' }], 'False'],
    [[{ type: 'Ready', status: 'Unknown' }], 'Unknown'],
    [[{ type: 'NetworkUnavailable', status: 'True' }], 'Unknown'],
    [[{ type: 'Ready', status: 'Maybe' }], 'Unknown'],
    [undefined, 'Unknown'],
  ])('%j → %s', (conditions, want) => {
    const n = makeNode({ tainted: false });
    if (conditions) n.status!.conditions = conditions;
    expect(readyStatus(n)).toBe(want);
  });
});

describe('shutdownTaints and taintPatch', () => {
  it('adds the taint once, after the node\'s own taints, and removes only it', () => {
    const n = makeNode({ taints: [{ key: 'a', effect: 'NoExecute' }] });
    const added = shutdownTaints(n, 'add')!;
    expect(added).toEqual([{ key: 'a', effect: 'NoExecute' }, UNINITIALIZED, { key: SHUTDOWN_TAINT_KEY, effect: 'NoSchedule' }]);
    n.spec!.taints = added;
    expect(hasShutdownTaint(n)).toBe(true);
    expect(shutdownTaints(n, 'add')).toBeUndefined();
    expect(shutdownTaints(n, 'remove')).toEqual([{ key: 'a', effect: 'NoExecute' }, UNINITIALIZED]);
  });

  it('a same-key taint with another effect is not the shutdown taint', () => {
    const n = makeNode({ tainted: false, taints: [{ key: SHUTDOWN_TAINT_KEY, effect: 'NoExecute' }] });
    expect(hasShutdownTaint(n)).toBe(false);
    expect(shutdownTaints(n, 'remove')).toBeUndefined();
    expect(shutdownTaints(n, 'add')).toHaveLength(2);
  });

  it('is guarded by the resourceVersion; an empty list is sent as null', () => {
    const n = makeNode({ tainted: false, resourceVersion: '42', taints: [{ ...SHUTDOWN_TAINT }] });
    expect(taintPatch(n, [])).toEqual({ metadata: { resourceVersion: '42' }, spec: { taints: null } });
    delete n.metadata.resourceVersion;
    expect(() => taintPatch(n, [])).toThrow(/node-a: metadata.resourceVersion is empty/);
  });
});

describe('the deletion guard: a missing instance is trusted only for an old enough Node, on a second answer', () => {
  const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
  const node = (ageMs: number) => makeNode({ name: 'n', tainted: false, uid: 'u', ready: 'False', creationTimestamp: new Date(NOW - ageMs).toISOString() });
  const guard = (missingForMs?: number) => ({ now: NOW, startupGraceMs: 300_000, confirmAfterMs: 5000, ...(missingForMs !== undefined ? { missingSince: NOW - missingForMs } : {}) });
  it.each<[string, number, number | undefined, string]>([
    ['young, first answer', 10_000, 0, 'young'],
    ['young, missing for minutes', 200_000, 180_000, 'young'],
    ['old, first answer', 3_600_000, 0, 'unconfirmed'],
    ['old, second answer too soon', 3_600_000, 4_999, 'unconfirmed'],
    ['old, no record passed in', 3_600_000, undefined, 'unconfirmed'],
  ])('%s: deferred (%s)', (_what, age, missingFor, why) => {
    expect(decideLifecycle(node(age), { exists: gone }, 'fake', guard(missingFor))).toMatchObject({ kind: 'deferDelete', why });
  });

  it('old and confirmed a period later: deleted; exactly at the grace period counts as old', () => {
    expect(decideLifecycle(node(3_600_000), { exists: gone }, 'fake', guard(5000))).toMatchObject({ kind: 'delete', uid: 'u' });
    expect(decideLifecycle(node(300_000), { exists: no }, 'fake', guard(5000))).toMatchObject({ kind: 'delete', uid: 'u' });
  });

  it('an unknown creation time does not hold a Node back; the second answer still does', () => {
    const bare = makeNode({ name: 'n', tainted: false, uid: 'u', ready: 'False' });
    delete bare.metadata.creationTimestamp;
    expect(decideLifecycle(bare, { exists: gone }, 'fake', guard(0))).toMatchObject({ kind: 'deferDelete', why: 'unconfirmed' });
    expect(decideLifecycle(bare, { exists: gone }, 'fake', guard(5000))).toMatchObject({ kind: 'delete' });
  });

  it('the event messages say what the deletion waits for, in Go durations', () => {
    expect(decideLifecycle(node(37_000), { exists: gone }, 'aws', guard(0))).toEqual({
      kind: 'deferDelete', why: 'young',
      message: 'instance not found by cloud provider aws, but the Node is 37s old: it is not deleted before it is 5m0s old (--node-startup-grace-period)',
    });
    expect(decideLifecycle(node(3_600_000), { exists: gone }, 'aws', guard(0))).toEqual({
      kind: 'deferDelete', why: 'unconfirmed',
      message: 'instance not found by cloud provider aws: the Node is deleted if the instance is still missing 5s after the first such answer (--node-monitor-period)',
    });
  });

  it('errors and Ready nodes are never held to the guard: nothing to delete', () => {
    expect(decideLifecycle(node(3_600_000), { exists: boom }, 'fake', guard(60_000))).toMatchObject({ kind: 'leave', reason: 'providerError' });
    expect(decideLifecycle(makeNode({ name: 'n', tainted: false, uid: 'u', ready: 'True' }), { exists: gone }, 'fake', guard(60_000)).kind).toBe('none');
  });
});
