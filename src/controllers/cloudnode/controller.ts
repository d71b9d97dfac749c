// The cloud node controller: a thin loop around the decisions in decide.ts. Tainted nodes are
// initialised (a batched metadata round, the addresses, then one guarded metadata/spec patch that
// also carries the pod CIDRs and removes the taint); initialised nodes get the beta → GA label
// copy and, every --node-status-update-frequency, a batched address refresh.
import type { CloudProvider, InstanceMetadata, InstanceResult } from '../../../providers/types.js';
import { realClock, type Clock, type ClockTimer } from '../../kube/clock.js';
import { isConflict, isInvalid, isNotFound, writeOutcome } from '../../kube/errors.js';
import { RetryLaterError, runBatchWorkers, WorkQueue, type BatchResult, type HandlerResult, type WorkerPool } from '../../kube/workqueue.js';
import type { Registry } from 'prom-client';
import { silentLogger, WarningSummary, type Logger } from '../../log.js';
import { forEachLimited, limiter } from '../../util/limit.js';
import { betaToGALabelUpdates } from '../labels.js';
import { cloudNodeMetrics, type CloudNodeMetrics } from '../metrics.js';
import { hasUninitializedTaint, nodePodCIDRs, type NodeObject } from '../../model/node.js';
import type { PodCIDRClaims } from '../nodeipam/claims.js';
import type { AddressExclusion } from '../../nodeip/index.js';
import type { NodeCache, NodeEventSink, NodeWriter } from '../seams.js';
import { ProviderCalls, type AskedApart } from '../provider-calls/calls.js';
import { ProviderIDEventReason, refuseAnswer } from '../provider-ids/decide.js';
import { instanceKeyOf, ProviderIDIndex } from '../provider-ids/live-index.js';
import {
  addressesPatch, EventReason, initializationPatch, decideAddressRefresh, decideInitialization, rejectedLabelMessage, SYNCED_MESSAGE,
  type AddressPolicy, type InitBlocked, type MetaSpecPatch, type RejectedLabel,
} from './decide.js';

export const CLOUD_NODE_QUEUE = 'cloud-node';

export interface CloudNodeControllerOptions {
  nodes: NodeCache;
  writer: NodeWriter;
  provider: CloudProvider;
  events: NodeEventSink;
  /** Present when --allocate-node-cidrs is on: pod CIDRs go out with the initialising write. */
  claims?: PodCIDRClaims;
  /** The CloudDualStackNodeIPs gate. */
  allowDualStack: boolean;
  /** --node-address-exclude-cidrs (absent: nothing excluded). */
  excludeAddresses?: AddressExclusion;
  /** --concurrent-node-syncs */
  workers: number;
  /** --node-status-update-frequency, in ms. */
  statusUpdateFrequencyMs: number;
  /** Most nodes served by one provider call (default 500). */
  maxBatch?: number;
  /** How long a batch of tainted nodes waits for the next one before its provider call (default 0). */
  gatherMs?: number;
  /** The longest a batch gathers, however steadily nodes arrive (default gatherMs). */
  gatherMaxMs?: number;
  /** Attempts of the guarded patch when the node changed meanwhile (default 5). */
  conflictRetries?: number;
  registry?: Registry;
  logger?: Logger;
  clock?: Clock;
  /** Delay before a node waiting for the allocator is tried again (default 200 ms). */
  notReadyRetryMs?: number;
  /** Node writes in flight per worker (default 8). */
  writesPerWorker?: number;
  /** The live Nodes' providerIDs, shared with the lifecycle controller; absent: kept here from `nodes`. */
  providerIDs?: ProviderIDIndex;
}

type SyncOutcome = { ok: true; requeueAfterMs?: number } | { ok: false; error: unknown };

