// Pure mapping from a compute v1 Instance (JSON, camelCase) to node addresses and the pod ranges
// CloudAllocator takes from the cloud. No I/O here: the provider feeds it what the API returned.
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { NodeAddress } from '../../src/model/node-address.js';

export type GceStackType = 'IPV4' | 'IPV4_IPV6' | 'IPV6';
export const GCE_STACK_TYPES: readonly GceStackType[] = ['IPV4', 'IPV4_IPV6', 'IPV6'];

// Structural subset of protos.google.cloud.compute.v1.IInstance: the generated client fills
// absent fields with null or '' and plain JSON leaves them out, so every field is optional.
export interface GceAccessConfig {
  natIP?: string | null;
  externalIpv6?: string | null;
  type?: string | null;
}
export interface GceAliasIpRange {
  ipCidrRange?: string | null;
}
export interface GceNetworkInterface {
  name?: string | null;
  networkIP?: string | null;
  accessConfigs?: GceAccessConfig[] | null;
  ipv6Address?: string | null;
  ipv6AccessType?: string | null;
  ipv6AccessConfigs?: GceAccessConfig[] | null;
  aliasIpRanges?: GceAliasIpRange[] | null;
}
export interface GceInstance {
  id?: string | number | null;
  name?: string | null;
  zone?: string | null;
  machineType?: string | null;
  status?: string | null;
  networkInterfaces?: GceNetworkInterface[] | null;
}

export interface GceAddressOptions {
  stackType: GceStackType;
}

function describe(instance: GceInstance): string {
  return instance.name ? `instance "${instance.name}"` : 'instance';
}

function checkStackType(stackType: unknown): GceStackType {
  if (!GCE_STACK_TYPES.includes(stackType as GceStackType)) {
    throw new Error(`stackType: "${String(stackType)}" is not one of ${GCE_STACK_TYPES.join(', ')}`);
  }
  return stackType as GceStackType;
}

function interfacesOf(instance: GceInstance): GceNetworkInterface[] {
  if (instance === null || typeof instance !== 'object') {
    throw new Error(`instance: expected a compute v1 Instance object, got ${instance === null ? 'null' : typeof instance}`);
  }
  const nics = instance.networkInterfaces;
  if (nics !== undefined && nics !== null && !Array.isArray(nics)) {
    throw new Error(`${describe(instance)}: networkInterfaces must be an array`);
  }
  if (!nics || nics.length === 0) {
    throw new Error(`${describe(instance)} has no network interface`);
  }
  return nics;
}

function nonEmpty(value: string | null | undefined): value is string {
  return typeof value === 'string' && value !== '';
}

/**
 * The IPv6 address GCE assigned to an interface: the internal one, or for an EXTERNAL access
 * type without an internal one, the external address from ipv6AccessConfigs. Empty if none.
 */
export function gceInterfaceIPv6(nic: GceNetworkInterface, field = 'networkInterface'): string {
  if (nonEmpty(nic.ipv6Address)) {
    if (!isIPv6(nic.ipv6Address)) throw new Error(`${field}.ipv6Address: "${nic.ipv6Address}" is not an IPv6 address`);
    return nic.ipv6Address;
  }
  if (nic.ipv6AccessType === 'EXTERNAL') {
    const configs = nic.ipv6AccessConfigs ?? [];
    for (const [j, ac] of configs.entries()) {
      if (nonEmpty(ac.externalIpv6)) {
        if (!isIPv6(ac.externalIpv6)) {
          throw new Error(`${field}.ipv6AccessConfigs[${j}].externalIpv6: "${ac.externalIpv6}" is not an IPv6 address`);
        }
        return ac.externalIpv6;
      }
    }
  }
  return '';
}

/**
 * Node addresses of a GCE instance, as cloud-provider-gcp reports them: per interface, networkIP
 * (InternalIP), each natIP (ExternalIP), then the interface's IPv6 (InternalIP), internal or
 * external, whatever the cluster's stack type. Then ordered by family, order kept within each:
 * IPv6 first for stack type IPV6, IPv4 first otherwise. Text is passed through as the API wrote it.
 */
