// The node IPAM loop. Pools and exclusions come from PoolSources (flags, ClusterCIDR objects,
// ServiceCIDRs); in CloudAllocator mode the ranges come from the cloud instead (cloudRanges).
// It owns the one PodCIDRAllocator: loads pools, waits out the leadership fence, re-lists and
// records every node's existing pod CIDRs, then hands out blocks to nodes that lack them, and
// serves the cloud node controller's claims (PodCIDRClaims) from the same instance.
import type { Registry } from 'prom-client';
import { CIDRNotAvailableError, PodCIDRAllocator } from '../../ipam/index.js';
import { restoreOrder } from '../../ipam/restore-order.js';
import { CLOUD_POOL, POD_CIDR_POOL_ANNOTATION } from '../../model/node.js';
import { realClock, type Clock } from '../../kube/clock.js';
import { isConflict, isInvalid, isNotFound, writeOutcome } from '../../kube/errors.js';
import { runBatchWorkers, runWorkers, WorkQueue, type BatchResult, type WorkerPool } from '../../kube/workqueue.js';
import { silentLogger, type Logger } from '../../log.js';
import { forEachChunked } from '../../util/yield.js';
import { forEachLimited } from '../../util/limit.js';
import { abortable } from '../../util/abort.js';
import { hasUninitializedTaint, nodePodCIDRs, type NodeObject } from '../../model/node.js';
import type { NodeCache, NodeEventSink, NodeWriter } from '../seams.js';
import type { PodCIDRClaimRequest, PodCIDRClaimResult, PodCIDRClaims } from './claims.js';
import { ipamMetricsSink } from './metrics.js';
import type { EventObjectRef, PoolSource, PoolSourceHooks } from './pool-source.js';
import { CLOUD_RANGES_BATCH, CloudRangeIndex, networkAvailable, networkAvailablePatch, recordCloudRanges, type CloudRangeResult, type CloudRanges } from './cloud-allocator.js';
import type { EventType } from '../seams.js';

export const NODE_IPAM_QUEUE = 'node-ipam';

/** CloudAllocator: node writes in flight at once per batch of looked-up nodes. */
const WRITES_PER_BATCH = 8;

export const IPAMEventReason = {
  CIDRNotAvailable: 'CIDRNotAvailable',
  CIDRAssignmentFailed: 'CIDRAssignmentFailed',
  PodCIDRConflict: 'PodCIDRConflict',
  CloudRangeClash: 'CloudRangeClash',
  CloudRangeNotAvailable: 'CloudRangeNotAvailable',
} as const;

export interface NodeIPAMControllerOptions {
  nodes: NodeCache;
  writer: NodeWriter;
  events: NodeEventSink;
  sources: PoolSource[];
  /** While the cloud node controller runs, tainted nodes get their blocks in its write. */
  leaveTaintedNodes: boolean;
  /**
   * Fence before the first allocation: one write timeout, so a previous leader's in-flight write
   * has landed or failed, followed by `relist`.
   */
  fenceMs: number;
  /** A consistent re-list of the node cache (the watcher's relist); gives up when `signal` aborts. */
  relist: (signal?: AbortSignal) => Promise<void>;
  workers?: number;
  /** CloudAllocator: how long a batch waits for the next node before its provider call (default 0). */
  gatherMs?: number;
  /** CloudAllocator: the longest a batch gathers, however steadily nodes arrive (default gatherMs). */
  gatherMaxMs?: number;
  conflictRetries?: number;
  registry?: Registry;
  logger?: Logger;
  clock?: Clock;
  /** An allocator to use (tests, benchmarks); by default a new one. */
  allocator?: PodCIDRAllocator;
  /** Events about objects other than nodes (ClusterCIDRs); dropped when absent. */
  objectEvents?: (ref: EventObjectRef, type: EventType, reason: string, message: string) => void;
  /** CloudAllocator mode: the cloud's ranges instead of pool allocation. */
  cloud?: {
    ranges: CloudRanges;
    /** Current Service ranges, for clash reports of ranges outside every pool. */
    serviceRanges: () => string[];
    /** Strategic-merge patch of node/status (the NetworkUnavailable condition). */
    patchStatus: (name: string, patch: unknown) => Promise<unknown>;
  };
}

