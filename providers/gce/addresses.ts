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

/** A pod range read from the API: its network, and whether the text had host bits set. */
function networkOf(text: string, field: string): { cidr: string; family: 4 | 6; hostBits: boolean } {
  let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    parsed = ipaddr.parseCIDR(text);
  } catch {
    throw new Error(`${field}: "${text}" is not a CIDR`);
  }
  const [addr, bits] = parsed;
  const network = addr.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(text) : ipaddr.IPv6.networkAddressFromCIDR(text);
  return { cidr: `${network.toString()}/${bits}`, family: addr.kind() === 'ipv4' ? 4 : 6, hostBits: network.toString() !== addr.toString() };
}

/** The cloud's pod ranges for one instance, or why it has none for this stack type. */
export interface GcePodRanges {
  /** Canonical CIDR text, in the stack type's order; empty when `missing` says why. */
  podCIDRs: string[];
  /** How a range was read (an alias range written with host bits), said once to the node. */
  notes: string[];
  /** Why the instance has no pod ranges for this stack type: the node waits and is retried. */
  missing?: string;
}

/**
 * Cloud-owned pod ranges for CloudAllocator, by cloud-provider-gcp's cloud CIDR allocator
 * (pkg/controller/nodeipam/ipam/cloud_cidr_allocator.go, updateCIDRAllocation): on interface nic0
 * (else the first), the IPv4 range is its first alias IP range and the IPv6 range the /112 that
 * holds its IPv6 address (GetIPV6Address). The stack type needs exactly its families: IPV4 the
 * alias range, IPV4_IPV6 both (IPv4 first), IPV6 the IPv6 range alone (an alias range is not
 * used). An instance that lacks one gets none: the node waits and is retried, as upstream
 * retries, and is never written a single-family list a dual-stack cluster could not change later.
 *
 * An alias range written with host bits set (10.10.10.10/24) is taken as its network
 * (10.10.10.0/24), with a note: that is the range every reader of spec.podCIDRs parses it to (Go's
 * net.ParseCIDR), and the exact block the allocator's ledger records; upstream writes the text as
 * it came. A range that cannot be read makes the ranges missing, never the node's addresses fail.
 */
export function gcePodRanges(instance: GceInstance, options: GceAddressOptions): GcePodRanges {
  const stackType = checkStackType(options?.stackType);
  const nics = interfacesOf(instance);
  let index = nics.findIndex((n) => n.name === 'nic0');
  if (index < 0) index = 0;
  const nic = nics[index]!;
  const nicName = nonEmpty(nic.name) ? nic.name : `networkInterfaces[${index}]`;
  const field = `${describe(instance)}: networkInterfaces[${index}]`;
  const notes: string[] = [];
  const none = (missing: string): GcePodRanges => ({ podCIDRs: [], notes, missing: `stack-type ${stackType}: ${missing}` });

  let v4: string | undefined;
  const aliasText = nic.aliasIpRanges?.[0]?.ipCidrRange;
  if (stackType !== 'IPV6' && nonEmpty(aliasText)) {
    let range;
    try {
      range = networkOf(aliasText, `${field}.aliasIpRanges[0].ipCidrRange`);
    } catch (err) {
      return none((err as Error).message);
    }
    if (range.family !== 4) return none(`${field}.aliasIpRanges[0].ipCidrRange: "${aliasText}" is not an IPv4 range`);
    if (range.hostBits) notes.push(`the alias IP range ${aliasText} of ${nicName} has host bits set; its network ${range.cidr} is the pod range`);
    v4 = range.cidr;
  }
  let v6: string | undefined;
  let v6Address = '';
  if (stackType !== 'IPV4') {
    try {
      v6Address = gceInterfaceIPv6(nic, field);
    } catch (err) {
      return none((err as Error).message);
    }
    if (v6Address) v6 = `${ipaddr.IPv6.networkAddressFromCIDR(`${v6Address}/112`).toString()}/112`;
  }

  switch (stackType) {
    case 'IPV4':
      return v4 ? { podCIDRs: [v4], notes } : none(`${nicName} has no alias IP range`);
    case 'IPV6':
      return v6 ? { podCIDRs: [v6], notes } : none(`${nicName} has no IPv6 address${nonEmpty(aliasText) ? ` (only the alias IP range ${aliasText}, which an IPV6 cluster does not use)` : ''}`);
    case 'IPV4_IPV6':
      if (v4 && v6) return { podCIDRs: [v4, v6], notes };
      if (v4) return none(`${nicName} has the alias IP range ${aliasText} but no IPv6 address; a dual-stack node needs both`);
      if (v6) return none(`${nicName} has the IPv6 address ${v6Address} but no alias IP range; a dual-stack node needs both`);
      return none(`${nicName} has neither an alias IP range nor an IPv6 address`);
  }
}

/** gcePodRanges' ranges alone: empty when the instance has none for the stack type. */
export function gcePodCIDRs(instance: GceInstance, options: GceAddressOptions): string[] {
  return gcePodRanges(instance, options).podCIDRs;
}
