// The audit's sweep (typed columns, one pass in address order) against a pairwise oracle written
// from the rules alone: every two ranges of different owners that overlap make the finding their
// kinds name, the enclosing one first (for equal ranges, the lower kind, then the earlier item);
// a pod CIDR is inside a pool when a pool strictly encloses it. Random clusters in small ranges of
// both families, so that overlaps, equal ranges, duplicates and unparsable values are common.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { auditFindings, findingKey, FINDING_KINDS, type AuditInput, type AuditNode, type FindingKind, type FindingObject } from '../../src/audit/findings.js';
import { cidrContains, parseCIDR, type CIDR } from '../../src/ipam/cidr.js';

const KINDS = ['pod', 'pool', 'service', 'address'] as const;
interface Item { kind: (typeof KINDS)[number]; cidr: CIDR; owner: number; obj: FindingObject }

function parseOr(text: string): CIDR | undefined {
  try {
    return parseCIDR(text);
  } catch {
    return undefined;
  }
}

/** Finding keys by the rules, pair by pair (InvalidCIDR and PodCIDRNotAllocated left out: the sweep does not make them). */
/** The input as the tests build it: the nodes in an array. */
type ArrayInput = AuditInput & { nodes: AuditNode[] };

function oracle(input: ArrayInput): string[] {
  const items: Item[] = [];
  let owners = 0;
  for (const n of input.nodes) {
    const owner = owners++;
    for (const t of n.podCIDRs) {
      const cidr = parseOr(t);
      if (cidr) items.push({ kind: 'pod', cidr, owner, obj: { kind: 'Node', name: n.name, value: cidr.text } });
    }
    const addressOwner = owners++;
    const seen = new Set<string>();
    for (const a of n.addresses) {
      const ip = /^\d{1,3}(\.\d{1,3}){3}$/.test(a.address) ? `${a.address}/32` : a.address.includes(':') ? `${a.address}/128` : undefined;
      const cidr = ip === undefined ? undefined : parseOr(ip);
      if (!cidr || seen.has(cidr.text)) continue;
      seen.add(cidr.text);
      items.push({ kind: 'address', cidr, owner: addressOwner, obj: { kind: 'Node', name: n.name, value: a.address } });
    }
  }
  for (const p of input.pools) {
    const owner = owners++;
    for (const t of p.cidrs) {
      const cidr = parseOr(t);
      if (cidr) items.push({ kind: 'pool', cidr, owner, obj: p.source === 'flags' ? { kind: 'Flag', name: '--cluster-cidr', value: cidr.text } : { kind: 'ClusterCIDR', name: p.name, value: cidr.text } });
    }
  }
  for (const s of input.serviceRanges) {
    const owner = owners++;
    for (const t of s.cidrs) {
      const cidr = parseOr(t);
      if (cidr) items.push({ kind: 'service', cidr, owner, obj: s.source === 'flags' ? { kind: 'Flag', name: '--service-cluster-ip-range', value: cidr.text } : { kind: 'ServiceCIDR', name: s.name, value: cidr.text } });
    }
  }
  const rank = (it: Item): number => KINDS.indexOf(it.kind);
  const keys: string[] = [];
  const key = (kind: string, objects: FindingObject[]) => keys.push(findingKey({ kind: kind as never, severity: 'info', message: '', objects }));
  const inPool = new Set<Item>();
  items.forEach((x, i) => items.forEach((y, j) => {
    if (j <= i || x.owner === y.owner || x.cidr.family !== y.cidr.family) return;
    const xy = cidrContains(x.cidr, y.cidr);
    const yx = cidrContains(y.cidr, x.cidr);
    if (!xy && !yx) return;
    // The enclosing item; equal ranges: the lower kind, then the earlier item (x).
    const [outer, inner] = xy && yx ? (rank(y) < rank(x) ? [y, x] : [x, y]) : xy ? [x, y] : [y, x];
    const [a, b] = rank(outer) - rank(inner) > 0 || (rank(outer) === rank(inner) && outer.obj.name > inner.obj.name) ? [inner, outer] : [outer, inner];
    switch (`${a.kind}-${b.kind}`) {
      case 'pod-pod': return key('PodCIDROverlap', [a.obj, b.obj]);
      case 'pod-service': return key('PodCIDRServiceOverlap', [a.obj, b.obj]);
      case 'pod-pool':
        if (inner.kind === 'pod') inPool.add(inner);
        else key('PodCIDRContainsPool', [outer.obj, inner.obj]);
        return;
      case 'pod-address': return key('NodeAddressInPodCIDR', [b.obj, a.obj]);
      case 'pool-pool': return key('PoolOverlap', [a.obj, b.obj]);
      case 'pool-service': return key('PoolServiceOverlap', [a.obj, b.obj]);
      case 'pool-address': return key('NodeAddressInPool', [b.obj, a.obj]);
      case 'service-address': return key('NodeAddressInServiceRange', [b.obj, a.obj]);
      default: return;
    }
  }));
  if (input.pools.length > 0) for (const it of items) if (it.kind === 'pod' && !inPool.has(it)) key('PodCIDROutsidePools', [it.obj]);
  return keys.sort();
}