export class NodeIPAMController implements PodCIDRClaims {
  readonly queue: WorkQueue<string>;
  readonly allocator: PodCIDRAllocator;
  readonly #o: NodeIPAMControllerOptions;
  readonly #log: Logger;
  readonly #clock: Clock;
  #ready = false;
  #stopped = false;
  #pool: WorkerPool | undefined;
  #readyPromise: Promise<void> | undefined;
  /** Nodes that found no free block: retried at once when a pool is added or a node released. */
  readonly #waiting = new Set<string>();
  /** Waiting nodes retried for blocks a released node freed, with what woke them. */
  readonly #woken = new Map<string, { pools: readonly string[]; tried: Set<string> }>();
  /** CloudAllocator: every node's cloud ranges, for node-vs-node clashes outside every pool. */
  readonly #cloudIndex = new CloudRangeIndex();
  /** The last conflict reported per node, so a repeat of the same one is not re-reported. */
  readonly #conflicts = new Map<string, string>();

  constructor(options: NodeIPAMControllerOptions) {
    this.#o = options;
    this.#log = (options.logger ?? silentLogger).child({ controller: 'node-ipam' });
    this.#clock = options.clock ?? realClock;
    this.allocator = options.allocator ?? new PodCIDRAllocator(options.registry ? { metrics: ipamMetricsSink(options.registry) } : {});
    this.queue = new WorkQueue<string>({ name: NODE_IPAM_QUEUE, clock: this.#clock, registry: options.registry });
  }

  /** True once existing allocations are loaded and blocks may be handed out. */
  ready(): boolean {
    return this.#ready;
  }

  aliveWorkers(): number {
    return this.#pool?.alive() ?? 0;
  }

  /**
   * Loads pools, waits out the fence, re-lists, records existing blocks, then starts workers.
   * Aborting `signal` (the leadership term) ends every wait at once: the promise rejects with its
   * reason and no worker starts.
   */
  start(signal?: AbortSignal): Promise<void> {
    this.#readyPromise ??= this.#start(signal);
    return this.#readyPromise;
  }

  async #start(signal: AbortSignal | undefined): Promise<void> {
    const hooks: PoolSourceHooks = {
      poolsChanged: () => this.#retryWaiting('a pool was added'),
      nodeEvent: (name, type, reason, message) => {
        const node = this.#o.nodes.get(name);
        if (node) this.#o.events.emit(node, type, reason, message);
      },
      objectEvent: (ref, type, reason, message) => this.#o.objectEvents?.(ref, type, reason, message),
    };
    for (const s of this.#o.sources) await abortable(s.start(this.allocator, this.#log, hooks), signal);
    if (this.#o.fenceMs > 0) {
      this.#log.info({ fenceMs: this.#o.fenceMs }, 'waiting one write timeout before allocating (leadership fence)');
      await abortable(new Promise<void>((resolve) => this.#clock.setTimer(resolve, this.#o.fenceMs)), signal);
    }
    if (this.#stopped) return;
    await this.#o.relist(signal);
    signal?.throwIfAborted();
    let restored = 0;
    // Oldest first: when two nodes claim one block, the node that had it first keeps it and the
    // newcomer gets the PodCIDRConflict Warning, whatever order the cache lists them in.
    // In chunks: the Lease renewal and the watches run between them however many nodes there are.
    const order = restoreOrder(this.#o.nodes.list());
    await forEachChunked(order, (node) => {
      if (this.#occupy(node)) restored++;
    });
    signal?.throwIfAborted();
    // A node deleted between two chunks had no handler yet to release it.
    for (const { metadata } of order) if (!this.#o.nodes.get(metadata.name)) this.#releaseBlocks(metadata.name, 'the node was deleted during the restore');
    for (const s of this.#o.sources) s.nodesRestored?.();
    this.#ready = true;
    this.#log.info({ restored, pools: this.allocator.poolNames() }, 'allocator loaded from existing nodes');
    this.#o.nodes.addHandlers({
      add: (n) => this.#observe(n),
      update: (_o, n) => this.#observe(n),
      delete: (n) => this.#release(n),
    });
    this.#pool = this.#o.cloud
      ? runBatchWorkers(this.queue, this.#o.workers ?? 1, CLOUD_RANGES_BATCH, (names) => this.#syncCloudBatch(names), { logger: this.#log, gatherMs: this.#o.gatherMs ?? 0, gatherMaxMs: this.#o.gatherMaxMs ?? 0 })
      : runWorkers(this.queue, this.#o.workers ?? 1, (name) => this.#sync(name), { logger: this.#log });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.queue.shutDown({ drain: true });
    await this.#pool?.finished;
    for (const s of this.#o.sources) await s.stop();
  }

  /** Nodes currently waiting for a free block. */
  waitingNodes(): string[] {
    return [...this.#waiting].sort();
  }

  /**
   * A node released blocks of `pools`: one slot is free, so one waiting node that may take from
   * those pools is retried at once (the oldest first), not every waiting node. If it still finds
   * no block, the next such node is woken, until each was tried once (`tried`).
   */
  #wakeOne(pools: readonly string[], why: string, tried = new Set<string>()): void {
    if (this.#stopped || pools.length === 0) return;
    for (const name of this.#waiting) {
      if (tried.has(name) || this.#woken.has(name)) continue;
      const node = this.#o.nodes.get(name);
      if (!node) continue;
      const candidates = this.allocator.candidatePools({ name, labels: node.metadata.labels ?? {} });
      if (!candidates.some((c) => pools.includes(c.pool))) continue;
      tried.add(name);
      this.#woken.set(name, { pools, tried });
      this.#log.info({ node: name, why }, 'retrying a node waiting for pod CIDRs');
      this.queue.forget(name);
      this.queue.add(name);
      return;
    }
  }

  /** The node no longer waits (it has blocks, or it is gone); a turn it was woken for passes on. */
  #stopWaiting(name: string): void {
    this.#waiting.delete(name);
    const woken = this.#woken.get(name);
    if (!woken) return;
    this.#woken.delete(name);
    this.#wakeOne(woken.pools, 'a woken node no longer waits', woken.tried);
  }

  #retryWaiting(why: string): void {
    if (this.#waiting.size === 0 || this.#stopped) return;
    this.#log.info({ nodes: this.#waiting.size, why }, 'retrying nodes waiting for pod CIDRs');
    for (const name of this.#waiting) {
      this.queue.forget(name);
      this.queue.add(name);
    }
  }

  // ---- PodCIDRClaims ----

  claim(request: PodCIDRClaimRequest): PodCIDRClaimResult {
    if (!this.#ready || this.#stopped) return { kind: 'notReady' };
    if (this.#o.cloud) return { kind: 'unavailable', reason: 'CloudAllocator: the pod ranges come from the cloud, written by the node IPAM loop' };
    try {
      const r = this.allocator.allocateNode({ name: request.name, labels: request.labels });
      if (!r.existing) this.#log.info({ node: request.name, podCIDRs: r.podCIDRs, pool: r.pool, reason: r.reason }, 'pod CIDRs claimed for initialisation');
      return { kind: 'claimed', podCIDRs: r.podCIDRs, pool: r.pool };
    } catch (err) {
      if (err instanceof CIDRNotAvailableError) return { kind: 'unavailable', reason: err.message };
      throw err;
    }
  }

  release(name: string): void {
    const node = this.#o.nodes.get(name);
    if (node && nodePodCIDRs(node).length > 0) return;
    this.#releaseBlocks(name, 'the node is gone (its write found no node)');
  }

  // ---- nodes ----

  /** Records a node's blocks in the allocator; false when it has none. */
  #occupy(node: NodeObject): boolean {
    const podCIDRs = nodePodCIDRs(node);
    if (podCIDRs.length === 0) return false;
    if (this.#o.cloud) {
      // The cloud's ranges need no pool: only clashes are reported.
      const { clashes } = recordCloudRanges(this.allocator, this.#cloudIndex, node.metadata.name, podCIDRs, this.#o.cloud.serviceRanges());
      this.#reportClashes(node, clashes.map((c) => c.message));
      return true;
    }
    const r = this.allocator.occupyNode(node.metadata.name, podCIDRs);
    if (!r.ok) {
      if (this.#conflicts.get(node.metadata.name) !== r.message) {
        this.#conflicts.set(node.metadata.name, r.message);
        this.#o.events.emit(node, 'Warning', IPAMEventReason.PodCIDRConflict, r.message);
        this.#log.warn({ node: node.metadata.name, reason: r.reason, podCIDR: r.podCIDR }, r.message);
      }
      this.#stopWaiting(node.metadata.name);
      return true;
    }
    this.#conflicts.delete(node.metadata.name);
    if (r.conflicts.length > 0) {
      for (const c of r.conflicts) this.#log.warn({ node: c.node, podCIDR: c.podCIDR, exclusion: c.exclusion }, 'pod CIDR overlaps an excluded range');
      for (const s of this.#o.sources) s.conflictsFound?.(r.conflicts);
    }
    this.#stopWaiting(node.metadata.name);
    return true;
  }

  #observe(node: NodeObject): void {
    // Recorded with these very blocks already (the cache's replay right after the restore, status
    // heartbeats): nothing to record or report again.
    if (!this.#o.cloud && sameList(this.allocator.nodeAllocation(node.metadata.name)?.podCIDRs, nodePodCIDRs(node))) return;
    if (this.#occupy(node)) {
      // CloudAllocator: blocks written but the condition not yet (a failed status write, a restart).
      if (this.#o.cloud && !networkAvailable(node)) this.queue.add(node.metadata.name);
      return;
    }
    if (this.#o.leaveTaintedNodes && hasUninitializedTaint(node)) return;
    this.queue.add(node.metadata.name);
  }

  #reportClashes(node: NodeObject, messages: string[]): void {
    const text = messages.join('\n');
    if ((this.#conflicts.get(node.metadata.name) ?? '') === text) return;
    if (text === '') {
      this.#conflicts.delete(node.metadata.name);
      return;
    }
    this.#conflicts.set(node.metadata.name, text);
    for (const m of messages) {
      this.#o.events.emit(node, 'Warning', IPAMEventReason.CloudRangeClash, m);
      this.#log.warn({ node: node.metadata.name }, m);
    }
  }

  #release(node: NodeObject): void {
    this.#cloudIndex.remove(node.metadata.name);
    this.#stopWaiting(node.metadata.name);
    this.#conflicts.delete(node.metadata.name);
    this.#releaseBlocks(node.metadata.name, 'a node was deleted');
  }

  /**
   * A write found no node: its watch delete may already have been handled, before this sync
   * recorded blocks (or cloud ranges) for it. Drops them, as the delete would have.
   */
  #gone(name: string): void {
    this.#cloudIndex.remove(name);
    this.#stopWaiting(name);
    this.#conflicts.delete(name);
    this.#releaseBlocks(name, 'the node is gone (its write found no node)');
  }

  #releaseBlocks(name: string, why: string): void {
    const released = this.allocator.releaseNode(name);
    if (!released) return;
    this.#log.info({ node: name, podCIDRs: released.podCIDRs, why }, 'pod CIDRs released');
    for (const s of this.#o.sources) s.nodesReleased?.(released.pools);
    this.#wakeOne(released.pools, why);
  }

  /**
   * CloudAllocator: the nodes waiting in the queue (up to 500) are looked up in one provider call,
   * then written a few at a time, as the cloud node controller batches its lookups.
   */
  async #syncCloudBatch(names: string[]): Promise<BatchResult<string>> {
    const lookup = names.map((n) => this.#o.nodes.get(n)).filter((n): n is NodeObject => n !== undefined && nodePodCIDRs(n).length === 0 && !(this.#o.leaveTaintedNodes && hasUninitializedTaint(n)));
    const answers = await this.#o.cloud!.ranges.rangesFor(lookup);
    const failed = new Map<string, unknown>();
    await forEachLimited(names, WRITES_PER_BATCH, async (name) => {
      try {
        await this.#sync(name, answers.get(name));
      } catch (err) {
        failed.set(name, err);
      }
    });
    return { failed };
  }

  /** CloudAllocator: the cloud's ranges, recorded and checked; undefined when there are none yet. */
  async #cloudRanges(node: NodeObject, answer?: CloudRangeResult): Promise<string[]> {
    const cloud = this.#o.cloud!;
    const name = node.metadata.name;
    const r = answer ?? (await cloud.ranges.rangesFor([node])).get(name) ?? { kind: 'error', error: new Error(`no answer for node ${name}`) };
    if (r.kind !== 'ranges') {
      const why = r.kind === 'none' ? r.reason : r.error.message;
      this.#o.events.emit(node, 'Warning', IPAMEventReason.CloudRangeNotAvailable, `no pod range from the cloud: ${why}`);
      throw r.kind === 'none' ? new Error(why) : r.error;
    }
    const { podCIDRs, clashes } = recordCloudRanges(this.allocator, this.#cloudIndex, name, r.podCIDRs, cloud.serviceRanges());
    this.#reportClashes(node, clashes.map((c) => c.message));
    if (podCIDRs.length === 0) throw new Error(clashes.map((c) => c.message).join('; '));
    return podCIDRs;
  }

  /** `cloudAnswer`: the node's cloud ranges, already looked up in a batch (CloudAllocator). */
  async #sync(name: string, cloudAnswer?: CloudRangeResult): Promise<void> {
    const node = await this.#assign(name, cloudAnswer);
    // CloudAllocator: after the spec write (never in it: status is its own subresource), the
    // condition. A failure here retries this step only: the blocks are already written.
    if (this.#o.cloud && node && nodePodCIDRs(node).length > 0 && !networkAvailable(node)) {
      await this.#o.cloud.patchStatus(name, networkAvailablePatch(new Date(this.#clock.now())));
    }
  }

  /** Writes the node's blocks unless it has some; returns the latest node seen (undefined: gone or left alone). */
  async #assign(name: string, cloudAnswer?: CloudRangeResult): Promise<NodeObject | undefined> {
    let node = this.#o.nodes.get(name);
    for (let attempt = 0; node; attempt++) {
      if (nodePodCIDRs(node).length > 0) return node;
      if (this.#o.leaveTaintedNodes && hasUninitializedTaint(node)) return undefined;
      let podCIDRs: string[];
      let pool: string;
      if (this.#o.cloud) {
        // The batch's answer serves the first attempt; a retry after a conflict asks again.
        podCIDRs = await this.#cloudRanges(node, attempt === 0 ? cloudAnswer : undefined);
        pool = CLOUD_POOL;
      } else {
        try {
          const r = this.allocator.allocateNode({ name, labels: node.metadata.labels ?? {} });
          podCIDRs = r.podCIDRs;
          pool = r.pool;
        } catch (err) {
          if (err instanceof CIDRNotAvailableError) {
            this.#waiting.add(name);
            // Woken for a freed block and still none: pass the turn on.
            const woken = this.#woken.get(name);
            this.#woken.delete(name);
            if (woken) this.#wakeOne(woken.pools, 'a woken node found no block', woken.tried);
            this.#o.events.emit(node, 'Warning', IPAMEventReason.CIDRNotAvailable, `Node ${name} status is now: CIDRNotAvailable (${err.message})`);
            this.#log.warn({ node: name, reason: IPAMEventReason.CIDRNotAvailable }, err.message);
          }
          throw err;
        }
        this.#waiting.delete(name);
        this.#woken.delete(name);
      }
      const resourceVersion = node.metadata.resourceVersion;
      try {
        // One PATCH, guarded by resourceVersion: the blocks and the pool they came from.
        const written = await this.#o.writer.patch(name, { metadata: { resourceVersion, annotations: { [POD_CIDR_POOL_ANNOTATION]: pool } }, spec: { podCIDR: podCIDRs[0], podCIDRs } });
        this.#log.info({ node: name, podCIDRs, pool }, 'pod CIDRs assigned');
        return written;
      } catch (err) {
        if (isNotFound(err)) {
          this.#gone(name);
          return undefined;
        }
        if (!(isConflict(err) || isInvalid(err)) || attempt >= (this.#o.conflictRetries ?? 5)) {
          // A definite failure gives the blocks back; an unknown outcome (timeout, dropped
          // response) keeps them under the node's name: a retry writes the same blocks, and a
          // write that did land is confirmed when the watch shows it.
          const outcome = writeOutcome(err);
          if (outcome === 'not-applied') this.allocator.releaseNode(name);
          this.#o.events.emit(node, 'Warning', IPAMEventReason.CIDRAssignmentFailed, `failed to assign pod CIDRs ${podCIDRs.join(',')} (${outcome === 'not-applied' ? 'released' : 'kept until the outcome is known'}): ${(err as Error).message}`);
          throw err;
        }
        try {
          node = await this.#o.writer.get(name);
        } catch (readErr) {
          if (isNotFound(readErr)) {
            this.#gone(name);
            return undefined;
          }
          throw readErr;
        }
        // Someone else set pod CIDRs meanwhile: theirs win; record them instead of ours.
        if (nodePodCIDRs(node).length > 0) {
          if (nodePodCIDRs(node).join() !== podCIDRs.join()) {
            this.allocator.releaseNode(name);
            this.#occupy(node);
          }
          return node;
        }
      }
    }
    return undefined;
  }
}

function sameList(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}

// The restore order lives in src/ipam so `plan` uses the same one.
export { restoreOrder } from '../../ipam/restore-order.js';
