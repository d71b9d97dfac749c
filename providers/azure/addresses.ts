// Pure address selection for an Azure VM or scale-set instance from its network interfaces, as the
// SDKs return them (properties flattened). No I/O: the provider feeds it what the listings held.
//
// cloud-provider-azure's ARM path (azure_instances_v1.go, addressGetter; azure_standard.go,
// getPrimaryInterfaceID and getPrimaryIPConfig) reports the primary IP configuration of the
// primary NIC: InternalIP, then Hostname (the node name), then the ExternalIP of the public IP
// attached to that configuration. This keeps that order and extends it to every IP configuration,
// primary NIC first and, within a NIC, the primary configuration first, so that a dual-stack VM
// (whose IPv6 configurations are never primary on Azure) reports both families, as the
// instance-metadata path of cloud-provider-azure does.
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
 * Node addresses of an instance: InternalIP for each IP configuration's private address, primary
 * NIC first and the primary configuration first, then Hostname, then ExternalIP for each attached
 * public IP that has an address, in the same order; each kind ordered by family as `ipFamilies`
 * lists them, and families not listed left out. Throws (a retryable answer for that node) when the
 * primary NIC or configuration cannot be told, a referenced NIC is missing from the listing, or no
 * private address of a listed family is left.
 */
export function azureNodeAddresses(input: AzureAddressInput, options: AzureAddressOptions): NodeAddress[] {
  const families = checkFamilies(options?.ipFamilies);
  const internal: { address: NodeAddress; family: IPFamily }[] = [];
  const external: { address: NodeAddress; family: IPFamily }[] = [];
  for (const ref of orderedNics(input.nics, input.nodeName)) {
    const nic = input.interfaces.get((ref.id ?? '').toLowerCase());
    if (!nic) throw new Error(`network interface ${ref.id ?? '(no id)'} of "${input.nodeName}" is not in the listing`);
    for (const config of orderedIPConfigurations(nic)) {
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
  }
  if (internal.length === 0) {
    throw new Error(`instance "${input.nodeName}" has no private address of ${families.map((f) => `IPv${f}`).join(' or ')}`);
  }
  return [...byFamily(internal, families), { type: 'Hostname', address: input.nodeName }, ...byFamily(external, families)];
}
