import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli.js';

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
    expect(r.stdout).toMatch(/default\s+10\.0\.0\.0\/22\s+\/24\s+2\s+2\s+2\s+4/);
    expect(r.stdout).toMatch(/default\s+fd00::\/112\s+\/120\s+2\s+2\s+254\s+256/);
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
    [[], 'no pools: give --clustercidrs-file, --cluster-cidr, or both'],
    [['--clustercidrs-file', '/nonexistent/pools.yaml'], '--clustercidrs-file /nonexistent/pools.yaml: ENOENT'],
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
