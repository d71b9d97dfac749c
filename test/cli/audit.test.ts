// `audit` through the built binary against the API server double: what it reports, its exit
// status (0 without conflicts, 1 with, 2 bad flags, 3 cluster unreadable) and its JSON output.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../kit/cli.js';
import { startApiServerDouble, type ApiServerDouble } from '../../src/double/server.js';
import { POD_CIDR_POOL_ANNOTATION } from '../../src/model/node.js';
import { createNode } from '../kit/double.js';
import { ip } from '../kit/nodes.js';

let api: ApiServerDouble;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  api = await startApiServerDouble();
  dir = await mkdtemp(path.join(tmpdir(), 'audit-cli-'));
  kubeconfig = path.join(dir, 'kubeconfig');
  await writeFile(kubeconfig, api.kubeconfig, { mode: 0o600 });
  api.store.create('clustercidrs.networking.x-k8s.io', { apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name: 'pool' }, spec: { perNodeHostBits: 8, ipv4: '10.244.0.0/16' } });
  api.store.create('clustercidrs.networking.x-k8s.io', { apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name: 'big' }, spec: { perNodeHostBits: 9, ipv4: '10.244.0.0/16' } });
  api.store.create('servicecidrs.networking.k8s.io', { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'kubernetes' }, spec: { cidrs: ['10.96.0.0/16'] } });
  createNode(api, { name: 'a', tainted: false, podCIDRs: ['10.244.0.0/24'], annotations: { [POD_CIDR_POOL_ANNOTATION]: 'pool' }, addresses: [ip('192.168.0.1')] });
  createNode(api, { name: 'b', tainted: false, podCIDRs: ['10.244.1.0/24'], addresses: [ip('192.168.0.2')] });
}, 30_000);
afterAll(async () => {
  await api.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('node-address-ccm audit', () => {
  it('no conflict: exit 0, warnings and information listed with the objects, and what it can see', async () => {
    const r = await runCli(['audit', '--kubeconfig', kubeconfig]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('sources: 2 ClusterCIDR(s) (networking.x-k8s.io/v1); 1 ServiceCIDR(s) (networking.k8s.io/v1)');
    expect(r.stdout).toContain('findings: 0 conflict(s), 1 warning(s), 1 info');
    expect(r.stdout).toMatch(/^WARNING +PodCIDRNotAllocated: Node b \(10\.244\.1\.0\/24\): pod CIDRs without the ipam\.node-address-ccm\.io\/pool annotation/m);
    expect(r.stdout).toMatch(/^INFO +PoolOverlap: pools overlap \(allowed: each block goes to one node\): ClusterCIDR big \(10\.244\.0\.0\/16\) and ClusterCIDR pool/m);
    expect(r.stdout).toContain('note: Sees spec.podCIDRs');
  });

  it('a conflict: exit 1; --output json carries the same findings', async () => {
    createNode(api, { name: 'c', tainted: false, podCIDRs: ['10.96.3.0/24'], annotations: { [POD_CIDR_POOL_ANNOTATION]: 'pool' } });
    const r = await runCli(['audit', '--kubeconfig', kubeconfig, '-o', 'json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { counts: Record<string, number>; findings: { kind: string; severity: string; objects: { kind: string; name: string }[] }[]; visibility: string };
    expect(report.counts).toEqual({ conflict: 1, warning: 2, info: 1 });
    const conflict = report.findings.find((f) => f.severity === 'conflict');
    expect(conflict?.kind).toBe('PodCIDRServiceOverlap');
    expect(conflict?.objects.map((o) => `${o.kind}/${o.name}`)).toEqual(['Node/c', 'ServiceCIDR/kubernetes']);
    expect(report.findings.map((f) => f.kind)).toContain('PodCIDROutsidePools');
    expect(report.visibility).toMatch(/CNI with its own IPAM/);
    api.store.delete('nodes', 'c');
  });

  it.each([
    [['audit', '--output', 'yaml'], /--output: "yaml" is not text or json/],
    [['audit', '--cluster-cidr', '10.0.0.0/33'], /--cluster-cidr: invalid CIDR "10\.0\.0\.0\/33"/],
    [['audit', '--kubeconfig', '/nonexistent/kubeconfig'], /^error: --kubeconfig \/nonexistent\/kubeconfig: cannot read: no such file\n$/],
  ])('bad flags exit 2: %j', async (args, message) => {
    const r = await runCli(args);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
  });

  it('an unreachable cluster exits 3 naming the server', async () => {
    const dead = path.join(dir, 'dead.kubeconfig');
    await writeFile(dead, api.kubeconfig.replace(api.url, 'http://127.0.0.1:1'), { mode: 0o600 });
    const r = await runCli(['audit', '--kubeconfig', dead]);
    expect(r.stderr).toMatch(/reading the cluster at http:\/\/127\.0\.0\.1:1/);
    expect(r.code).toBe(3);
  });
});