/** The next write of an initialisation, or why there is none now. */
type InitStep =
  | InitBlocked
  /** The allocator is not loaded yet: try the node again shortly. */
  | { kind: 'waitForAllocator' }
  | { kind: 'addresses'; patch: ReturnType<typeof addressesPatch> }
  | { kind: 'initialize'; patch: MetaSpecPatch; providerID: string | undefined; rejectedLabels: readonly RejectedLabel[] };

/** The summary line for nodes of one batch that stay tainted for one reason. */
function stayTaintedSummary(reason: string, count: number): string {
  switch (reason) {
    case EventReason.CloudError: return `cloud provider could not answer for ${count} nodes; retrying with backoff`;
    case EventReason.InstanceNotFound: return `${count} nodes are not known to the cloud provider; they stay tainted`;
    case EventReason.InvalidNodeIP: return `${count} nodes have a provided-node-ip annotation the cloud's addresses cannot satisfy; they stay tainted`;
    case EventReason.MissingProviderID: return `${count} nodes have no providerID, from the node or the cloud; they stay tainted`;
    case ProviderIDEventReason.Mismatch: return `the cloud answered for ${count} nodes with another instance's providerID; they stay tainted`;
    case ProviderIDEventReason.InUse: return `${count} nodes would have an instance another live Node already has; they stay tainted`;
    default: return `${count} nodes stay tainted: ${reason}`;
  }
}

/** The summary line for nodes of one address refresh round with one problem. */
function refreshSummary(reason: string, count: number): string {
  switch (reason) {
    case EventReason.CloudError: return `address refresh skipped for ${count} nodes: the cloud provider could not answer`;
    case EventReason.InvalidNodeIP: return `addresses of ${count} nodes not updated: their provided-node-ip annotation is no longer satisfiable`;
    case EventReason.UpdateFailed: return `failed to update the addresses of ${count} nodes`;
    case ProviderIDEventReason.Mismatch: return `addresses of ${count} nodes not updated: the cloud answered with another instance's providerID`;
    case ProviderIDEventReason.InUse: return `addresses of ${count} nodes not updated: another live Node has the same instance`;
    default: return `address refresh: ${count} nodes: ${reason}`;
  }
}

/** Already reported with an event and a log line: the queue retries it quietly. */
class RetryLater extends RetryLaterError {
  override name = 'RetryLater';
}

export class CloudNodeController {
  readonly queue: WorkQueue<string>;
  readonly #o: Required<Pick<CloudNodeControllerOptions, 'maxBatch' | 'conflictRetries' | 'notReadyRetryMs' | 'writesPerWorker'>> & CloudNodeControllerOptions;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #metrics: CloudNodeMetrics | undefined;
  #pool: WorkerPool | undefined;
  #resyncTimer: ClockTimer | undefined;
  #resyncRunning: Promise<void> | undefined;
  #stopped = false;
  /**
   * Nodes this controller untainted whose untainted version the watch has not delivered yet (by
   * name, with the UID of the node untainted): a tainted copy of that very node still in the
   * cache is stale and must not trigger a second write; a tainted node of that name with another
   * UID is a new node, initialised as any other.
   */
  readonly #awaitingWatch = new Map<string, string | undefined>();
  /**
   * Nodes whose initialising write had an unknown outcome that could not be read back (the API
   * server unreachable), with the node's UID and the providerID that write set or kept. The node
   * is retried; if that very node is then found initialised with that providerID, the write did
   * land: its Synced event, once.
   */
  readonly #unconfirmed = new Map<string, { uid: string | undefined; providerID: string | undefined }>();
  readonly #abort = new AbortController();
  /** Every provider call goes through here: a batch that fails as a whole is split, a node that fails alone is asked alone. */
  readonly #calls: ProviderCalls;
  /** Which live Node has which instance: an answer naming another Node's instance is refused. */
  readonly #ids: ProviderIDIndex;

  /** The gate, the exclusion and the provider's family hint, as every address decision takes them. */
  readonly #addressPolicy: AddressPolicy;

