// Node IPAM runs one CIDRAllocator, chosen once at start from --cidr-allocator-type, as
// kube-controller-manager does: RangeAllocator (range-allocator.ts) hands out blocks from pools;
// CloudAllocator (cloud-allocator.ts) writes the ranges the cloud gives each instance. What both
// do alike is written once here: load the pools, wait out the leadership fence, re-list, record
// every node's existing blocks in the one ledger, watch nodes, give a gone node's blocks back,
// and write a node's pod CIDRs with a guarded PATCH that re-reads on a conflict.
//
// A follower can keep all of that warm (follow(): warm standby): pools loaded without writes, the
// ledger recorded from the node cache and kept current from its events, nothing queued, written
// or evented. start() on a warm loop then only brings the caches current to a read made after the
// lease was taken, hands the sources their writes, and queues the nodes that need blocks.
import type { Registry } from 'prom-client';
import { PodCIDRAllocator } from '../../ipam/index.js';
import { restoreOrder } from '../../ipam/restore-order.js';
import { realClock, type Clock } from '../../kube/clock.js';
import { isConflict, isInvalid, isNotFound, writeOutcome } from '../../kube/errors.js';
import { WorkQueue, type WorkerPool } from '../../kube/workqueue.js';
import { silentLogger, WarningSummary, type Logger } from '../../log.js';
import { nodePodCIDRs, POD_CIDR_POOL_ANNOTATION, type NodeObject } from '../../model/node.js';
import { abortable } from '../../util/abort.js';
import { forEachChunked } from '../../util/yield.js';
import type { EventType, NodeCache, NodeEventSink, NodeWriter } from '../seams.js';
import { ipamMetricsSink } from './metrics.js';
import type { EventObjectRef, PoolSource, PoolSourceHooks } from './pool-source.js';

export const NODE_IPAM_QUEUE = 'node-ipam';

export const IPAMEventReason = {
  CIDRNotAvailable: 'CIDRNotAvailable',
  CIDRAssignmentFailed: 'CIDRAssignmentFailed',
  PodCIDRConflict: 'PodCIDRConflict',
  CloudRangeClash: 'CloudRangeClash',
  CloudRangeNotAvailable: 'CloudRangeNotAvailable',
  /** Normal: how the ranges were chosen among several the cloud gives (AWS: several prefixes). */
  CloudRangeChosen: 'CloudRangeChosen',
  /** Normal: the cloud was asked for the node's ranges (AWS: AssignIpv6Addresses), once. */
  CloudRangeRequested: 'CloudRangeRequested',
} as const;

