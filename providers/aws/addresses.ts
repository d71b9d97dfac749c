// EC2 instance → node addresses, in the order cloud-provider-aws produces them, so nodes keep the
// same addresses when they move to this controller. Pure: takes the SDK's Instance shape.
import type { Instance, InstanceNetworkInterface } from '@aws-sdk/client-ec2';
import type { NodeAddress } from '../../src/model/node-address.js';
import { canonicalIP, type IPFamily } from '../../src/nodeip/ip.js';

/** A value of cloud.conf's `[Global] NodeIPFamilies`: cloud-provider-aws's names for the families. */
export type AWSNodeIPFamiliesValue = 'ipv4' | 'ipv6';
export const AWS_NODE_IP_FAMILIES_VALUES: readonly AWSNodeIPFamiliesValue[] = ['ipv4', 'ipv6'];
const IP_FAMILY_OF: Readonly<Record<AWSNodeIPFamiliesValue, IPFamily>> = { ipv4: 4, ipv6: 6 };

export interface AWSNodeAddressOptions {
  /** Address families in preference order, as `[Global] NodeIPFamilies`; default ['ipv4']. */
  nodeIPFamilies?: readonly string[];
}

/**
 * Why the aws provider reports no address of `family`: it reports only the families of
 * NodeIPFamilies (default ipv4), so an IPv6 node IP on a default cloud.conf can never match
 * (cloud-provider-aws#638). `configured` undefined: the provider's setting is not known (explain).
 */
export function awsFamilyHint(configured: readonly AWSNodeIPFamiliesValue[] | undefined, family: 'IPv4' | 'IPv6'): string | undefined {
  const value: AWSNodeIPFamiliesValue = family === 'IPv6' ? 'ipv6' : 'ipv4';
  if (configured?.includes(value)) return undefined;
  const now = configured ? `; it is ${configured.join(',')}` : '';
  return `with --cloud-provider aws, ${family} addresses are reported only when [Global] NodeIPFamilies in the cloud-config includes ${value}${now}`;
}

/** Checks a node IP family list (non-empty, known, no repeats); throws naming the bad value. */
export function validateNodeIPFamilies(families: readonly string[]): AWSNodeIPFamiliesValue[] {
  if (!Array.isArray(families) || families.length === 0) {
    throw new Error(`nodeIPFamilies: must list at least one of ${AWS_NODE_IP_FAMILIES_VALUES.join(', ')} (got ${JSON.stringify(families)})`);
  }
  const seen = new Set<string>();
  for (const f of families) {
    if (!(AWS_NODE_IP_FAMILIES_VALUES as readonly string[]).includes(f)) {
      throw new Error(`nodeIPFamilies: unknown family ${JSON.stringify(f)} (known: ${AWS_NODE_IP_FAMILIES_VALUES.join(', ')})`);
    }
    if (seen.has(f)) throw new Error(`nodeIPFamilies: family ${JSON.stringify(f)} listed twice`);
    seen.add(f);
  }
  return families as AWSNodeIPFamiliesValue[];
}

function canonical(instance: Instance, what: string, text: string): string {
  const ip = canonicalIP(text);
  if (ip === undefined) throw new Error(`EC2 instance ${instance.InstanceId ?? '(no id)'}: invalid ${what} ${JSON.stringify(text)}`);
  return ip;
}

/**
 * Interfaces in device-index order; interfaces without an attachment go last. The sort is stable,
 * so ties keep API order. Both families use it. cloud-provider-aws sorts only on its IPv4 path
 * (extractIPv4NodeAddresses sorts the instance's list in place), so with NodeIPFamilies ipv6 first
 * its IPv6 addresses come in EC2's order, which EC2 does not promise: a deliberate deviation
 * (README), which keeps the primary interface's address first whatever order EC2 answers in.
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
  // The instance's own public IPv4 (EC2 sets it from the primary interface's association), and
  // nothing else: cloud-provider-aws reads only instance.PublicIpAddress (extractIPv4NodeAddresses),
  // so an interface's association without it gives no ExternalIP here either (issue 40's live
  // differential found the two disagreeing when this fell back to the association).
  if (instance.PublicIpAddress) out.push({ type: 'ExternalIP', address: canonical(instance, 'public IPv4 address', instance.PublicIpAddress) });
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

/** What each family contributes; cloud-provider-aws lists the DNS names with IPv4. */
const ADDRESSES_OF: Readonly<Record<IPFamily, (instance: Instance, interfaces: InstanceNetworkInterface[]) => NodeAddress[]>> = { 4: ipv4Addresses, 6: ipv6Addresses };

/**
 * The node addresses of an EC2 instance. Throws on input it cannot map (an invalid IP text, an
 * unknown family). The instance's top-level PrivateIpAddress is deliberately not used: the
 * interfaces list it along with every secondary address.
 */
export function awsNodeAddresses(instance: Instance, options: AWSNodeAddressOptions = {}): NodeAddress[] {
  if (instance === null || typeof instance !== 'object') throw new Error('awsNodeAddresses: instance must be an object');
  const families = validateNodeIPFamilies(options.nodeIPFamilies ?? ['ipv4']).map((v) => IP_FAMILY_OF[v]);
  const interfaces = sortedInterfaces(instance);
  const out: NodeAddress[] = [];
  for (const family of families) out.push(...ADDRESSES_OF[family](instance, interfaces));
  return out;
}
