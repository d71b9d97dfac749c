// `explain --aws-instance FILE`: an EC2 instance as `aws ec2 describe-instances` prints it gives the
// cloud addresses (as the aws adapter maps them) and the pod CIDRs CloudAllocator would write from
// the prefixes delegated to its primary interface, with what AssignIPv6PodPrefix would ask for.
// Pure apart from the caller's file read; loads no SDK (its types only).
import type { Instance } from '@aws-sdk/client-ec2';
import { awsNodeAddresses, validateNodeIPFamilies, type AWSNodeIPFamiliesValue } from '../../../providers/aws/addresses.js';
import { awsPodCIDRs, type FamilyPodCIDR } from '../../../providers/aws/pod-cidrs.js';
import type { NodeAddress } from '../../model/node-address.js';

export interface AWSPodCIDRReport {
  /** What CloudAllocator writes; empty: the node waits. */
  podCIDRs: string[];
  interfaceId: string | null;
  /** `from`: the delegated prefixes the pod CIDR is made of; `unused`: the others. */
  families: { family: 'IPv4' | 'IPv6'; podCIDR: string | null; from: string[]; unused: string[]; note: string | null; missing: string | null }[];
  /** With AssignIPv6PodPrefix: what the controller would ask EC2 for, once. */
  assign: string | null;
}

export class AWSInstanceDocumentError extends Error {
  override name = 'AWSInstanceDocumentError';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function listOfObjects(v: unknown, field: string): void {
  if (v === undefined) return;
  if (!Array.isArray(v)) throw new AWSInstanceDocumentError(`${field}: expected a list, got ${JSON.stringify(v)}`);
  v.forEach((x, i) => {
    if (!isRecord(x)) throw new AWSInstanceDocumentError(`${field}[${i}]: expected an object, got ${JSON.stringify(x)}`);
  });
}

/**
 * The one instance in a document: the whole `describe-instances` output (Reservations[].Instances[])
 * or a single Instance object. The fields read are checked for shape, naming the field.
 */
export function readAWSInstance(doc: unknown): Instance {
  let instance: unknown = doc;
  if (isRecord(doc) && 'Reservations' in doc) {
    listOfObjects(doc.Reservations, 'Reservations');
    const all = (doc.Reservations as Record<string, unknown>[]).flatMap((r, i) => {
      listOfObjects(r.Instances, `Reservations[${i}].Instances`);
      return (r.Instances as unknown[] | undefined) ?? [];
    });
    if (all.length !== 1) throw new AWSInstanceDocumentError(`Reservations: expected exactly one instance, found ${all.length} (pass --instance-ids with one ID to aws ec2 describe-instances)`);
    instance = all[0];
  }
  if (!isRecord(instance)) throw new AWSInstanceDocumentError(`expected an EC2 instance object (aws ec2 describe-instances --output json), got ${JSON.stringify(instance)}`);
  if (instance.InstanceId !== undefined && typeof instance.InstanceId !== 'string') throw new AWSInstanceDocumentError(`InstanceId: expected a string, got ${JSON.stringify(instance.InstanceId)}`);
  listOfObjects(instance.NetworkInterfaces, 'NetworkInterfaces');
  (instance.NetworkInterfaces as Record<string, unknown>[] | undefined)?.forEach((ni, i) => {
    for (const k of ['PrivateIpAddresses', 'Ipv6Addresses', 'Ipv4Prefixes', 'Ipv6Prefixes']) listOfObjects(ni[k], `NetworkInterfaces[${i}].${k}`);
    if (ni.Attachment !== undefined && !isRecord(ni.Attachment)) throw new AWSInstanceDocumentError(`NetworkInterfaces[${i}].Attachment: expected an object, got ${JSON.stringify(ni.Attachment)}`);
  });
  return instance as Instance;
}

/** Parses a --node-ip-families value ("ipv4", "ipv6,ipv4"), as [Global] NodeIPFamilies orders them. */
export function parseNodeIPFamiliesFlag(value: string): AWSNodeIPFamiliesValue[] {
  try {
    return validateNodeIPFamilies(value.split(',').map((s) => s.trim()));
  } catch (err) {
    throw new AWSInstanceDocumentError(`--node-ip-families ${JSON.stringify(value)}: ${(err as Error).message.replace(/^nodeIPFamilies: /, '')}`, { cause: err });
  }
}

/** The instance's cloud addresses, as the aws adapter maps them. */
export function awsInstanceAddresses(instance: Instance, nodeIPFamilies: readonly string[]): NodeAddress[] {
  try {
    return awsNodeAddresses(instance, { nodeIPFamilies });
  } catch (err) {
    throw new AWSInstanceDocumentError((err as Error).message, { cause: err });
  }
}

const NAMES = { 4: 'IPv4', 6: 'IPv6' } as const;

function family(f: FamilyPodCIDR): AWSPodCIDRReport['families'][number] {
  if (f.kind === 'missing') return { family: NAMES[f.family], podCIDR: null, from: [], unused: [], note: null, missing: f.message };
  return { family: NAMES[f.family], podCIDR: f.choice.cidr, from: f.choice.covered, unused: f.choice.leftOut, note: f.note ?? null, missing: null };
}

export function awsPodCIDRReport(instance: Instance, nodeIPFamilies: readonly string[]): AWSPodCIDRReport {
  let r;
  try {
    r = awsPodCIDRs(instance, { nodeIPFamilies });
  } catch (err) {
    throw new AWSInstanceDocumentError((err as Error).message, { cause: err });
  }
  const missingV6 = r.families.some((f) => f.kind === 'missing' && f.family === 6);
  return {
    podCIDRs: r.podCIDRs,
    interfaceId: r.interfaceId ?? null,
    families: r.families.map(family),
    assign: missingV6 && r.interfaceId?.startsWith('eni-') ? `AssignIpv6Addresses with Ipv6PrefixCount 1 on ${r.interfaceId}, once (the pod CIDRs are written when DescribeInstances shows the prefix)` : null,
  };
}

/** The table section printed after the addresses. */
export function renderAWSPodCIDRs(r: AWSPodCIDRReport): string[] {
  const rows = r.families.map((f) => [
    f.family,
    f.podCIDR ?? '-',
    f.podCIDR ? `${f.from.join(', ')}${f.unused.length > 0 ? ` (not used: ${f.unused.join(', ')})` : ''}` : (f.missing ?? ''),
  ]);
  const widths = [6, 8].map((min, c) => Math.max(min, ...rows.map((row) => row[c]!.length)));
  const line = (cells: string[]) => `  ${cells[0]!.padEnd(widths[0]!)}  ${cells[1]!.padEnd(widths[1]!)}  ${cells[2]}`;
  const out = ['', `Pod CIDRs (CloudAllocator, --cloud-provider aws)${r.interfaceId ? `, from the prefixes delegated to ${r.interfaceId} (device index 0)` : ''}:`];
  out.push(line(['FAMILY', 'POD CIDR', 'FROM']), ...rows.map(line));
  for (const f of r.families) if (f.note) out.push(`  note: ${f.note}`);
  if (r.podCIDRs.length > 0) out.push(`Pod result:  spec.podCIDRs ${r.podCIDRs.join(', ')}`);
  else {
    out.push('Pod result:  no pod CIDRs yet: the node waits with a CloudRangeNotAvailable event (spec.podCIDRs cannot get a family added later)');
    if (r.assign) out.push(`             with [Global] AssignIPv6PodPrefix = true: ${r.assign}`);
  }
  return out;
}
