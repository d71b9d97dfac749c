// What an operator sees of nodes the controller initialised on kube-apiserver, through kubectl
// (v1.32, the tests' kubectl): `get nodes -o wide` (the addresses it wrote), `describe node`
// (addresses, providerID, pod CIDRs, taints, and its Synced event found by the node's uid), and
// `drain --dry-run=server` (the cordon PATCH and the evictions as server-side dry runs) of a node
// running a ReplicaSet's pod and a DaemonSet's pod. No scheduler or kubelet runs: the pods are
// bound to the node by spec.nodeName, and the namespace's default ServiceAccount, which
// kube-controller-manager would create, is created here.
import { describe, expect, it } from 'vitest';
import type { NodeAddress } from '../../src/model/node-address.js';
import { controlPlaneUnavailable } from '../kit/controlplane.js';
import type { CliProcess } from '../kit/processes.js';
import { itRefusedNothing, useRealServer, type RealServer } from '../kit/realserver.js';
import { eventually } from '../kit/wait.js';
import { E2ECluster, hasTaint, podCIDRsOf, UNINITIALIZED_TAINT_KEY, type WireNode } from '../e2e/support/cluster.js';
import { E2E_POLL_MS } from '../e2e/support/assert.js';
import { runPrefix } from '../e2e/support/target.js';

const skip = controlPlaneUnavailable();

const I = (address: string): NodeAddress => ({ type: 'InternalIP', address });
const E = (address: string): NodeAddress => ({ type: 'ExternalIP', address });

