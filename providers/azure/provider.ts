// `--cloud-provider azure`: node metadata from ARM, batched. A batch of nodes costs a bounded number
// of list calls, never one per node: the VMs and NICs (and, for addresses, the public IPs) of each
// resource group named, once each; the instances, NICs and public IPs of each scale set named, once
// each; the subscription's VM power states once when a standalone VM's run-time state is needed.
// Listings are shared by concurrent calls and reused for a short while, so the batches of one
// resync list each scope once.
import { abortable } from '../../src/util/abort.js';
import { forEachLimited } from '../../src/util/limit.js';
import type { IPFamily } from '../../src/nodeip/ip.js';
import type { CloudProvider, InstanceMetadata, InstanceResult, NodeRef, ProviderLogger } from '../types.js';
import { found, notFound, retryableError } from '../types.js';
import { azureNodeAddresses, nicsUsed, selectIPConfigurations, type AzureNetworkInterface, type AzureNicReference, type AzurePublicIP } from './addresses.js';
import type { AzureNodeIPConfigurations, AzureVMType } from './config.js';
import { azureIsShutdown, azurePowerState, azureProvisioningState, azureZone, type AzureInstanceStatus } from './instance.js';
import { formatAzureProviderID, instanceKey, parseAzureProviderID, resourceGroupOf, resourceIDOf, type AzureInstanceRef } from './provider-id.js';
import { azureInstanceKey } from './provider-id.js';

// Structural subsets of @azure/arm-compute's VirtualMachine, VirtualMachineScaleSetVM and
// VirtualMachineScaleSet (properties flattened, every field optional, as the SDK types them).
export interface AzureInstanceView {
  platformFaultDomain?: number;
  statuses?: AzureInstanceStatus[];
}
export interface AzureVM {
  id?: string;
  name?: string;
  location?: string;
  zones?: string[];
  provisioningState?: string;
  hardwareProfile?: { vmSize?: string };
  networkProfile?: { networkInterfaces?: AzureNicReference[] };
  osProfile?: { computerName?: string };
  instanceView?: AzureInstanceView;
  /** The flexible scale set a VM belongs to. */
  virtualMachineScaleSet?: { id?: string };
}
export interface AzureScaleSetVM extends AzureVM {
  instanceId?: string;
  sku?: { name?: string };
}
export interface AzureScaleSet {
  id?: string;
  name?: string;
  orchestrationMode?: string;
  virtualMachineProfile?: { osProfile?: { computerNamePrefix?: string } };
}

/** What the adapter needs from ARM; the real one wraps the SDK clients (arm.ts). Each call lists every page. */
export interface AzureArmSource {
  /** The VMs of a resource group (model view). */
  listVMs(resourceGroup: string, signal?: AbortSignal): Promise<AzureVM[]>;
  /** Every VM of the subscription with its run-time status (statusOnly). */
  listVMStatuses(signal?: AbortSignal): Promise<AzureVM[]>;
  listScaleSets(resourceGroup: string, signal?: AbortSignal): Promise<AzureScaleSet[]>;
  /** The instances of a uniform scale set, with their instance views; a 404 (scale set gone) rejects with an error whose statusCode is 404. */
  listScaleSetVMs(resourceGroup: string, scaleSet: string, signal?: AbortSignal): Promise<AzureScaleSetVM[]>;
  listNICs(resourceGroup: string, signal?: AbortSignal): Promise<AzureNetworkInterface[]>;
  listScaleSetNICs(resourceGroup: string, scaleSet: string, signal?: AbortSignal): Promise<AzureNetworkInterface[]>;
  listPublicIPs(resourceGroup: string, signal?: AbortSignal): Promise<AzurePublicIP[]>;
  listScaleSetPublicIPs(resourceGroup: string, scaleSet: string, signal?: AbortSignal): Promise<AzurePublicIP[]>;
  close?(): Promise<void> | void;
}

export interface AzureProviderConfig {
  subscriptionId: string;
  resourceGroup: string;
  vmType: AzureVMType;
  disableAvailabilitySetNodes: boolean;
  nodeIPFamilies: readonly IPFamily[];
  /** Which IP configurations addresses come from (default primary, as cloud-provider-azure). */
  nodeIPConfigurations?: AzureNodeIPConfigurations;
}

