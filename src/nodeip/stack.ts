// Names the IP stack a node ends up with, judged the way consumers of node.status.addresses do:
// from the first InternalIP or ExternalIP of each family, the earlier one being primary.
import { parseIPSloppy, type IPFamily } from './ip.js';
import type { NodeAddress } from '../model/node-address.js';

export type StackName = 'single-stack IPv4' | 'single-stack IPv6' | 'dual-stack IPv4-primary' | 'dual-stack IPv6-primary' | 'none';

export interface NodeStackIPs {
  /** Canonical IPs in primary-first order (zero, one or two, one per family). */
  ips: string[];
  primaryFamily: IPFamily | undefined;
}

/** The node's primary IP and, when dual-stack, its secondary IP of the other family. */
export function nodeStackIPs(addresses: readonly NodeAddress[]): NodeStackIPs {
  const ips: string[] = [];
  const seen = new Set<IPFamily>();
  let primaryFamily: IPFamily | undefined;
  for (const a of addresses) {
    if (a.type !== 'InternalIP' && a.type !== 'ExternalIP') continue;
    const ip = parseIPSloppy(a.address);
    if (!ip || seen.has(ip.family)) continue;
    seen.add(ip.family);
    primaryFamily ??= ip.family;
    ips.push(ip.canonical);
  }
  return { ips, primaryFamily };
}

export function describeStack(addresses: readonly NodeAddress[]): StackName {
  const { ips, primaryFamily } = nodeStackIPs(addresses);
  if (ips.length === 0) return 'none';
  if (ips.length === 1) return primaryFamily === 4 ? 'single-stack IPv4' : 'single-stack IPv6';
  return primaryFamily === 4 ? 'dual-stack IPv4-primary' : 'dual-stack IPv6-primary';
}
