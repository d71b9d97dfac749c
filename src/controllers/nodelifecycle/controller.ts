// The cloud node lifecycle controller: a thin periodic loop around decide.ts. Every
// --node-monitor-period it walks the cached nodes; Ready ones lose the shutdown taint, not-Ready
// ones are looked up in the cloud (one instancesExist call per up to maxBatch nodes, then one
// instancesShutdown call for those that exist): a gone instance's Node is deleted (guarded by its
// uid) once the Node is past its start-up grace period and two answers a period apart agree; a
// shut-down one is tainted. A provider that cannot answer leaves the node for next period.
import type { Registry } from 'prom-client';
import type { CloudProvider, InstanceResult } from '../../../providers/types.js';
import { realClock, type Clock, type ClockTimer } from '../../kube/clock.js';
import { isConflict, isNotFound } from '../../kube/errors.js';
import { silentLogger, WarningSummary, type Logger } from '../../log.js';
import { forEachLimited } from '../../util/limit.js';
import { ProviderCalls } from '../provider-calls/calls.js';
import type { InstanceHolder } from '../provider-ids/decide.js';
import { instanceKeyOf, ProviderIDIndex } from '../provider-ids/live-index.js';
import type { NodeObject } from '../../model/node.js';
import type { NodeCache, NodeDeleter, NodeEventSink, NodeWriter } from '../seams.js';
import { lifecycleMetrics, type LifecycleMetrics } from './metrics.js';
import { decideLifecycle, LifecycleEventReason, shutdownTaints, taintPatch, type DeletionGuard, type LifecycleAnswers, type LifecycleDecision } from './decide.js';

export interface CloudNodeLifecycleControllerOptions {
  nodes: NodeCache;
  writer: NodeWriter;
  deleter: NodeDeleter;
  provider: CloudProvider;
  events: NodeEventSink;
  /** --node-monitor-period, in ms: also how far apart two missing answers must be before a deletion. */
  monitorPeriodMs: number;
  /** --node-startup-grace-period, in ms: a younger Node is never deleted (default 5 minutes). */
  startupGraceMs?: number;
  /** Most nodes in one provider call (default 500). */
  maxBatch?: number;
  /** API writes in flight at once (default 16). */
  writeConcurrency?: number;
  /** Attempts of a guarded taint patch when the node changed meanwhile (default 3). */
  conflictRetries?: number;
  registry?: Registry;
  logger?: Logger;
  clock?: Clock;
  /** The live Nodes' providerIDs, shared with the cloud node controller; absent: kept here from `nodes`. */
  providerIDs?: ProviderIDIndex;
}

/** What one pass did (logged, and returned for tests and benchmarks). */
export interface MonitorStats {
  nodes: number;
  notReady: number;
  deleted: number;
  tainted: number;
  untainted: number;
  /** Left alone: the provider could not answer (error or no answer). */
  unanswered: number;
  /** Reported missing, but not deleted yet: a young Node, or a first answer awaiting its confirmation. */
  deferred: number;
  /** Writes or deletions that failed (retried next period). */
  failed: number;
  providerCalls: number;
}

type Pending = { node: NodeObject; answers: LifecycleAnswers };

/** --node-startup-grace-period's default: a launch's eventual consistency is seconds; a Node is minutes. */
export const DEFAULT_STARTUP_GRACE_MS = 5 * 60_000;

export class CloudNodeLifecycleController {
  readonly #o: Required<Pick<CloudNodeLifecycleControllerOptions, 'maxBatch' | 'writeConcurrency' | 'conflictRetries' | 'startupGraceMs'>> & CloudNodeLifecycleControllerOptions;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #calls: ProviderCalls;
  /** Which live Node has which instance: a Node whose instance another Node also has is left alone. */
  readonly #ids: ProviderIDIndex;
  readonly #metrics: LifecycleMetrics | undefined;
  readonly #abort = new AbortController();
  #timer: ClockTimer | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  /** When each Node's instance was first reported missing, by name (with the uid it was reported for). */
  readonly #missingSince = new Map<string, { uid: string | undefined; at: number }>();

