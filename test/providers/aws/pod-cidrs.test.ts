// Pod CIDRs from delegated prefixes: which block each family gives, what is said about the choice,
// and which family is missing; then the invariants of the contiguous-run rule over random prefix sets.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Instance, InstanceNetworkInterface } from '@aws-sdk/client-ec2';
import { awsPodCIDRs, chooseAlignedBlock } from '../../../providers/aws/pod-cidrs.js';
import { cidrContains, cidrsOverlap, formatCIDR, parseCIDR, type CIDR } from '../../../src/ipam/cidr.js';

const eni = (o: { id?: string; device?: number; card?: number; v4?: string[]; v6?: string[] }): InstanceNetworkInterface => ({
  NetworkInterfaceId: o.id ?? 'eni-0a',
  Status: 'in-use',
  ...(o.device === undefined ? {} : { Attachment: { DeviceIndex: o.device, ...(o.card === undefined ? {} : { NetworkCardIndex: o.card }) } }),
  Ipv4Prefixes: (o.v4 ?? []).map((Ipv4Prefix) => ({ Ipv4Prefix })),
  Ipv6Prefixes: (o.v6 ?? []).map((Ipv6Prefix) => ({ Ipv6Prefix })),
});
const instance = (...nis: InstanceNetworkInterface[]): Instance => ({ InstanceId: 'i-0123456789abcdef0', NetworkInterfaces: nis });

describe('awsPodCIDRs', () => {
  const cases: { name: string; i: Instance; families?: string[]; podCIDRs: string[]; notes?: string[]; missing?: string[] }[] = [
    { name: 'IPv4: one /28', i: instance(eni({ device: 0, v4: ['10.0.1.16/28'] })), podCIDRs: ['10.0.1.16/28'] },
    { name: 'IPv6: one /80', families: ['ipv6'], i: instance(eni({ device: 0, v6: ['2600:1f18:1:2:3::/80'] })), podCIDRs: ['2600:1f18:1:2:3::/80'] },
    {
      name: 'IPv6: several /80s, the first is used and the event names it',
      families: ['ipv6'],
      i: instance(eni({ device: 0, v6: ['2600:1f18:1:2:9::/80', '2600:1f18:1:2:3::/80'] })),
      podCIDRs: ['2600:1f18:1:2:9::/80'],
      notes: ['interface eni-0a has 2 IPv6 prefixes: the pod CIDR is 2600:1f18:1:2:9::/80 from 2600:1f18:1:2:9::/80; 2600:1f18:1:2:3::/80 is not used'],
    },
    {
      name: 'IPv4: four contiguous aligned /28s, listed out of order, form a /26',
      i: instance(eni({ device: 0, v4: ['10.0.1.32/28', '10.0.1.0/28', '10.0.1.48/28', '10.0.1.16/28'] })),
      podCIDRs: ['10.0.1.0/26'],
      notes: ['interface eni-0a: its 4 IPv4 prefixes form one aligned block, 10.0.1.0/26, the pod CIDR'],
    },
    {
      name: 'IPv4: two contiguous /28s that are not aligned as a /27: the first prefix',
      i: instance(eni({ device: 0, v4: ['10.0.1.16/28', '10.0.1.32/28'] })),
      podCIDRs: ['10.0.1.16/28'],
      notes: ['interface eni-0a has 2 IPv4 prefixes: the pod CIDR is 10.0.1.16/28 from 10.0.1.16/28; 10.0.1.32/28 is not used'],
    },
    {
      name: 'IPv4: scattered /28s: the first listed',
      i: instance(eni({ device: 0, v4: ['10.0.9.48/28', '10.0.1.0/28', '10.0.5.16/28'] })),
      podCIDRs: ['10.0.9.48/28'],
      notes: ['interface eni-0a has 3 IPv4 prefixes: the pod CIDR is 10.0.9.48/28 from 10.0.9.48/28; 10.0.1.0/28, 10.0.5.16/28 are not used'],
    },
    {
      name: 'IPv4: a /27 run beats an earlier lone /28',
      i: instance(eni({ device: 0, v4: ['10.0.9.48/28', '10.0.1.32/28', '10.0.1.48/28'] })),
      podCIDRs: ['10.0.1.32/27'],
      notes: ['interface eni-0a has 3 IPv4 prefixes: the pod CIDR is 10.0.1.32/27 from 10.0.1.32/28, 10.0.1.48/28 (one aligned block); 10.0.9.48/28 is not used'],
    },
    {
      name: 'IPv4: two /27 runs: the one holding the earlier-listed prefix',
      i: instance(eni({ device: 0, v4: ['10.0.2.16/28', '10.0.1.0/28', '10.0.1.16/28', '10.0.2.0/28'] })),
      podCIDRs: ['10.0.2.0/27'],
      notes: ['interface eni-0a has 4 IPv4 prefixes: the pod CIDR is 10.0.2.0/27 from 10.0.2.16/28, 10.0.2.0/28 (one aligned block); 10.0.1.0/28, 10.0.1.16/28 are not used'],
    },
    {
      name: 'IPv4: three contiguous /28s from an aligned start: the /27, not the third',
      i: instance(eni({ device: 0, v4: ['10.0.1.0/28', '10.0.1.16/28', '10.0.1.32/28'] })),
      podCIDRs: ['10.0.1.0/27'],
      notes: ['interface eni-0a has 3 IPv4 prefixes: the pod CIDR is 10.0.1.0/27 from 10.0.1.0/28, 10.0.1.16/28 (one aligned block); 10.0.1.32/28 is not used'],
    },
    {
      name: 'dual-stack IPv6-first: both, in the cluster order',
      families: ['ipv6', 'ipv4'],
      i: instance(eni({ device: 0, v4: ['10.0.1.16/28'], v6: ['2600:1f18::/80'] })),
      podCIDRs: ['2600:1f18::/80', '10.0.1.16/28'],
    },
    {
      name: 'dual-stack with no IPv6 prefix: nothing, the missing family named',
      families: ['ipv4', 'ipv6'],
      i: instance(eni({ id: 'eni-0b', device: 0, v4: ['10.0.1.16/28'] })),
      podCIDRs: [],
      missing: ['interface eni-0b (device index 0) of instance i-0123456789abcdef0 has no IPv6 prefix (Ipv6Prefixes is empty)'],
    },
    {
      name: 'prefixes on a secondary interface or another network card do not count',
      i: instance(eni({ id: 'eni-1', device: 1, v4: ['10.0.7.0/28'] }), eni({ id: 'eni-c1', device: 0, card: 1, v4: ['10.0.8.0/28'] }), eni({ id: 'eni-0', device: 0, card: 0 })),
      podCIDRs: [],
      missing: ['interface eni-0 (device index 0) of instance i-0123456789abcdef0 has no IPv4 prefix (Ipv4Prefixes is empty)'],
    },
    {
      name: 'no interface at device index 0',
      i: instance(eni({ id: 'eni-x' })),
      podCIDRs: [],
      missing: ['instance i-0123456789abcdef0 has no network interface at device index 0, so no delegated prefixes'],
    },
  ];
  it.each(cases)('$name', ({ i, families, podCIDRs, notes = [], missing = [] }) => {
    const r = awsPodCIDRs(i, families ? { nodeIPFamilies: families } : {});
    expect(r.podCIDRs).toEqual(podCIDRs);
    expect(r.families.flatMap((f) => (f.kind === 'chosen' && f.note ? [f.note] : []))).toEqual(notes);
    expect(r.families.flatMap((f) => (f.kind === 'missing' ? [f.message] : []))).toEqual(missing);
  });

  it('refuses a prefix it cannot read, naming the field and the value', () => {
    expect(() => awsPodCIDRs(instance(eni({ device: 0, v4: ['10.0.1.0/28', '10.0.1.300/28'] })))).toThrow(
      'EC2 instance i-0123456789abcdef0: NetworkInterfaces[0].Ipv4Prefixes[1].Ipv4Prefix: invalid CIDR "10.0.1.300/28"',
    );
    expect(() => awsPodCIDRs(instance(eni({ device: 0, v6: ['10.0.1.0/28'] })), { nodeIPFamilies: ['ipv6'] })).toThrow(
      'NetworkInterfaces[0].Ipv6Prefixes[0].Ipv6Prefix: "10.0.1.0/28" is not an IPv6 prefix',
    );
    expect(() => awsPodCIDRs(instance(eni({ device: 0 })), { nodeIPFamilies: ['ipv5'] })).toThrow('unknown family "ipv5"');
  });
});

