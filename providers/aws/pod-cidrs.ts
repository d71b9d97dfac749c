// Pod CIDRs from the prefixes EC2 delegates to an instance's primary network interface (device
// index 0 on network card 0): IPv4 prefixes (EC2 hands out /28s) and IPv6 prefixes (/80s), read
// from the DescribeInstances answer the adapter already has. Pure: takes the SDK's Instance shape.
//
// The rules: IPv6, the first prefix EC2 lists. IPv4, the largest aligned block wholly covered by
// the delegated prefixes, and among blocks of that size the one holding the earliest-listed
// prefix; with no contiguous aligned run that is simply the first prefix. A family the cluster
// uses but the interface lacks yields no pod CIDRs at all: spec.podCIDRs is immutable once written,
// so a dual-stack node must never be given one family alone.
import type { Instance, InstanceNetworkInterface } from '@aws-sdk/client-ec2';
import { CIDRParseError, formatCIDR, parseCIDR, type CIDR } from '../../src/ipam/cidr.js';
import type { IPFamily } from '../../src/nodeip/ip.js';
import { validateNodeIPFamilies } from './addresses.js';

/** The block chosen from one family's prefixes, and the prefixes it leaves out. */
export interface PrefixChoice {
  cidr: string;
  /** The delegated prefixes inside `cidr`, in EC2's order. */
  covered: string[];
  /** The delegated prefixes outside `cidr`, in EC2's order. */
  leftOut: string[];
}

export type FamilyPodCIDR =
  | { family: IPFamily; kind: 'chosen'; choice: PrefixChoice; note?: string }
  | { family: IPFamily; kind: 'missing'; message: string };

export interface AWSPodCIDRs {
  /** One CIDR per family, in the families' order; empty unless every family has one. */
  podCIDRs: string[];
  /** The primary interface's ID, when the instance has one. */
  interfaceId?: string;
  /** What each family gave, in the families' order. */
  families: FamilyPodCIDR[];
}

export interface AWSPodCIDROptions {
  /** `[Global] NodeIPFamilies`: the cluster's families in order; default ['ipv4']. */
  nodeIPFamilies?: readonly string[];
}

const FAMILY_NAME: Readonly<Record<IPFamily, string>> = { 4: 'IPv4', 6: 'IPv6' };
const FAMILY_OF = { ipv4: 4, ipv6: 6 } as const;

/** The interface at device index 0 of network card 0 (instances with several cards have one per card). */
export function primaryInterface(instance: Instance): { index: number; ni: InstanceNetworkInterface } | undefined {
  const list = instance.NetworkInterfaces ?? [];
  const index = list.findIndex((ni) => ni.Attachment !== undefined && (ni.Attachment.DeviceIndex ?? 0) === 0 && (ni.Attachment.NetworkCardIndex ?? 0) === 0);
  return index < 0 ? undefined : { index, ni: list[index]! };
}

function parsePrefix(family: IPFamily, text: unknown, field: string): CIDR {
  if (typeof text !== 'string' || text === '') throw new Error(`${field}: expected a CIDR, got ${JSON.stringify(text)}`);
  let c: CIDR;
  try {
    c = parseCIDR(text);
  } catch (err) {
    if (err instanceof CIDRParseError) throw new Error(`${field}: ${err.message}`, { cause: err });
    throw err;
  }
  if (c.family !== family) throw new Error(`${field}: ${JSON.stringify(text)} is not an ${FAMILY_NAME[family]} prefix`);
  return c;
}

/**
 * The largest aligned block inside the union of `prefixes` (one family); among equal sizes, the
 * one holding the earliest-listed prefix. Every prefix lies wholly inside one block of the union's
 * greedy split into maximal aligned blocks (aligned blocks nest or are disjoint), so those blocks
 * are the only candidates. Throws on an empty list.
 */