  constructor(options: CloudNodeControllerOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1) {
      throw new Error(`--concurrent-node-syncs: must be an integer >= 1, got ${options.workers}`);
    }
    if (!(options.statusUpdateFrequencyMs > 0)) {
      throw new Error(`--node-status-update-frequency: must be positive, got ${options.statusUpdateFrequencyMs}ms`);
    }
    this.#o = { maxBatch: 500, conflictRetries: 5, notReadyRetryMs: 200, writesPerWorker: 8, ...options };
    this.#log = (options.logger ?? silentLogger).child({ controller: 'cloud-node' });
    this.#clock = options.clock ?? realClock;
    this.#metrics = options.registry ? cloudNodeMetrics(options.registry) : undefined;
    this.queue = new WorkQueue<string>({ name: CLOUD_NODE_QUEUE, clock: this.#clock, registry: options.registry });
    const provider = options.provider;
    this.#calls = new ProviderCalls({ provider, registry: options.registry, clock: this.#clock, logger: this.#log });
    this.#ids = options.providerIDs ?? new ProviderIDIndex(instanceKeyOf(provider));
    this.#addressPolicy = {
      allowDualStack: options.allowDualStack,
      ...(options.excludeAddresses ? { exclude: options.excludeAddresses } : {}),
      ...(provider.familyHint ? { familyHint: (family: 'IPv4' | 'IPv6') => provider.familyHint?.(family) } : {}),
    };
  }

  /** Workers still running (for /livez). */
  aliveWorkers(): number {
    return this.#pool?.alive() ?? 0;
  }

