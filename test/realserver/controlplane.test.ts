// The real control plane itself: upstream's kube-apiserver answers on TLS, refuses an anonymous
// client, serves what the project needs (ServiceCIDR networking.k8s.io/v1, Leases, Nodes), and
// enforces RBAC for a ServiceAccount (the tier's controller authenticates as one).
import { execFileSync, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneUnavailable, startControlPlane, type ControlPlane } from '../kit/controlplane.js';

const skip = controlPlaneUnavailable();

describe.skipIf(skip !== undefined)(skip ?? 'the real control plane', () => {
  let cp: ControlPlane;
  const kubectl = (...args: string[]): string => execFileSync('kubectl', ['--kubeconfig', cp.kubeconfig, ...args], { encoding: 'utf8' });

  beforeAll(async () => {
    cp = await startControlPlane();
  }, 15 * 60_000);
  afterAll(async () => cp?.stop());

  it('is kube-apiserver 1.35, on TLS with client certificates', () => {
    const version = JSON.parse(kubectl('get', '--raw', '/version')) as { major: string; minor: string; gitVersion: string };
    expect(`${version.major}.${version.minor}`).toBe('1.35');
    expect(cp.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('serves ServiceCIDR networking.k8s.io/v1 with the default object for --service-cluster-ip-range', () => {
    const list = JSON.parse(kubectl('get', 'servicecidrs.networking.k8s.io', '-o', 'json')) as { apiVersion: string; items: { metadata: { name: string }; spec: { cidrs: string[] } }[] };
    expect(list.items.map((i) => [i.metadata.name, i.spec.cidrs])).toEqual([['kubernetes', ['10.96.0.0/16', 'fd00:10:96::/112']]]);
  });

  it('authorises by RBAC: a ServiceAccount with no binding may not list nodes', () => {
    kubectl('create', 'serviceaccount', 'nobody', '-n', 'default');
    // can-i exits 1 for "no".
    const denied = spawnSync('kubectl', ['--kubeconfig', cp.kubeconfig, 'auth', 'can-i', 'list', 'nodes', '--as', 'system:serviceaccount:default:nobody'], { encoding: 'utf8' });
    expect([denied.status, denied.stdout.trim()]).toEqual([1, 'no']);
    expect(kubectl('auth', 'can-i', 'list', 'nodes').trim()).toBe('yes');
  });
});
