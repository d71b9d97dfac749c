import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { CIDRNotAvailableError, PodCIDRAllocator, PoolInUseError } from '../../src/ipam/allocator.js';
import { parseClusterCIDR } from '../../src/ipam/clustercidr.js';
import { flagsPoolToClusterCIDR, parseFlagsPool } from '../../src/ipam/flags.js';
import { cidrsOverlap, parseCIDR } from '../../src/ipam/cidr.js';
import type { IPAMMetricsSink } from '../../src/ipam/metrics.js';

type Sel = Record<string, string> | null;
function pool(name: string, hostBits: number, ipv4?: string, ipv6?: string, sel: Sel = null, extraMeta: Record<string, unknown> = {}) {
  const nodeSelector = sel && { nodeSelectorTerms: [{ matchExpressions: Object.entries(sel).map(([key, v]) => ({ key, operator: 'In', values: [v] })) }] };
  return parseClusterCIDR({ metadata: { name, ...extraMeta }, spec: { perNodeHostBits: hostBits, ipv4, ipv6, nodeSelector } });
}

function withPools(...pools: ReturnType<typeof pool>[]): PodCIDRAllocator {
  const a = new PodCIDRAllocator();
  for (const p of pools) a.upsertPool(p);
  return a;
}

describe('pool order for a node (KEP-2593 tie-breaks)', () => {
  const n1 = { name: 'n1', labels: { node: 'n1', rack: 'rack1' } };

  it('follows the KEP example: most requirements, then fewest blocks, then fallback', () => {
    const a = withPools(
      pool('default', 6, '10.0.0.0/8'),
      pool('n1-big', 4, '192.168.128.0/17', undefined, { node: 'n1' }),
      pool('n1-small', 4, '192.168.64.0/20', undefined, { node: 'n1' }),
      pool('rack', 6, '10.5.0.0/16', undefined, { node: 'n1', rack: 'rack1' }),
    );
    expect(a.candidatePools(n1).map((c) => c.pool)).toEqual(['rack', 'n1-small', 'n1-big', 'default']);
    const r = a.allocateNode(n1);
    expect(r).toMatchObject({ podCIDRs: ['10.5.0.0/26'], pool: 'rack' });
    expect(r.reason).toContain('selector "node in (n1),rack in (rack1)" matches 2 requirement(s)');
  });

  it('falls through to the next pool when the best is full', () => {
    const a = withPools(pool('tiny', 8, '10.5.0.0/24', undefined, { node: 'n1' }), pool('default', 8, '10.0.0.0/16'));
    expect(a.allocateNode({ name: 'n1', labels: { node: 'n1' } }).podCIDRs).toEqual(['10.5.0.0/24']);
    const r = a.allocateNode({ name: 'n2', labels: { node: 'n1' } });
    expect(r).toMatchObject({ podCIDRs: ['10.0.0.0/24'], pool: 'default' });
    expect(r.reason).toContain('skipped full pool(s) "tiny"');
    expect(a.allocateNode({ name: 'n3', labels: {} }).reason).toContain('no pool selector matches the node');
  });

  it.each([
    ['fewer IPs per node first', [pool('b', 8, '10.0.0.0/16'), pool('a', 6, '10.1.0.0/18')], ['a', 'b']],
    ['selector text breaks ties', [pool('x', 8, '10.0.0.0/16', undefined, { z: '1' }), pool('y', 8, '10.1.0.0/16', undefined, { a: '1' })], ['y', 'x']],
    ['CIDR text breaks ties', [pool('x', 8, '10.9.0.0/16'), pool('y', 8, '10.1.0.0/16')], ['y', 'x']],
    ['dual-stack counts its smaller family', [pool('x', 8, '10.0.0.0/16', 'fd00::/112'), pool('y', 8, '10.1.0.0/15')], ['x', 'y']],
    ['name last', [pool('b', 8, '10.0.0.0/16'), pool('a', 8, '10.0.0.0/16')], ['a', 'b']],
  ])('%s', (_n, pools, want) => {
    expect(
      withPools(...pools)
        .candidatePools({ name: 'n', labels: { z: '1', a: '1' } })
        .map((c) => c.pool),
    ).toEqual(want);
  });

  it('terminating pools take no new allocations but keep their nodes', () => {
    const a = withPools(pool('old', 8, '10.0.0.0/16'), pool('new', 8, '10.1.0.0/16'));
    expect(a.occupyNode('n0', ['10.0.5.0/24'])).toMatchObject({ ok: true, pool: 'old' });
    a.markTerminating('old');
    expect(a.allocateNode({ name: 'n1' }).pool).toBe('new');
    expect(a.poolInUse('old')).toBe(true);
    expect(() => a.removePool('old')).toThrow(PoolInUseError);
    expect(() => a.removePool('old')).toThrow('pool "old" is still used by 1 node(s): n0');
    a.releaseNode('n0');
    expect(a.removePool('old')).toBe(true);
  });
});