describe('chooseAlignedBlock: properties over random sets of delegated /28s', () => {
  // /28s inside 10.0.0.0/22 (64 slots), so runs and alignments happen often.
  const slots = fc.uniqueArray(fc.integer({ min: 0, max: 63 }), { minLength: 1, maxLength: 24 });
  const toPrefixes = (s: number[]): CIDR[] => s.map((n) => parseCIDR(formatCIDR(4, 0x0a000000n + BigInt(n * 16), 28)));
  const inUnion = (block: CIDR, prefixes: CIDR[]): boolean => {
    // Every /28 of the block is one of the delegated prefixes.
    for (let a = block.addr; a < block.addr + (1n << BigInt(32 - block.prefix)); a += 16n) if (!prefixes.some((p) => p.addr === a)) return false;
    return true;
  };

  it('the block is aligned, lies inside the union of the prefixes, covers the first prefix when nothing larger exists, and no larger aligned block fits', () => {
    fc.assert(
      fc.property(slots, (s) => {
        const prefixes = toPrefixes(s);
        const { block, covered } = chooseAlignedBlock(prefixes);
        expect(block.addr % (1n << BigInt(32 - block.prefix))).toBe(0n);
        expect(inUnion(block, prefixes)).toBe(true);
        expect(covered.map((i) => prefixes[i]!.text).sort()).toEqual(prefixes.filter((p) => cidrContains(block, p)).map((p) => p.text).sort());
        if (block.prefix === 28) expect(block.text).toBe(prefixes[0]!.text);
        // No aligned block one size larger lies inside the union anywhere.
        const larger = block.prefix - 1;
        for (let a = 0x0a000000n; a < 0x0a000000n + 1024n; a += 1n << BigInt(32 - larger)) {
          expect(inUnion(parseCIDR(formatCIDR(4, a, larger)), prefixes)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never gives one block to two nodes: nodes holding disjoint prefix sets get disjoint blocks', () => {
    fc.assert(
      fc.property(slots, fc.integer({ min: 1, max: 4 }), (s, nodes) => {
        // EC2 delegates each prefix to one interface: deal the slots out to `nodes` interfaces.
        const sets = Array.from({ length: nodes }, (_, k) => s.filter((_, i) => i % nodes === k)).filter((x) => x.length > 0);
        const blocks = sets.map((x) => chooseAlignedBlock(toPrefixes(x)).block);
        for (let i = 0; i < blocks.length; i++) for (let j = i + 1; j < blocks.length; j++) expect(cidrsOverlap(blocks[i]!, blocks[j]!)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('does not depend on how EC2 orders prefixes other than through the tie rule: the block size is order-free', () => {
    fc.assert(
      fc.property(slots, (s) => {
        const a = chooseAlignedBlock(toPrefixes(s)).block.prefix;
        const b = chooseAlignedBlock(toPrefixes([...s].reverse())).block.prefix;
        expect(a).toBe(b);
      }),
      { numRuns: 200 },
    );
  });
});
