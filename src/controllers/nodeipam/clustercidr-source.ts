// ClusterCIDR pools (KEP-2593, networking.x-k8s.io/v1 as kubernetes-sigs/node-ipam-controller
// serves it) for MultiCIDRRangeAllocator mode, plus the flags pool (mirrored, see flags-mirror.ts).
//
// - added: the pool joins the allocator, gets the finalizer, and nodes waiting for space are
//   retried at once (node-ipam-controller needs a restart for that, its issue #17);
// - deleted (deletionTimestamp): terminating, no new blocks; the finalizer is removed once no node
//   holds a block from it (re-checked whenever nodes are released);
// - immutable fields cannot change (the CRD's CEL rules refuse it; a changed object that still
//   arrives is reported and ignored).
// Every write is a JSON patch guarded by resourceVersion; a failed reconcile is retried with
// backoff from a small work queue, and every watch event re-enqueues the object. On a follower
// (warm standby: follow()) the pools are loaded and kept current the same way, writing nothing:
// no finalizers, no mirror; lead() catches up and does those writes once the lease is taken.
import {
  ClusterCIDRValidationError, parseClusterCIDR, type FlagsPool, type PodCIDRAllocator,
} from '../../ipam/index.js';
import type { KubeClient } from '../../kube/client.js';
import { jsonPatchWithResourceVersion } from '../../kube/client.js';
import { isAlreadyExists, isConflict, isInvalid, isNotFound } from '../../kube/errors.js';
import { CLUSTERCIDRS, withoutManagedFields, type KubeObject } from '../../kube/types.js';
import { Watcher } from '../../kube/watcher.js';
import { runWorkers, WorkQueue, type WorkerPool } from '../../kube/workqueue.js';
import type { Logger } from '../../log.js';
import { planFlagsMirror } from './flags-mirror.js';
import type { EventObjectRef, PoolSource, PoolSourceHooks } from './pool-source.js';

/** The finalizer node-ipam-controller puts on every ClusterCIDR it uses. */
export const CLUSTER_CIDR_FINALIZER = 'networking.x-k8s.io/cluster-cidr-finalizer';

export const ClusterCIDREventReason = {
  InvalidClusterCIDR: 'InvalidClusterCIDR',
  ClusterCIDRImmutable: 'ClusterCIDRImmutable',
  ClusterCIDRInUse: 'ClusterCIDRInUse',
  FlagsPoolInMemory: 'FlagsPoolInMemory',
  FlagsPoolMirrored: 'FlagsPoolMirrored',
  StaleFlagsPoolDeleted: 'StaleFlagsPoolDeleted',
} as const;

export interface ClusterCIDRObject extends KubeObject {
  spec?: { nodeSelector?: unknown; perNodeHostBits?: number; ipv4?: string; ipv6?: string };
}

export interface ClusterCIDRSourceOptions {
  client: KubeClient;
  /** The validated --cluster-cidr pool, if the flags are set. */
  flags?: FlagsPool;
  watchStaleAfterMs?: number;
  /** Reconcile workers (default 2). */
  workers?: number;
}

function ref(name: string, uid?: string): EventObjectRef {
  return { kind: 'ClusterCIDR', apiVersion: CLUSTERCIDRS.group + '/' + CLUSTERCIDRS.version, name, ...(uid ? { uid } : {}) };
}

export class ClusterCIDRSource implements PoolSource {
  readonly name = 'clustercidrs';
  readonly #o: ClusterCIDRSourceOptions;
  readonly queue = new WorkQueue<string>({ name: 'node-ipam-clustercidrs' });
  #watcher: Watcher<ClusterCIDRObject> | undefined;
  #workers: WorkerPool | undefined;
  #allocator: PodCIDRAllocator | undefined;
  #hooks: PoolSourceHooks | undefined;
  #log: Logger | undefined;
  /** The in-memory flags pool's name (never reconciled against the API). */
  #memoryPool: string | undefined;
  /** Pools reported as waiting on nodes (one Normal event per deletion). */
  readonly #waitingReported = new Set<string>();
  readonly #invalidReported = new Map<string, string>();
  /** Set once the IPAM loop recorded every node: only then may a pool be found unused. */
  #restored = false;
  /** False while following (warm standby): the pools are kept, nothing is written. */
  #writes = true;

  constructor(options: ClusterCIDRSourceOptions) {
    this.#o = options;
  }

