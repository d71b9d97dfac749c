// Live Service CIDR avoidance (KEP-1880): every ServiceCIDR's ranges are excluded from pod-CIDR
// allocation as they appear, and stay excluded while the object is being deleted (its finalizer
// holds it until no Service IP is left in it). networking.k8s.io/v1 is watched, v1beta1 on a
// cluster that serves only that, and --service-cluster-ip-range is the fallback when neither is.
// A node block overlapping a new Service range gets a Warning event and the overlap gauge: blocks
// are never revoked (KEP-2593).
import { Gauge, type Registry } from 'prom-client';
import type { PodCIDRAllocator, ExclusionConflict } from '../../ipam/index.js';
import { parseCIDRList } from '../../ipam/cidr.js';
import type { KubeClient } from '../../kube/client.js';
import { servedServiceCIDRResource } from '../../kube/discovery.js';
import { withoutManagedFields, type ResourceType, type ServiceCIDRObject } from '../../kube/types.js';
import { Watcher } from '../../kube/watcher.js';
import type { Logger } from '../../log.js';
import type { PoolSource, PoolSourceHooks } from './pool-source.js';

export const SERVICE_OVERLAP_METRIC = 'node_ipam_controller_servicecidr_overlapping_podcidrs';
export const ServiceCIDREventReason = { PodCIDROverlapsServiceCIDR: 'PodCIDROverlapsServiceCIDR' } as const;

/** Exclusion key of one ServiceCIDR object. */
export const serviceCIDRKey = (name: string): string => `servicecidr:${name}`;

export interface ServiceCIDRSourceOptions {
  client: KubeClient;
  /** --service-cluster-ip-range, used only when the cluster serves no ServiceCIDR API. */
  serviceClusterIPRange?: string;
  registry?: Registry;
  watchStaleAfterMs?: number;
  /** Test hook: the resource to watch (skips discovery); `null`: none served. */
  resource?: ResourceType | null;
}

export class ServiceCIDRSource implements PoolSource {
  readonly name = 'servicecidrs';
  readonly #o: ServiceCIDRSourceOptions;
  readonly #flagRanges: string[];
  #watcher: Watcher<ServiceCIDRObject> | undefined;
  #resource: ResourceType | undefined;
  #gauge: Gauge | undefined;
  #allocator: PodCIDRAllocator | undefined;
  #hooks: PoolSourceHooks | undefined;
  #log: Logger | undefined;
  /** Current overlaps, by node/podCIDR/exclusion, for the gauge. */
  readonly #overlaps = new Map<string, ExclusionConflict>();
  /** Canonical excluded CIDRs by exclusion key. */
  readonly #ranges = new Map<string, string[]>();

  constructor(options: ServiceCIDRSourceOptions) {
    this.#o = options;
    this.#flagRanges = [];
    if (options.serviceClusterIPRange !== undefined) {
      try {
        this.#flagRanges = parseCIDRList(options.serviceClusterIPRange).map((c) => c.text);
      } catch (err) {
        throw new Error(`--service-cluster-ip-range: ${(err as Error).message}`, { cause: err });
      }
    }
    if (options.registry) {
      const registry = options.registry;
      this.#gauge = (registry.getSingleMetric(SERVICE_OVERLAP_METRIC) as Gauge | undefined) ??
        new Gauge({ name: SERVICE_OVERLAP_METRIC, help: 'Node pod CIDRs that overlap a Service CIDR (reported, never revoked).', registers: [registry] });
    }
  }

  /** The watched resource once started (undefined: the flag fallback). */
  get resource(): ResourceType | undefined {
    return this.#resource;
  }

