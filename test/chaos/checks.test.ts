// The chaos run's checks (bench/chaos/checks.ts) on hand-written states: each catches what it is for.
import { describe, expect, it } from 'vitest';
import { expectedAddresses, hostIPs, nodeProblems, poolNode, slowExits, unfencedWrites, NODE_IP_ANNOTATION, UNINITIALIZED, type StoredNode, type WriteRecord } from '../../bench/chaos/checks.js';

const p = poolNode(3);
const pool = new Map([[p.name, p], [poolNode(4).name, poolNode(4)]]);
const ranges = { clusterCIDRs: ['10.200.0.0/16'], maskSize: 24, serviceCIDRs: ['10.200.0.0/20'] };
const I = (address: string) => ({ type: 'InternalIP', address });
const E = (address: string) => ({ type: 'ExternalIP', address });
const H = (address: string) => ({ type: 'Hostname', address });

function node(name: string, o: { annotation?: string; tainted?: boolean; cidrs?: string[]; addresses?: { type: string; address: string }[] } = {}): StoredNode {
  return {
    metadata: { name, annotations: o.annotation ? { [NODE_IP_ANNOTATION]: o.annotation } : {} },
    spec: { podCIDRs: o.cidrs, taints: o.tainted ? [{ key: UNINITIALIZED }] : [] },
    status: { addresses: o.addresses },
  };
}

describe('expected addresses (KEP-3705, written out)', () => {
  // The cloud lists fd00:1::4 (IPv6) first, then 10.1.3.1, then the ExternalIP.
  it.each([
    [undefined, [I('fd00:1::4'), I('10.1.3.1'), E('198.51.100.3'), H('chaos-003')]],
    ['10.1.3.1', [I('10.1.3.1'), E('198.51.100.3'), H('chaos-003')]],
    ['fd00:1::4', [I('fd00:1::4'), E('198.51.100.3'), H('chaos-003')]],
    ['10.1.3.1,fd00:1::4', [I('10.1.3.1'), I('fd00:1::4'), E('198.51.100.3'), H('chaos-003')]],
    ['fd00:1::4,10.1.3.1', [I('fd00:1::4'), I('10.1.3.1'), E('198.51.100.3'), H('chaos-003')]],
    ['10.9.3.9', undefined],
    ['10.1.3.1,10.9.3.9', undefined],
  ])('annotation %s', (annotation, want) => {
    expect(expectedAddresses(p, annotation)).toEqual(want);
  });
});

describe('host IPs (GetNodeHostIPs, written out)', () => {
  it.each([
    [[I('fd00:1::4'), I('10.1.3.1'), E('198.51.100.3'), H('chaos-003')], ['fd00:1::4', '10.1.3.1']],
    [[I('10.1.3.1'), I('fd00:1::4')], ['10.1.3.1', 'fd00:1::4']],
    [[H('x'), E('198.51.100.3'), I('10.1.3.1')], ['10.1.3.1']],
    [[E('fd00::9'), I('10.1.3.1')], ['10.1.3.1', 'fd00::9']],
    [[H('x')], []],
  ])('%j', (addresses, want) => {
    expect(hostIPs(addresses)).toEqual(want);
  });
});