  /** The name of the flags pool, and whether it is mirrored as an object (after start). */
  flagsPool(): { name: string; mirrored: boolean } | undefined {
    return this.#flagsPool;
  }
  #flagsPool: { name: string; mirrored: boolean } | undefined;

  /** Current ClusterCIDR objects (for the audit). */
  objects(): ClusterCIDRObject[] {
    return this.#watcher?.list() ?? [];
  }

  start(allocator: PodCIDRAllocator, logger: Logger, hooks?: PoolSourceHooks): Promise<void> {
    return this.#load(allocator, logger, hooks, true);
  }

  follow(allocator: PodCIDRAllocator, logger: Logger, hooks?: PoolSourceHooks): Promise<void> {
    return this.#load(allocator, logger, hooks, false);
  }

  async lead(signal?: AbortSignal): Promise<void> {
    const w = this.#watcher;
    if (!w) return;
    // A ClusterCIDR deleted or added while the follower's watch lagged must count before the first block.
    await w.relist('taking over the lease', signal);
    this.#writes = true;
    // What a follower found invalid was logged, not evented: the leader reports it once more.
    this.#invalidReported.clear();
    await this.#ensureFlagsPool();
    await this.#reconcileAll([...w.list().map((o) => o.metadata.name), ...(this.#allocator?.poolNames() ?? []).filter((n) => !w.get(n))]);
    this.#log?.info({ pools: this.#allocator?.poolNames() }, 'ClusterCIDRs current after the takeover');
  }