  start(): void {
    if (!this.#o.providerIDs) this.#ids.attach(this.#o.nodes);
    this.#o.nodes.addHandlers({
      add: (node) => this.#maybeEnqueue(node),
      update: (_old, node) => this.#maybeEnqueue(node),
      delete: (node) => {
        const name = node.metadata.name;
        // A late delete of an earlier node of the name leaves the memory of the current one alone.
        if (this.#awaitingWatch.get(name) === node.metadata.uid) this.#awaitingWatch.delete(name);
        if (this.#unconfirmed.get(name)?.uid === node.metadata.uid) this.#unconfirmed.delete(name);
        this.#calls.forget(node);
      },
    });
    this.#pool = runBatchWorkers(this.queue, this.#o.workers, this.#o.maxBatch, (names) => this.#syncBatch(names), { logger: this.#log, gatherMs: this.#o.gatherMs ?? 0, gatherMaxMs: this.#o.gatherMaxMs ?? 0 });
    this.#scheduleResync();
  }

  /** Stops taking work; in-flight syncs finish (their writes are bounded by the write timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#resyncTimer?.cancel();
    this.#abort.abort();
    await this.queue.shutDown({ drain: true });
    await this.#pool?.finished;
    await this.#resyncRunning;
  }

  #maybeEnqueue(node: NodeObject): void {
    const tainted = hasUninitializedTaint(node);
    if (!tainted || !this.#awaitsWatch(node)) this.#awaitingWatch.delete(node.metadata.name);
    else return;
    if (tainted || Object.keys(betaToGALabelUpdates(node)).length > 0) this.queue.add(node.metadata.name);
  }

  // ---- initialisation and label copy ----

  async #syncBatch(names: string[]): Promise<BatchResult<string>> {
    const failed = new Map<string, unknown>();
    const results = new Map<string, { requeueAfterMs?: number }>();
    const tainted: NodeObject[] = [];
    for (const name of names) {
      const node = this.#o.nodes.get(name);
      if (!node) continue;
      if (hasUninitializedTaint(node)) {
        if (!this.#awaitsWatch(node)) tainted.push(node);
        continue;
      }
      this.#confirmLanded(node);
      const labels = betaToGALabelUpdates(node);
      if (Object.keys(labels).length === 0) continue;
      try {
        await this.#o.writer.patch(name, { metadata: { labels } });
        this.#metrics?.nodeWrites.inc({ kind: 'labels', result: 'success' });
        this.#log.info({ node: name, labels }, 'copied beta topology labels to their GA names');
      } catch (error) {
        this.#metrics?.nodeWrites.inc({ kind: 'labels', result: 'error' });
        failed.set(name, error);
      }
    }
    if (tainted.length === 0) return { failed };

    // One provider round for the batch (split in halves when it fails as a whole); each node's
    // writes start as soon as its answer is in, a few at a time per worker. Why nodes stay
    // tainted is logged once per batch and reason: a cloud outage hits every node at once.
    const warnings = new WarningSummary();
    const write = limiter(this.#o.writesPerWorker);
    const writes: Promise<void>[] = [];
    const { alone } = await this.#metadata(tainted, 'initialise', (node, answer) => {
      writes.push(write(() => this.#initialize(node, answer, warnings)).then((outcome) => {
        const name = node.metadata.name;
        if (!outcome.ok) failed.set(name, outcome.error);
        else if (outcome.requeueAfterMs !== undefined) results.set(name, { requeueAfterMs: outcome.requeueAfterMs });
      }));
    });
    await Promise.all(writes);
    this.#flushStayTainted(warnings);
    // Nodes that failed alone before are asked in calls of their own: the batch does not wait for
    // them, and each stays with this batch until its own answer is written.
    const pending = new Map<string, Promise<HandlerResult | void>>();
    for (const node of tainted) {
      const answer = alone.get(node.metadata.name);
      if (!answer) continue;
      pending.set(node.metadata.name, answer.then(async (a) => {
        const own = new WarningSummary();
        const outcome = await write(() => this.#initialize(node, a, own));
        this.#flushStayTainted(own);
        if (!outcome.ok) throw outcome.error;
        return outcome.requeueAfterMs !== undefined ? { requeueAfterMs: outcome.requeueAfterMs } : undefined;
      }));
    }
    return { failed, results, pending };
  }

  #flushStayTainted(warnings: WarningSummary): void {
    warnings.flush(this.#log, stayTaintedSummary, (reason) => `kubectl get events --field-selector reason=${reason} lists every node`);
  }

  /** The batch's instance metadata; `onAnswer` hears each node's as soon as its call returns. */
  async #metadata(
    nodes: readonly NodeObject[],
    purpose: 'initialise' | 'refresh',
    onAnswer?: (node: NodeObject, answer: InstanceResult<InstanceMetadata> | undefined) => void,
  ): Promise<AskedApart<InstanceMetadata>> {
    const started = this.#clock.now();
    const asked = await this.#calls.askApart('instancesMetadata', nodes, this.#abort.signal, onAnswer);
    this.#log.debug({ purpose, nodes: nodes.length, ms: this.#clock.now() - started }, 'instance metadata for a batch of nodes');
    return asked;
  }

