import { describe, it, expect } from 'vitest';
import { ClusterCIDRValidationError, parseClusterCIDR, toClusterCIDRObject } from '../../src/ipam/clustercidr.js';
import { createdFromFlagsName, flagsPoolCanonical, flagsPoolMirrorable, FlagsError, parseFlagsPool } from '../../src/ipam/flags.js';

const cc = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name, ...extra }, spec });

describe('parseClusterCIDR', () => {
  it('computes the per-node mask per family and canonicalises CIDRs', () => {
    const p = parseClusterCIDR(cc('dual', { perNodeHostBits: 8, ipv4: '10.1.2.3/16', ipv6: 'fd00::/104' }));
    expect(p.families.map((f) => [f.cidr.text, f.maskSize])).toEqual([
      ['10.1.0.0/16', 24],
      ['fd00::/104', 120],
    ]);
    expect(p.selector.fallback).toBe(true);
    expect(p.terminating).toBe(false);
    expect(toClusterCIDRObject(p).spec).toEqual({ perNodeHostBits: 8, ipv4: '10.1.0.0/16', ipv6: 'fd00::/104' });
  });

  it('perNodeHostBits 0 and the full host bits are accepted', () => {
    expect(parseClusterCIDR(cc('a', { perNodeHostBits: 0, ipv4: '10.0.0.0/24' })).families[0].maskSize).toBe(32);
    expect(parseClusterCIDR(cc('b', { perNodeHostBits: 8, ipv4: '10.0.0.0/24' })).families[0].maskSize).toBe(24);
  });

  it("KEP-2593's IPv6 example loads: fd12:3456:789a:1::/64 with perNodeHostBits 6 is 2^58 blocks of /122", () => {
    const p = parseClusterCIDR(cc('kep', { perNodeHostBits: 6, ipv6: 'fd12:3456:789a:1::/64' }));
    expect(p.families.map((f) => [f.cidr.text, f.maskSize])).toEqual([['fd12:3456:789a:1::/64', 122]]);
    expect(parseClusterCIDR(cc('any', { perNodeHostBits: 0, ipv6: 'fd00::/64' })).families[0].maskSize).toBe(128);
  });

  it('a deletionTimestamp makes the pool terminating', () => {
    expect(parseClusterCIDR(cc('t', { perNodeHostBits: 8, ipv4: '10.0.0.0/16' }, { deletionTimestamp: '2026-01-01T00:00:00Z' })).terminating).toBe(true);
  });

  it.each([
    [cc('x', { perNodeHostBits: 8, ipv4: '10.0.0/16' }), 'ClusterCIDR "x": spec.ipv4: invalid CIDR "10.0.0/16": not an IPv4 address'],
    [cc('x', { perNodeHostBits: 8, ipv4: 'fd00::/48' }), 'ClusterCIDR "x": spec.ipv4: "fd00::/48" is not an IPv4 CIDR'],
    [cc('x', { perNodeHostBits: 9, ipv4: '10.0.0.0/24' }), 'ClusterCIDR "x": spec.perNodeHostBits: 9 is larger than the 8 host bits of spec.ipv4 "10.0.0.0/24"'],
    [cc('x', { perNodeHostBits: -1, ipv4: '10.0.0.0/24' }), 'spec.perNodeHostBits: must be a non-negative integer, got -1'],
    [cc('x', { perNodeHostBits: '8', ipv4: '10.0.0.0/24' }), 'spec.perNodeHostBits: must be a non-negative integer, got "8"'],
    [cc('x', { perNodeHostBits: 8 }), 'ClusterCIDR "x": spec: at least one of spec.ipv4 and spec.ipv6 is required'],
    [
      cc('x', { perNodeHostBits: 8, ipv4: '10.0.0.0/16', nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'Maybe' }] }] } }),
      'ClusterCIDR "x": spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: unknown operator "Maybe"',
    ],
    [{ metadata: {}, spec: {} }, 'ClusterCIDR "?": metadata.name: is required'],
    [{ kind: 'Node', metadata: { name: 'x' }, spec: {} }, 'ClusterCIDR "x": kind: expected ClusterCIDR, got "Node"'],
  ])('rejects %j', (obj, msg) => {
    expect(() => parseClusterCIDR(obj)).toThrow(ClusterCIDRValidationError);
    expect(() => parseClusterCIDR(obj)).toThrow(msg);
  });
});