// Ranges inside 10.0.0.0/28 and fd00::/124, so that random ones overlap often; a few values that
// do not parse or are not IPs.
const v4 = fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 28, max: 32 })).map(([a, p]) => `10.0.0.${a}/${p}`);
const v6 = fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 124, max: 128 })).map(([a, p]) => `fd00::${a.toString(16)}/${p}`);
const range = fc.oneof({ weight: 6, arbitrary: v4 }, { weight: 3, arbitrary: v6 }, { weight: 1, arbitrary: fc.constantFrom('nope', '10.0.0.0/33', '010.0.0.1/32') });
const address = fc.oneof(
  fc.integer({ min: 0, max: 15 }).map((a) => `10.0.0.${a}`),
  fc.integer({ min: 0, max: 15 }).map((a) => `fd00::${a.toString(16)}`),
  fc.constantFrom('node.example', '10.0.0.999', 'FD00::1'),
);
const name = fc.constantFrom('a', 'b', 'c', 'd');
const node: fc.Arbitrary<AuditNode> = fc.record({
  name,
  podCIDRs: fc.array(range, { maxLength: 2 }),
  addresses: fc.array(address.map((a) => ({ type: 'InternalIP', address: a })), { maxLength: 3 }),
  allocatedFrom: fc.constantFrom('pool', ''),
});
const cluster: fc.Arbitrary<ArrayInput> = fc.record({
  nodes: fc.array(node, { maxLength: 6 }),
  pools: fc.array(fc.record({ name, cidrs: fc.array(range, { minLength: 1, maxLength: 2 }), source: fc.constantFrom('ClusterCIDR' as const, 'flags' as const) }), { maxLength: 3 }),
  serviceRanges: fc.array(fc.record({ name, cidrs: fc.array(range, { minLength: 1, maxLength: 2 }), source: fc.constantFrom('ServiceCIDR' as const, 'flags' as const) }), { maxLength: 2 }),
});

describe('auditFindings: the sweep against a pairwise oracle', () => {
  it('finds exactly the findings the pairwise rules give', () => {
    fc.assert(
      fc.property(cluster, (input) => {
        const got = auditFindings(input).findings.filter((f) => f.kind !== 'InvalidCIDR' && f.kind !== 'PodCIDRNotAllocated').map(findingKey).sort();
        expect(got).toEqual(oracle(input));
      }),
      { numRuns: 3000 },
    );
  });

  it('counts every kind alike whether it builds the findings or not, and builds exactly the kinds asked for', () => {
    const kinds = Object.keys(FINDING_KINDS) as FindingKind[];
    fc.assert(
      fc.property(cluster, fc.subarray(kinds), (input, wanted) => {
        const full = auditFindings(input);
        const some = auditFindings(input, { detail: (k) => wanted.includes(k) });
        const tally = Object.fromEntries(kinds.map((k) => [k, full.findings.filter((f) => f.kind === k).length]));
        expect(full.byKind).toEqual(tally);
        expect(some.byKind).toEqual(tally);
        expect(some.counts).toEqual(full.counts);
        expect(some.scope).toEqual(full.scope);
        expect(some.findings).toEqual(full.findings.filter((f) => wanted.includes(f.kind)));
      }),
      { numRuns: 1000 },
    );
  });

  it('a view that builds each node when read (the controller\'s, over its cache) gives the report the array gives', () => {
    fc.assert(
      fc.property(cluster, (input) => {
        let reads = 0;
        const view = { length: input.nodes.length, at: (i: number) => (reads++, i < input.nodes.length ? structuredClone(input.nodes[i]!) : undefined) };
        expect(auditFindings({ ...input, nodes: view })).toEqual(auditFindings(input));
        expect(reads).toBeGreaterThanOrEqual(input.nodes.length);
      }),
      { numRuns: 1000 },
    );
  });
});