  async #initialize(node: NodeObject, answer: InstanceResult<InstanceMetadata> | undefined, warnings: WarningSummary): Promise<SyncOutcome> {
    const name = node.metadata.name;
    // Stopping aborts provider calls in flight: that is no news about the node.
    if (this.#stopped) return { ok: false, error: new RetryLater('controller stopping') };
    if (!answer || answer.kind === 'error') {
      const detail = answer?.kind === 'error' ? answer.error.message : 'the provider gave no answer for this node';
      const message = `failed to get instance metadata from cloud provider ${this.#o.provider.name}: ${detail}`;
      this.#o.events.emit(node, 'Warning', EventReason.CloudError, message);
      warnings.add(EventReason.CloudError, { node: name, err: detail, message: 'cloud provider could not answer; retrying with backoff' });
      return { ok: false, error: new RetryLater(message) };
    }
    if (answer.kind === 'notFound') {
      const message = `instance not found by cloud provider ${this.#o.provider.name}${answer.reason ? `: ${answer.reason}` : ''}; node stays tainted`;
      this.#o.events.emit(node, 'Warning', EventReason.InstanceNotFound, message);
      warnings.add(EventReason.InstanceNotFound, { node: name, message });
      return { ok: false, error: new RetryLater(message) };
    }
    // Read, decide, write; after a conflict or an unknown outcome, read again and decide afresh.
    // The decision is read off the node alone: once its addresses are written, the next one is
    // the initialising write.
    let current = node;
    for (let attempt = 0; ; attempt++) {
      const step = this.#nextWrite(current, answer.value);
      if (step.kind === 'blocked') {
        this.#o.events.emit(current, 'Warning', step.reason, step.message);
        warnings.add(step.reason, { node: name, message: step.message });
        return { ok: false, error: new RetryLater(step.message) };
      }
      if (step.kind === 'waitForAllocator') return { ok: true, requeueAfterMs: this.#o.notReadyRetryMs };
      try {
        if (step.kind === 'addresses') {
          // Addresses first, so the node is never schedulable without them; the write moves the
          // resourceVersion, so the next write is planned on what it returned.
          current = await this.#o.writer.patchStatus(name, step.patch);
          this.#metrics?.nodeWrites.inc({ kind: 'status', result: 'success' });
          continue;
        }
        await this.#o.writer.patch(name, step.patch);
        this.#metrics?.nodeWrites.inc({ kind: 'initialize', result: 'success' });
      } catch (error) {
        const conflict = isConflict(error) || isInvalid(error);
        this.#metrics?.nodeWrites.inc({ kind: step.kind === 'addresses' ? 'status' : 'initialize', result: conflict ? 'conflict' : 'error' });
        const unknown = writeOutcome(error) === 'unknown';
        if (isNotFound(error)) return this.#gone(current);
        if (!(conflict || unknown) || attempt >= this.#o.conflictRetries) {
          if (unknown && step.kind === 'initialize') this.#unconfirmed.set(name, { uid: current.metadata.uid, providerID: step.providerID });
          this.#o.events.emit(current, 'Warning', EventReason.UpdateFailed, `failed to initialise node: ${(error as Error).message}`);
          return { ok: false, error };
        }
        // The node changed since it was read, or the write may have landed: read it again.
        let latest: NodeObject;
        try {
          latest = await this.#o.writer.get(name);
        } catch (readError) {
          if (isNotFound(readError)) return this.#gone(current);
          if (unknown && step.kind === 'initialize') this.#unconfirmed.set(name, { uid: current.metadata.uid, providerID: step.providerID });
          this.#o.events.emit(current, 'Warning', EventReason.UpdateFailed, `failed to initialise node: ${(error as Error).message}`);
          return { ok: false, error: readError };
        }
        if (!hasUninitializedTaint(latest)) {
          // Initialised meanwhile: by a write of ours whose outcome was unknown (this one or an
          // earlier one) when it carries the providerID that write set, else by someone else.
          if (unknown && step.kind === 'initialize') this.#unconfirmed.set(name, { uid: current.metadata.uid, providerID: step.providerID });
          this.#markAwaitingWatch(latest);
          this.#confirmLanded(latest, step.kind === 'initialize' ? step.rejectedLabels : []);
          return { ok: true };
        }
        current = latest;
        continue;
      }
      this.#markAwaitingWatch(current);
      this.#synced(current, step);
      return { ok: true };
    }
  }

  /** The next write of an initialisation, planned on the node as read: the addresses, then the rest. */
  #nextWrite(node: NodeObject, metadata: InstanceMetadata): InitStep {
    const name = node.metadata.name;
    // The answer must be this node's own: its providerID names the node's instance, and no other
    // live Node's. Checked and claimed in one step, so a second node of the batch answered with
    // the same instance is refused before anything of it is written.
    const refused = refuseAnswer(node, metadata.providerID, this.#o.provider.name, this.#ids);
    if (refused) {
      this.#ids.release(node);
      return { kind: 'blocked', reason: refused.reason, message: refused.message };
    }
    if (!node.spec?.providerID && metadata.providerID) this.#ids.claim(node, metadata.providerID);
    const decision = decideInitialization(node, metadata, this.#addressPolicy);
    if (decision.kind === 'blocked') return decision;
    // Guarded too: the addresses were chosen by the annotation of this very version.
    if (decision.addresses) return { kind: 'addresses', patch: addressesPatch(decision.addresses, { uid: node.metadata.uid, resourceVersion: node.metadata.resourceVersion }) };
    for (const s of decision.skippedLabels) this.#log.info({ node: name, label: s.key, reason: s.reason }, 'cloud label not applied');
    // Pod CIDRs against the labels the node will have after this write, claimed again on each
    // attempt: a repeated claim returns the same blocks.
    let podCIDRs: string[] | undefined;
    let pool: string | undefined;
    if (this.#o.claims && nodePodCIDRs(node).length === 0) {
      const claim = this.#o.claims.claim({ name, uid: node.metadata.uid, labels: decision.labelsAfter });
      if (claim.kind === 'notReady') return { kind: 'waitForAllocator' };
      if (claim.kind === 'claimed') {
        podCIDRs = claim.podCIDRs;
        pool = claim.pool;
      } else this.#log.info({ node: name, reason: 'CIDRNotAvailable' }, `initialising without pod CIDRs: ${claim.reason}`);
    }
    // One guarded patch: providerID, labels, pod CIDRs, taint removal.
    return { kind: 'initialize', patch: initializationPatch(node, decision, podCIDRs, pool), providerID: decision.providerID ?? node.spec?.providerID, rejectedLabels: decision.rejectedLabels };
  }

  /** The node was deleted meanwhile: blocks claimed for it would otherwise stay reserved. */
  #gone(node: NodeObject): SyncOutcome {
    this.#o.claims?.release?.(node.metadata.name, node.metadata.uid);
    return { ok: true };
  }

  #synced(node: NodeObject, step: { providerID: string | undefined; rejectedLabels: readonly RejectedLabel[] }): void {
    this.#unconfirmed.delete(node.metadata.name);
    // Once the node is initialised without them: a label the API server would refuse.
    for (const label of step.rejectedLabels) {
      const message = rejectedLabelMessage(label);
      this.#o.events.emit(node, 'Warning', EventReason.InvalidCloudLabel, message);
      this.#log.warn({ node: node.metadata.name, reason: EventReason.InvalidCloudLabel, label: label.key, value: label.value }, message);
    }
    this.#recordInitialized(node);
    this.#o.events.emit(node, 'Normal', EventReason.Synced, SYNCED_MESSAGE);
    this.#log.info({ node: node.metadata.name, providerID: step.providerID }, 'node initialised');
  }

