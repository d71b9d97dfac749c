import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../kit/cli.js';

const POOLS = `apiVersion: v1
kind: List
items:
- apiVersion: networking.x-k8s.io/v1
  kind: ClusterCIDR
  metadata: {name: default}
  spec: {perNodeHostBits: 8, ipv4: 10.0.0.0/22, ipv6: "fd00::/112"}
- apiVersion: networking.x-k8s.io/v1
  kind: ClusterCIDR
  metadata: {name: gpu}
  spec:
    perNodeHostBits: 6
    ipv4: 10.9.0.0/24
    nodeSelector:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: gpu, operator: Exists}
`;

const NODES = `apiVersion: v1
kind: Node
metadata: {name: old-1}
spec: {podCIDRs: [10.0.0.0/24, "fd00::/120"]}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {gpu: "true"}}
---
apiVersion: v1
kind: Node
metadata: {name: new-1}
---
apiVersion: v1
kind: Node
metadata: {name: stray}
spec: {podCIDRs: [192.168.0.0/24]}
`;

let dir: string;
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'plan-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('node-address-ccm plan', () => {
  it('prints blocks, reasons, failures and pool usage as a table (exit 1 on failures)', async () => {
    const r = await runCli(['plan', '--clustercidrs-file', file('pools.yaml', POOLS), '--nodes-file', file('nodes.yaml', NODES)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^NODE\s+POD CIDRS\s+POOL\s+WHY$/);
    expect(r.stdout).toMatch(/old-1\s+10\.0\.0\.0\/24,fd00::\/120\s+default\s+existing spec.podCIDRs/);
    expect(r.stdout).toMatch(/gpu-1\s+10\.9\.0\.0\/26\s+gpu\s+pool "gpu": selector "gpu" matches 1 requirement\(s\)/);
    expect(r.stdout).toMatch(/new-1\s+10\.0\.1\.0\/24,fd00::100\/120\s+default\s+fallback pool "default"/);
    expect(r.stdout).toMatch(/stray\s+node "stray": pod CIDR 192\.168\.0\.0\/24 lies outside every pool/);
    expect(r.stdout).toMatch(/POOL\s+CIDR\s+PER NODE\s+NODES\s+USED\s+FREE\s+EXCLUDED\s+TOTAL/);
    expect(r.stdout).toMatch(/default\s+10\.0\.0\.0\/22\s+\/24\s+2\s+2\s+2\s+0\s+4/);
    expect(r.stdout).toMatch(/default\s+fd00::\/112\s+\/120\s+2\s+2\s+254\s+0\s+256/);
  });

  /** The pool rows of a table: [pool, cidr, used, free, excluded, total]. */
  function poolRows(table: string): [string, string, number, number, number, number][] {
    const lines = table.split('\n');
    const head = lines.findIndex((l) => l.startsWith('POOL '));
    return lines
      .slice(head + 1)
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const f = l.trim().split(/\s+/);
        const n = f.slice(-4).map(Number);
        return [f[0], f[1], n[0], n[1], n[2], n[3]];
      });
  }

  it.each([
    ['no Service range', []],
    ['a Service range over part of each pool', ['--service-cluster-ip-range', '10.0.2.0/25,fd00::80/121']],
    ['a Service range with a node block inside it', ['--service-cluster-ip-range', '10.0.0.0/23']],
  ])('USED + FREE + EXCLUDED = TOTAL on every pool row (%s)', async (_name, extra) => {
    const r = await runCli(['plan', '--clustercidrs-file', file('pools-x.yaml', POOLS), '--nodes-file', file('nodes-x.yaml', NODES), ...extra]);
    expect(r.stderr).toBe('');
    const rows = poolRows(r.stdout);
    expect(rows.length).toBe(3);
    for (const [pool, cidr, used, free, excluded, total] of rows) expect({ pool, cidr, sum: used + free + excluded }).toEqual({ pool, cidr, sum: total });
    if (extra.length > 0) expect(rows.some((row) => row[4] > 0)).toBe(true);
  });

  it('restores as the controller does: oldest node first (then name) wins a shared block; spec.podCIDR when spec.podCIDRs is empty', async () => {
    const nodes = [
      { kind: 'Node', metadata: { name: 'young', creationTimestamp: '2026-03-01T00:00:00Z' }, spec: { podCIDRs: ['10.0.0.0/24', 'fd00::/120'] } },
      { kind: 'Node', metadata: { name: 'old', creationTimestamp: '2025-01-01T00:00:00Z' }, spec: { podCIDRs: ['10.0.0.0/24', 'fd00::/120'] } },
      // Same timestamp as young: the name decides ("b-twin" before "young").
      { kind: 'Node', metadata: { name: 'b-twin', creationTimestamp: '2026-03-01T00:00:00Z' }, spec: { podCIDRs: ['10.0.1.0/24', 'fd00::100/120'] } },
      { kind: 'Node', metadata: { name: 'z-twin', creationTimestamp: '2026-03-01T00:00:00Z' }, spec: { podCIDRs: ['10.0.1.0/24', 'fd00::100/120'] } },
      { kind: 'Node', metadata: { name: 'legacy', creationTimestamp: '2024-01-01T00:00:00Z' }, spec: { podCIDRs: [], podCIDR: '10.9.0.0/26' } },
    ];
    const r = await runCli(['plan', '--clustercidrs-file', file('p-order.yaml', POOLS), '--nodes-file', '-', '-o', 'json'], {
      stdin: JSON.stringify({ apiVersion: 'v1', kind: 'NodeList', items: nodes }),
    });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { allocations: Record<string, string[]>; failures: Record<string, string> };
    expect(out.allocations.old).toEqual(['10.0.0.0/24', 'fd00::/120']);
    expect(out.allocations['b-twin']).toEqual(['10.0.1.0/24', 'fd00::100/120']);
    expect(out.allocations.legacy).toEqual(['10.9.0.0/26']);
    expect(Object.keys(out.failures).sort()).toEqual(['young', 'z-twin']);
    expect(out.failures.young).toContain('old');
    expect(out.failures['z-twin']).toContain('b-twin');
  });

  it('json output, Service CIDR exclusion, and the flags pool', async () => {
    const nodes = file('n2.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n');
    const r = await runCli(['plan', '--nodes-file', nodes, '--cluster-cidr', 'fd00:10::/56,10.96.0.0/11', '--node-cidr-mask-size-ipv4', '12', '--node-cidr-mask-size-ipv6', '64', '--service-cluster-ip-range', '10.96.0.0/12', '-o', 'json']);
    expect(r.stderr).toBe('');
    // Node b fails: the only free IPv4 block is inside the Service CIDR, and dual-stack is both or neither.
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { allocations: Record<string, string[]>; failures: Record<string, string>; pools: { name: string; total: string; free: string }[] };
    // IPv6-primary flag order; the Service CIDR half of the IPv4 range is skipped.
    expect(out.allocations).toEqual({ a: ['fd00:10::/64', '10.112.0.0/12'] });
    expect(out.failures.b).toContain('range 10.96.0.0/11 is full: no free /12 block');
    expect(out.pools).toHaveLength(1);
    expect(out.pools[0].name).toMatch(/^created-from-flags-[0-9a-f]{10}$/);
    expect(out.pools[0]).toMatchObject({ total: '2', free: '0' });
  });

  it('reads nodes from stdin', async () => {
    const r = await runCli(['plan', '--clustercidrs-file', file('p3.yaml', POOLS), '--nodes-file', '-', '-o', 'json'], {
      stdin: JSON.stringify({ apiVersion: 'v1', kind: 'NodeList', items: [{ kind: 'Node', metadata: { name: 'x' } }] }),
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).allocations).toEqual({ x: ['10.0.0.0/24', 'fd00::/120'] });
  });

  it.each([
    ['malformed CIDR', 'spec: {perNodeHostBits: 8, ipv4: 10.0.0/22}', 'ClusterCIDR "bad": spec.ipv4: invalid CIDR "10.0.0/22": not an IPv4 address'],
    ['host bits too large', 'spec: {perNodeHostBits: 12, ipv4: 10.0.0.0/22}', 'ClusterCIDR "bad": spec.perNodeHostBits: 12 is larger than the 10 host bits of spec.ipv4 "10.0.0.0/22"'],
    [
      'unknown operator',
      'spec: {perNodeHostBits: 8, ipv4: 10.0.0.0/22, nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Near}]}]}}',
      'ClusterCIDR "bad": spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: unknown operator "Near"',
    ],
    ['perNodeHostBits below the CRD minimum', 'spec: {perNodeHostBits: 3, ipv4: 10.0.0.0/22}', 'ClusterCIDR "bad": spec.perNodeHostBits: 3 is below 4, the smallest the ClusterCIDR CRD accepts'],
  ])('bad input (%s) names the object and field, exit 2', async (_n, spec, msg) => {
    const pools = file('bad.yaml', `apiVersion: networking.x-k8s.io/v1\nkind: ClusterCIDR\nmetadata: {name: bad}\n${spec}\n`);
    const r = await runCli(['plan', '--clustercidrs-file', pools, '--nodes-file', file('n.yaml', NODES)]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(msg);
  });

  it.each([
    [['--cluster-cidr', '10.0.0.0/8,11.0.0.0/8'], '--cluster-cidr: a dual-stack pair needs one IPv4 and one IPv6 CIDR'],
    [['--cluster-cidr', 'fd00::/32'], '--node-cidr-mask-size: /64 is more than 16 bits longer than the cluster CIDR fd00::/32'],
    [['--cluster-cidr', '10.0.0.0/8', '--service-cluster-ip-range', '10.96.0/12'], '--service-cluster-ip-range: invalid CIDR "10.96.0/12"'],
    [['--cluster-cidr', '10.0.0.0/8', '-o', 'yaml'], '--output "yaml": expected table or json'],
    [['--cluster-cidr', 'fd00::/48', '--node-cidr-mask-size-ipv4', '24'], '--node-cidr-mask-size-ipv4: 24 cannot apply to a single-stack IPv6 cluster'],
    [[], 'no pools: give --clustercidrs-file, --cluster-cidr, or both'],
    [['--clustercidrs-file', '/nonexistent/pools.yaml'], '--clustercidrs-file /nonexistent/pools.yaml: cannot read: no such file'],
  ])('usage error %j', async (args, msg) => {
    const r = await runCli(['plan', '--nodes-file', file('n.yaml', NODES), ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(msg);
  });

  it('a Node in the pools file is refused', async () => {
    const r = await runCli(['plan', '--clustercidrs-file', file('wrong.yaml', NODES), '--nodes-file', file('n.yaml', NODES)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('document 1: expected a ClusterCIDR, got "Node"');
  });
});