export function chooseAlignedBlock(prefixes: readonly CIDR[]): { block: CIDR; covered: number[] } {
  if (prefixes.length === 0) throw new Error('chooseAlignedBlock: no prefixes');
  const family = prefixes[0]!.family;
  const bits = prefixes[0]!.bits;
  const spans = prefixes
    .map((p) => ({ start: p.addr, end: p.addr + (1n << BigInt(bits - p.prefix)) }))
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const merged: { start: bigint; end: bigint }[] = [];
  for (const s of spans) {
    const last = merged.at(-1);
    if (last && s.start <= last.end) {
      if (s.end > last.end) last.end = s.end;
    } else merged.push({ ...s });
  }
  let best: { block: CIDR; covered: number[] } | undefined;
  for (const { start, end } of merged) {
    for (let at = start; at < end; ) {
      // The largest power of two that `at` is aligned to and that still fits before `end`.
      let size = 1n;
      while (size < 1n << BigInt(bits) && at % (size * 2n) === 0n && at + size * 2n <= end) size *= 2n;
      const prefix = bits - (size.toString(2).length - 1);
      const covered = prefixes.flatMap((p, i) => (p.addr >= at && p.addr < at + size ? [i] : []));
      const block = { family, bits, prefix, addr: at, text: formatCIDR(family, at, prefix) };
      if (!best || block.prefix < best.block.prefix || (block.prefix === best.block.prefix && covered[0]! < best.covered[0]!)) best = { block, covered };
      at += size;
    }
  }
  return best!;
}

function chooseIPv4(prefixes: readonly CIDR[]): PrefixChoice {
  const { block, covered } = chooseAlignedBlock(prefixes);
  const inside = new Set(covered);
  return { cidr: block.text, covered: covered.map((i) => prefixes[i]!.text), leftOut: prefixes.flatMap((p, i) => (inside.has(i) ? [] : [p.text])) };
}

function chooseIPv6(prefixes: readonly CIDR[]): PrefixChoice {
  const first = prefixes[0]!;
  return { cidr: first.text, covered: [first.text], leftOut: prefixes.slice(1).map((p) => p.text) };
}

function noteFor(family: IPFamily, interfaceId: string, count: number, choice: PrefixChoice): string | undefined {
  if (count < 2) return undefined;
  const name = FAMILY_NAME[family];
  if (choice.leftOut.length === 0) return `interface ${interfaceId}: its ${count} ${name} prefixes form one aligned block, ${choice.cidr}, the pod CIDR`;
  const used = choice.covered.length === 1 ? choice.covered[0]! : `${choice.covered.join(', ')} (one aligned block)`;
  return `interface ${interfaceId} has ${count} ${name} prefixes: the pod CIDR is ${choice.cidr} from ${used}; ${choice.leftOut.join(', ')} ${choice.leftOut.length === 1 ? 'is' : 'are'} not used`;
}

/**
 * The pod CIDRs an EC2 instance's delegated prefixes give, family by family. Throws naming the
 * field on a prefix it cannot read.
 */
export function awsPodCIDRs(instance: Instance, options: AWSPodCIDROptions = {}): AWSPodCIDRs {
  if (instance === null || typeof instance !== 'object') throw new Error('awsPodCIDRs: instance must be an object');
  const families = validateNodeIPFamilies(options.nodeIPFamilies ?? ['ipv4']).map((f) => FAMILY_OF[f]);
  const id = instance.InstanceId ?? '(no id)';
  const primary = primaryInterface(instance);
  if (!primary) {
    const message = `instance ${id} has no network interface at device index 0, so no delegated prefixes`;
    return { podCIDRs: [], families: families.map((family) => ({ family, kind: 'missing', message })) };
  }
  const { index, ni } = primary;
  const interfaceId = ni.NetworkInterfaceId ?? `NetworkInterfaces[${index}]`;
  const out: FamilyPodCIDR[] = families.map((family) => {
    const field = `EC2 instance ${id}: NetworkInterfaces[${index}]`;
    const prefixes =
      family === 4
        ? (ni.Ipv4Prefixes ?? []).map((p, j) => parsePrefix(4, p.Ipv4Prefix, `${field}.Ipv4Prefixes[${j}].Ipv4Prefix`))
        : (ni.Ipv6Prefixes ?? []).map((p, j) => parsePrefix(6, p.Ipv6Prefix, `${field}.Ipv6Prefixes[${j}].Ipv6Prefix`));
    if (prefixes.length === 0) {
      const list = family === 4 ? 'Ipv4Prefixes' : 'Ipv6Prefixes';
      return { family, kind: 'missing', message: `interface ${interfaceId} (device index 0) of instance ${id} has no ${FAMILY_NAME[family]} prefix (${list} is empty)` };
    }
    const choice = family === 4 ? chooseIPv4(prefixes) : chooseIPv6(prefixes);
    const note = noteFor(family, interfaceId, prefixes.length, choice);
    return { family, kind: 'chosen', choice, ...(note ? { note } : {}) };
  });
  const complete = out.every((f) => f.kind === 'chosen');
  return { podCIDRs: complete ? out.map((f) => (f as { choice: PrefixChoice }).choice.cidr) : [], interfaceId, families: out };
}