/** What the manager, /livez and the audit need of the node IPAM loop, whichever kind runs. */
export interface CIDRAllocator {
  readonly queue: WorkQueue<string>;
  /** Every held block, in the one ledger both loops and the cloud node controller's claims share. */
  readonly ledger: PodCIDRAllocator;
  /**
   * Loads pools, waits out the fence, re-lists, records existing blocks, then starts workers.
   * After follow(): brings the warm ledger's caches current and starts workers. Aborting `signal`
   * (the leadership term) ends every wait at once: the promise rejects with its reason and no
   * worker starts.
   */
  start(signal?: AbortSignal): Promise<void>;
  /**
   * A follower's start (warm standby), once the node cache has synced: loads the pools and
   * records every node's blocks, then keeps the ledger current from node events. Writes, queues
   * and records events for nothing. Rejects when a source cannot load (`signal`: the process).
   */
  follow(signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
  /** True once existing allocations are loaded and blocks may be handed out. */
  ready(): boolean;
  aliveWorkers(): number;
}

export interface CIDRAllocatorOptions {
  nodes: NodeCache;
  writer: NodeWriter;
  events: NodeEventSink;
  sources: PoolSource[];
  /**
   * Fence before the first allocation: one write timeout, so a previous leader's in-flight write
   * has landed or failed, followed by `relist`.
   */
  fenceMs: number;
  /**
   * Brings the node cache current to a read made after the term began (a re-list, or the watch
   * caught up to a quorum read); gives up when `signal` aborts.
   */
  relist: (signal?: AbortSignal) => Promise<void>;
  workers?: number;
  /** Attempts of the guarded write when the node changed meanwhile (default 5). */
  conflictRetries?: number;
  registry?: Registry;
  logger?: Logger;
  clock?: Clock;
  /** A ledger to use (tests, benchmarks); by default a new one. */
  ledger?: PodCIDRAllocator;
  /** Events about objects other than nodes (ClusterCIDRs); dropped when absent. */
  objectEvents?: (ref: EventObjectRef, type: EventType, reason: string, message: string) => void;
}

/** An event a follower would have recorded about a node. */
interface HeldEvent {
  /** The node it is about: recorded on taking over only if that very node is still there. */
  uid: string | undefined;
  type: EventType;
  reason: string;
  message: string;
}

/** The pod CIDRs one write gives a node, and the pool they came from (the pool annotation). */
export interface Blocks {
  podCIDRs: string[];
  pool: string;
}

export abstract class CIDRAllocatorLoop implements CIDRAllocator {
  readonly queue: WorkQueue<string>;
  readonly ledger: PodCIDRAllocator;
  protected readonly options: CIDRAllocatorOptions;
  protected readonly log: Logger;
  protected readonly clock: Clock;
  #ready = false;
  #stopped = false;
  /** following: a warm standby's ledger, nothing written; leading: the loop runs. */
  #mode: 'idle' | 'following' | 'leading' = 'idle';
  #pool: WorkerPool | undefined;
  #started: Promise<void> | undefined;
  #following: Promise<void> | undefined;
  readonly #hooks: PoolSourceHooks;
  /**
   * While following: the nodes a leader would have work on (needsLeader), so that the takeover
   * looks at those alone, not at every cached node (0.5 s at 100,000 nodes).
   */
  readonly #attention = new Set<string>();
  /** While following: the events a leader would have recorded, by node. */
  readonly #heldEvents = new Map<string, Map<string, HeldEvent>>();
  /** The conflict text last reported per node, so the same conflict is not reported again. */
  readonly #reported = new Map<string, string>();
  /** While the restore runs: its warnings, logged as one line per reason when it ends. */
  #restoreWarnings: WarningSummary | undefined;

