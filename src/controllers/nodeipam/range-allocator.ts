// RangeAllocator (and MultiCIDRRangeAllocator: the same loop over ClusterCIDR pools): blocks come
// from the pools the sources load, and a node that finds none waits until a pool is added or a
// block is released. While the cloud node controller runs, it claims a tainted node's blocks here
// so they go out in the write that removes the taint; this loop serves every other node.
import { CIDRNotAvailableError } from '../../ipam/index.js';
import { runWorkers, type WorkerPool } from '../../kube/workqueue.js';
import { hasUninitializedTaint, nodePodCIDRs, type NodeObject } from '../../model/node.js';
import { CIDRAllocatorLoop, IPAMEventReason, type Blocks, type CIDRAllocatorOptions } from './cidr-allocator.js';
import type { PodCIDRClaimRequest, PodCIDRClaimResult, PodCIDRClaims } from './claims.js';

export interface RangeAllocatorOptions extends CIDRAllocatorOptions {
  /** While the cloud node controller runs, tainted nodes get their blocks in its write. */
  leaveTaintedNodes: boolean;
}

/**
 * Writes of pod CIDRs in flight at once, as kube-controller-manager's range allocator runs them
 * (cidrUpdateWorkers in pkg/controller/nodeipam/ipam/cidr_allocator.go, 30 since 1.8): a cluster
 * of 10,000 new nodes waits for 10,000 PATCHes, and one at a time they were 2.4× KCM's time
 * (bench upstream, 1,000 nodes). A worker takes its node's blocks from the ledger synchronously
 * before its write, and a node is never in two workers at once, so no two writes carry one block.
 */
export const RANGE_ALLOCATOR_WRITE_WORKERS = 30;

export class RangeAllocator extends CIDRAllocatorLoop implements PodCIDRClaims {
  readonly #leaveTaintedNodes: boolean;
  /** Nodes that found no free block: retried at once when a pool is added or a node released. */
  readonly #waiting = new Set<string>();
  /** Waiting nodes retried for blocks a released node freed, with what woke them. */
  readonly #woken = new Map<string, { pools: readonly string[]; tried: Set<string> }>();

  constructor(options: RangeAllocatorOptions) {
    super(options);
    this.#leaveTaintedNodes = options.leaveTaintedNodes;
  }