  /**
   * A node whose initialising write had an unknown outcome, now seen without the taint: when it
   * carries the providerID that write set or kept, the write landed: its Synced event, once.
   */
  #confirmLanded(node: NodeObject, rejectedLabels: readonly RejectedLabel[] = []): void {
    const name = node.metadata.name;
    const unconfirmed = this.#unconfirmed.get(name);
    if (!unconfirmed) return;
    this.#unconfirmed.delete(name);
    // Another node of that name: the write was for one that is gone.
    if (unconfirmed.uid !== node.metadata.uid) return;
    const providerID = unconfirmed.providerID;
    if (providerID !== undefined && node.spec?.providerID !== providerID) return;
    this.#synced(node, { providerID, rejectedLabels });
  }

  #markAwaitingWatch(untainted: NodeObject): void {
    // The watch may have delivered the untainted node before the write's response arrived.
    const name = untainted.metadata.name;
    const cached = this.#o.nodes.get(name);
    if (cached && cached.metadata.uid === untainted.metadata.uid && hasUninitializedTaint(cached)) this.#awaitingWatch.set(name, cached.metadata.uid);
  }

  /** This very node (its UID) was untainted by this controller, and the watch has not shown it yet. */
  #awaitsWatch(node: NodeObject): boolean {
    return this.#awaitingWatch.has(node.metadata.name) && this.#awaitingWatch.get(node.metadata.name) === node.metadata.uid;
  }

  #recordInitialized(node: NodeObject): void {
    if (!this.#metrics) return;
    const created = Date.parse(node.metadata.creationTimestamp ?? '');
    if (!Number.isFinite(created)) return;
    const seconds = Math.max(0, (this.#clock.now() - created) / 1000);
    this.#metrics.taintRemovalDelay.observe(seconds);
    this.#metrics.initialNodeSyncDelay.observe(seconds);
  }

  // ---- periodic address refresh ----

  #scheduleResync(): void {
    if (this.#stopped) return;
    this.#resyncTimer = this.#clock.setTimer(() => {
      const started = this.#clock.now();
      this.#resyncRunning = this.resyncAddresses()
        .then((stats) => this.#log.info({ ...stats, ms: this.#clock.now() - started }, 'address refresh done'))
        .catch((err: unknown) => this.#log.error({ err }, 'address refresh failed'))
        .finally(() => {
          this.#resyncRunning = undefined;
          this.#scheduleResync();
        });
    }, this.#o.statusUpdateFrequencyMs);
  }

  /**
   * One batched metadata round for every initialised node; replaces addresses that changed, warns
   * about annotations that can no longer be satisfied, never re-taints. Returns what it did.
   */
  async resyncAddresses(): Promise<{ nodes: number; updated: number; warned: number; failed: number; cloudCalls: number }> {
    const nodes = this.#o.nodes.list().filter((n) => !hasUninitializedTaint(n));
    const stats = { nodes: nodes.length, updated: 0, warned: 0, failed: 0, cloudCalls: 0 };
    // One line per reason for the whole round, not one per node.
    const warnings = new WarningSummary();
    for (let i = 0; i < nodes.length && !this.#stopped; i += this.#o.maxBatch) {
      const chunk = nodes.slice(i, i + this.#o.maxBatch);
      stats.cloudCalls++;
      const { answers, alone } = await this.#metadata(chunk, 'refresh');
      for (const [name, answer] of alone) {
        const a = await answer;
        if (a) answers.set(name, a);
      }
      // Writes are bounded like the initialising workers': --concurrent-node-syncs × writesPerWorker.
      await forEachLimited(chunk, this.#o.workers * this.#o.writesPerWorker, async (node) => {
        if (this.#stopped) return;
        const name = node.metadata.name;
        const answer = answers.get(name);
        if (!answer || answer.kind !== 'found') {
          if (answer?.kind === 'error') warnings.add(EventReason.CloudError, { node: name, err: answer.error.message, message: 'address refresh skipped' });
          return;
        }
        // Another instance's addresses are never this node's.
        const refused = refuseAnswer(node, answer.value.providerID, this.#o.provider.name, this.#ids);
        if (refused) {
          stats.warned++;
          this.#o.events.emit(node, 'Warning', refused.reason, `addresses not updated: ${refused.message}`);
          warnings.add(refused.reason, { node: name, message: `addresses not updated: ${refused.message}` });
          return;
        }
        const decision = decideAddressRefresh(node, answer.value, this.#addressPolicy);
        if (decision.kind === 'warn') {
          stats.warned++;
          this.#o.events.emit(node, 'Warning', decision.reason, decision.message);
          warnings.add(decision.reason, { node: name, message: decision.message });
        } else if (decision.kind === 'replace') {
          try {
            await this.#o.writer.patchStatus(name, addressesPatch(decision.addresses, { uid: node.metadata.uid }));
            this.#metrics?.nodeWrites.inc({ kind: 'status', result: 'success' });
            stats.updated++;
          } catch (err) {
            this.#metrics?.nodeWrites.inc({ kind: 'status', result: 'error' });
            stats.failed++;
            warnings.add(EventReason.UpdateFailed, { node: name, err: (err as Error).message, message: 'failed to update node addresses' });
          }
        }
      });
    }
    warnings.flush(this.#log, refreshSummary);
    return stats;
  }
}
