// Pure address selection for an Azure VM or scale-set instance from its network interfaces, as the
// SDKs return them (properties flattened). No I/O: the provider feeds it what the listings held.
//
// cloud-provider-azure answers a node other than the one it runs on from ARM (azure_instances_v1.go
// addressGetter; GetIPByNodeName in azure_standard.go, azure_vmss.go, azure_vmssflex.go): the
// primary NIC (getPrimaryInterfaceID: the only one, else the one flagged primary), its primary IP
// configuration (getPrimaryIPConfig: the only one, else the one flagged primary), and reports
// InternalIP (that configuration's private address), Hostname (the node name), then ExternalIP
// (the address of the public IP attached to that configuration, if it has one). That path has no
// IPv6 at all: Azure makes the primary configuration IPv4, and upstream's dual-stack addresses come
// only from the instance metadata of the node itself (cloud-node-manager, getLocalInstanceNodeAddresses:
// the first IPv4 and the first IPv6 address of the first interface, each with its public IP).
//
// `nodeIPConfigurations: primary` (the default) is that answer. With IPv6 in nodeIPFamilies (this
// adapter's own key) it adds, for each family the primary configuration is not of, the primary
// NIC's first configuration of that family (getIPConfigByIPFamily's rule, and what the instance
// metadata path reports), with its public IP: the addresses an upstream cluster's nodes get from
// cloud-node-manager. `nodeIPConfigurations: all` reports every configuration of every NIC,
// primary NIC first and the primary configuration first within each.
import type { NodeAddress } from '../../src/model/node-address.js';
import { ipFamilyOf, type IPFamily } from '../../src/nodeip/ip.js';

// Structural subsets of @azure/arm-network's NetworkInterface / PublicIPAddress and
// @azure/arm-compute's NetworkInterfaceReference: every field optional, as the SDKs type them.
export interface AzureIPConfiguration {
  name?: string;
  primary?: boolean;
  privateIPAddress?: string;
  privateIPAddressVersion?: string;
  publicIPAddress?: { id?: string };
}
export interface AzureNetworkInterface {
  id?: string;
  name?: string;
  ipConfigurations?: AzureIPConfiguration[];
}
export interface AzureNicReference {
  id?: string;
  primary?: boolean;
}
export interface AzurePublicIP {
  id?: string;
  ipAddress?: string;
}

export interface AzureAddressInput {
  /** The node name: reported as Hostname, as cloud-provider-azure does. */
  nodeName: string;
  /** The instance's networkProfile.networkInterfaces, in its order. */
  nics: readonly AzureNicReference[] | undefined;
  /** NICs by lower-case resource ID. */
  interfaces: ReadonlyMap<string, AzureNetworkInterface>;
  /** Public IPs by lower-case resource ID. */
  publicIPs: ReadonlyMap<string, AzurePublicIP>;
}

export interface AzureAddressOptions {
  /** Families reported, in preference order (the first one's addresses come first). */
  ipFamilies: readonly IPFamily[];
  /** `primary` (default): the primary NIC's primary configuration, and its first one of each other listed family; `all`: every configuration of every NIC. */
  ipConfigurations?: 'primary' | 'all';
}

function lastSegment(id: string | undefined): string {
  return (id ?? '').split('/').pop() ?? '';
}

/** The NIC references, the primary one first (one NIC is primary whatever its flag). Throws when several NICs name none primary. */
export function orderedNics(nics: readonly AzureNicReference[] | undefined, vmName: string): AzureNicReference[] {
  if (!nics || nics.length === 0) throw new Error(`instance "${vmName}" has no network interface`);
  if (nics.length === 1) return [...nics];
  const primary = nics.findIndex((n) => n.primary === true);
  if (primary < 0) throw new Error(`failed to find a primary nic for the vm. vmname="${vmName}"`);
  return [nics[primary]!, ...nics.filter((_, i) => i !== primary)];
}

/** The IP configurations of a NIC, the primary one first (one configuration is primary whatever its flag). */
export function orderedIPConfigurations(nic: AzureNetworkInterface): AzureIPConfiguration[] {
  const name = nic.name ?? lastSegment(nic.id);
  const configs = nic.ipConfigurations;
  if (!configs || configs.length === 0) throw new Error(`nic "${name}" has no IP configuration`);
  if (configs.length === 1) return [...configs];
  const primary = configs.findIndex((c) => c.primary === true);
  if (primary < 0) throw new Error(`failed to determine the primary ipconfig. nicname="${name}"`);
  return [configs[primary]!, ...configs.filter((_, i) => i !== primary)];
}

/** The NICs whose configurations are reported: the primary one, or (`all`) every one, the primary first. */
export function nicsUsed(nics: readonly AzureNicReference[] | undefined, vmName: string, ipConfigurations: 'primary' | 'all' = 'primary'): AzureNicReference[] {
  const ordered = orderedNics(nics, vmName);
  return ipConfigurations === 'all' ? ordered : [ordered[0]!];
}

