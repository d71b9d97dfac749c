// EC2 instance → node addresses, in the order cloud-provider-aws produces them, so nodes keep the
// same addresses when they move to this controller. Pure: takes the SDK's Instance shape.
import type { Instance, InstanceNetworkInterface } from '@aws-sdk/client-ec2';
import type { NodeAddress } from '../../src/model/node-address.js';
import { canonicalIP } from '../../src/nodeip/ip.js';

export type AWSIPFamily = 'ipv4' | 'ipv6';
export const AWS_IP_FAMILIES: readonly AWSIPFamily[] = ['ipv4', 'ipv6'];

export interface AWSNodeAddressOptions {
  /** Address families in preference order, as `[Global] NodeIPFamilies`; default ['ipv4']. */
  nodeIPFamilies?: readonly string[];
}

/** Checks a node IP family list (non-empty, known, no repeats); throws naming the bad value. */
export function validateNodeIPFamilies(families: readonly string[]): AWSIPFamily[] {
  if (!Array.isArray(families) || families.length === 0) {
    throw new Error(`nodeIPFamilies: must list at least one of ${AWS_IP_FAMILIES.join(', ')} (got ${JSON.stringify(families)})`);
  }
  const seen = new Set<string>();
  for (const f of families) {
    if (!(AWS_IP_FAMILIES as readonly string[]).includes(f)) {
      throw new Error(`nodeIPFamilies: unknown family ${JSON.stringify(f)} (known: ${AWS_IP_FAMILIES.join(', ')})`);
    }
    if (seen.has(f)) throw new Error(`nodeIPFamilies: family ${JSON.stringify(f)} listed twice`);
    seen.add(f);
  }
  return families as AWSIPFamily[];
}

function canonical(instance: Instance, what: string, text: string): string {
  const ip = canonicalIP(text);
  if (ip === undefined) throw new Error(`EC2 instance ${instance.InstanceId ?? '(no id)'}: invalid ${what} ${JSON.stringify(text)}`);
  return ip;
}

/**
 * Interfaces in device-index order; interfaces without an attachment go last. The sort is stable,
 * so ties keep API order.
 */
function sortedInterfaces(instance: Instance): InstanceNetworkInterface[] {
  const rank = (ni: InstanceNetworkInterface): number => (ni.Attachment ? (ni.Attachment.DeviceIndex ?? 0) : Number.POSITIVE_INFINITY);
  return [...(instance.NetworkInterfaces ?? [])].sort((a, b) => rank(a) - rank(b));
}

const inUse = (ni: InstanceNetworkInterface): boolean => ni.Status === 'in-use';

function ipv4Addresses(instance: Instance, interfaces: InstanceNetworkInterface[]): NodeAddress[] {
  const out: NodeAddress[] = [];
  for (const ni of interfaces) {
    if (!inUse(ni)) continue;
    for (const p of ni.PrivateIpAddresses ?? []) {
      if (p.PrivateIpAddress) out.push({ type: 'InternalIP', address: canonical(instance, 'private IPv4 address', p.PrivateIpAddress) });
    }
  }
  // EC2 reports the primary interface's public IPv4 on the instance itself; fall back to that
  // interface's association when a caller passes only the interface view.
  const primary = interfaces.find((ni) => inUse(ni) && ni.Attachment && (ni.Attachment.DeviceIndex ?? 0) === 0);
  const publicIP = instance.PublicIpAddress || primary?.Association?.PublicIp;
  if (publicIP) out.push({ type: 'ExternalIP', address: canonical(instance, 'public IPv4 address', publicIP) });
  if (instance.PrivateDnsName) {
    out.push({ type: 'InternalDNS', address: instance.PrivateDnsName });
    out.push({ type: 'Hostname', address: instance.PrivateDnsName });
  }
  if (instance.PublicDnsName) out.push({ type: 'ExternalDNS', address: instance.PublicDnsName });
  return out;
}

function ipv6Addresses(instance: Instance, interfaces: InstanceNetworkInterface[]): NodeAddress[] {
  const out: NodeAddress[] = [];
  for (const ni of interfaces) {
    // Only the first IPv6 of each interface: the others are usually prefix-delegation or
    // secondary addresses meant for pods.
    const first = ni.Ipv6Addresses?.[0]?.Ipv6Address;
    if (!inUse(ni) || !first) continue;
    out.push({ type: 'InternalIP', address: canonical(instance, 'IPv6 address', first) });
  }
  return out;
}

/**
 * The node addresses of an EC2 instance. Throws on input it cannot map (an invalid IP text, an
 * unknown family). The instance's top-level PrivateIpAddress is deliberately not used: the
 * interfaces list it along with every secondary address.
 */
export function awsNodeAddresses(instance: Instance, options: AWSNodeAddressOptions = {}): NodeAddress[] {
  if (instance === null || typeof instance !== 'object') throw new Error('awsNodeAddresses: instance must be an object');
  const families = validateNodeIPFamilies(options.nodeIPFamilies ?? ['ipv4']);
  const interfaces = sortedInterfaces(instance);
  const out: NodeAddress[] = [];
  for (const f of families) out.push(...(f === 'ipv4' ? ipv4Addresses(instance, interfaces) : ipv6Addresses(instance, interfaces)));
  return out;
}