describe.skipIf(skip !== undefined)(skip ?? 'kubectl on nodes the controller initialised, on kube-apiserver', () => {
  const server = useRealServer();
  const prefix = runPrefix();
  const k1 = `${prefix}-k1`;
  const k2 = `${prefix}-k2`;
  let s: RealServer;
  let cluster: E2ECluster;
  let ccm: CliProcess;
  const nodes: Record<string, WireNode> = {};

  it('the controller initialises two nodes', { timeout: 60_000 }, async () => {
    s = server.get();
    s.writeCloudConfig({
      [k1]: { addresses: [I('10.4.0.1'), I('fd00:4::1'), E('203.0.113.7')], instanceType: 'e2e.large', zone: 'zone-b', region: 'region-1' },
      [k2]: { addresses: [I('10.4.0.2')], instanceType: 'e2e.large', zone: 'zone-b', region: 'region-1' },
    });
    cluster = new E2ECluster(s.adminKubeConfig(), prefix, { kubeletKubeConfig: (n) => s.nodeKubeConfig(n) });
    ccm = s.startRun(await s.serviceAccountKubeconfig());
    await cluster.registerFakeNode({ name: k1, cloudProviderExternal: true, nodeIP: '10.4.0.1,fd00:4::1', hostIPs: ['10.4.0.1', 'fd00:4::1', '203.0.113.7'] });
    await cluster.registerFakeNode({ name: k2, cloudProviderExternal: true, hostIPs: ['10.4.0.2'] });
    for (const name of [k1, k2]) {
      nodes[name] = await eventually(async () => {
        const n = await cluster.getNode(name);
        expect(hasTaint(n, UNINITIALIZED_TAINT_KEY)).toBe(false);
        expect(podCIDRsOf(n).length).toBeGreaterThan(0);
        expect((await cluster.nodeEvents(name)).map((e) => e.reason)).toContain('Synced');
        return n;
      }, { timeoutMs: 20_000, intervalMs: E2E_POLL_MS, describe: () => ccm.tail(30) });
    }
  });

  it('get nodes -o wide: the InternalIP and ExternalIP the controller wrote', async () => {
    const out = await s.kubectl('get', 'nodes', k1, k2, '-o', 'wide');
    const [header, ...rows] = out.trim().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION', 'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME']);
    const cells = Object.fromEntries(rows.map((r) => r.split(/\s{2,}/)).map((c) => [c[0], c]));
    expect(cells[k1]?.slice(0, 2)).toEqual([k1, 'Ready']);
    expect(cells[k1]?.slice(5, 7)).toEqual(['10.4.0.1', '203.0.113.7']);
    expect(cells[k2]?.slice(5, 7)).toEqual(['10.4.0.2', '<none>']);
  });

  it('describe node: addresses, providerID, pod CIDRs, taints and the Synced event', async () => {
    const out = await s.kubectl('describe', 'node', k1);
    const node = nodes[k1]!;
    expect(out).toMatch(new RegExp(`Addresses:\\n\\s+InternalIP:\\s+10\\.4\\.0\\.1\\n\\s+InternalIP:\\s+fd00:4::1\\n\\s+ExternalIP:\\s+203\\.0\\.113\\.7\\n\\s+Hostname:\\s+${k1}\\n`));
    expect(out).toMatch(new RegExp(`ProviderID:\\s+static://${k1}\\n`));
    expect(out).toMatch(new RegExp(`PodCIDRs:\\s+${podCIDRsOf(node).join(',').replace(/\./g, '\\.')}\\n`));
    expect(out).toMatch(/topology\.kubernetes\.io\/zone=zone-b/);
    expect(out).toMatch(/node\.kubernetes\.io\/instance-type=e2e\.large/);
    // The uninitialized taint is gone; the fake-node taint and the not-ready one (admission adds it) stay.
    expect(out).not.toContain(UNINITIALIZED_TAINT_KEY);
    expect(out).toMatch(/Taints:\s+e2e\.node-address-ccm\.io\/fake-node=\S+:NoSchedule/);
    // describe finds a node's events by its uid (involvedObject.uid), in every namespace.
    expect(out).toMatch(/Events:\n(.*\n)*\s+Normal\s+Synced\s+\S+\s+node-address-ccm\s+Node synced successfully/);
  });

  it('drain --dry-run=server: cordoned and evicted as dry runs; nothing changes', { timeout: 60_000 }, async () => {
    await s.kubectl('create', 'serviceaccount', 'default', '-n', 'default');
    const labels = { app: `${prefix}-web` };
    const template = { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } };
    const rs = JSON.parse(await s.kubectlResult(['create', '-o', 'json', '-f', '-'], { stdin: JSON.stringify({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: `${prefix}-web`, namespace: 'default' }, spec: { replicas: 1, selector: { matchLabels: labels }, template } }) }).then((r) => r.stdout)) as { metadata: { uid: string; name: string } };
    const dsLabels = { app: `${prefix}-agent` };
    const ds = JSON.parse(await s.kubectlResult(['create', '-o', 'json', '-f', '-'], { stdin: JSON.stringify({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: `${prefix}-agent`, namespace: 'default' }, spec: { selector: { matchLabels: dsLabels }, template: { ...template, metadata: { labels: dsLabels } } } }) }).then((r) => r.stdout)) as { metadata: { uid: string; name: string } };
    const pod = (name: string, owner: { kind: string; metadata: { uid: string; name: string } }, podLabels: Record<string, string>) => JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels: podLabels, ownerReferences: [{ apiVersion: 'apps/v1', kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true }] },
      spec: { nodeName: k1, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
    });
    for (const [name, owner, podLabels] of [[`${prefix}-web-1`, { kind: 'ReplicaSet', ...rs }, labels], [`${prefix}-agent-1`, { kind: 'DaemonSet', ...ds }, dsLabels]] as const) {
      const r = await s.kubectlResult(['create', '-f', '-'], { stdin: pod(name, owner, podLabels) });
      expect(r.code, r.stderr).toBe(0);
    }

    const r = await s.kubectlResult(['drain', k1, '--dry-run=server', '--ignore-daemonsets', '--timeout=30s']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const lines = (text: string): string[] => text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
    expect(lines(r.stdout)).toEqual([
      `node/${k1} cordoned (server dry run)`,
      `evicting pod default/${prefix}-web-1 (server dry run)`,
      `node/${k1} drained (server dry run)`,
    ]);
    expect(lines(r.stderr)).toEqual([`Warning: ignoring DaemonSet-managed Pods: default/${prefix}-agent-1`]);
    // A dry run: the node stays schedulable, both pods stay.
    expect((await cluster.getNode(k1)).spec?.unschedulable).toBeUndefined();
    const pods = JSON.parse(await s.kubectl('get', 'pods', '-n', 'default', '-o', 'json')) as { items: { metadata: { name: string } }[] };
    expect(pods.items.map((p) => p.metadata.name).sort()).toEqual([`${prefix}-agent-1`, `${prefix}-web-1`]);
  });

  it('the controller kept running; its objects are cleaned up', async () => {
    expect(ccm.exitCode()).toBeUndefined();
    await s.stopProcesses();
    expect(await cluster.cleanup()).toEqual([]);
  });

  itRefusedNothing(server);
});