describe('nodeProblems', () => {
  const good = node('chaos-003', { annotation: '10.1.3.1', cidrs: ['10.200.16.0/24'], addresses: [I('10.1.3.1'), E('198.51.100.3'), H('chaos-003')] });
  it.each<[string, StoredNode[], RegExp[]]>([
    ['a converged pair', [good, node('chaos-004', { annotation: '10.9.4.9', tainted: true })], []],
    ['an unsatisfiable node untainted', [node('chaos-004', { annotation: '10.9.4.9', cidrs: ['10.200.17.0/24'] })], [/chaos-004: untainted although its annotation 10\.9\.4\.9/]],
    ['a satisfiable node still tainted', [node('chaos-003', { tainted: true })], [/chaos-003: still tainted \(annotation none\)/]],
    ['wrong addresses', [{ ...good, status: { addresses: [I('10.1.3.1')] } }], [/chaos-003: addresses .*want/]],
    // Issue 36: a changed annotation that only reorders must still move the primary IP.
    ['the old order after a dual-stack annotation changed', [node('chaos-003', { annotation: '10.1.3.1,fd00:1::4', cidrs: ['10.200.16.0/24'], addresses: [I('fd00:1::4'), I('10.1.3.1'), E('198.51.100.3'), H('chaos-003')] })], [/host IPs fd00:1::4,10\.1\.3\.1\), want .*host IPs 10\.1\.3\.1,fd00:1::4/]],
    ['a reordering that keeps the host IPs', [node('chaos-003', { annotation: '10.1.3.1,fd00:1::4', cidrs: ['10.200.16.0/24'], addresses: [H('chaos-003'), I('10.1.3.1'), E('198.51.100.3'), I('fd00:1::4')] })], []],
    ['no pod CIDR', [{ ...good, spec: { taints: [] } }], [/initialised with pod CIDRs \[\], want one/]],
    ['overlap', [good, node('chaos-004', { annotation: '10.9.4.9', tainted: true, cidrs: ['10.200.16.0/23'] })], [/is not a \/24/, /overlaps chaos-003's 10\.200\.16\.0\/24/]],
    ['in the Service range', [{ ...good, spec: { podCIDRs: ['10.200.3.0/24'], taints: [] } }], [/overlaps the Service range 10\.200\.0\.0\/20/]],
    ['outside the pools', [{ ...good, spec: { podCIDRs: ['10.201.0.0/24'], taints: [] } }], [/outside the pools/]],
    ['a stranger', [node('other')], [/other: not a node of the chaos pool/]],
  ])('%s', (_, nodes, want) => {
    const got = nodeProblems(nodes, pool, ranges);
    expect(got).toHaveLength(want.length);
    want.forEach((re, i) => expect(got[i]).toMatch(re));
  });
});

describe('unfencedWrites', () => {
  const ids = new Map([['replica-0', new Set(['a1', 'a2'])], ['replica-1', new Set(['b1'])]]);
  const w = (o: Partial<WriteRecord>): WriteRecord => ({ at: 10_000, user: 'replica-0', verb: 'patch', what: 'nodes n', holder: 'a2', renewMs: 8_000, leaseMs: 6_000, ...o });
  it.each<[string, WriteRecord, RegExp | undefined]>([
    ['by the holder, within the lease', w({}), undefined],
    ['by an earlier process of the same replica? no: the identity must be the holder', w({ holder: 'b1' }), /replica-0 patch nodes n while the Lease named "b1"/],
    ['after the lease expired', w({ at: 14_001 }), /1 ms after its Lease expired/],
    ['with no holder', w({ holder: '' }), /while the Lease named ""/],
  ])('%s', (_, rec, want) => {
    const got = unfencedWrites([rec], ids);
    if (want) expect(got).toEqual([expect.stringMatching(want)]);
    else expect(got).toEqual([]);
  });
});

describe('slowExits', () => {
  it.each<[string, Parameters<typeof slowExits>[0][number], RegExp | undefined]>([
    ['never deposed', { slot: 0, pid: 1 }, undefined],
    ['exited 1 in 1.9 s', { slot: 0, pid: 1, stoppedLeadingAt: 1000, stoppedReason: 'lost', exitedAt: 2900, exitCode: 1 }, undefined],
    ['exited 1 in 2.1 s', { slot: 0, pid: 1, stoppedLeadingAt: 1000, stoppedReason: 'lost', exitedAt: 3100, exitCode: 1 }, /exited 2100 ms after it stopped leading/],
    ['exited 0', { slot: 0, pid: 1, stoppedLeadingAt: 1000, stoppedReason: 'lost', exitedAt: 1500, exitCode: 0 }, /exited 0, want 1/],
    ['still running after 5 s', { slot: 2, pid: 9, stoppedLeadingAt: 1000, stoppedReason: 'lost' }, /replica 2 \(pid 9\) stopped leading \(lost\) 5000 ms ago and is still running/],
  ])('%s', (_, life, want) => {
    const got = slowExits([life], 2000, 6000);
    if (want) expect(got).toEqual([expect.stringMatching(want)]);
    else expect(got).toEqual([]);
  });
});