  constructor(options: CIDRAllocatorOptions) {
    // A follower records no events: what it would report (conflicts, clashes, overlaps) is held
    // and reported on taking over, for the nodes still there.
    const events = options.events;
    this.options = {
      ...options,
      events: {
        emit: (node, type, reason, message) => {
          if (this.#mode !== 'following') return events.emit(node, type, reason, message);
          const name = node.metadata.name;
          const held = this.#heldEvents.get(name) ?? new Map<string, HeldEvent>();
          held.set(`${reason}\u0000${message}`, { uid: node.metadata.uid, type, reason, message });
          this.#heldEvents.set(name, held);
        },
      },
    };
    this.#hooks = {
      poolsChanged: () => this.poolsChanged(),
      nodeEvent: (name, type, reason, message) => {
        const node = options.nodes.get(name);
        if (node) this.options.events.emit(node, type, reason, message);
      },
      objectEvent: (ref, type, reason, message) => (this.#mode === 'following' ? undefined : options.objectEvents?.(ref, type, reason, message)),
    };
    this.log = (options.logger ?? silentLogger).child({ controller: 'node-ipam' });
    this.clock = options.clock ?? realClock;
    this.ledger = options.ledger ?? new PodCIDRAllocator(options.registry ? { metrics: ipamMetricsSink(options.registry) } : {});
    this.queue = new WorkQueue<string>({ name: NODE_IPAM_QUEUE, clock: this.clock, registry: options.registry });
  }

  /** Records a node's existing blocks in the ledger (reporting what they clash with); false when it has none. */
  protected abstract record(node: NodeObject): boolean;
  /** A node added or changed after the restore: record its blocks, or queue it for some. */
  protected abstract observe(node: NodeObject): void;
  /** A follower saw a node added or changed: record its blocks (nothing is queued). */
  protected track(node: NodeObject): void {
    this.record(node);
  }
  /** Whether a leader has work on this node (queued by observe()): by default, it has no blocks. */
  protected needsLeader(node: NodeObject): boolean {
    return nodePodCIDRs(node).length === 0;
  }
  protected abstract runWorkers(): WorkerPool;
  /** A source added pools. */
  protected poolsChanged(): void {}
  /** A node is gone: drop what the allocator keeps about it besides its blocks. */
  protected nodeGone(_name: string): void {}
  /** Blocks of these pools went back to the ledger. */
  protected blocksReleased(_pools: readonly string[], _why: string): void {}

  ready(): boolean {
    return this.#ready;
  }

  aliveWorkers(): number {
    return this.#pool?.alive() ?? 0;
  }

  protected get stopped(): boolean {
    return this.#stopped;
  }

  start(signal?: AbortSignal): Promise<void> {
    this.#started ??= this.#following ? this.#takeOver(this.#following, signal) : this.#coldStart(signal);
    return this.#started;
  }

  follow(signal?: AbortSignal): Promise<void> {
    this.#following ??= this.#follow(signal);
    return this.#following;
  }

  async #coldStart(signal: AbortSignal | undefined): Promise<void> {
    const o = this.options;
    for (const s of o.sources) await abortable(s.start(this.ledger, this.log, this.#hooks), signal);
    if (o.fenceMs > 0) {
      this.log.info({ fenceMs: o.fenceMs }, 'waiting one write timeout before allocating (leadership fence)');
      await abortable(new Promise<void>((resolve) => this.clock.setTimer(resolve, o.fenceMs)), signal);
    }
    if (this.#stopped) return;
    await o.relist(signal);
    signal?.throwIfAborted();
    this.#mode = 'leading';
    const restored = await this.#restore(signal);
    this.#ready = true;
    this.log.info({ warmStandby: false, restored, pools: this.ledger.poolNames() }, 'allocator loaded from existing nodes');
    this.#watchNodes();
    this.#pool = this.runWorkers();
  }

  async #follow(signal: AbortSignal | undefined): Promise<void> {
    const o = this.options;
    this.#mode = 'following';
    for (const s of o.sources) await abortable(s.follow ? s.follow(this.ledger, this.log, this.#hooks) : s.start(this.ledger, this.log, this.#hooks), signal);
    if (this.#stopped) return;
    const restored = await this.#restore(signal);
    for (const node of o.nodes.list()) if (this.needsLeader(node)) this.#attention.add(node.metadata.name);
    this.#watchNodes();
    this.log.info({ restored, waiting: this.#attention.size, pools: this.ledger.poolNames() }, 'warm standby: allocator loaded from the node cache; it follows the cache until this replica leads');
  }

  /**
   * The warm standby took the lease. Its ledger holds every block in its caches; those are made
   * current to a read taken now (`relist`: a previous leader's last blocks above all), each source
   * catches up and starts writing, and the nodes without blocks are queued. No node is listed again
   * unless the cache cannot be shown current.
   */
  async #takeOver(following: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
    const o = this.options;
    const began = this.clock.now();
    await abortable(following, signal);
    const warmAfter = this.clock.now() - began;
    await o.relist(signal);
    signal?.throwIfAborted();
    if (this.#stopped) return;
    // Leading from here: events are recorded (those held first), node changes are observed (a
    // queued node waits for the workers), and the sources' catch-up below may write.
    this.#mode = 'leading';
    for (const [name, held] of this.#heldEvents) {
      const node = o.nodes.get(name);
      if (node) for (const e of held.values()) if (e.uid === node.metadata.uid) o.events.emit(node, e.type, e.reason, e.message);
    }
    this.#heldEvents.clear();
    // The nodes a leader has work on, as the follower last saw them.
    const names = [...this.#attention];
    this.#attention.clear();
    for (const s of o.sources) if (s.lead) await abortable(s.lead(signal), signal);
    if (this.#stopped) return;
    signal?.throwIfAborted();
    this.#ready = true;
    await forEachChunked(names, (name) => {
      const node = o.nodes.get(name);
      if (node) this.observe(node);
    });
    // The cold path's line, so that one message says "allocating now" either way.
    this.log.info({ warmStandby: true, looked: names.length, queued: this.queue.len(), pools: this.ledger.poolNames(), ms: this.clock.now() - began, waitedForWarmMs: warmAfter }, 'allocator loaded from existing nodes');
    this.#pool = this.runWorkers();
  }

  /** Records every cached node's blocks, oldest node first; returns how many nodes had blocks. */
  async #restore(signal: AbortSignal | undefined): Promise<number> {
    const o = this.options;
    let restored = 0;
    // Oldest first: when two nodes claim one block, the node that had it first keeps it and the
    // newcomer gets the PodCIDRConflict Warning, whatever order the cache lists them in.
    // In chunks: the Lease renewal and the watches run between them however many nodes there are.
    const order = restoreOrder(o.nodes.list());
    // A badly migrated cluster can hold thousands of conflicting blocks: one line per kind of
    // conflict for the whole restore, with the first few and a pointer to `audit`.
    this.#restoreWarnings = new WarningSummary();
    await forEachChunked(order, (node) => {
      if (this.record(node)) restored++;
    });
    this.#restoreWarnings.flush(this.log, (reason, count) => `restore: ${count} nodes' pod CIDRs: ${reason}`, () => 'node-address-ccm audit lists every one');
    this.#restoreWarnings = undefined;
    signal?.throwIfAborted();
    // A node deleted between two chunks (or deleted and created again) had no handler yet to release it.
    for (const { metadata } of order) if (o.nodes.get(metadata.name)?.metadata.uid !== metadata.uid) this.forget(metadata.name, 'the node was deleted during the restore', metadata.uid);
    for (const s of o.sources) s.nodesRestored?.();
    return restored;
  }

  #watchNodes(): void {
    const changed = (n: NodeObject): void => {
      if (this.#stopped) return;
      this.#forgetOtherIncarnation(n);
      if (this.#mode !== 'following') return this.observe(n);
      this.track(n);
      if (this.needsLeader(n)) this.#attention.add(n.metadata.name);
      else this.#attention.delete(n.metadata.name);
    };
    this.options.nodes.addHandlers({
      add: changed,
      update: (_old, n) => changed(n),
      delete: (n) => {
        this.#attention.delete(n.metadata.name);
        this.forget(n.metadata.name, 'a node was deleted', n.metadata.uid);
      },
    });
  }

  /**
   * A Node is its UID: blocks the ledger holds under this node's name for another UID belonged
   * to a node that is gone (deleted, then created again under its name), and go back now. The
   * cache reports that as a delete and an add; this holds even where an event was missed.
   */
  #forgetOtherIncarnation(node: NodeObject): void {
    const held = this.ledger.nodeAllocation(node.metadata.name);
    if (held?.uid !== undefined && node.metadata.uid !== undefined && held.uid !== node.metadata.uid) {
      this.forget(node.metadata.name, 'a new node of that name (the old one was deleted)', held.uid);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.queue.shutDown({ drain: true });
    await this.#pool?.finished;
    for (const s of this.options.sources) await s.stop();
  }

  /**
   * The node is gone (its watch delete, or a write that found no node, whose delete may already
   * have been handled before this sync recorded blocks for it): its blocks go back. With `uid`,
   * only if the ledger's record is that node's: a late delete of an earlier node of the same name
   * never frees the blocks of the node that has the name now.
   */
  protected forget(name: string, why: string, uid?: string): void {
    const held = this.ledger.nodeAllocation(name);
    if (held && uid !== undefined && held.uid !== undefined && held.uid !== uid) return;
    this.nodeGone(name);
    this.#reported.delete(name);
    this.#heldEvents.delete(name);
    const released = this.ledger.releaseNode(name, uid);
    if (!released) return;
    this.log.info({ node: name, podCIDRs: released.podCIDRs, why }, 'pod CIDRs released');
    for (const s of this.options.sources) s.nodesReleased?.(released.pools);
    this.blocksReleased(released.pools, why);
  }

  /** Logs a warning about a node's blocks; during the restore, summed up per reason. */
  protected warn(reason: string, fields: Record<string, unknown> & { message: string }): void {
    if (this.#restoreWarnings) {
      this.#restoreWarnings.add(reason, fields);
      return;
    }
    const { message, ...rest } = fields;
    this.log.warn({ reason, ...rest }, message);
  }

  /** True when `text` differs from the conflict last reported for the node ('' clears it). */
  protected isNewConflict(name: string, text: string): boolean {
    if ((this.#reported.get(name) ?? '') === text) return false;
    if (text === '') {
      this.#reported.delete(name);
      return false;
    }
    this.#reported.set(name, text);
    return true;
  }

  /**
   * Writes the blocks `choose` gives a node that has none: one PATCH guarded by resourceVersion,
   * with the pool annotation. On a conflict the node is read again and, if someone else gave it
   * pod CIDRs meanwhile, theirs win. `choose` throws when there are no blocks to give, and
   * returns undefined to leave the node alone. Returns the node as last seen, with its blocks
   * (undefined: gone or left alone); status is as it was, a spec write does not touch it.
   */
  protected async writePodCIDRs(name: string, choose: (node: NodeObject, attempt: number) => Promise<Blocks | undefined> | Blocks | undefined): Promise<NodeObject | undefined> {
    let node = this.options.nodes.get(name);
    for (let attempt = 0; node; attempt++) {
      if (nodePodCIDRs(node).length > 0) return node;
      const blocks = await choose(node, attempt);
      if (!blocks) return undefined;
      const { podCIDRs, pool } = blocks;
      try {
        // Guarded twice: the resourceVersion (the node as read), and the UID, since the blocks
        // were chosen for this very node; a node created again under the name refuses the write
        // (422, metadata.uid is immutable) even where its resourceVersion would match.
        await this.options.writer.patch(name, { metadata: { uid: node.metadata.uid, resourceVersion: node.metadata.resourceVersion, annotations: { [POD_CIDR_POOL_ANNOTATION]: pool } }, spec: { podCIDR: podCIDRs[0], podCIDRs } });
        this.log.info({ node: name, podCIDRs, pool }, 'pod CIDRs assigned');
        return node;
      } catch (err) {
        if (isNotFound(err)) {
          this.forget(name, 'the node is gone (its write found no node)', node.metadata.uid);
          return undefined;
        }
        if (!(isConflict(err) || isInvalid(err)) || attempt >= (this.options.conflictRetries ?? 5)) {
          // A definite failure gives the blocks back; an unknown outcome (timeout, dropped
          // response) keeps them under the node's name: a retry writes the same blocks, and a
          // write that did land is confirmed when the watch shows it.
          const outcome = writeOutcome(err);
          if (outcome === 'not-applied') this.ledger.releaseNode(name, node.metadata.uid);
          this.options.events.emit(node, 'Warning', IPAMEventReason.CIDRAssignmentFailed, `failed to assign pod CIDRs ${podCIDRs.join(',')} (${outcome === 'not-applied' ? 'released' : 'kept until the outcome is known'}): ${(err as Error).message}`);
          throw err;
        }
        const planned = node;
        node = await this.#readAgain(name, planned.metadata.uid);
        // Another node of that name now (the write was refused for its UID): what was chosen for
        // the one that is gone goes back, and the new one is decided afresh.
        if (node && node.metadata.uid !== planned.metadata.uid) this.forget(name, 'a new node of that name (the old one was deleted)', planned.metadata.uid);
        // Someone else set pod CIDRs meanwhile: theirs win; record them instead of ours.
        else if (node && nodePodCIDRs(node).length > 0 && nodePodCIDRs(node).join() !== podCIDRs.join()) {
          this.ledger.releaseNode(name, node.metadata.uid);
          this.record(node);
        }
      }
    }
    return undefined;
  }

  /** The node from the API server; undefined (and the node read as `uid` forgotten) when it is gone. */
  async #readAgain(name: string, uid: string | undefined): Promise<NodeObject | undefined> {
    try {
      return await this.options.writer.get(name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.forget(name, 'the node is gone (its write found no node)', uid);
      return undefined;
    }
  }
}