  constructor(options: CloudNodeLifecycleControllerOptions) {
    if (!(options.monitorPeriodMs > 0)) throw new Error(`--node-monitor-period: must be positive, got ${options.monitorPeriodMs}ms`);
    const maxBatch = options.maxBatch ?? 500;
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new Error(`maxBatch: must be an integer >= 1, got ${maxBatch}`);
    const startupGraceMs = options.startupGraceMs ?? DEFAULT_STARTUP_GRACE_MS;
    if (!(startupGraceMs >= 0)) throw new Error(`--node-startup-grace-period: must not be negative, got ${startupGraceMs}ms`);
    this.#o = { maxBatch, writeConcurrency: 16, conflictRetries: 3, ...options, startupGraceMs };
    this.#log = (options.logger ?? silentLogger).child({ controller: 'cloud-node-lifecycle' });
    this.#clock = options.clock ?? realClock;
    this.#calls = new ProviderCalls({ provider: options.provider, registry: options.registry, clock: this.#clock, logger: this.#log });
    this.#ids = options.providerIDs ?? new ProviderIDIndex(instanceKeyOf(options.provider)).attach(options.nodes);
    this.#metrics = options.registry ? lifecycleMetrics(options.registry) : undefined;
  }

  /** Runs a pass now, then one every monitor period after the previous pass ends. */
  start(): void {
    this.#runPass();
  }

