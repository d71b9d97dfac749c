// How a batch is asked again when a provider call fails for the batch as a whole (it throws,
// rejects, times out, answers something that is not a Map, or marks nodes with a BatchError):
// the failed nodes are asked again in halves, round after round, until each node that makes calls
// fail is alone. One bad node among n then costs the others at most ceil(log2 n) more calls on
// their way to their own answers, and itself only its own. Pure: no I/O, no time.

/**
 * Rounds in which every call failed and no node got an answer of its own, from this many calls
 * on, mean the provider fails for everyone (an outage, a throttled API, a module that throws on
 * every call): the split stops there instead of asking each node alone. It takes at least this
 * many failing nodes to look like that, so up to OUTAGE_CALLS - 1 bad nodes in one batch are
 * always isolated. An outage costs 1 + 2 + 4 + 8 = 15 calls a batch, not one per node.
 */
export const OUTAGE_CALLS = 8;

/** The two halves of a group, the first the larger by at most one; the order kept. */
export function halves<T>(group: readonly T[]): [T[], T[]] {
  const mid = Math.ceil(group.length / 2);
  return [group.slice(0, mid), group.slice(mid)];
}

/** What one round of calls came to. */
export interface SplitRound<T> {
  /** Calls made in the round. */
  calls: number;
  /** Nodes that got an answer of their own in the round (found, not found, or their own error). */
  answered: number;
  /**
   * The groups that failed as a whole: a call that failed, or the nodes of a call that share one
   * BatchError. Groups of one node are final (that failure is the node's own) and are ignored here.
   */
  failed: readonly (readonly T[])[];
}

export type NextRound<T> =
  /** Nothing left to ask: every failed group was a single node. */
  | { kind: 'done' }
  /** Ask these groups next, one call each. */
  | { kind: 'split'; groups: T[][] }
  /** Every call failed: stop; the nodes of these groups (those of `failed` with more than one node) get the batch's failure. */
  | { kind: 'outage'; groups: readonly (readonly T[])[] };

/** The next round after `round`. */
export function nextRound<T>(round: SplitRound<T>): NextRound<T> {
  const open = round.failed.filter((g) => g.length > 1);
  if (open.length === 0) return { kind: 'done' };
  if (round.answered === 0 && round.calls >= OUTAGE_CALLS) {
    return { kind: 'outage', groups: open };
  }
  return { kind: 'split', groups: open.flatMap((g) => halves(g)) };
}
