// The audit's findings: one table row per kind of finding, the severities, the ordering, and the
// sweep against a brute-force pairwise check on a generated cluster.
import { describe, expect, it } from 'vitest';
import { auditFindings, findingKey, formatAuditReport, type AuditInput, type AuditNode } from '../../src/audit/findings.js';
import { POD_CIDR_POOL_ANNOTATION } from '../../src/model/node.js';
import { auditNode } from '../../src/audit/objects.js';
import { cidrsOverlap, parseCIDR } from '../../src/ipam/cidr.js';

/** `allocatedFrom`: the pool annotation; null for a node without it. */
const n = (name: string, podCIDRs: string[], addresses: string[] = [], allocatedFrom: string | null = 'pool'): AuditNode => ({
  name, podCIDRs, addresses: addresses.map((address) => ({ type: 'InternalIP', address })), ...(allocatedFrom !== null ? { allocatedFrom } : {}),
});
const input = (o: Partial<AuditInput>): AuditInput => ({ nodes: [], pools: [], serviceRanges: [], ...o });
const pool = (name: string, ...cidrs: string[]) => ({ name, cidrs, source: 'ClusterCIDR' as const });
const svc = (name: string, ...cidrs: string[]) => ({ name, cidrs, source: 'ServiceCIDR' as const });