  async #load(allocator: PodCIDRAllocator, logger: Logger, hooks: PoolSourceHooks | undefined, writes: boolean): Promise<void> {
    this.#writes = writes;
    this.#allocator = allocator;
    this.#hooks = hooks;
    const log = (this.#log = logger.child({ source: this.name }));
    // Without the CRD the watch would retry forever with nothing to show for it: say what is missing.
    try {
      await this.#o.client.list(CLUSTERCIDRS, { limit: 1 });
    } catch (err) {
      if (isNotFound(err)) {
        throw new Error(`MultiCIDRRangeAllocator: ${CLUSTERCIDRS.plural}.${CLUSTERCIDRS.group}/${CLUSTERCIDRS.version} is not served: install the CRD (deploy/base/crd-clustercidrs.yaml)`, { cause: err });
      }
      throw err;
    }
    const w = new Watcher<ClusterCIDRObject>({ client: this.#o.client, resource: CLUSTERCIDRS, logger, staleAfterMs: this.#o.watchStaleAfterMs ?? 90_000, transform: withoutManagedFields });
    this.#watcher = w;
    w.on('add', (o) => this.queue.add(o.metadata.name));
    w.on('update', (o) => this.queue.add(o.metadata.name));
    w.on('delete', (o) => this.queue.add(o.metadata.name));
    w.start();
    await w.synced;
    if (writes) await this.#ensureFlagsPool();
    else this.#followFlagsPool();
    // Load every pool before any node is placed: the initial reconcile runs inline.
    await this.#reconcileAll(w.list().map((o) => o.metadata.name));
    this.#workers = runWorkers(this.queue, this.#o.workers ?? 2, (name) => this.#reconcile(name), { logger: log });
    log.info({ pools: allocator.poolNames(), following: !writes }, 'ClusterCIDRs loaded');
  }

  async #reconcileAll(names: readonly string[]): Promise<void> {
    for (const name of names) {
      try {
        await this.#reconcile(name);
      } catch (err) {
        this.#log?.warn({ err, clusterCIDR: name }, 'ClusterCIDR reconcile failed; retrying');
        this.queue.addRateLimited(name);
      }
    }
  }

  /** A follower's flags pool: the one the mirror gives (or will give), in memory; lead() writes the mirror. */
  #followFlagsPool(): void {
    const flags = this.#o.flags;
    if (!flags) return;
    const plan = planFlagsMirror(flags, this.#watcher?.list() ?? []);
    if (plan.kind === 'none') return;
    this.#allocator!.upsertPool(plan.pool);
    if (plan.kind === 'memory') this.#memoryPool = plan.name;
    this.#flagsPool = { name: plan.name, mirrored: plan.kind === 'exists' };
  }

  async stop(): Promise<void> {
    await this.queue.shutDown({ drain: false });
    await this.#workers?.finished;
    await this.#watcher?.stop();
  }

  nodesRestored(): void {
    this.#restored = true;
    // Deletions seen before the restore were left waiting: decide them now.
    for (const o of this.#watcher?.list() ?? []) if (o.metadata.deletionTimestamp) this.queue.add(o.metadata.name);
    for (const name of this.#allocator?.poolNames() ?? []) if (!this.#watcher?.get(name)) this.queue.add(name);
  }

  nodesReleased(pools: readonly string[]): void {
    for (const p of pools) if (p !== this.#memoryPool) this.queue.add(p);
  }

  async #ensureFlagsPool(): Promise<void> {
    const allocator = this.#allocator!;
    const log = this.#log!;
    const client = this.#o.client;
    const flags = this.#o.flags;
    // The mirror's own name is read directly: the one object whose absence leads to a create.
    const existing = [...(this.#watcher?.list() ?? [])];
    if (flags) {
      const plan0 = planFlagsMirror(flags, []);
      if (plan0.kind === 'create') {
        try {
          const cur = await client.get<ClusterCIDRObject>(CLUSTERCIDRS, plan0.name);
          if (!existing.some((o) => o.metadata.name === cur.metadata.name)) existing.push(cur);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }
    const plan = planFlagsMirror(flags, existing);
    for (const name of plan.deleteStale) {
      try {
        await client.delete(CLUSTERCIDRS, name);
        log.info({ clusterCIDR: name }, 'deleted a stale created-from-flags ClusterCIDR (it waits on its finalizer while nodes use it)');
        this.#hooks?.objectEvent(ref(name), 'Normal', ClusterCIDREventReason.StaleFlagsPoolDeleted, `--cluster-cidr changed: ${name} is deleted; it stays until no node uses it`);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    if (plan.kind === 'none') return;
    if (plan.kind === 'create') {
      try {
        await client.create(CLUSTERCIDRS, plan.object as unknown as ClusterCIDRObject);
        log.info({ clusterCIDR: plan.name }, 'flags pool mirrored as a ClusterCIDR');
        this.#hooks?.objectEvent(ref(plan.name), 'Normal', ClusterCIDREventReason.FlagsPoolMirrored, `created from --cluster-cidr ${plan.pool.families.map((f) => `${f.cidr.text} (/${f.maskSize})`).join(', ')}`);
      } catch (err) {
        if (isAlreadyExists(err)) {
          // Created meanwhile (a previous leader): the watch brings it; same name, same flags.
        } else if (isInvalid(err)) {
          // E.g. perNodeHostBits < 4, which the CRD refuses on create: keep it in memory.
          this.#memory(plan.name, { ...plan.pool, fromFlags: true }, `ClusterCIDR ${plan.name} was refused (${(err as Error).message}); the flags pool stays in memory`);
          return;
        } else throw err;
      }
      allocator.upsertPool(plan.pool);
      this.#flagsPool = { name: plan.name, mirrored: true };
      return;
    }
    if (plan.kind === 'exists') {
      allocator.upsertPool(plan.pool);
      this.#flagsPool = { name: plan.name, mirrored: true };
      return;
    }
    this.#memory(plan.name, plan.pool, plan.reason);
  }

  #memory(name: string, pool: Parameters<PodCIDRAllocator['upsertPool']>[0], reason: string): void {
    this.#allocator!.upsertPool(pool);
    this.#memoryPool = name;
    this.#flagsPool = { name, mirrored: false };
    this.#log!.warn({ pool: name }, reason);
    this.#hooks?.objectEvent(ref(name), 'Warning', ClusterCIDREventReason.FlagsPoolInMemory, reason);
  }

  async #reconcile(name: string): Promise<void> {
    if (name === this.#memoryPool) return;
    const allocator = this.#allocator!;
    const log = this.#log!;
    const obj = this.#watcher?.get(name);
    if (!obj) {
      // Gone (its finalizer was removed by someone): blocks handed out stay; the pool lingers
      // terminating in memory until its last node is released.
      if (!allocator.hasPool(name)) return;
      if (allocator.poolInUse(name) || !this.#restored) allocator.markTerminating(name);
      else allocator.removePool(name);
      this.#waitingReported.delete(name);
      return;
    }
    let pool;
    try {
      pool = parseClusterCIDR(obj);
    } catch (err) {
      if (!(err instanceof ClusterCIDRValidationError)) throw err;
      if (this.#invalidReported.get(name) !== obj.metadata.resourceVersion) {
        this.#invalidReported.set(name, obj.metadata.resourceVersion ?? '');
        log.warn({ clusterCIDR: name }, err.message);
        this.#hooks?.objectEvent(ref(name, obj.metadata.uid), 'Warning', ClusterCIDREventReason.InvalidClusterCIDR, `${err.message}; ignored`);
      }
      if (this.#writes && obj.metadata.deletionTimestamp && !allocator.hasPool(name)) await this.#removeFinalizer(obj);
      return;
    }
    let change: 'created' | 'updated' | 'unchanged';
    try {
      change = allocator.upsertPool(pool);
    } catch (err) {
      if (!(err instanceof ClusterCIDRValidationError)) throw err;
      log.warn({ clusterCIDR: name }, err.message);
      this.#hooks?.objectEvent(ref(name, obj.metadata.uid), 'Warning', ClusterCIDREventReason.ClusterCIDRImmutable, `${err.message}: the first version stays in use`);
      // The first version stays in use; only the deletion state is taken from the new one.
      if (pool.terminating) allocator.markTerminating(name);
      change = 'unchanged';
    }
    if (change === 'created') {
      log.info({ clusterCIDR: name, ipv4: pool.ipv4, ipv6: pool.ipv6, perNodeHostBits: pool.perNodeHostBits, selector: pool.selector.text || '(none)' }, 'ClusterCIDR added');
      if (!pool.terminating) this.#hooks?.poolsChanged();
    }
    // A follower keeps the pool (terminating ones too, until the leader finalizes them).
    if (!this.#writes) return;
    const finalizers = (obj.metadata.finalizers as string[] | undefined) ?? [];
    if (!pool.terminating) {
      if (!finalizers.includes(CLUSTER_CIDR_FINALIZER)) {
        const ops = finalizers.length === 0
          ? [{ op: 'add' as const, path: '/metadata/finalizers', value: [CLUSTER_CIDR_FINALIZER] }]
          : [{ op: 'add' as const, path: '/metadata/finalizers/-', value: CLUSTER_CIDR_FINALIZER }];
        await this.#patch(obj, ops);
      }
      return;
    }
    // Terminating: no new blocks; finalize once unused (known only after the nodes are restored).
    if (!this.#restored) return;
    const users = allocator.nodesOfPool(name);
    if (users.length > 0) {
      if (!this.#waitingReported.has(name)) {
        this.#waitingReported.add(name);
        const msg = `being deleted: waiting for ${users.length} node(s) that hold blocks from it (${users.slice(0, 5).join(', ')}${users.length > 5 ? ', …' : ''}) to be deleted`;
        log.info({ clusterCIDR: name, nodes: users.length }, msg);
        this.#hooks?.objectEvent(ref(name, obj.metadata.uid), 'Normal', ClusterCIDREventReason.ClusterCIDRInUse, msg);
      }
      return;
    }
    allocator.removePool(name);
    this.#waitingReported.delete(name);
    await this.#removeFinalizer(obj);
    log.info({ clusterCIDR: name }, 'ClusterCIDR finalized: no node uses it');
  }

  async #removeFinalizer(obj: ClusterCIDRObject): Promise<void> {
    const finalizers = (obj.metadata.finalizers as string[] | undefined) ?? [];
    const i = finalizers.indexOf(CLUSTER_CIDR_FINALIZER);
    if (i < 0) return;
    await this.#patch(obj, [
      { op: 'test', path: `/metadata/finalizers/${i}`, value: CLUSTER_CIDR_FINALIZER },
      { op: 'remove', path: `/metadata/finalizers/${i}` },
    ]);
  }

  async #patch(obj: ClusterCIDRObject, ops: Parameters<typeof jsonPatchWithResourceVersion>[1]): Promise<void> {
    const name = obj.metadata.name;
    try {
      await this.#o.client.patch(CLUSTERCIDRS, name, jsonPatchWithResourceVersion(obj.metadata.resourceVersion ?? '', ops), 'json');
    } catch (err) {
      // A newer version is on its way through the watch, which enqueues the object again.
      if (isNotFound(err) || isConflict(err) || isInvalid(err)) {
        this.#log?.debug({ clusterCIDR: name, err }, 'ClusterCIDR changed under the write; waiting for the newer version');
        return;
      }
      throw err;
    }
  }
}