  /** Nodes currently waiting for a free block. */
  waitingNodes(): string[] {
    return [...this.#waiting].sort();
  }

  // ---- PodCIDRClaims ----

  claim(request: PodCIDRClaimRequest): PodCIDRClaimResult {
    if (!this.ready() || this.stopped) return { kind: 'notReady' };
    try {
      const r = this.ledger.allocateNode({ name: request.name, uid: request.uid, labels: request.labels });
      if (!r.existing) this.log.info({ node: request.name, podCIDRs: r.podCIDRs, pool: r.pool, reason: r.reason }, 'pod CIDRs claimed for initialisation');
      return { kind: 'claimed', podCIDRs: r.podCIDRs, pool: r.pool };
    } catch (err) {
      if (err instanceof CIDRNotAvailableError) return { kind: 'unavailable', reason: err.message };
      throw err;
    }
  }

  release(name: string, uid: string | undefined): void {
    const node = this.options.nodes.get(name);
    if (node && node.metadata.uid === uid && nodePodCIDRs(node).length > 0) return;
    this.forget(name, 'the node is gone (its write found no node)', uid);
  }

  // ---- the loop ----

  protected override runWorkers(): WorkerPool {
    return runWorkers(this.queue, this.options.workers ?? 1, (name) => this.#sync(name), { logger: this.log });
  }

  protected override record(node: NodeObject): boolean {
    const name = node.metadata.name;
    const podCIDRs = nodePodCIDRs(node);
    if (podCIDRs.length === 0) return false;
    const r = this.ledger.occupyNode(name, podCIDRs, node.metadata.uid);
    if (!r.ok) {
      if (this.isNewConflict(name, r.message)) {
        this.options.events.emit(node, 'Warning', IPAMEventReason.PodCIDRConflict, r.message);
        this.warn(IPAMEventReason.PodCIDRConflict, { node: name, conflict: r.reason, podCIDR: r.podCIDR, message: r.message });
      }
      this.#stopWaiting(name);
      return true;
    }
    this.isNewConflict(name, '');
    if (r.conflicts.length > 0) {
      for (const c of r.conflicts) this.warn('PodCIDROverlapsExclusion', { node: c.node, podCIDR: c.podCIDR, exclusion: c.exclusion, message: 'pod CIDR overlaps an excluded range' });
      for (const s of this.options.sources) s.conflictsFound?.(r.conflicts);
    }
    this.#stopWaiting(name);
    return true;
  }

  protected override observe(node: NodeObject): void {
    // Recorded with these very blocks already (the cache's replay right after the restore, status
    // heartbeats): nothing to record or report again.
    if (this.recordedAs(node)) return;
    if (this.record(node)) return;
    if (this.#leaveTaintedNodes && hasUninitializedTaint(node)) return;
    this.queue.add(node.metadata.name);
  }

  protected override track(node: NodeObject): void {
    if (!this.recordedAs(node)) this.record(node);
  }

  /** The ledger holds exactly this node's blocks for this very node (its UID). */
  private recordedAs(node: NodeObject): boolean {
    const held = this.ledger.nodeAllocation(node.metadata.name);
    const blocks = nodePodCIDRs(node);
    return held !== undefined && held.uid === node.metadata.uid && held.podCIDRs.length === blocks.length && held.podCIDRs.every((b, i) => b === blocks[i]);
  }

  protected override poolsChanged(): void {
    this.#retryWaiting('a pool was added');
  }

  protected override nodeGone(name: string): void {
    this.#stopWaiting(name);
  }

  protected override blocksReleased(pools: readonly string[], why: string): void {
    this.#wakeOne(pools, why);
  }

  async #sync(name: string): Promise<void> {
    await this.writePodCIDRs(name, (node) => this.#choose(node));
  }

  /** Blocks from the pools for a node, or undefined for a tainted one the cloud node controller serves. */
  #choose(node: NodeObject): Blocks | undefined {
    const name = node.metadata.name;
    if (this.#leaveTaintedNodes && hasUninitializedTaint(node)) return undefined;
    try {
      const r = this.ledger.allocateNode({ name, uid: node.metadata.uid, labels: node.metadata.labels ?? {} });
      this.#waiting.delete(name);
      this.#woken.delete(name);
      return { podCIDRs: r.podCIDRs, pool: r.pool };
    } catch (err) {
      if (err instanceof CIDRNotAvailableError) {
        this.#waiting.add(name);
        // Woken for a freed block and still none: pass the turn on.
        const woken = this.#woken.get(name);
        this.#woken.delete(name);
        if (woken) this.#wakeOne(woken.pools, 'a woken node found no block', woken.tried);
        this.options.events.emit(node, 'Warning', IPAMEventReason.CIDRNotAvailable, `Node ${name} status is now: CIDRNotAvailable (${err.message})`);
        this.log.warn({ node: name, reason: IPAMEventReason.CIDRNotAvailable }, err.message);
      }
      throw err;
    }
  }

  // ---- waiting nodes ----

  /**
   * A node released blocks of `pools`: one slot is free, so one waiting node that may take from
   * those pools is retried at once (the oldest first), not every waiting node. If it still finds
   * no block, the next such node is woken, until each was tried once (`tried`).
   */
  #wakeOne(pools: readonly string[], why: string, tried = new Set<string>()): void {
    if (this.stopped || pools.length === 0) return;
    for (const name of this.#waiting) {
      if (tried.has(name) || this.#woken.has(name)) continue;
      const node = this.options.nodes.get(name);
      if (!node) continue;
      const candidates = this.ledger.candidatePools({ name, labels: node.metadata.labels ?? {} });
      if (!candidates.some((c) => pools.includes(c.pool))) continue;
      tried.add(name);
      this.#woken.set(name, { pools, tried });
      this.log.info({ node: name, why }, 'retrying a node waiting for pod CIDRs');
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
    if (this.#waiting.size === 0 || this.stopped) return;
    this.log.info({ nodes: this.#waiting.size, why }, 'retrying nodes waiting for pod CIDRs');
    for (const name of this.#waiting) {
      this.queue.forget(name);
      this.queue.add(name);
    }
  }
}

