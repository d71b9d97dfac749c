// `kubectl auth can-i` against the double enforcing the RBAC the project ships
// (deploy/base/rbac.yaml): the answers come from SelfSubjectAccessReview and
// SelfSubjectRulesReview, so they must agree with what the double then allows or forbids.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseRbacYaml } from '../../src/double/rbac.js';
import { repoRoot } from '../kit/cli.js';
import { startDoubleTarget, type DoubleTarget } from '../kit/double.js';
import { describeKubectl, kubectl } from './kubectl.js';

const SA = 'system:serviceaccount:kube-system:node-address-ccm';

describeKubectl('kubectl auth can-i (deploy/base/rbac.yaml enforced by the double)', () => {
  let target: DoubleTarget;
  let admin: string;
  let sa: string;

  beforeAll(async () => {
    const rbacFile = path.join(repoRoot, 'deploy/base/rbac.yaml');
    // HTTPS: kubectl sends no bearer token over plain HTTP, so every request would be anonymous.
    target = await startDoubleTarget({
      tls: true,
      rbac: parseRbacYaml(readFileSync(rbacFile, 'utf8'), rbacFile),
      users: [{ name: SA, token: randomBytes(16).toString('hex'), groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system'] }],
    });
    admin = target.kubeconfigPath;
    sa = target.writeKubeconfigFor(SA);
  });
  afterAll(async () => {
    await target?.close();
  });

  /** `yes` (exit 0) or `no` (exit 1), as kubectl prints and returns them. */
  const canI = async (kubeconfig: string, ...args: string[]): Promise<string> => {
    const r = await kubectl(kubeconfig, ['auth', 'can-i', ...args]);
    if (r.code > 1 || (r.code === 1 && r.stdout.trim() !== 'no')) throw new Error(`kubectl auth can-i ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
    expect(r.code).toBe(r.stdout.trim() === 'yes' ? 0 : 1);
    return r.stdout.trim();
  };

  it('the admin (system:masters) may do anything', async () => {
    expect(await canI(admin, 'patch', 'nodes')).toBe('yes');
    expect(await canI(admin, 'delete', 'clustercidrs.networking.x-k8s.io')).toBe('yes');
  });

  it('the ServiceAccount may do exactly what the controllers do', async () => {
    expect(await canI(sa, 'patch', 'nodes')).toBe('yes');
    expect(await canI(sa, 'patch', 'nodes', '--subresource=status')).toBe('yes');
    expect(await canI(sa, 'watch', 'nodes')).toBe('yes');
    expect(await canI(sa, 'create', 'events', '-n', 'default')).toBe('yes');
    expect(await canI(sa, 'patch', 'clustercidrs.networking.x-k8s.io')).toBe('yes');
    expect(await canI(sa, 'update', 'leases/node-address-ccm', '-n', 'kube-system')).toBe('yes');
    // No update of nodes, no deletes of nodes, leases only by name and only in kube-system.
    expect(await canI(sa, 'update', 'nodes')).toBe('no');
    expect(await canI(sa, 'delete', 'nodes')).toBe('no');
    expect(await canI(sa, 'update', 'leases/other', '-n', 'kube-system')).toBe('no');
    expect(await canI(sa, 'create', 'leases', '-n', 'default')).toBe('no');
  });

  it('the answers agree with what the double then enforces', async () => {
    const forbidden = await kubectl(sa, ['delete', 'node', 'any-node']);
    expect(forbidden.code).not.toBe(0);
    expect(forbidden.stderr).toMatch(/Forbidden.*cannot delete resource "nodes"/);
    const allowed = await kubectl(sa, ['get', 'nodes', '-o', 'name']);
    expect(allowed.code, allowed.stderr).toBe(0);
  });

  it('--list shows the ServiceAccount\'s rules (SelfSubjectRulesReview)', async () => {
    const r = await kubectl(sa, ['auth', 'can-i', '--list', '-n', 'kube-system']);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout.split('\n').map((l) => l.trim().split(/\s{2,}/));
    const verbs = (resource: string, names = '[]'): string | undefined => rows.find((c) => c[0] === resource && c[2] === names)?.[3];
    expect(verbs('nodes')).toBe('[get list watch patch]');
    expect(verbs('nodes/status')).toBe('[patch]');
    expect(verbs('leases.coordination.k8s.io', '[node-address-ccm]')).toBe('[get update]');
  });
});
