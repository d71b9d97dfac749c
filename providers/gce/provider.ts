// GCE adapter. One resync lists the project's instances page by page (aggregatedList, or list
// per configured zone) and answers every asked-for node from that one listing, so the cost is
// pages, not nodes, and no request ever carries a filter built from node names.
import type { CloudProvider, InstanceMetadata, InstanceResult, NodeRef, ProviderLogger } from '../types.js';
import { found, retryableError } from '../types.js';
import { gceNodeAddresses, gcePodCIDRs, type GceInstance } from './addresses.js';
import type { GceConfig } from './config.js';
import { formatGceProviderID, gceInstanceNameForNode, gceRegionOfZone, lastSegment, parseGceProviderID } from './provider-id.js';

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

interface Snapshot {
  byKey: Map<string, ListedInstance>;
  byName: Map<string, ListedInstance[]>;
  unreachableZones: Set<string>;
}

type Miss = { kind: 'notFound'; reason?: string } | { kind: 'error'; error: Error; retryable: true };
type Resolution = { kind: 'found'; hit: ListedInstance } | Miss;

const fail = (message: string): Miss => ({ kind: 'error', error: new Error(message), retryable: true });
const missing = (reason: string): Miss => ({ kind: 'notFound', reason });

export class GceProvider implements CloudProvider {
  readonly name = 'gce';

  constructor(
    private readonly config: GceConfig,
    private readonly source: GceInstanceSource,
    private readonly logger?: ProviderLogger,
  ) {}

  async instancesMetadata(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<InstanceMetadata>>> {
    return this.answer(nodes, signal, ({ zone, instance }) => {
      const options = { stackType: this.config.stackType };
      const podCIDRs = gcePodCIDRs(instance, options);
      const metadata: InstanceMetadata = {
        providerID: formatGceProviderID({ project: this.config.project, zone, name: String(instance.name) }),
        zone,
        region: gceRegionOfZone(zone),
        addresses: gceNodeAddresses(instance, options),
      };
      if (instance.machineType) metadata.instanceType = lastSegment(instance.machineType);
      if (podCIDRs.length > 0) metadata.podCIDRs = podCIDRs;
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
    onFound: (hit: ListedInstance) => InstanceResult<T>,
    onMissing?: (reason: string) => InstanceResult<T>,
  ): Promise<Map<string, InstanceResult<T>>> {
    const out = new Map<string, InstanceResult<T>>();
    if (nodes.length === 0) return out;
    let snapshot: Snapshot;
    try {
      snapshot = await this.snapshot(signal);
    } catch (err) {
      signal?.throwIfAborted();
      this.logger?.warn({ err: (err as Error).message, project: this.config.project }, 'gce: listing instances failed');
      const wrapped = new Error(`gce: listing instances of project ${this.config.project} failed: ${(err as Error).message}`);
      for (const node of nodes) out.set(node.name, retryableError(wrapped));
      return out;
    }
    for (const node of nodes) {
      const r = this.resolve(node, snapshot);
      if (r.kind !== 'found') {
        out.set(node.name, r.kind === 'notFound' && onMissing ? onMissing(r.reason ?? '') : r);
        continue;
      }
      try {
        out.set(node.name, onFound(r.hit));
      } catch (err) {
        out.set(node.name, retryableError(new Error(`gce: node ${node.name}: ${(err as Error).message}`)));
      }
    }
    return out;
  }

  private async snapshot(signal?: AbortSignal): Promise<Snapshot> {
    const { instances, unreachableZones } = await this.source.list(signal);
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
      if (id.project !== project) {
        return fail(`gce: node ${node.name}: providerID ${node.providerID} is in project ${id.project}, this adapter lists ${project}`);
      }
      if (zones.length > 0 && !zones.includes(id.zone)) {
        return fail(`gce: node ${node.name}: zone ${id.zone} is not in the configured zones (${zones.join(', ')})`);
      }
      const hit = s.byKey.get(`${id.zone}/${id.name}`);
      if (hit) return { kind: 'found', hit };
      if (s.unreachableZones.has(id.zone)) {
        return fail(`gce: node ${node.name}: zone ${id.zone} was unreachable`);
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
