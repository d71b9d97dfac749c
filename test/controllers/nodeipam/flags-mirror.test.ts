// planFlagsMirror: what happens to --cluster-cidr in MultiCIDRRangeAllocator mode, given the
// ClusterCIDR objects that exist.
import { describe, expect, it } from 'vitest';
import { planFlagsMirror, type MirrorObject } from '../../../src/controllers/nodeipam/flags-mirror.js';
import { createdFromFlagsName, parseFlagsPool, toClusterCIDRObject, flagsPoolToClusterCIDR } from '../../../src/ipam/index.js';

const single = parseFlagsPool({ clusterCIDR: '10.244.0.0/16', nodeCIDRMaskSizeIPv4: 24 });
const dualSame = parseFlagsPool({ clusterCIDR: '10.244.0.0/16,fd00::/112', nodeCIDRMaskSizeIPv4: 24, nodeCIDRMaskSizeIPv6: 120 });
const dualDiff = parseFlagsPool({ clusterCIDR: '10.244.0.0/16,fd00::/56', nodeCIDRMaskSizeIPv4: 24, nodeCIDRMaskSizeIPv6: 64 });
const nameOf = createdFromFlagsName;
const mirror = (flags: typeof single, extra: Partial<MirrorObject['metadata']> = {}): MirrorObject => {
  const o = toClusterCIDRObject(flagsPoolToClusterCIDR(flags));
  return { ...o, metadata: { ...o.metadata, ...extra } };
};
const other = (name: string, extra: Partial<MirrorObject['metadata']> = {}): MirrorObject => ({ metadata: { name, ...extra }, spec: { perNodeHostBits: 8, ipv4: '10.9.0.0/16' } });

describe('planFlagsMirror', () => {
  it.each([
    { name: 'no flags, nothing there', flags: undefined, existing: [], kind: 'none', stale: [] },
    { name: 'no flags: every live created-from-flags object is stale', flags: undefined, existing: [other('created-from-flags-aaaaaaaaaa'), other('created-from-flags-bbbbbbbbbb', { deletionTimestamp: '2026-01-01T00:00:00Z' }), other('mine')], kind: 'none', stale: ['created-from-flags-aaaaaaaaaa'] },
    { name: 'single-stack flags, no object: create', flags: single, existing: [], kind: 'create', stale: [] },
    { name: 'dual-stack with equal host bits: create one object with both families', flags: dualSame, existing: [], kind: 'create', stale: [] },
    { name: 'dual-stack /24 and /64: memory', flags: dualDiff, existing: [], kind: 'memory', stale: [] },
    { name: 'the mirror exists: nothing to write', flags: single, existing: [mirror(single)], kind: 'exists', stale: [] },
    { name: 'flags changed: the old mirror is stale, the new one created', flags: dualSame, existing: [mirror(single)], kind: 'create', stale: [nameOf(single)] },
    { name: 'the mirror is being deleted: memory until it is gone', flags: single, existing: [mirror(single, { deletionTimestamp: '2026-01-01T00:00:00Z' })], kind: 'memory', stale: [] },
  ])('$name', ({ flags, existing, kind, stale }) => {
    const plan = planFlagsMirror(flags, existing);
    expect(plan.kind).toBe(kind);
    expect(plan.deleteStale).toEqual(stale);
    if (plan.kind === 'create') {
      expect(plan.object.metadata.name).toBe(nameOf(flags!));
      expect(plan.pool.fromFlags).toBeFalsy();
    }
  });

  it('explains why a pool stays in memory', () => {
    const plan = planFlagsMirror(dualDiff, []);
    expect(plan.kind === 'memory' && plan.reason).toBe(
      '--cluster-cidr 10.244.0.0/16,fd00::/56 stays an in-memory pool: a ClusterCIDR has one perNodeHostBits for both families, and the flags ask for IPv4 /24 (8 host bits) and IPv6 /64 (64 host bits)',
    );
  });

  it('an object under the mirror name with other content is not used', () => {
    const plan = planFlagsMirror(single, [{ metadata: { name: nameOf(single) }, spec: { perNodeHostBits: 8, ipv4: '10.1.0.0/16' } }]);
    expect(plan.kind).toBe('memory');
    expect(plan.kind === 'memory' && plan.reason).toMatch(/exists with a different spec\.ipv4 than the flags/);
  });
});