/** How long one listing answers later calls: the batches (≤ 500 nodes) of one resync share it. */
export const AZURE_LISTING_MAX_AGE_MS = 20_000;
/** List calls in flight at once per batch. */
export const AZURE_LIST_CONCURRENCY = 4;

export interface AzureProviderOptions {
  logger?: ProviderLogger;
  /** Reuse a listing for calls starting within this many ms of it; 0 = list on every call. */
  listingMaxAgeMs?: number;
  concurrency?: number;
  /** Clock in ms, for tests. */
  now?: () => number;
}

/** One instance found in a listing. */
interface Hit {
  ref: AzureInstanceRef;
  vm: AzureScaleSetVM;
  /** The scale set's name for a uniform scale-set instance. */
  scaleSet?: string;
}

type Target =
  | { kind: 'ref'; ref: AzureInstanceRef }
  | { kind: 'name'; name: string }
  | { kind: 'error'; error: Error };

type Lookup = { kind: 'found'; hit: Hit } | { kind: 'notFound'; reason: string } | { kind: 'error'; error: Error };

interface Listing<T> {
  startedAt: number;
  promise: Promise<T>;
}

type Settled<T> = { ok: true; value: T; startedAt: number } | { ok: false; error: Error };

const lower = (s: string | undefined): string => (s ?? '').toLowerCase();

function statusCode(err: unknown): number | undefined {
  const e = err as { statusCode?: number; status?: number };
  return e?.statusCode ?? e?.status;
}

/** The scale set and resource group of a scale-set NIC or public IP ID, or undefined for a standalone one. */
function scaleSetScope(id: string): { resourceGroup: string; scaleSet: string } | undefined {
  const m = /^\/subscriptions\/[^/]+\/resourceGroups\/([^/]+)\/providers\/microsoft\.compute\/virtualMachineScaleSets\/([^/]+)\/virtualMachines\//i.exec(id);
  return m ? { resourceGroup: m[1]!, scaleSet: m[2]! } : undefined;
}

export class AzureProvider implements CloudProvider {
  readonly name = 'azure';
  /** Which providerIDs name one instance (azureInstanceKey): the controllers compare answers with it. */
  readonly instanceKey = azureInstanceKey;
  private readonly logger?: ProviderLogger;
  private readonly maxAgeMs: number;
  private readonly concurrency: number;
  private readonly now: () => number;
  private readonly listings = new Map<string, Listing<unknown>>();

  constructor(
    readonly config: AzureProviderConfig,
    private readonly source: AzureArmSource,
    options: AzureProviderOptions = {},
  ) {
    this.logger = options.logger;
    this.maxAgeMs = options.listingMaxAgeMs ?? AZURE_LISTING_MAX_AGE_MS;
    this.concurrency = Math.max(1, options.concurrency ?? AZURE_LIST_CONCURRENCY);
    this.now = options.now ?? Date.now;
  }