describe('dual-stack and flags pool', () => {
  it('both families or neither', () => {
    // IPv4 has 4 blocks, IPv6 only 2: the third node must not keep an IPv4 block.
    const a = withPools(pool('ds', 0, '10.0.0.0/30', 'fd00::/127'), pool('v4', 8, '10.9.0.0/16'));
    expect(a.allocateNode({ name: 'a' }).podCIDRs).toEqual(['10.0.0.0/32', 'fd00::/128']);
    expect(a.allocateNode({ name: 'b' }).podCIDRs).toEqual(['10.0.0.1/32', 'fd00::1/128']);
    const c = a.allocateNode({ name: 'c' });
    expect(c.pool).toBe('v4');
    const ds = a.stats().find((s) => s.name === 'ds')!;
    expect(ds.families.map((f) => f.used)).toEqual([2n, 2n]);
    expect(ds.free).toBe(0n);
  });

  it('the flags pool follows flag order: IPv6 first for IPv6-primary clusters', () => {
    const a = new PodCIDRAllocator();
    a.upsertPool(flagsPoolToClusterCIDR(parseFlagsPool({ clusterCIDR: 'fd00::/48,10.0.0.0/8', nodeCIDRMaskSizeIPv4: 24, nodeCIDRMaskSizeIPv6: 64 }), 'flags'));
    expect(a.allocateNode({ name: 'n1' }).podCIDRs).toEqual(['fd00::/64', '10.0.0.0/24']);
    expect(a.stats()[0]).toMatchObject({ name: 'flags', fromFlags: true, total: 65536n, used: 1n });
  });

  it('reports when no block is available anywhere', () => {
    const a = withPools(pool('p', 0, '10.0.0.0/32'));
    a.allocateNode({ name: 'a' });
    expect(() => a.allocateNode({ name: 'b' })).toThrow(CIDRNotAvailableError);
    expect(() => a.allocateNode({ name: 'b' })).toThrow('no pod CIDR available for node "b": pool "p": range 10.0.0.0/32 is full: no free /32 block');
    expect(() => withPools(pool('s', 8, '10.0.0.0/16', undefined, { x: 'y' })).allocateNode({ name: 'b' })).toThrow('no pod CIDR available for node "b": no pool matches it');
  });
});

