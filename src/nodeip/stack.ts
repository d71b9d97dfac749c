// A node's host IPs as Kubernetes reads them from node.status.addresses (GetNodeHostIPs in
// k8s.io/kubernetes pkg/util/node, which kubelet, kube-proxy and the API server's node proxy use):
// the InternalIPs, then the ExternalIPs, each list in its order; the first of them is the primary
// IP, and the first after it of the other family the secondary. And the stack that makes.
import { parseIPSloppy, type IPFamily } from './ip.js';
import type { NodeAddress } from '../model/node-address.js';

export type StackName = 'single-stack IPv4' | 'single-stack IPv6' | 'dual-stack IPv4-primary' | 'dual-stack IPv6-primary' | 'none';

export interface NodeStackIPs {
  /** Canonical IPs in primary-first order (zero, one or two, one per family). */
  ips: string[];
  primaryFamily: IPFamily | undefined;
}

/**
 * The node's host IPs: its primary IP and, when dual-stack, its secondary IP of the other family.
 * Every InternalIP comes before every ExternalIP, whatever the list's order; entries that do not
 * parse as IPs are skipped.
 */
export function nodeStackIPs(addresses: readonly NodeAddress[]): NodeStackIPs {
  let primary: { family: IPFamily; canonical: string } | undefined;
  let secondary: string | undefined;
  for (const type of ['InternalIP', 'ExternalIP'] as const) {
    for (const a of addresses) {
      if (a.type !== type || secondary !== undefined) continue;
      const ip = parseIPSloppy(a.address);
      if (!ip) continue;
      if (primary === undefined) primary = ip;
      else if (ip.family !== primary.family) secondary = ip.canonical;
    }
  }
  if (primary === undefined) return { ips: [], primaryFamily: undefined };
  return { ips: secondary === undefined ? [primary.canonical] : [primary.canonical, secondary], primaryFamily: primary.family };
}

/** The same host IPs (primary, then secondary), as Kubernetes reads them from each list. */
export function sameHostIPs(a: readonly NodeAddress[], b: readonly NodeAddress[]): boolean {
  const x = nodeStackIPs(a).ips;
  const y = nodeStackIPs(b).ips;
  return x.length === y.length && x.every((ip, i) => ip === y[i]);
}

export function describeStack(addresses: readonly NodeAddress[]): StackName {
  const { ips, primaryFamily } = nodeStackIPs(addresses);
  if (ips.length === 0) return 'none';
  if (ips.length === 1) return primaryFamily === 4 ? 'single-stack IPv4' : 'single-stack IPv6';
  return primaryFamily === 4 ? 'dual-stack IPv4-primary' : 'dual-stack IPv6-primary';
}