  async instancesMetadata(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<InstanceMetadata>>> {
    const { lookups, callStart } = await this.lookup(nodes, signal);
    const hits = [...lookups.values()].flatMap((l) => (l.kind === 'found' ? [l.hit] : []));
    const network = await this.network(hits, callStart, signal);
    // The subscription's run-time view only for standalone VMs whose zone is their fault domain.
    const needStatus = hits.some((h) => h.ref.kind === 'vm' && !(h.vm.zones?.length));
    const statuses = needStatus ? await this.statuses(callStart, signal) : undefined;
    signal?.throwIfAborted();
    const out = new Map<string, InstanceResult<InstanceMetadata>>();
    for (const node of nodes) {
      const l = lookups.get(node.name)!;
      if (l.kind !== 'found') {
        out.set(node.name, l.kind === 'notFound' ? notFound(l.reason) : retryableError(l.error));
        continue;
      }
      try {
        out.set(node.name, found(this.metadata(node, l.hit, network, statuses)));
      } catch (err) {
        out.set(node.name, retryableError(new Error(`azure: node ${node.name}: ${(err as Error).message}`, { cause: err })));
      }
    }
    return out;
  }

  async instancesExist(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    const { lookups } = await this.lookup(nodes, signal);
    const out = new Map<string, InstanceResult<boolean>>();
    for (const node of nodes) {
      const l = lookups.get(node.name)!;
      out.set(node.name, l.kind === 'error' ? retryableError(l.error) : found(l.kind === 'found'));
    }
    return out;
  }

  async instancesShutdown(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    const { lookups, callStart } = await this.lookup(nodes, signal);
    const needStatus = [...lookups.values()].some((l) => l.kind === 'found' && l.hit.ref.kind === 'vm');
    const statuses = needStatus ? await this.statuses(callStart, signal) : undefined;
    signal?.throwIfAborted();
    const out = new Map<string, InstanceResult<boolean>>();
    for (const node of nodes) {
      const l = lookups.get(node.name)!;
      if (l.kind !== 'found') {
        out.set(node.name, l.kind === 'notFound' ? notFound(l.reason) : retryableError(l.error));
        continue;
      }
      let view = l.hit.vm.instanceView;
      if (l.hit.ref.kind === 'vm') {
        if (!statuses!.ok) {
          out.set(node.name, retryableError(statuses!.error));
          continue;
        }
        view = statuses!.value.get(instanceKey(l.hit.ref))?.instanceView;
        if (!view) {
          out.set(node.name, retryableError(new Error(`azure: node ${node.name}: VM ${l.hit.ref.name} has no run-time status in the subscription's listing yet`)));
          continue;
        }
      }
      const provisioning = l.hit.vm.provisioningState ?? azureProvisioningState(view?.statuses);
      out.set(node.name, found(azureIsShutdown(azurePowerState(view?.statuses), provisioning)));
    }
    return out;
  }

  async close(): Promise<void> {
    await this.source.close?.();
  }

  private metadata(node: NodeRef, hit: Hit, network: NetworkView, statuses: Settled<Map<string, AzureVM>> | undefined): InstanceMetadata {
    const { vm, ref } = hit;
    const location = lower(vm.location);
    if (!location) throw new Error(`instance ${resourceIDOf(ref)} has no location`);
    let faultDomain = vm.instanceView?.platformFaultDomain;
    if (ref.kind === 'vm' && !(vm.zones?.length)) {
      if (!statuses?.ok) throw statuses?.error ?? new Error('no run-time status listing');
      const view = statuses.value.get(instanceKey(ref))?.instanceView;
      // cloud-provider-azure reads the VM with its instance view; a VM our (shared, up to 20 s old)
      // listing has no view of is unknown, not fault domain 0. A view without a fault domain is 0.
      if (!view) throw new Error(`VM ${ref.name} has no run-time view in the subscription's listing yet`);
      faultDomain = view.platformFaultDomain;
    }
    const nics = vm.networkProfile?.networkInterfaces;
    for (const n of nicsUsed(nics, node.name, this.ipConfigurations)) {
      const failed = network.failures.get(lower(n.id));
      if (failed) throw failed;
    }
    const meta: InstanceMetadata = {
      providerID: vm.id ? formatAzureProviderID(vm.id) : `azure://${resourceIDOf(ref)}`,
      // A uniform scale set's instance, or a VM of a flexible one.
      zone: azureZone(location, vm.zones, faultDomain, ref.kind === 'vmss' || !!vm.virtualMachineScaleSet?.id),
      region: location,
      addresses: azureNodeAddresses({ nodeName: node.name, nics, interfaces: network.interfaces, publicIPs: network.publicIPs }, this.addressOptions),
    };
    const size = hit.scaleSet ? vm.sku?.name ?? vm.hardwareProfile?.vmSize : vm.hardwareProfile?.vmSize;
    if (size) meta.instanceType = size;
    return meta;
  }

  // --- finding the instances -----------------------------------------------------------------

  private target(node: NodeRef): Target {
    if (!node.providerID) return { kind: 'name', name: node.name.toLowerCase() };
    let ref: AzureInstanceRef;
    try {
      ref = parseAzureProviderID(node.providerID);
    } catch (err) {
      return { kind: 'error', error: new Error(`azure: node ${node.name}: ${(err as Error).message}`) };
    }
    if (lower(ref.subscriptionId) !== lower(this.config.subscriptionId)) {
      return { kind: 'error', error: new Error(`azure: node ${node.name}: providerID ${node.providerID} is in subscription ${ref.subscriptionId}, this adapter reads ${this.config.subscriptionId}`) };
    }
    return { kind: 'ref', ref };
  }

  /** Whether nodes without a providerID are looked for among standalone VMs / scale-set instances. */
  private get searchVMs(): boolean {
    return this.config.vmType !== 'vmss' || !this.config.disableAvailabilitySetNodes;
  }

  private get ipConfigurations(): AzureNodeIPConfigurations {
    return this.config.nodeIPConfigurations ?? 'primary';
  }

  private get addressOptions() {
    return { ipFamilies: this.config.nodeIPFamilies, ipConfigurations: this.ipConfigurations };
  }

  private get searchScaleSets(): boolean {
    return this.config.vmType === 'vmss';
  }

  private async lookup(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<{ lookups: Map<string, Lookup>; callStart: number }> {
    signal?.throwIfAborted();
    const callStart = this.now();
    const targets = new Map(nodes.map((n) => [n.name, this.target(n)]));
    const lookups = await this.resolve(targets, callStart, false, signal);
    // "Not found" only from listings made after the question was asked: a reused listing may
    // predate a new instance, and cloud-node-lifecycle deletes Nodes on that answer.
    const stale = [...lookups].filter(([, l]) => l.kind === 'notFound' && (l as { stale?: boolean }).stale).map(([name]) => name);
    if (stale.length > 0) {
      const again = await this.resolve(new Map(stale.map((name) => [name, targets.get(name)!])), callStart, true, signal);
      for (const [name, l] of again) lookups.set(name, l);
    }
    signal?.throwIfAborted();
    for (const [name, l] of lookups) if (l.kind === 'notFound') lookups.set(name, { kind: 'notFound', reason: l.reason });
    return { lookups, callStart };
  }

  private async resolve(targets: Map<string, Target>, callStart: number, fresh: boolean, signal?: AbortSignal): Promise<Map<string, Lookup & { stale?: boolean }>> {
    const rg = this.config.resourceGroup;
    const vmGroups = new Set<string>();
    const scaleSets = new Map<string, { resourceGroup: string; scaleSet: string }>();
    const names: string[] = [];
    for (const t of targets.values()) {
      if (t.kind === 'error') continue;
      if (t.kind === 'name') {
        names.push(t.name);
        if (this.searchVMs) vmGroups.add(lower(rg));
        continue;
      }
      if (t.ref.kind === 'vm') vmGroups.add(lower(t.ref.resourceGroup));
      else scaleSets.set(`${lower(t.ref.resourceGroup)}/${lower(t.ref.scaleSet)}`, { resourceGroup: t.ref.resourceGroup, scaleSet: t.ref.scaleSet });
    }
    // Nodes named but not identified: the scale sets whose computer-name prefix fits one of them.
    let scaleSetList: Settled<AzureScaleSet[]> | undefined;
    if (names.length > 0 && this.searchScaleSets) {
      scaleSetList = await this.list(`scalesets:${lower(rg)}`, callStart, fresh, signal, (s) => this.source.listScaleSets(rg, s));
      if (scaleSetList.ok) {
        for (const ss of scaleSetList.value) {
          if (!ss.name || lower(ss.orchestrationMode) === 'flexible') continue; // flexible instances are listed as VMs
          const prefix = lower(ss.virtualMachineProfile?.osProfile?.computerNamePrefix);
          // Computer names of uniform scale sets are the prefix and six base-36 characters.
          if (!prefix || names.some((n) => n.length === prefix.length + 6 && n.startsWith(prefix))) {
            scaleSets.set(`${lower(rg)}/${lower(ss.name)}`, { resourceGroup: rg, scaleSet: ss.name });
          }
        }
      }
    }
    const vmListings = new Map<string, Settled<InstanceIndex>>();
    const ssListings = new Map<string, Settled<InstanceIndex>>();
    const jobs: (() => Promise<void>)[] = [
      ...[...vmGroups].map((g) => async () => {
        vmListings.set(g, await this.list(`vms:${g}`, callStart, fresh, signal, (s) => this.source.listVMs(g, s).then((l) => indexInstances(l, (v) => v.name))));
      }),
      ...[...scaleSets].map(([key, { resourceGroup, scaleSet }]) => async () => {
        const r = await this.list(`ssvms:${key}`, callStart, fresh, signal, (s) => this.source.listScaleSetVMs(resourceGroup, scaleSet, s).catch((err: unknown) => {
          // A scale set that is gone has no instances (cloud-provider-azure: InstanceExists false).
          if (statusCode(err) === 404) return [] as AzureScaleSetVM[];
          throw err;
        }).then((l) => indexInstances(l, (v) => v.osProfile?.computerName)));
        ssListings.set(key, r);
      }),
    ];
    await forEachLimited(jobs, this.concurrency, (job) => job());
    signal?.throwIfAborted();

    const out = new Map<string, Lookup & { stale?: boolean }>();
    for (const [node, t] of targets) {
      if (t.kind === 'error') {
        out.set(node, { kind: 'error', error: t.error });
        continue;
      }
      if (t.kind === 'ref') {
        const key = t.ref.kind === 'vm' ? lower(t.ref.resourceGroup) : `${lower(t.ref.resourceGroup)}/${lower(t.ref.scaleSet)}`;
        const listing = t.ref.kind === 'vm' ? vmListings.get(key)! : ssListings.get(key)!;
        if (!listing.ok) {
          out.set(node, { kind: 'error', error: new Error(`azure: node ${node}: listing ${t.ref.kind === 'vm' ? `the VMs of resource group ${t.ref.resourceGroup}` : `scale set ${t.ref.scaleSet}`} failed: ${listing.error.message}`, { cause: listing.error }) });
          continue;
        }
        const vm = listing.value.byKey.get(instanceKey(t.ref));
        if (vm) out.set(node, { kind: 'found', hit: { ref: t.ref, vm, ...(t.ref.kind === 'vmss' ? { scaleSet: t.ref.scaleSet } : {}) } });
        else out.set(node, { kind: 'notFound', reason: `azure: no instance ${resourceIDOf(t.ref)}`, stale: listing.startedAt < callStart });
        continue;
      }
      out.set(node, this.byName(node, t.name, vmListings.get(lower(rg)), scaleSetList, ssListings, callStart));
    }
    return out;
  }

  private byName(node: string, name: string, vms: Settled<InstanceIndex> | undefined, scaleSetList: Settled<AzureScaleSet[]> | undefined,
    ssListings: Map<string, Settled<InstanceIndex>>, callStart: number): Lookup & { stale?: boolean } {
    const rg = this.config.resourceGroup;
    const failures: string[] = [];
    let stale = false;
    // Scale-set instances first, by computer name, as cloud-provider-azure's vmss type does.
    if (this.searchScaleSets) {
      if (scaleSetList && !scaleSetList.ok) failures.push(`listing the scale sets of ${rg}: ${scaleSetList.error.message}`);
      else if (scaleSetList) stale ||= scaleSetList.startedAt < callStart;
      for (const [key, listing] of ssListings) {
        if (!key.startsWith(`${lower(rg)}/`)) continue;
        if (!listing.ok) {
          failures.push(`listing scale set ${key.slice(key.indexOf('/') + 1)}: ${listing.error.message}`);
          continue;
        }
        stale ||= listing.startedAt < callStart;
        const vm = listing.value.byName.get(name);
        if (vm?.id) {
          try {
            const ref = parseAzureVMResourceIDLoose(vm.id);
            return { kind: 'found', hit: { ref, vm, ...(ref.kind === 'vmss' ? { scaleSet: ref.scaleSet } : {}) } };
          } catch (err) {
            return { kind: 'error', error: new Error(`azure: node ${node}: ${(err as Error).message}`) };
          }
        }
      }
    }
    if (this.searchVMs && vms) {
      if (!vms.ok) failures.push(`listing the VMs of ${rg}: ${vms.error.message}`);
      else {
        stale ||= vms.startedAt < callStart;
        const vm = vms.value.byName.get(name);
        if (vm?.id) {
          try {
            return { kind: 'found', hit: { ref: parseAzureVMResourceIDLoose(vm.id), vm } };
          } catch (err) {
            return { kind: 'error', error: new Error(`azure: node ${node}: ${(err as Error).message}`) };
          }
        }
      }
    }
    // A listing that failed may hold the instance: never "not found" then.
    if (failures.length > 0) return { kind: 'error', error: new Error(`azure: node ${node}: not found, but ${failures.join('; ')}`) };
    const where = [this.searchScaleSets && 'scale-set instance (computer name)', this.searchVMs && 'VM'].filter(Boolean).join(' or ');
    return { kind: 'notFound', reason: `azure: no ${where} named ${name} in resource group ${rg}`, stale };
  }

  // --- NICs and public IPs ---------------------------------------------------------------------

  private async network(hits: readonly Hit[], callStart: number, signal?: AbortSignal): Promise<NetworkView> {
    const view: NetworkView = { interfaces: new Map(), publicIPs: new Map(), failures: new Map() };
    if (hits.length === 0) return view;
    // NICs may live in another resource group than their VM, and scale-set NICs under their scale set.
    // Only the NICs whose addresses are reported are listed (with `primary`, the primary NIC's scope).
    const nicIDs = hits.flatMap((h) => {
      try {
        return nicsUsed(h.vm.networkProfile?.networkInterfaces, h.vm.name ?? '', this.ipConfigurations).map((n) => n.id ?? '');
      } catch {
        return []; // reported as that node's error when its addresses are made
      }
    }).filter(Boolean);
    const nicScopes = scopesOf(nicIDs);
    await this.fill(nicScopes, 'nics', callStart, signal, view.interfaces, view.failures, nicIDs,
      (g, s) => this.source.listNICs(g, s), (g, ss, s) => this.source.listScaleSetNICs(g, ss, s));
    // The public IPs of the configurations reported, no others.
    const pipIDs = hits.flatMap((h) => {
      try {
        return selectIPConfigurations({ nodeName: h.vm.name ?? '', nics: h.vm.networkProfile?.networkInterfaces, interfaces: view.interfaces }, this.addressOptions)
          .map(({ config }) => config.publicIPAddress?.id ?? '');
      } catch {
        return [];
      }
    }).filter(Boolean);
    const pipFailures = new Map<string, Error>();
    await this.fill(scopesOf(pipIDs), 'pips', callStart, signal, view.publicIPs, pipFailures, pipIDs,
      (g, s) => this.source.listPublicIPs(g, s), (g, ss, s) => this.source.listScaleSetPublicIPs(g, ss, s));
    // A public IP listing that failed fails the nodes whose NICs use one of its addresses.
    if (pipFailures.size > 0) {
      for (const nic of view.interfaces.values()) {
        const failed = (nic.ipConfigurations ?? []).map((c) => pipFailures.get(lower(c.publicIPAddress?.id))).find(Boolean);
        if (failed && nic.id) view.failures.set(lower(nic.id), failed);
      }
    }
    return view;
  }

  private async fill<T extends { id?: string }>(scopes: Scopes, kind: 'nics' | 'pips', callStart: number, signal: AbortSignal | undefined,
    into: Map<string, T>, failures: Map<string, Error>, ids: readonly string[],
    byGroup: (g: string, s?: AbortSignal) => Promise<T[]>, byScaleSet: (g: string, ss: string, s?: AbortSignal) => Promise<T[]>): Promise<void> {
    const what = kind === 'nics' ? 'network interfaces' : 'public IPs';
    const jobs: (() => Promise<void>)[] = [
      ...[...scopes.groups].map(([key, g]) => async () => {
        const r = await this.list(`${kind}:${key}`, callStart, false, signal, (s) => byGroup(g, s));
        this.absorb(r, into, failures, ids, (id) => !scaleSetScope(id) && lower(resourceGroupOf(id)) === key, `listing the ${what} of resource group ${g}`);
      }),
      ...[...scopes.scaleSets].map(([key, { resourceGroup, scaleSet }]) => async () => {
        const r = await this.list(`ss${kind}:${key}`, callStart, false, signal, (s) => byScaleSet(resourceGroup, scaleSet, s));
        this.absorb(r, into, failures, ids, (id) => {
          const sc = scaleSetScope(id);
          return sc !== undefined && `${lower(sc.resourceGroup)}/${lower(sc.scaleSet)}` === key;
        }, `listing the ${what} of scale set ${scaleSet}`);
      }),
    ];
    await forEachLimited(jobs, this.concurrency, (job) => job());
    signal?.throwIfAborted();
  }

  private absorb<T extends { id?: string }>(r: Settled<T[]>, into: Map<string, T>, failures: Map<string, Error>, ids: readonly string[], inScope: (id: string) => boolean, what: string): void {
    if (r.ok) {
      for (const item of r.value) if (item.id) into.set(item.id.toLowerCase(), item);
      return;
    }
    const error = new Error(`${what} failed: ${r.error.message}`, { cause: r.error });
    for (const id of ids) if (inScope(id)) failures.set(id.toLowerCase(), error);
  }

  private async statuses(callStart: number, signal?: AbortSignal): Promise<Settled<Map<string, AzureVM>>> {
    const r = await this.list('statuses', callStart, false, signal, (s) => this.source.listVMStatuses(s));
    if (!r.ok) return { ok: false, error: new Error(`listing the VM power states of subscription ${this.config.subscriptionId} failed: ${r.error.message}`, { cause: r.error }) };
    const byKey = new Map<string, AzureVM>();
    for (const vm of r.value) if (vm.id) byKey.set(instanceKeyOfID(vm.id), vm);
    return { ok: true, value: byKey, startedAt: r.startedAt };
  }

  // --- listings --------------------------------------------------------------------------------

  /**
   * A listing started within the max age (or, if `fresh`, at or after `callStart`), else a new one.
   * Concurrent calls share it; a failed one is not kept. Never throws: the outcome is returned.
   */
  private async list<T>(key: string, callStart: number, fresh: boolean, signal: AbortSignal | undefined, run: (signal?: AbortSignal) => Promise<T>): Promise<Settled<T>> {
    let current = this.listings.get(key) as Listing<T> | undefined;
    const usable = current && (fresh ? current.startedAt >= callStart : this.now() - current.startedAt <= this.maxAgeMs);
    if (!current || !usable) {
      // Not tied to one caller's signal: other calls may be waiting on the same listing.
      const started: Listing<T> = { startedAt: this.now(), promise: run() };
      this.listings.set(key, started as Listing<unknown>);
      started.promise.catch((err: unknown) => {
        if (this.listings.get(key) === started) this.listings.delete(key);
        this.logger?.warn({ listing: key, err: (err as Error).message }, 'azure: ARM listing failed');
      });
      current = started;
    }
    try {
      return { ok: true, value: await abortable(current.promise, signal), startedAt: current.startedAt };
    } catch (err) {
      signal?.throwIfAborted();
      return { ok: false, error: err instanceof Error ? err : new Error(String(err)) };
    }
  }
}

interface NetworkView {
  interfaces: Map<string, AzureNetworkInterface>;
  publicIPs: Map<string, AzurePublicIP>;
  /** NIC ID (lower case) → why its addresses cannot be told. */
  failures: Map<string, Error>;
}

interface Scopes {
  groups: Map<string, string>;
  scaleSets: Map<string, { resourceGroup: string; scaleSet: string }>;
}

function scopesOf(ids: readonly string[]): Scopes {
  const out: Scopes = { groups: new Map(), scaleSets: new Map() };
  for (const id of ids) {
    const ss = scaleSetScope(id);
    if (ss) {
      out.scaleSets.set(`${lower(ss.resourceGroup)}/${lower(ss.scaleSet)}`, ss);
      continue;
    }
    const g = resourceGroupOf(id);
    if (g) out.groups.set(lower(g), g);
  }
  return out;
}

/** Instances of one listing by resource ID key and by name (VM name, or a scale-set instance's computer name). */
interface InstanceIndex {
  byKey: Map<string, AzureScaleSetVM>;
  byName: Map<string, AzureScaleSetVM>;
}

function indexInstances(items: readonly AzureScaleSetVM[], nameOf: (vm: AzureScaleSetVM) => string | undefined): InstanceIndex {
  const index: InstanceIndex = { byKey: new Map(), byName: new Map() };
  for (const vm of items) {
    if (!vm.id) continue;
    index.byKey.set(instanceKeyOfID(vm.id), vm);
    const name = nameOf(vm);
    if (name) index.byName.set(name.toLowerCase(), vm);
  }
  return index;
}

function parseAzureVMResourceIDLoose(id: string): AzureInstanceRef {
  return parseAzureProviderID(`azure://${id}`);
}

/** The matching key of a listed instance's resource ID. */
function instanceKeyOfID(id: string): string {
  try {
    return instanceKey(parseAzureVMResourceIDLoose(id));
  } catch {
    return id.toLowerCase();
  }
}
