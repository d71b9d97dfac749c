// GCE adapter. One resync lists the project's instances page by page (aggregatedList, or list
// per configured zone) and answers every asked-for node from that one listing, so the cost is
// pages, not nodes, and no request ever carries a filter built from node names.
import type { CloudProvider, InstanceMetadata, InstanceResult, NodeRef, ProviderLogger } from '../types.js';
import { found, retryableError } from '../types.js';
import { gceNodeAddresses, gcePodRanges, type GceInstance } from './addresses.js';
import type { GceConfig } from './config.js';
import { formatGceProviderID, gceInstanceNameForNode, gceRegionOfZone, lastSegment, parseGceProviderID } from './provider-id.js';
import { gceInstanceKey } from './provider-id.js';

/** One page size for every list call: the API maximum. */
export const GCE_PAGE_SIZE = 500;

export interface ListedInstance {
  zone: string;
  instance: GceInstance;
}

/** What the adapter needs from the Compute API; the real one wraps InstancesClient. */
export interface GceInstanceSource {
  /**
   * Every instance of the project (or of the given zones), page by page. Zones the API reports
   * as unreachable are returned so their nodes are not taken for deleted.
   */
  list(signal?: AbortSignal): Promise<{ instances: ListedInstance[]; unreachableZones: Set<string> }>;
  close?(): Promise<void> | void;
}

// States in which the VM exists but does not run; STOPPING/SUSPENDING are still on the way.
const SHUTDOWN_STATES = new Set(['TERMINATED', 'STOPPED', 'SUSPENDED']);

/**
 * How long one listing answers later calls. The controllers ask in batches (≤ 500 nodes each), so
 * without reuse every batch of a resync would list the whole project again.
 */
export const GCE_LISTING_MAX_AGE_MS = 20_000;

export interface GceProviderOptions {
  logger?: ProviderLogger;
  /** Reuse a listing for calls starting within this many ms of it; 0 = list on every call. */
  listingMaxAgeMs?: number;
  /** Clock in ms, for tests. */
  now?: () => number;
}

interface Snapshot {
  byKey: Map<string, ListedInstance>;
  byName: Map<string, ListedInstance[]>;
  unreachableZones: Set<string>;
}

type Miss = { kind: 'notFound'; reason?: string } | { kind: 'error'; error: Error; retryable: true };
type Resolution = { kind: 'found'; hit: ListedInstance } | Miss;

const fail = (message: string): Miss => ({ kind: 'error', error: new Error(message), retryable: true });
const missing = (reason: string): Miss => ({ kind: 'notFound', reason });

function raceSignal<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

export class GceProvider implements CloudProvider {
  readonly name = 'gce';
  /** Which providerIDs name one instance (gceInstanceKey): the controllers compare answers with it. */
  readonly instanceKey = gceInstanceKey;
  private readonly logger?: ProviderLogger;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  /** The latest listing, shared by concurrent calls; a failed one is dropped. */
  private listing?: { startedAt: number; promise: Promise<Snapshot> };

  constructor(
    private readonly config: GceConfig,
    private readonly source: GceInstanceSource,
    options: GceProviderOptions = {},
  ) {
    this.logger = options.logger;
    this.maxAgeMs = options.listingMaxAgeMs ?? GCE_LISTING_MAX_AGE_MS;
    this.now = options.now ?? Date.now;
  }

