// The node IPAM loop (flags mode of this issue; further pool sources plug in through PoolSource).
// It owns the one PodCIDRAllocator: loads pools, waits out the leadership fence, re-lists and
// records every node's existing pod CIDRs, then hands out blocks to nodes that lack them, and
// serves the cloud node controller's claims (PodCIDRClaims) from the same instance.
import type { Registry } from 'prom-client';
import { CIDRNotAvailableError, PodCIDRAllocator } from '../../ipam/index.js';
import { realClock, type Clock } from '../../kube/clock.js';
import { isConflict, isInvalid, isNotFound } from '../../kube/errors.js';
import { runWorkers, WorkQueue, type WorkerPool } from '../../kube/workqueue.js';
import { silentLogger, type Logger } from '../../log.js';
import { hasUninitializedTaint, nodePodCIDRs, type NodeObject } from '../node.js';
import type { NodeCache, NodeEventSink, NodeWriter } from '../seams.js';
import type { PodCIDRClaimRequest, PodCIDRClaimResult, PodCIDRClaims } from './claims.js';
import { ipamMetricsSink } from './metrics.js';
import type { PoolSource } from './pool-source.js';

export const NODE_IPAM_QUEUE = 'node-ipam';

export const IPAMEventReason = {
  CIDRNotAvailable: 'CIDRNotAvailable',
  CIDRAssignmentFailed: 'CIDRAssignmentFailed',
  PodCIDRConflict: 'PodCIDRConflict',
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
  /** A consistent re-list of the node cache (the watcher's relist). */
  relist: () => Promise<void>;
  workers?: number;
  conflictRetries?: number;
  registry?: Registry;
  logger?: Logger;
  clock?: Clock;
  /** An allocator to use (tests, benchmarks); by default a new one. */
  allocator?: PodCIDRAllocator;
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

  /** Loads pools, waits out the fence, re-lists, records existing blocks, then starts workers. */
  start(): Promise<void> {
    this.#readyPromise ??= this.#start();
    return this.#readyPromise;
  }

  async #start(): Promise<void> {
    for (const s of this.#o.sources) await s.start(this.allocator, this.#log);
    if (this.#o.fenceMs > 0) {
      this.#log.info({ fenceMs: this.#o.fenceMs }, 'waiting one write timeout before allocating (leadership fence)');
      await new Promise<void>((resolve) => this.#clock.setTimer(resolve, this.#o.fenceMs));
    }
    if (this.#stopped) return;
    await this.#o.relist();
    let restored = 0;
    for (const node of this.#o.nodes.list()) if (this.#occupy(node)) restored++;
    this.#ready = true;
    this.#log.info({ restored, pools: this.allocator.poolNames() }, 'allocator loaded from existing nodes');
    this.#o.nodes.addHandlers({
      add: (n) => this.#observe(n),
      update: (_o, n) => this.#observe(n),
      delete: (n) => this.#release(n),
    });
    this.#pool = runWorkers(this.queue, this.#o.workers ?? 1, (name) => this.#sync(name), { logger: this.#log });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.queue.shutDown({ drain: true });
    await this.#pool?.finished;
    for (const s of this.#o.sources) await s.stop();
  }

  // ---- PodCIDRClaims ----

  claim(request: PodCIDRClaimRequest): PodCIDRClaimResult {
    if (!this.#ready || this.#stopped) return { kind: 'notReady' };
    try {
      const r = this.allocator.allocateNode({ name: request.name, labels: request.labels });
      if (!r.existing) this.#log.info({ node: request.name, podCIDRs: r.podCIDRs, pool: r.pool, reason: r.reason }, 'pod CIDRs claimed for initialisation');
      return { kind: 'claimed', podCIDRs: r.podCIDRs, pool: r.pool };
    } catch (err) {
      if (err instanceof CIDRNotAvailableError) return { kind: 'unavailable', reason: err.message };
      throw err;
    }
  }

  // ---- nodes ----

  /** Records a node's blocks in the allocator; false when it has none. */
  #occupy(node: NodeObject): boolean {
    const podCIDRs = nodePodCIDRs(node);
    if (podCIDRs.length === 0) return false;
    const r = this.allocator.occupyNode(node.metadata.name, podCIDRs);
    if (!r.ok) {
      this.#o.events.emit(node, 'Warning', IPAMEventReason.PodCIDRConflict, r.message);
      this.#log.warn({ node: node.metadata.name, reason: r.reason, podCIDR: r.podCIDR }, r.message);
    } else {
      for (const c of r.conflicts) this.#log.warn({ node: c.node, podCIDR: c.podCIDR, exclusion: c.exclusion }, 'pod CIDR overlaps an excluded range');
    }
    return true;
  }

  #observe(node: NodeObject): void {
    if (this.#occupy(node)) return;
    if (this.#o.leaveTaintedNodes && hasUninitializedTaint(node)) return;
    this.queue.add(node.metadata.name);
  }

  #release(node: NodeObject): void {
    const released = this.allocator.releaseNode(node.metadata.name);
    if (released) this.#log.info({ node: node.metadata.name, podCIDRs: released.podCIDRs }, 'pod CIDRs released');
  }

  async #sync(name: string): Promise<void> {
    let node = this.#o.nodes.get(name);
    for (let attempt = 0; node; attempt++) {
      if (nodePodCIDRs(node).length > 0) return;
      if (this.#o.leaveTaintedNodes && hasUninitializedTaint(node)) return;
      let podCIDRs: string[];
      try {
        podCIDRs = this.allocator.allocateNode({ name, labels: node.metadata.labels ?? {} }).podCIDRs;
      } catch (err) {
        if (err instanceof CIDRNotAvailableError) {
          this.#o.events.emit(node, 'Warning', IPAMEventReason.CIDRNotAvailable, `Node ${name} status is now: CIDRNotAvailable (${err.message})`);
          this.#log.warn({ node: name, reason: IPAMEventReason.CIDRNotAvailable }, err.message);
        }
        throw err;
      }
      const resourceVersion = node.metadata.resourceVersion;
      try {
        await this.#o.writer.patch(name, { metadata: { resourceVersion }, spec: { podCIDR: podCIDRs[0], podCIDRs } });
        this.#log.info({ node: name, podCIDRs }, 'pod CIDRs assigned');
        return;
      } catch (err) {
        if (isNotFound(err)) {
          this.allocator.releaseNode(name);
          return;
        }
        if (!(isConflict(err) || isInvalid(err)) || attempt >= (this.#o.conflictRetries ?? 5)) {
          // The allocation stays recorded under the node's name: a retry writes the same blocks,
          // and a write that did land is simply confirmed when the watch shows it.
          this.#o.events.emit(node, 'Warning', IPAMEventReason.CIDRAssignmentFailed, `failed to assign pod CIDRs ${podCIDRs.join(',')}: ${(err as Error).message}`);
          throw err;
        }
        try {
          node = await this.#o.writer.get(name);
        } catch (readErr) {
          if (isNotFound(readErr)) {
            this.allocator.releaseNode(name);
            return;
          }
          throw readErr;
        }
        // Someone else set pod CIDRs meanwhile: theirs win; record them instead of ours.
        if (nodePodCIDRs(node).length > 0) {
          this.allocator.releaseNode(name);
          this.#occupy(node);
          return;
        }
      }
    }
  }
}
