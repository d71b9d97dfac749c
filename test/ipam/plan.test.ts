import { describe, it, expect } from 'vitest';
import { planPodCIDRs, PlanInputError } from '../../src/ipam/plan.js';
import { ClusterCIDRValidationError } from '../../src/ipam/clustercidr.js';

const cc = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name }, spec });
const node = (name: string, labels: Record<string, string> = {}, podCIDRs?: string[], creationTimestamp?: string) => ({
  metadata: { name, labels, ...(creationTimestamp ? { creationTimestamp } : {}) },
  spec: podCIDRs ? { podCIDRs } : {},
});

describe('planPodCIDRs', () => {
  it.each([
    ['timestamps decide, whatever the input order', [['b', '2026-02-01T00:00:00Z'], ['a', '2026-03-01T00:00:00Z']], 'b'],
    ['equal timestamps: the name decides', [['b', '2026-02-01T00:00:00Z'], ['a', '2026-02-01T00:00:00Z']], 'a'],
    ['no timestamps: the name decides', [['b', undefined], ['a', undefined]], 'a'],
  ] as const)('the conflict winner is the controller’s (restoreOrder): %s', (_name, holders, winner) => {
    const pools = [cc('default', { perNodeHostBits: 8, ipv4: '10.0.0.0/22' })];
    const r = planPodCIDRs(pools, holders.map(([n, t]) => node(n, {}, ['10.0.0.0/24'], t)));
    expect(Object.keys(r.allocations)).toEqual([winner]);
    expect(Object.keys(r.failures)).toEqual([winner === 'a' ? 'b' : 'a']);
  });

  it('reads spec.podCIDR when spec.podCIDRs is empty, as the controller does', () => {
    const r = planPodCIDRs([cc('default', { perNodeHostBits: 8, ipv4: '10.0.0.0/22' })], [{ metadata: { name: 'n' }, spec: { podCIDRs: [], podCIDR: '10.0.3.0/24' } }, node('m')]);
    expect(r.allocations).toEqual({ n: ['10.0.3.0/24'], m: ['10.0.0.0/24'] });
  });

  it.each([0, 3])('refuses perNodeHostBits %d, below the CRD minimum of 4, naming field and value', (hb) => {
    expect(() => planPodCIDRs([cc('tiny', { perNodeHostBits: hb, ipv4: '10.0.0.0/22' })], [])).toThrow(
      `ClusterCIDR "tiny": spec.perNodeHostBits: ${hb} is below 4, the smallest the ClusterCIDR CRD accepts`,
    );
  });

  it('restores existing blocks first, then allocates in input order', () => {
    const pools = [
      cc('default', { perNodeHostBits: 8, ipv4: '10.0.0.0/22' }),
      cc('gpu', { perNodeHostBits: 6, ipv4: '10.9.0.0/24', nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }] } }),
    ];
    const nodes = [
      node('new-1'),
      node('gpu-1', { gpu: 'true' }),
      node('old-1', {}, ['10.0.0.0/24'], '2025-01-01T00:00:00Z'),
      node('stray', {}, ['192.168.0.0/24']),
      // Created later than old-1: it loses the shared space, as in the controller.
      node('dup', {}, ['10.0.0.0/25'], '2026-01-01T00:00:00Z'),
      node('new-2'),
    ];
    const r = planPodCIDRs(pools, nodes);
    expect(r.allocations).toEqual({
      'old-1': ['10.0.0.0/24'],
      'new-1': ['10.0.1.0/24'],
      'gpu-1': ['10.9.0.0/26'],
      'new-2': ['10.0.2.0/24'],
    });
    expect(r.failures).toEqual({
      stray: 'node "stray": pod CIDR 192.168.0.0/24 lies outside every pool',
      dup: 'node "dup": pod CIDR 10.0.0.0/25 overlaps a block of node "old-1" (10.0.0.0/24)',
    });
    expect(r.decisions['old-1']).toEqual({ pool: 'default', reason: 'existing spec.podCIDRs', existing: true });
    expect(r.decisions['gpu-1'].pool).toBe('gpu');
    expect(r.pools.map((p) => [p.name, p.used, p.free, p.total])).toEqual([
      // Pools are listed in preference order: equal size, so fewer IPs per node first.
      ['gpu', 1n, 3n, 4n],
      ['default', 3n, 1n, 4n],
    ]);
  });

  it('never hands out Service CIDRs and reports existing blocks inside them', () => {
    const r = planPodCIDRs([cc('p', { perNodeHostBits: 8, ipv4: '10.96.0.0/11', ipv6: 'fd00::/104' })], [node('a', {}, ['10.96.0.0/24', 'fd00::/120']), node('b')], {
      serviceCIDRs: ['10.96.0.0/12', 'fd00::/112'],
    });
    expect(r.allocations.b).toEqual(['10.112.0.0/24', 'fd00::1:0/120']);
    expect(r.exclusionConflicts).toEqual([
      { node: 'a', podCIDR: '10.96.0.0/24', exclusion: '10.96.0.0/12' },
      { node: 'a', podCIDR: 'fd00::/120', exclusion: 'fd00::/112' },
    ]);
  });

  it('uses the flags pool as a fallback and accepts the legacy spec.podCIDR', () => {
    const r = planPodCIDRs([], [{ metadata: { name: 'x' }, spec: { podCIDR: '10.244.0.0/24' } }, node('y')], { flags: { clusterCIDR: '10.244.0.0/16' } });
    expect(r.allocations).toEqual({ x: ['10.244.0.0/24'], y: ['10.244.1.0/24'] });
    expect(r.pools[0].name).toMatch(/^created-from-flags-[0-9a-f]{10}$/);
  });

  it('a ClusterCIDR already mirroring the flags pool takes its place', () => {
    const mirror = cc('created-from-flags-24c6532bed', { perNodeHostBits: 8, ipv4: '10.244.0.0/16' });
    const r = planPodCIDRs([mirror], [node('y')], { flags: { clusterCIDR: '10.244.0.0/16' } });
    expect(r.pools.map((p) => p.name)).toEqual([mirror.metadata.name]);
  });

  it('restores a dual-stack node whose families live in different pools', () => {
    const r = planPodCIDRs([cc('v4', { perNodeHostBits: 8, ipv4: '10.0.0.0/16' }), cc('v6', { perNodeHostBits: 8, ipv6: 'fd00::/112' })], [node('d', {}, ['10.0.3.0/24', 'fd00::300/120'])]);
    expect(r.failures).toEqual({});
    expect(r.decisions.d.pool).toBe('v4,v6');
  });

  it.each([
    [[cc('p', { perNodeHostBits: 8, ipv4: '10.0.0.0/16' }), cc('p', { perNodeHostBits: 8, ipv4: '10.1.0.0/16' })], [], 'ClusterCIDR "p": metadata.name: duplicate name'],
    [[], [node('a'), node('a')], 'Node "a": metadata.name: duplicate name'],
    [[], [{ metadata: {} }], 'Node #1: metadata.name: is required'],
    [[], [{ metadata: { name: 'a' }, spec: { podCIDRs: '10.0.0.0/24' } }], 'Node "a": spec.podCIDRs: must be a list of strings'],
  ])('rejects bad input %#', (pools, nodes, msg) => {
    expect(() => planPodCIDRs(pools, nodes as never)).toThrow(PlanInputError);
    expect(() => planPodCIDRs(pools, nodes as never)).toThrow(msg);
  });

  it('names the object and field of a bad ClusterCIDR', () => {
    expect(() => planPodCIDRs([cc('bad', { perNodeHostBits: 40, ipv4: '10.0.0.0/8' })], [])).toThrow(ClusterCIDRValidationError);
  });
});