  async instancesMetadata(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<InstanceMetadata>>> {
    return this.answer(nodes, signal, ({ zone, instance }, node) => {
      const options = { stackType: this.config.stackType };
      const metadata: InstanceMetadata = {
        // The node's own providerID when it has one, as cloud-provider-gcp answers (it may name
        // the project by number, or another project: see resolve).
        providerID: node.providerID || formatGceProviderID({ project: this.config.project, zone, name: String(instance.name) }),
        zone,
        region: gceRegionOfZone(zone),
        addresses: gceNodeAddresses(instance, options),
      };
      if (instance.machineType) metadata.instanceType = lastSegment(instance.machineType);
      // Apart from the addresses: a pod range that cannot be used never fails the node's metadata.
      const ranges = gcePodRanges(instance, options);
      if (ranges.podCIDRs.length > 0) metadata.podCIDRs = ranges.podCIDRs;
      if (ranges.missing !== undefined || ranges.notes.length > 0) {
        metadata.podCIDRDetails = {
          ...(ranges.missing !== undefined ? { missing: `gce: instance ${String(instance.name)}: ${ranges.missing}` } : {}),
          ...(ranges.notes.length > 0 ? { notes: ranges.notes } : {}),
        };
      }
      return found(metadata);
    });
  }

  async instancesExist(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    return this.answer(nodes, signal, () => found(true), () => found(false));
  }

  async instancesShutdown(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    return this.answer(nodes, signal, ({ instance }) => found(SHUTDOWN_STATES.has(String(instance.status ?? ''))));
  }

  async close(): Promise<void> {
    await this.source.close?.();
  }

  private async answer<T>(
    nodes: readonly NodeRef[],
    signal: AbortSignal | undefined,
    onFound: (hit: ListedInstance, node: NodeRef) => InstanceResult<T>,
    onMissing?: (reason: string) => InstanceResult<T>,
  ): Promise<Map<string, InstanceResult<T>>> {
    const out = new Map<string, InstanceResult<T>>();
    if (nodes.length === 0) return out;
    signal?.throwIfAborted();
    const callStart = this.now();
    const failAll = (list: readonly NodeRef[], err: unknown) => {
      signal?.throwIfAborted();
      this.logger?.warn({ err: (err as Error).message, project: this.config.project }, 'gce: listing instances failed');
      const wrapped = new Error(`gce: listing instances of project ${this.config.project} failed: ${(err as Error).message}`, { cause: err });
      for (const node of list) out.set(node.name, retryableError(wrapped));
    };
    let listed: { snapshot: Snapshot; startedAt: number };
    try {
      listed = await this.snapshot(callStart, false, signal);
    } catch (err) {
      failAll(nodes, err);
      return out;
    }
    const resolved = new Map(nodes.map((n) => [n.name, this.resolve(n, listed.snapshot)]));
    // "Not found" only ever comes from a listing made after the question was asked: a reused
    // listing may predate a new instance, and a missing node may get deleted on that answer.
    const misses = nodes.filter((n) => resolved.get(n.name)!.kind === 'notFound');
    if (misses.length > 0 && listed.startedAt < callStart) {
      try {
        const fresh = await this.snapshot(callStart, true, signal);
        for (const n of misses) resolved.set(n.name, this.resolve(n, fresh.snapshot));
      } catch (err) {
        failAll(misses, err);
      }
    }
    for (const node of nodes) {
      if (out.has(node.name)) continue;
      const r = resolved.get(node.name)!;
      if (r.kind !== 'found') {
        out.set(node.name, r.kind === 'notFound' && onMissing ? onMissing(r.reason ?? '') : r);
        continue;
      }
      try {
        out.set(node.name, onFound(r.hit, node));
      } catch (err) {
        out.set(node.name, retryableError(new Error(`gce: node ${node.name}: ${(err as Error).message}`)));
      }
    }
    return out;
  }

  /** A listing started within the max age (or, if `fresh`, at or after `callStart`), else a new one. */
  private async snapshot(callStart: number, fresh: boolean, signal?: AbortSignal): Promise<{ snapshot: Snapshot; startedAt: number }> {
    let current = this.listing;
    const usable = current && (fresh ? current.startedAt >= callStart : this.now() - current.startedAt <= this.maxAgeMs);
    if (!current || !usable) {
      // Not tied to one caller's signal: other calls may be waiting on the same listing.
      const started = { startedAt: this.now(), promise: this.source.list().then((l) => this.index(l)) };
      this.listing = started;
      started.promise.catch(() => {
        if (this.listing === started) this.listing = undefined;
      });
      current = started;
    }
    return { snapshot: await raceSignal(current.promise, signal), startedAt: current.startedAt };
  }

  private index({ instances, unreachableZones }: { instances: ListedInstance[]; unreachableZones: Set<string> }): Snapshot {
    const byKey = new Map<string, ListedInstance>();
    const byName = new Map<string, ListedInstance[]>();
    for (const hit of instances) {
      const name = hit.instance.name;
      if (!name) continue;
      byKey.set(`${hit.zone}/${name}`, hit);
      byName.set(name, [...(byName.get(name) ?? []), hit]);
    }
    return { byKey, byName, unreachableZones };
  }

  private resolve(node: NodeRef, s: Snapshot): Resolution {
    const { project, zones } = this.config;
    if (node.providerID) {
      let id;
      try {
        id = parseGceProviderID(node.providerID);
      } catch (err) {
        return fail(`gce: node ${node.name}: ${(err as Error).message}`);
      }
      if (zones.length > 0 && !zones.includes(id.zone)) {
        return fail(`gce: node ${node.name}: zone ${id.zone} is not in the configured zones (${zones.join(', ')})`);
      }
      // The providerID's zone and name, looked up in this project whatever project it names (a
      // project number, say): cloud-provider-gcp asks its own project unless --enable-multi-project
      // (providers/gce/gce_instances.go InstanceMetadata and instanceByProviderID, without
      // cloud.ForceProjectID; TestProjectFromNodeProviderID).
      const hit = s.byKey.get(`${id.zone}/${id.name}`);
      if (hit) return { kind: 'found', hit };
      if (s.unreachableZones.has(id.zone)) {
        return fail(`gce: node ${node.name}: zone ${id.zone} was unreachable`);
      }
      if (id.project !== project) {
        // Upstream reads this miss as "not found" and its lifecycle controller deletes the node;
        // but the instance may well live in the project the providerID names.
        return fail(`gce: node ${node.name}: no instance ${id.name} in ${project}/${id.zone}, and its providerID names project ${id.project}, which this adapter does not list; not taken for gone`);
      }
      return missing(`gce: no instance ${id.name} in ${project}/${id.zone}`);
    }
    const name = gceInstanceNameForNode(node.name);
    const hits = s.byName.get(name) ?? [];
    if (hits.length === 1) return { kind: 'found', hit: hits[0] };
    if (hits.length > 1) {
      return fail(`gce: node ${node.name}: instance name ${name} exists in zones ${hits.map((h) => h.zone).join(', ')}; set spec.providerID`);
    }
    if (s.unreachableZones.size > 0) {
      return fail(`gce: node ${node.name}: not found, but zones ${[...s.unreachableZones].join(', ')} were unreachable`);
    }
    return missing(`gce: no instance named ${name} in project ${project}`);
  }
}