describe('auditFindings', () => {
  const cases: { name: string; input: AuditInput; findings: [string, string][] }[] = [
    { name: 'a clean cluster', input: input({ nodes: [n('a', ['10.0.0.0/24'], ['192.168.0.1']), n('b', ['10.0.1.0/24'], ['192.168.0.2'])], pools: [pool('p', '10.0.0.0/16')], serviceRanges: [svc('kubernetes', '10.96.0.0/12')] }), findings: [] },
    {
      name: 'two nodes with overlapping pod CIDRs',
      input: input({ nodes: [n('a', ['10.0.0.0/24']), n('b', ['10.0.0.0/25'])] }),
      findings: [['PodCIDROverlap', 'pod CIDRs overlap: Node a (10.0.0.0/24) and Node b (10.0.0.0/25)']],
    },
    {
      name: 'a pod CIDR inside a ServiceCIDR',
      input: input({ nodes: [n('a', ['10.96.1.0/24'])], serviceRanges: [svc('kubernetes', '10.96.0.0/12')] }),
      findings: [['PodCIDRServiceOverlap', 'pod CIDR overlaps a Service range: Node a (10.96.1.0/24) and ServiceCIDR kubernetes (10.96.0.0/12)']],
    },
    {
      name: "a node address inside another node's pod CIDR, and inside its own",
      input: input({ nodes: [n('a', ['10.0.0.0/24'], ['10.0.1.5']), n('b', ['10.0.1.0/24'], ['10.0.1.1'])] }),
      findings: [
        ['NodeAddressInPodCIDR', 'node address inside a pod CIDR: Node a (10.0.1.5) in Node b (10.0.1.0/24)'],
        ['NodeAddressInPodCIDR', 'node address inside a pod CIDR: Node b (10.0.1.1) in Node b (10.0.1.0/24)'],
      ],
    },
    {
      name: 'a node address inside a Service range (the flag) and inside a pool',
      input: input({ nodes: [n('a', [], ['10.96.0.10', '10.1.2.3', 'node-a.example'])], pools: [pool('p', '10.1.0.0/16')], serviceRanges: [{ name: '--service-cluster-ip-range', cidrs: ['10.96.0.0/16'], source: 'flags' }] }),
      findings: [
        ['NodeAddressInServiceRange', 'node address inside a Service range: Node a (10.96.0.10) in --service-cluster-ip-range 10.96.0.0/16'],
        ['NodeAddressInPool', 'node address inside a pool (a block holding it may be handed out): Node a (10.1.2.3) in ClusterCIDR p (10.1.0.0/16)'],
      ],
    },
    {
      name: 'pod CIDRs outside every pool and not allocated by this controller',
      input: input({ nodes: [n('a', ['192.168.5.0/24'], [], null)], pools: [pool('p', '10.0.0.0/16')] }),
      findings: [
        ['PodCIDRNotAllocated', 'Node a (192.168.5.0/24): pod CIDRs without the ipam.node-address-ccm.io/pool annotation: not allocated by node-address-ccm (another allocator, a CNI, or set by hand)'],
        ['PodCIDROutsidePools', 'Node a (192.168.5.0/24): pod CIDR inside no pool'],
      ],
    },
    {
      name: 'a pod CIDR that contains a pool (a legacy /16 after --cluster-cidr was narrowed): contains, not "inside no pool"',
      input: input({ nodes: [n('legacy', ['10.0.0.0/16'])], pools: [pool('p', '10.0.0.0/20')] }),
      findings: [
        ['PodCIDRContainsPool', 'pod CIDR contains a pool (nothing inside it is handed out while the node holds it): Node legacy (10.0.0.0/16) holds ClusterCIDR p (10.0.0.0/20)'],
        ['PodCIDROutsidePools', 'Node legacy (10.0.0.0/16): pod CIDR inside no pool'],
      ],
    },
    {
      name: 'no pool known (CloudAllocator, RangeAllocator audited without --cluster-cidr): no outside-pool findings',
      input: input({ nodes: [n('a', ['192.168.5.0/24'])] }),
      findings: [],
    },
    {
      name: 'overlapping pools and a pool over a Service range: information only',
      input: input({ pools: [pool('default', '10.0.0.0/8'), pool('big', '10.0.0.0/16', 'fd00::/64')], serviceRanges: [svc('kubernetes', '10.96.0.0/12')] }),
      findings: [
        ['PoolOverlap', 'pools overlap (allowed: each block goes to one node): ClusterCIDR big (10.0.0.0/16) and ClusterCIDR default (10.0.0.0/8)'],
        ['PoolServiceOverlap', 'pool overlaps a Service range (those addresses are never handed out): ClusterCIDR default (10.0.0.0/8) and ServiceCIDR kubernetes (10.96.0.0/12)'],
      ],
    },
    {
      name: 'IPv6 is audited like IPv4, and families never mix',
      input: input({ nodes: [n('a', ['10.0.0.0/24', 'fd00:1::/64'], ['fd00:1::5']), n('b', ['fd00:1::/64'])] }),
      findings: [
        ['NodeAddressInPodCIDR', 'node address inside a pod CIDR: Node a (fd00:1::5) in Node a (fd00:1::/64)'],
        ['NodeAddressInPodCIDR', 'node address inside a pod CIDR: Node a (fd00:1::5) in Node b (fd00:1::/64)'],
        ['PodCIDROverlap', 'pod CIDRs overlap: Node a (fd00:1::/64) and Node b (fd00:1::/64)'],
      ],
    },
    {
      name: 'a CIDR that does not parse is named with its object',
      input: input({ nodes: [n('a', ['10.0.0.0/33'])], pools: [pool('p', 'nope')] }),
      findings: [
        ['InvalidCIDR', 'ClusterCIDR p (nope): invalid CIDR "nope": missing "/prefix"'],
        ['InvalidCIDR', 'Node a (10.0.0.0/33): invalid CIDR "10.0.0.0/33": prefix length must be 0..32'],
      ],
    },
  ];
  it.each(cases)('$name', ({ input: i, findings }) => {
    const r = auditFindings(i);
    expect(r.findings.map((f) => [f.kind, f.message])).toEqual(findings);
    expect(r.counts.conflict).toBe(r.findings.filter((f) => f.severity === 'conflict').length);
  });

  it('sorts conflicts first and names the objects of each finding', () => {
    const r = auditFindings(input({ nodes: [n('a', ['10.0.0.0/24']), n('b', ['10.0.0.0/24'])], pools: [pool('x', '10.0.0.0/16'), pool('y', '10.0.0.0/16')] }));
    expect(r.findings.map((f) => f.severity)).toEqual(['conflict', 'info']);
    expect(r.findings[0]!.objects).toEqual([{ kind: 'Node', name: 'a', value: '10.0.0.0/24' }, { kind: 'Node', name: 'b', value: '10.0.0.0/24' }]);
    expect(findingKey(r.findings[0]!)).toBe('PodCIDROverlap|Node/a=10.0.0.0/24|Node/b=10.0.0.0/24');
    expect(formatAuditReport(r)).toMatch(/^audit: 2 node\(s\) \(2 with pod CIDRs\), 2 pool\(s\), 0 Service range object\(s\)\nfindings: 1 conflict\(s\), 0 warning\(s\), 1 info\nnote: Sees spec\.podCIDRs/);
  });

  it('finds exactly the overlapping pod CIDR pairs a brute-force check finds', () => {
    // Deterministic pseudo-random /22../26 blocks inside 10.0.0.0/16.
    let seed = 7;
    const rnd = (m: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % m);
    const nodes: AuditNode[] = [];
    for (let i = 0; i < 300; i++) {
      const prefix = 22 + rnd(5);
      const size = 2 ** (32 - prefix);
      const start = Math.floor(rnd(65536) / size) * size;
      nodes.push(n(`n${i}`, [`10.0.${Math.floor(start / 256)}.${start % 256}/${prefix}`]));
    }
    const r = auditFindings(input({ nodes }));
    const got = r.findings.filter((f) => f.kind === 'PodCIDROverlap').map((f) => f.objects.map((o) => o.name).sort().join('+')).sort();
    const want: string[] = [];
    for (let i = 0; i < nodes.length; i++) {
      for (let j = i + 1; j < nodes.length; j++) {
        if (cidrsOverlap(parseCIDR(nodes[i]!.podCIDRs[0]!), parseCIDR(nodes[j]!.podCIDRs[0]!))) want.push([nodes[i]!.name, nodes[j]!.name].sort().join('+'));
      }
    }
    expect(want.length).toBeGreaterThan(0);
    expect(got).toEqual(want.sort());
  });

  it('reads nodes as the API returns them', () => {
    expect(auditNode({
      metadata: { name: 'a', annotations: { [POD_CIDR_POOL_ANNOTATION]: 'p' } },
      spec: { podCIDR: '10.0.0.0/24' },
      status: { addresses: [{ type: 'InternalIP', address: '192.168.0.1' }] },
    })).toEqual({ name: 'a', podCIDRs: ['10.0.0.0/24'], addresses: [{ type: 'InternalIP', address: '192.168.0.1' }], allocatedFrom: 'p' });
  });
});