describe('flags pool (RangeAllocator rules)', () => {
  it.each([
    [{ clusterCIDR: '10.0.0.0/8' }, [['10.0.0.0/8', 24]]],
    [{ clusterCIDR: 'fd00::/48' }, [['fd00::/48', 64]]],
    [{ clusterCIDR: '10.0.0.0/8', nodeCIDRMaskSize: 26 }, [['10.0.0.0/8', 26]]],
    [{ clusterCIDR: '10.0.0.0/8', nodeCIDRMaskSizeIPv4: 25 }, [['10.0.0.0/8', 25]]],
    [
      { clusterCIDR: '10.0.0.0/8,fd00::/48' },
      [
        ['10.0.0.0/8', 24],
        ['fd00::/48', 64],
      ],
    ],
    [
      // IPv6-primary: pod CIDR order follows the flag order.
      { clusterCIDR: 'fd00::/48,10.0.0.0/8', nodeCIDRMaskSizeIPv4: 25, nodeCIDRMaskSizeIPv6: 60 },
      [
        ['fd00::/48', 60],
        ['10.0.0.0/8', 25],
      ],
    ],
    [{ clusterCIDR: 'fd00::/48', nodeCIDRMaskSize: 0 }, [['fd00::/48', 64]]],
    // 0 means "not set", as in kube-controller-manager: no error for the other family's flag.
    [{ clusterCIDR: 'fd00::/48', nodeCIDRMaskSizeIPv4: 0, nodeCIDRMaskSizeIPv6: 56 }, [['fd00::/48', 56]]],
    [{ clusterCIDR: '10.0.0.0/8', nodeCIDRMaskSizeIPv4: 20 }, [['10.0.0.0/8', 20]]],
  ])('%j', (input, want) => {
    expect(parseFlagsPool(input).families.map((f) => [f.cidr.text, f.maskSize])).toEqual(want);
  });

  it.each([
    [{ clusterCIDR: '' }, '--cluster-cidr: is required'],
    [{ clusterCIDR: '10.0.0.0/8,11.0.0.0/8' }, '--cluster-cidr: a dual-stack pair needs one IPv4 and one IPv6 CIDR, got "10.0.0.0/8,11.0.0.0/8"'],
    [{ clusterCIDR: '10.0.0.0/8,fd00::/48,fd01::/48' }, '--cluster-cidr: at most two CIDRs'],
    [{ clusterCIDR: '10.0.0.0/x' }, '--cluster-cidr: invalid CIDR "10.0.0.0/x"'],
    [{ clusterCIDR: '10.0.0.0/8,fd00::/48', nodeCIDRMaskSize: 24 }, '--node-cidr-mask-size: not allowed with a dual-stack --cluster-cidr'],
    [{ clusterCIDR: '10.0.0.0/8', nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv4: 24 }, '--node-cidr-mask-size: not allowed together with --node-cidr-mask-size-ipv4'],
    [{ clusterCIDR: '10.0.0.0/16', nodeCIDRMaskSize: 8 }, '--node-cidr-mask-size: 8 must be between the cluster CIDR prefix /16 of 10.0.0.0/16 and 32'],
    [{ clusterCIDR: '10.0.0.0/16', nodeCIDRMaskSizeIPv4: 33 }, '--node-cidr-mask-size-ipv4: 33 must be between'],
    [{ clusterCIDR: 'fd00::/16' }, '--node-cidr-mask-size: /64 is more than 16 bits longer than the cluster CIDR fd00::/16'],
    [{ clusterCIDR: '10.0.0.0/8,fd00::/32' }, '--node-cidr-mask-size-ipv6: /64 is more than 16 bits longer than the cluster CIDR fd00::/32'],
    [{ clusterCIDR: '10.0.0.0/8', nodeCIDRMaskSize: -1 }, '--node-cidr-mask-size: must be a non-negative integer, got -1'],
    // kube-controller-manager: a family's mask flag on a single-stack cluster of the other family is an error.
    [{ clusterCIDR: 'fd00::/48', nodeCIDRMaskSizeIPv4: 24 }, '--node-cidr-mask-size-ipv4: 24 cannot apply to a single-stack IPv6 cluster (--cluster-cidr fd00::/48 has no IPv4 range)'],
    [{ clusterCIDR: '10.0.0.0/8', nodeCIDRMaskSizeIPv6: 64 }, '--node-cidr-mask-size-ipv6: 64 cannot apply to a single-stack IPv4 cluster (--cluster-cidr 10.0.0.0/8 has no IPv6 range)'],
    [{ clusterCIDR: '10.0.0.0/8', nodeCIDRMaskSizeIPv4: 24, nodeCIDRMaskSizeIPv6: 64 }, '--node-cidr-mask-size-ipv6: 64 cannot apply to a single-stack IPv4 cluster'],
    [{ clusterCIDR: 'fd00::/48', nodeCIDRMaskSizeIPv4: 24, nodeCIDRMaskSizeIPv6: 64 }, '--node-cidr-mask-size-ipv4: 24 cannot apply to a single-stack IPv6 cluster'],
  ])('rejects %j', (input, msg) => {
    expect(() => parseFlagsPool(input)).toThrow(FlagsError);
    expect(() => parseFlagsPool(input)).toThrow(msg);
  });

  it('createdFromFlagsName hashes the canonical CIDRs and masks, IPv4 first', () => {
    const a = parseFlagsPool({ clusterCIDR: '10.0.0.0/8,fd00::/112', nodeCIDRMaskSizeIPv4: 24, nodeCIDRMaskSizeIPv6: 120 });
    const b = parseFlagsPool({ clusterCIDR: 'fd00::1/112,10.1.2.3/8', nodeCIDRMaskSizeIPv4: 24, nodeCIDRMaskSizeIPv6: 120 });
    expect(flagsPoolCanonical(a)).toBe('10.0.0.0/8:24,fd00::/112:120');
    // sha256("10.0.0.0/8:24,fd00::/112:120") starts with these 10 hex digits.
    expect(createdFromFlagsName(a)).toBe('created-from-flags-b87c7451df');
    expect(createdFromFlagsName(b)).toBe(createdFromFlagsName(a));
    expect(createdFromFlagsName(parseFlagsPool({ clusterCIDR: '10.0.0.0/8', nodeCIDRMaskSize: 25 }))).not.toBe(createdFromFlagsName(parseFlagsPool({ clusterCIDR: '10.0.0.0/8' })));
    expect(flagsPoolMirrorable(a)).toBe(true);
    expect(flagsPoolMirrorable(parseFlagsPool({ clusterCIDR: '10.0.0.0/8,fd00::/48' }))).toBe(false);
    expect(flagsPoolMirrorable(parseFlagsPool({ clusterCIDR: 'fd00::/48' }))).toBe(true);
  });
});