/** A configuration's family: its privateIPAddressVersion as ARM writes it (what upstream selects by), else its address's. */
function configFamily(config: AzureIPConfiguration): IPFamily | undefined {
  const v = (config.privateIPAddressVersion ?? '').toLowerCase();
  if (v === 'ipv4') return 4;
  if (v === 'ipv6') return 6;
  return config.privateIPAddress ? ipFamilyOf(config.privateIPAddress) : undefined;
}

/**
 * The IP configurations whose addresses are reported, in report order before the family sort:
 * `primary`: the primary NIC's primary configuration, then for each listed family it is not of,
 * that NIC's first configuration of the family that has a private address; `all`: every
 * configuration of every NIC, primary NIC and primary configuration first. Throws where
 * upstream does (no primary NIC or configuration to be told) and for a NIC missing from the listing.
 */
export function selectIPConfigurations(input: Omit<AzureAddressInput, 'publicIPs'>, options: AzureAddressOptions): { nic: AzureNetworkInterface; config: AzureIPConfiguration }[] {
  const families = checkFamilies(options?.ipFamilies);
  const out: { nic: AzureNetworkInterface; config: AzureIPConfiguration }[] = [];
  for (const ref of nicsUsed(input.nics, input.nodeName, options.ipConfigurations ?? 'primary')) {
    const nic = input.interfaces.get((ref.id ?? '').toLowerCase());
    if (!nic) throw new Error(`network interface ${ref.id ?? '(no id)'} of "${input.nodeName}" is not in the listing`);
    const ordered = orderedIPConfigurations(nic);
    if (options.ipConfigurations === 'all') {
      out.push(...ordered.map((config) => ({ nic, config })));
      continue;
    }
    const primary = ordered[0]!;
    out.push({ nic, config: primary });
    for (const family of families) {
      if (configFamily(primary) === family) continue;
      const first = (nic.ipConfigurations ?? []).find((c) => c !== primary && c.privateIPAddress && configFamily(c) === family);
      if (first) out.push({ nic, config: first });
    }
  }
  return out;
}

function checkFamilies(families: readonly IPFamily[] | undefined): readonly IPFamily[] {
  if (!Array.isArray(families) || families.length === 0 || families.some((f) => f !== 4 && f !== 6) || new Set(families).size !== families.length) {
    throw new Error(`ipFamilies: expected [4], [6], [4, 6] or [6, 4], got ${JSON.stringify(families)}`);
  }
  return families;
}

/** Stable: by the position of each address's family in `families`, cloud order kept within one. */
function byFamily(list: { address: NodeAddress; family: IPFamily }[], families: readonly IPFamily[]): NodeAddress[] {
  return families.flatMap((f) => list.filter((a) => a.family === f).map((a) => a.address));
}

/**
 * Node addresses of an instance: InternalIP for the private address of each selected IP
 * configuration (selectIPConfigurations), then Hostname, then ExternalIP for the public IP
 * attached to each that has an address, in the same order; each kind ordered by family as
 * `ipFamilies` lists them, and families not listed left out. Throws (a retryable answer for that
 * node) when the primary NIC or configuration cannot be told, a NIC needed is missing from the
 * listing, or no private address of a listed family is left.
 */
export function azureNodeAddresses(input: AzureAddressInput, options: AzureAddressOptions): NodeAddress[] {
  const families = checkFamilies(options?.ipFamilies);
  const internal: { address: NodeAddress; family: IPFamily }[] = [];
  const external: { address: NodeAddress; family: IPFamily }[] = [];
  for (const { nic, config } of selectIPConfigurations(input, options)) {
    const where = `nic "${nic.name ?? lastSegment(nic.id)}" ipconfig "${config.name ?? '?'}"`;
    if (config.privateIPAddress) {
      const family = ipFamilyOf(config.privateIPAddress);
      if (family === undefined) throw new Error(`${where}: privateIPAddress "${config.privateIPAddress}" is not an IP address`);
      if (families.includes(family)) internal.push({ address: { type: 'InternalIP', address: config.privateIPAddress }, family });
    }
    const pipID = config.publicIPAddress?.id;
    if (!pipID) continue;
    // A public IP not (yet) allocated, or not listed, gives no address: cloud-provider-azure's existsPip.
    const ip = input.publicIPs.get(pipID.toLowerCase())?.ipAddress;
    if (!ip) continue;
    const family = ipFamilyOf(ip);
    if (family === undefined) throw new Error(`${where}: public IP ${lastSegment(pipID)} has address "${ip}", not an IP address`);
    if (families.includes(family)) external.push({ address: { type: 'ExternalIP', address: ip }, family });
  }
  if (internal.length === 0) {
    throw new Error(`instance "${input.nodeName}" has no private address of ${families.map((f) => `IPv${f}`).join(' or ')}`);
  }
  return [...byFamily(internal, families), { type: 'Hostname', address: input.nodeName }, ...byFamily(external, families)];
}