  /** Current Service ranges by source, for the audit. */
  serviceRanges(): { name: string; cidrs: string[]; terminating: boolean; source: 'ServiceCIDR' | 'flags' }[] {
    if (!this.#watcher) return this.#flagRanges.length > 0 ? [{ name: '--service-cluster-ip-range', cidrs: this.#flagRanges, terminating: false, source: 'flags' }] : [];
    return this.#watcher.list().map((o) => ({ name: o.metadata.name, cidrs: o.spec?.cidrs ?? [], terminating: !!o.metadata.deletionTimestamp, source: 'ServiceCIDR' as const }));
  }

  async start(allocator: PodCIDRAllocator, logger: Logger, hooks?: PoolSourceHooks): Promise<void> {
    this.#allocator = allocator;
    this.#hooks = hooks;
    this.#log = logger.child({ source: this.name });
    const res = this.#o.resource === null ? undefined : (this.#o.resource ?? await servedServiceCIDRResource(this.#o.client));
    this.#resource = res;
    if (!res) {
      if (this.#flagRanges.length > 0) this.#record('flag:--service-cluster-ip-range', this.#flagRanges);
      this.#log.info({ serviceRanges: this.#flagRanges }, 'no ServiceCIDR API served: excluding --service-cluster-ip-range');
      return;
    }
    const w = new Watcher<ServiceCIDRObject>({ client: this.#o.client, resource: res, logger, staleAfterMs: this.#o.watchStaleAfterMs ?? 90_000, transform: withoutManagedFields });
    this.#watcher = w;
    w.on('add', (o) => this.#upsert(o));
    w.on('update', (o) => this.#upsert(o));
    // Gone for good (a terminating ServiceCIDR keeps its exclusion until this).
    w.on('delete', (o) => this.#remove(o.metadata.name));
    w.start();
    await w.synced;
    this.#log.info({ resource: `${res.group}/${res.version}/${res.plural}`, serviceCIDRs: w.list().map((o) => o.metadata.name) }, 'ServiceCIDRs loaded');
  }

  /**
   * The follower took the lease (warm standby; follow() is start(): this source writes nothing):
   * a ServiceCIDR added while the watch lagged must be excluded before the first block.
   */
  async lead(signal?: AbortSignal): Promise<void> {
    await this.#watcher?.relist('taking over the lease', signal);
  }

  async stop(): Promise<void> {
    await this.#watcher?.stop();
    this.#watcher = undefined;
  }

  #upsert(o: ServiceCIDRObject): void {
    const cidrs: string[] = [];
    for (const c of o.spec?.cidrs ?? []) {
      try {
        cidrs.push(...parseCIDRList(c).map((x) => x.text));
      } catch (err) {
        this.#log?.warn({ serviceCIDR: o.metadata.name, cidr: c }, `ServiceCIDR ${o.metadata.name}: spec.cidrs: ${(err as Error).message}`);
      }
    }
    this.#record(serviceCIDRKey(o.metadata.name), cidrs);
  }

  #record(key: string, cidrs: string[]): void {
    const allocator = this.#allocator;
    if (!allocator) return;
    this.#ranges.set(key, cidrs);
    this.conflictsFound(allocator.setExclusion(key, cidrs), key);
  }

  /** Reports overlaps of node blocks with Service ranges (new ones get an event), and sets the gauge. */
  conflictsFound(conflicts: readonly ExclusionConflict[], key = 'a Service range'): void {
    for (const c of conflicts) {
      const k = `${c.node}|${c.podCIDR}|${c.exclusion}`;
      if (this.#overlaps.has(k)) continue;
      this.#overlaps.set(k, c);
      const msg = `pod CIDR ${c.podCIDR} overlaps Service CIDR ${c.exclusion} (${key}); it is kept (pod CIDRs are never revoked): move the node or the Service range`;
      this.#log?.warn({ node: c.node, podCIDR: c.podCIDR, serviceCIDR: c.exclusion }, msg);
      this.#hooks?.nodeEvent(c.node, 'Warning', ServiceCIDREventReason.PodCIDROverlapsServiceCIDR, msg);
    }
    this.#refreshGauge();
  }

  #remove(name: string): void {
    this.#ranges.delete(serviceCIDRKey(name));
    this.#allocator?.removeExclusion(serviceCIDRKey(name));
    this.#refreshGauge();
  }

  /** Drops overlaps whose node or exclusion is gone, then sets the gauge. */
  #refreshGauge(): void {
    const allocator = this.#allocator;
    if (allocator) {
      const live = new Set([...this.#ranges.values()].flat());
      for (const [k, c] of this.#overlaps) {
        const held = allocator.nodeAllocation(c.node)?.podCIDRs.includes(c.podCIDR) ?? false;
        if (!held || !live.has(c.exclusion)) this.#overlaps.delete(k);
      }
    }
    this.#gauge?.set(this.#overlaps.size);
  }

  /** Call after a node's blocks were released: overlaps of that node no longer count. */
  nodesReleased(): void {
    this.#refreshGauge();
  }
}