describe('restore, overlap and exclusions', () => {
  it('occupyNode reports blocks outside every pool, double claims, bad text', () => {
    const a = withPools(pool('p', 8, '10.0.0.0/16'));
    expect(a.occupyNode('n1', ['10.0.1.0/24'])).toMatchObject({ ok: true, pool: 'p' });
    expect(a.occupyNode('n1', ['10.0.1.0/24'])).toMatchObject({ ok: true });
    expect(a.occupyNode('n2', ['10.0.1.0/25'])).toEqual({
      ok: false,
      reason: 'claimed-by-other-node',
      podCIDR: '10.0.1.0/25',
      otherNode: 'n1',
      message: 'node "n2": pod CIDR 10.0.1.0/25 overlaps a block of node "n1" (10.0.1.0/24)',
      // Held all the same: the block is free only when neither node holds it.
      recorded: ['10.0.1.0/25'],
    });
    expect(a.occupyNode('n3', ['172.16.0.0/24'])).toMatchObject({ ok: false, reason: 'outside-every-pool', message: 'node "n3": pod CIDR 172.16.0.0/24 lies outside every pool' });
    expect(a.occupyNode('n4', ['10.0.0.0/33'])).toMatchObject({ ok: false, reason: 'invalid-cidr' });
    expect(a.occupyNode('n4', [])).toMatchObject({ ok: false, reason: 'invalid-cidr', message: 'node "n4": spec.podCIDRs is empty: nothing to restore' });
    // A restored block is not handed out again.
    expect(a.allocateNode({ name: 'n5' }).podCIDRs).toEqual(['10.0.0.0/24']);
    expect(a.allocateNode({ name: 'n6' }).podCIDRs).toEqual(['10.0.2.0/24']);
    // Moving a node to other blocks frees the old ones, except what another node still holds:
    // n2's 10.0.1.0/25 keeps its /24 used (n5, n6, n1's new block, n2's half).
    expect(a.occupyNode('n1', ['10.0.9.0/24'])).toMatchObject({ ok: true });
    expect(a.stats()[0].used).toBe(4n);
    expect(a.occupyNode('n2', ['10.0.1.0/25'])).toMatchObject({ ok: true });
  });

  it('a node whose one block clashes still holds its other blocks', () => {
    // worker-1's IPv4 block was taken by a hand-made node; its IPv6 block is its own and must
    // never go to the next node.
    const a = withPools(pool('p', 8, '10.0.0.0/16', 'fd00::/112'));
    expect(a.occupyNode('intruder', ['10.0.0.0/24'])).toMatchObject({ ok: true });
    expect(a.occupyNode('worker-1', ['10.0.0.0/24', 'fd00::/120'])).toMatchObject({
      ok: false,
      reason: 'claimed-by-other-node',
      otherNode: 'intruder',
      recorded: ['10.0.0.0/24', 'fd00::/120'],
    });
    expect(a.nodeAllocation('worker-1')?.podCIDRs).toEqual(['10.0.0.0/24', 'fd00::/120']);
    const next = a.allocateNode({ name: 'worker-2' }).podCIDRs;
    expect(next).toEqual(['10.0.1.0/24', 'fd00::100/120']);
    // A block outside every pool does not cost the node its pooled block either.
    expect(a.occupyNode('worker-3', ['172.16.0.0/24', 'fd00::200/120'])).toMatchObject({ ok: false, reason: 'outside-every-pool', recorded: ['172.16.0.0/24', 'fd00::200/120'] });
    expect(a.allocateNode({ name: 'worker-4' }).podCIDRs).toEqual(['10.0.2.0/24', 'fd00::300/120']);
    // Deleting the node frees what it held.
    a.releaseNode('worker-1');
    expect(a.nodeAllocation('worker-1')).toBeUndefined();
    expect(a.occupyNode('worker-5', ['fd00::/120'])).toMatchObject({ ok: true });
  });

  it('overlapping pools never hand out the same addresses', () => {
    const a = withPools(pool('big', 9, '10.0.0.0/22'), pool('small', 8, '10.0.0.0/22', undefined, { size: 'small' }));
    expect(a.allocateNode({ name: 's1', labels: { size: 'small' } }).podCIDRs).toEqual(['10.0.0.0/24']);
    expect(a.allocateNode({ name: 'b1' }).podCIDRs).toEqual(['10.0.2.0/23']);
    expect(a.allocateNode({ name: 's2', labels: { size: 'small' } }).podCIDRs).toEqual(['10.0.1.0/24']);
    expect(() => a.allocateNode({ name: 'b2' })).toThrow(CIDRNotAvailableError);
    a.releaseNode('b1');
    expect(a.allocateNode({ name: 's3', labels: { size: 'small' } }).podCIDRs).toEqual(['10.0.2.0/24']);
  });

  it('a pool added later sees blocks already handed out', () => {
    const a = withPools(pool('one', 8, '10.0.0.0/16'));
    a.allocateNode({ name: 'n1' });
    a.upsertPool(pool('two', 7, '10.0.0.0/16', undefined, { x: '1' }));
    expect(a.allocateNode({ name: 'n2', labels: { x: '1' } }).podCIDRs).toEqual(['10.0.1.0/25']);
  });

  it('exclusions are skipped, reported as conflicts, and can be lifted', () => {
    const a = withPools(pool('p', 8, '10.0.0.0/22'));
    a.allocateNode({ name: 'n1' });
    expect(a.setExclusion('svc', ['10.0.0.128/25', '10.0.1.0/24'])).toEqual([{ node: 'n1', podCIDR: '10.0.0.0/24', exclusion: '10.0.0.128/25' }]);
    expect(a.nodeAllocation('n1')?.podCIDRs).toEqual(['10.0.0.0/24']);
    expect(a.allocateNode({ name: 'n2' }).podCIDRs).toEqual(['10.0.2.0/24']);
    expect(a.stats()[0]).toMatchObject({ used: 2n, free: 1n, total: 4n });
    a.removeExclusion('svc');
    expect(a.allocateNode({ name: 'n3' }).podCIDRs).toEqual(['10.0.3.0/24']);
    expect(a.allocateNode({ name: 'n4' }).podCIDRs).toEqual(['10.0.1.0/24']);
  });

  it('immutable fields cannot change; deletion can be recorded', () => {
    const a = withPools(pool('p', 8, '10.0.0.0/16'));
    expect(() => a.upsertPool(pool('p', 7, '10.0.0.0/16'))).toThrow('ClusterCIDR "p": spec.perNodeHostBits: is immutable');
    expect(a.upsertPool(pool('p', 8, '10.0.0.0/16'))).toBe('unchanged');
    expect(a.upsertPool(pool('p', 8, '10.0.0.0/16', undefined, null, { deletionTimestamp: 'now' }))).toBe('updated');
    expect(() => a.allocateNode({ name: 'n' })).toThrow('no pool matches it');
  });

  it('metrics sink sees allocations, releases and usage with pool and CIDR', () => {
    const events: string[] = [];
    const sink: IPAMMetricsSink = {
      allocated: (e) => events.push(`alloc ${e.pool} ${e.clusterCIDR} ${e.podCIDR} tries=${e.tries}`),
      released: (e) => events.push(`release ${e.pool} ${e.podCIDR}`),
      usage: (e) => events.push(`usage ${e.pool} ${e.clusterCIDR} ${e.used}/${e.max} ${e.usage}`),
    };
    const a = new PodCIDRAllocator({ metrics: sink });
    a.upsertPool(pool('p', 8, '10.0.0.0/22'));
    a.allocateNode({ name: 'n1' });
    a.releaseNode('n1');
    expect(events).toEqual([
      'usage p 10.0.0.0/22 0/4 0',
      'alloc p 10.0.0.0/22 10.0.0.0/24 tries=1',
      'usage p 10.0.0.0/22 1/4 0.25',
      'release p 10.0.0.0/24',
      'usage p 10.0.0.0/22 0/4 0',
    ]);
  });
});