export function gceNodeAddresses(instance: GceInstance, options: GceAddressOptions): NodeAddress[] {
  const stackType = checkStackType(options?.stackType);
  const nics = interfacesOf(instance);
  const out: NodeAddress[] = [];
  nics.forEach((nic, i) => {
    const field = `networkInterfaces[${i}]`;
    if (nonEmpty(nic.networkIP)) {
      if (!isIPv4(nic.networkIP)) throw new Error(`${describe(instance)}: ${field}.networkIP: "${nic.networkIP}" is not an IPv4 address`);
      out.push({ type: 'InternalIP', address: nic.networkIP });
    }
    for (const [j, ac] of (nic.accessConfigs ?? []).entries()) {
      if (!nonEmpty(ac.natIP)) continue; // an access config without an external IP yet
      if (!isIPv4(ac.natIP)) throw new Error(`${describe(instance)}: ${field}.accessConfigs[${j}].natIP: "${ac.natIP}" is not an IPv4 address`);
      out.push({ type: 'ExternalIP', address: ac.natIP });
    }
    // Reported in every stack type, IPV4 included (cloud-provider-gcp's "dual stack instance with
    // cluster stack type IPv4" cases): a dual-stack provided-node-ip on such a node must match.
    let v6: string;
    try {
      v6 = gceInterfaceIPv6(nic, field);
    } catch (err) {
      throw new Error(`${describe(instance)}: ${(err as Error).message}`, { cause: err });
    }
    if (v6) out.push({ type: 'InternalIP', address: v6 });
  });
  if (out.length === 0) {
    throw new Error(`${describe(instance)}: no network interface has an address`);
  }
  const preferIPv6 = stackType === 'IPV6';
  return [...out.filter((a) => isIPv6(a.address) === preferIPv6), ...out.filter((a) => isIPv6(a.address) !== preferIPv6)];
}

function canonicalCIDR(text: string, field: string): string {
  let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    parsed = ipaddr.parseCIDR(text);
  } catch {
    throw new Error(`${field}: "${text}" is not a CIDR`);
  }
  const [addr, bits] = parsed;
  const network = addr.kind() === 'ipv4'
    ? ipaddr.IPv4.networkAddressFromCIDR(text)
    : ipaddr.IPv6.networkAddressFromCIDR(text);
  if (network.toString() !== addr.toString()) {
    throw new Error(`${field}: "${text}" has host bits set (network is ${network.toString()}/${bits})`);
  }
  return `${network.toString()}/${bits}`;
}

/**
 * Cloud-owned pod ranges for CloudAllocator: on interface nic0 (else the first), its first
 * alias IP range and a /112 taken from its IPv6 address. IPv4 first unless the stack is IPV6;
 * IPV4 clusters get only the IPv4 range. Empty when the instance has neither.
 */
export function gcePodCIDRs(instance: GceInstance, options: GceAddressOptions): string[] {
  const stackType = checkStackType(options?.stackType);
  const nics = interfacesOf(instance);
  let index = nics.findIndex((n) => n.name === 'nic0');
  if (index < 0) index = 0;
  const nic = nics[index];
  const field = `${describe(instance)}: networkInterfaces[${index}]`;
  const v4: string[] = [];
  const v6: string[] = [];
  const alias = (nic.aliasIpRanges ?? [])[0];
  if (alias && nonEmpty(alias.ipCidrRange)) {
    const cidr = canonicalCIDR(alias.ipCidrRange, `${field}.aliasIpRanges[0].ipCidrRange`);
    (cidr.includes(':') ? v6 : v4).push(cidr);
  }
  if (stackType !== 'IPV4') {
    const addr = gceInterfaceIPv6(nic, field);
    if (addr) {
      const network = ipaddr.IPv6.networkAddressFromCIDR(`${addr}/112`);
      v6.push(`${network.toString()}/112`);
    }
  } else {
    v6.length = 0;
  }
  return stackType === 'IPV6' ? [...v6, ...v4] : [...v4, ...v6];
}