  /** Stops the loop; a pass in flight has its provider calls aborted and its writes finish. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#abort.abort();
    await this.#running;
  }

  #runPass(): void {
    if (this.#stopped) return;
    const started = this.#clock.now();
    this.#running = this.monitorNodes()
      .then((stats) => {
        const seconds = (this.#clock.now() - started) / 1000;
        this.#metrics?.monitorDuration.observe(seconds);
        // Quiet when nothing happened: this runs every few seconds.
        const acted = stats.deleted + stats.tainted + stats.untainted + stats.failed + stats.unanswered + stats.deferred > 0;
        const fields = { ...stats, ms: this.#clock.now() - started };
        if (acted) this.#log.info(fields, 'node lifecycle pass done');
        else this.#log.debug(fields, 'node lifecycle pass done');
      })
      .catch((err: unknown) => this.#log.error({ err }, 'node lifecycle pass failed'))
      .finally(() => {
        this.#running = undefined;
        if (!this.#stopped) this.#timer = this.#clock.setTimer(() => this.#runPass(), this.#o.monitorPeriodMs);
      });
  }

  /** One pass over the cached nodes. */
  async monitorNodes(): Promise<MonitorStats> {
    const nodes = this.#o.nodes.list();
    const stats: MonitorStats = { nodes: nodes.length, notReady: 0, deleted: 0, tainted: 0, untainted: 0, unanswered: 0, deferred: 0, failed: 0, providerCalls: 0 };
    const untaint: NodeObject[] = [];
    const askExists: Pending[] = [];
    const shared: Array<[NodeObject, LifecycleDecision]> = [];
    for (const node of nodes) {
      let d = decideLifecycle(node, {}, this.#o.provider.name);
      // Only a Node that would be asked about is looked up: the index is not read for Ready ones.
      if (d.kind === 'askExists') {
        const other = this.#sharedWith(node);
        if (other) d = decideLifecycle(node, {}, this.#o.provider.name, undefined, other);
      }
      if (d.kind === 'removeTaint') untaint.push(node);
      else if (d.kind === 'askExists') askExists.push({ node, answers: {} });
      else if (d.kind === 'leave') shared.push([node, d]);
    }
    // A missing answer counts only while the Node stays not Ready and in the cache.
    const asking = new Set(askExists.map((p) => p.node.metadata.name));
    for (const name of this.#missingSince.keys()) if (!asking.has(name)) this.#missingSince.delete(name);
    const warnings = new WarningSummary();
    stats.notReady = askExists.length + shared.length;
    await forEachLimited(untaint, this.#o.writeConcurrency, (node) => this.#setTaint(node, 'remove', stats));
    for (const [node, d] of shared) await this.#act(node, d, stats, warnings);

    for (let i = 0; i < askExists.length && !this.#stopped; i += this.#o.maxBatch) {
      const chunk = askExists.slice(i, i + this.#o.maxBatch);
      const exists = await this.#ask('instancesExist', chunk, stats);
      if (this.#stopped) break;
      const askShutdown: Pending[] = [];
      const act: Array<[NodeObject, LifecycleDecision]> = [];
      for (const p of chunk) {
        p.answers.exists = exists.get(p.node.metadata.name) ?? null;
        const d = decideLifecycle(p.node, p.answers, this.#o.provider.name, this.#deletionGuard(p));
        if (d.kind === 'askShutdown') askShutdown.push(p);
        else act.push([p.node, d]);
      }
      if (askShutdown.length > 0) {
        const shutdown = await this.#ask('instancesShutdown', askShutdown, stats);
        if (this.#stopped) break;
        for (const p of askShutdown) {
          p.answers.shutdown = shutdown.get(p.node.metadata.name) ?? null;
          act.push([p.node, decideLifecycle(p.node, p.answers, this.#o.provider.name)]);
        }
      }
      await forEachLimited(act, this.#o.writeConcurrency, ([node, d]) => this.#act(node, d, stats, warnings));
    }
    warnings.flush(this.#log, (reason, count) => (reason === LifecycleEventReason.DeleteDeferred
      ? `${count} not-Ready nodes' instances are reported missing; their deletion waits`
      : reason === 'sharedInstance'
        ? `${count} not-Ready nodes have an instance another Node also has; they are neither deleted nor tainted`
        : `cannot tell whether the instances of ${count} not-Ready nodes exist or are shut down (${reason}); left alone until the next period`));
    return stats;
  }

  /**
   * The guard of a Node whose existence was just asked: a missing answer is remembered the first
   * time (for this uid), an answer that the instance exists forgets it, an error changes nothing.
   */
  #deletionGuard(p: Pending): DeletionGuard {
    const name = p.node.metadata.name;
    const uid = p.node.metadata.uid;
    const now = this.#clock.now();
    const e = p.answers.exists;
    const missing = e?.kind === 'notFound' || (e?.kind === 'found' && !e.value);
    if (e?.kind === 'found' && e.value) this.#missingSince.delete(name);
    else if (missing && this.#missingSince.get(name)?.uid !== uid) this.#missingSince.set(name, { uid, at: now });
    const since = this.#missingSince.get(name);
    return { now, startupGraceMs: this.#o.startupGraceMs, confirmAfterMs: this.#o.monitorPeriodMs, ...(since ? { missingSince: since.at } : {}) };
  }

  /** Another live Node with the instance `node`'s providerID names, if any. */
  #sharedWith(node: NodeObject): InstanceHolder | undefined {
    const id = node.spec?.providerID;
    return id ? this.#ids.otherHolder(node, id) : undefined;
  }

  async #act(node: NodeObject, d: LifecycleDecision, stats: MonitorStats, warnings: WarningSummary): Promise<void> {
    const name = node.metadata.name;
    // The answers took a while: a Node that came to share its instance meanwhile is not acted on.
    if (d.kind === 'delete' || d.kind === 'addTaint') {
      const other = this.#sharedWith(node);
      if (other) d = decideLifecycle(node, {}, this.#o.provider.name, undefined, other);
    }
    switch (d.kind) {
      case 'delete':
        return this.#delete(node, d.uid, d.message, stats);
      case 'deferDelete':
        stats.deferred++;
        this.#o.events.emit(node, 'Warning', LifecycleEventReason.DeleteDeferred, d.message);
        warnings.add(LifecycleEventReason.DeleteDeferred, { node: name, why: d.why, message: d.message });
        return;
      case 'addTaint':
        return this.#setTaint(node, 'add', stats);
      case 'leave':
        stats.unanswered++;
        this.#metrics?.unanswered.inc({ reason: d.reason });
        if (d.reason === 'sharedInstance') {
          this.#o.events.emit(node, 'Warning', LifecycleEventReason.SharedInstance, d.message);
          warnings.add(d.reason, { node: name, message: d.message });
          return;
        }
        warnings.add(d.reason, { node: name, err: d.detail, message: 'cannot tell whether the instance exists or is shut down; node left alone until the next period' });
        return;
      default:
        return;
    }
  }

  /**
   * The chunk's answers: one provider round, split in halves when a call fails as a whole (a
   * node left unanswered is an error answer, never "gone").
   */
  async #ask(operation: 'instancesExist' | 'instancesShutdown', chunk: readonly Pending[], stats: MonitorStats): Promise<Map<string, InstanceResult<boolean>>> {
    stats.providerCalls++;
    return this.#calls.ask(operation, chunk.map((p) => p.node), this.#abort.signal);
  }

  async #delete(node: NodeObject, uid: string, message: string, stats: MonitorStats): Promise<void> {
    const name = node.metadata.name;
    try {
      await this.#o.deleter.delete(name, uid);
    } catch (err) {
      if (isNotFound(err)) {
        // Someone else deleted it first: the outcome wanted.
        this.#metrics?.actions.inc({ action: 'delete', result: 'gone' });
        return;
      }
      if (isConflict(err)) {
        // preconditions.uid failed: the name now belongs to a re-created Node, which stays.
        this.#metrics?.actions.inc({ action: 'delete', result: 'conflict' });
        this.#log.info({ node: name, uid }, 'node was re-created with a new uid since it was read; not deleted');
        return;
      }
      stats.failed++;
      this.#metrics?.actions.inc({ action: 'delete', result: 'error' });
      const detail = (err as Error).message;
      this.#o.events.emit(node, 'Warning', LifecycleEventReason.DeleteFailed, `Failed deleting node ${name}: ${detail}`);
      this.#log.warn({ node: name, uid, err: detail }, 'failed to delete node; retrying next period');
      return;
    }
    stats.deleted++;
    this.#missingSince.delete(name);
    this.#metrics?.actions.inc({ action: 'delete', result: 'success' });
    this.#o.events.emit(node, 'Normal', LifecycleEventReason.Deleting, message);
    this.#log.info({ node: name, uid, providerID: node.spec?.providerID }, message);
  }

  /** A guarded patch of the taint list; on a conflict, re-read and re-plan (bounded). */
  async #setTaint(node: NodeObject, want: 'add' | 'remove', stats: MonitorStats): Promise<void> {
    const name = node.metadata.name;
    const action = want === 'add' ? 'taint' : 'untaint';
    let current = node;
    for (let attempt = 0; ; attempt++) {
      const taints = shutdownTaints(current, want);
      if (!taints) return;
      try {
        await this.#o.writer.patch(name, taintPatch(current, taints));
        this.#metrics?.actions.inc({ action, result: 'success' });
        if (want === 'add') stats.tainted++;
        else stats.untainted++;
        this.#log.info({ node: name, taint: 'node.cloudprovider.kubernetes.io/shutdown' },
          want === 'add' ? 'instance is shut down: node tainted' : 'node is Ready again: shutdown taint removed');
        return;
      } catch (err) {
        if (isNotFound(err)) {
          this.#metrics?.actions.inc({ action, result: 'gone' });
          return;
        }
        if (!isConflict(err) || attempt >= this.#o.conflictRetries) {
          stats.failed++;
          this.#metrics?.actions.inc({ action, result: isConflict(err) ? 'conflict' : 'error' });
          this.#log.warn({ node: name, err: (err as Error).message }, `failed to ${want} the shutdown taint; retrying next period`);
          return;
        }
      }
      // Changed since it was read: plan again on the latest object (the readiness may have changed too).
      try {
        current = await this.#o.writer.get(name);
      } catch (err) {
        if (isNotFound(err)) return;
        stats.failed++;
        this.#log.warn({ node: name, err: (err as Error).message }, 'failed to re-read node after a conflict; retrying next period');
        return;
      }
      const again = decideLifecycle(current, {}, this.#o.provider.name);
      // Re-planned from the fresh object: untaint only while still Ready; a taint stays wanted
      // (the provider's answer is still this period's).
      if (want === 'remove' && again.kind !== 'removeTaint') return;
      if (want === 'add' && (again.kind === 'removeTaint' || again.kind === 'none')) return;
    }
  }
}