describe('allocator properties', () => {
  it('random allocate/release/exclusion sequences over overlapping pools never overlap', () => {
    const pools = [pool('a', 8, '10.0.0.0/20'), pool('b', 6, '10.0.4.0/22', undefined, { t: 'b' }), pool('c', 9, '10.0.0.0/21', undefined, { t: 'c' })];
    const op = fc.oneof(
      fc.record({ k: fc.constant('alloc' as const), node: fc.integer({ min: 0, max: 40 }), t: fc.constantFrom('a', 'b', 'c') }),
      fc.record({ k: fc.constant('release' as const), node: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ k: fc.constant('exclude' as const), third: fc.integer({ min: 0, max: 63 }) }),
      fc.record({ k: fc.constant('unexclude' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const a = withPools(...pools);
        let exclusion: string | undefined;
        for (const o of ops) {
          if (o.k === 'alloc') {
            try {
              const r = a.allocateNode({ name: `n${o.node}`, labels: { t: o.t } });
              if (!r.existing && exclusion) expect(cidrsOverlap(parseCIDR(r.podCIDRs[0]), parseCIDR(exclusion))).toBe(false);
            } catch (err) {
              expect(err).toBeInstanceOf(CIDRNotAvailableError);
            }
          } else if (o.k === 'release') a.releaseNode(`n${o.node}`);
          else if (o.k === 'exclude') {
            exclusion = `10.0.${o.third % 16}.0/25`;
            a.setExclusion('svc', [exclusion]);
          } else {
            exclusion = undefined;
            a.removeExclusion('svc');
          }
          const held = a.nodeNames().flatMap((n) => a.nodeAllocation(n)!.podCIDRs.map((c) => parseCIDR(c)));
          for (let i = 0; i < held.length; i++) for (let j = i + 1; j < held.length; j++) expect(cidrsOverlap(held[i], held[j])).toBe(false);
        }
      }),
      { numRuns: 100 },
    );
  });
});
