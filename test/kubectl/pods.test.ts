// The node workflows an operator runs first, against the double with the controller manager
// running: `kubectl describe node` (which lists the node's pods through field selectors),
// `kubectl get pods -A -o wide` and `kubectl drain`, server dry run first. The double runs no pods;
// the tests create them as a scheduler and a kubelet would leave them.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { startDoubleTarget, type DoubleTarget } from '../kit/double.js';
import type { CliProcess } from '../kit/processes.js';
import { describeKubectl, kubectl, kubectlWithController } from './kubectl.js';

const TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';
const NODE = 'kc-describe';

function pod(name: string, namespace: string, phase: string, extra: { ownerKind?: string; podIP?: string } = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      ...(extra.ownerKind ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: extra.ownerKind, name: `${name}-owner`, uid: `uid-${name}`, controller: true }] } : {}),
    },
    spec: { nodeName: NODE, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    ...(phase !== 'Pending' ? { status: { phase, ...(extra.podIP ? { podIP: extra.podIP, podIPs: [{ ip: extra.podIP }] } : {}) } } : {}),
  };
}

describeKubectl('kubectl describe node, get pods and drain against the double', () => {
  let target: DoubleTarget;
  let ccm: CliProcess;
  let kc: string;
  const k = kubectlWithController(() => kc, () => ccm.tail(30));
  const apply = (name: string, objects: unknown[]): Promise<string> => {
    const file = path.join(target.dir, `${name}.yaml`);
    writeFileSync(file, objects.map((o) => toYaml(o)).join('---\n'));
    return k('apply', '-f', file);
  };
  /** Pods are created, then their status written as a kubelet would (status is its own subresource). */
  const runPod = async (name: string, namespace: string, phase: string, extra: Parameters<typeof pod>[3] = {}): Promise<void> => {
    const p = pod(name, namespace, phase, extra);
    await k('create', '-f', writeTemp(`pod-${name}.json`, JSON.stringify({ ...p, status: undefined })));
    if (p.status !== undefined) {
      await k('patch', 'pod', name, '-n', namespace, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: p.status }));
    }
  };
  const writeTemp = (name: string, text: string): string => {
    const file = path.join(target.dir, name);
    writeFileSync(file, text);
    return file;
  };

  beforeAll(async () => {
    target = await startDoubleTarget();
    kc = target.kubeconfigPath;
    target.writeCloudConfig({ [NODE]: { providerID: `static://${NODE}`, addresses: [{ type: 'InternalIP', address: '10.20.0.1' }], zone: 'zone-a', region: 'region-1' } });
    ccm = target.startRun([]);
    await apply('node', [{
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE } },
      spec: { taints: [{ key: TAINT, value: 'true', effect: 'NoSchedule' }] },
    }]);
    await k('wait', `node/${NODE}`, `--for=jsonpath={.spec.providerID}=static://${NODE}`, '--timeout=20s');
    // `kubectl create namespace` sends protobuf, which the double refuses with a 415 naming the way round.
    const generator = await kubectl(kc, ['create', 'namespace', 'team-a']);
    expect(generator.stderr).toMatch(/accepts protobuf bodies only for self-subject reviews; send Namespace as JSON/);
    await apply('namespace', [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }]);
    await runPod('web-1', 'team-a', 'Running', { ownerKind: 'ReplicaSet', podIP: '10.244.1.5' });
    await runPod('done-1', 'team-a', 'Succeeded', { ownerKind: 'ReplicaSet' });
    // No controller: drain needs --force for it (a DaemonSet's pod would need apps/v1, not served).
    await runPod('agent-1', 'default', 'Running', { podIP: '10.20.0.1' });
  });
  afterAll(async () => {
    await target?.close();
  });

  it('describe node shows the addresses, the taints, the non-terminated pods and the events', async () => {
    const out = await k('describe', 'node', NODE);
    expect(out).toMatch(/^Name:\s+kc-describe$/m);
    expect(out).toMatch(/InternalIP:\s+10\.20\.0\.1/);
    expect(out).toMatch(/^Taints:\s+<none>$/m);
    expect(out).toMatch(/ProviderID:\s+static:\/\/kc-describe/);
    // The field selector excludes Succeeded and Failed pods: two of the three are listed.
    expect(out).toMatch(/Non-terminated Pods:\s+\(2 in total\)/);
    expect(out).toMatch(/team-a\s+web-1/);
    expect(out).toMatch(/default\s+agent-1/);
    expect(out).not.toMatch(/done-1/);
    expect(out).toMatch(/Events:/);
  });

  it('get pods -A -o wide lists every namespace with the node and pod IP columns', async () => {
    const out = await k('get', 'pods', '-A', '-o', 'wide');
    const [header, ...rows] = out.trim().split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
    const web = rows.find((r) => r.includes('web-1'));
    expect(web?.split(/\s+/)).toEqual(expect.arrayContaining(['team-a', 'web-1', 'Running', '10.244.1.5', NODE]));
    expect(rows.map((r) => r.split(/\s+/)[1]).sort()).toEqual(['agent-1', 'done-1', 'web-1']);
    // The short name and a field selector kube-apiserver supports for pods.
    expect((await k('get', 'po', '-A', '--field-selector', 'status.phase=Succeeded', '-o', 'name')).trim()).toBe('pod/done-1');
  });

  it('a field selector pods do not support is refused as kube-apiserver refuses it', async () => {
    const r = await kubectl(kc, ['get', 'pods', '-A', '--field-selector', 'spec.containers=app']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/field label not supported: spec\.containers/);
  });

  it('drain --dry-run=server evicts nothing and cordons nothing; drain then evicts every pod', async () => {
    const dry = await k('drain', NODE, '--dry-run=server', '--force', '--timeout=20s');
    expect(dry).toMatch(/evicting pod team-a\/web-1 \(server dry run\)/);
    expect(dry).toMatch(/evicting pod default\/agent-1 \(server dry run\)/);
    expect(await k('get', 'node', NODE, '-o', 'jsonpath={.spec.unschedulable}')).toBe('');
    expect((await k('get', 'pods', '-A', '-o', 'name')).trim().split('\n').sort()).toEqual(['pod/agent-1', 'pod/done-1', 'pod/web-1']);

    const real = await k('drain', NODE, '--force', '--timeout=20s');
    expect(real).toMatch(/pod\/agent-1 evicted/);
    expect(real).toMatch(/pod\/web-1 evicted/);
    expect(real).toMatch(/node\/kc-describe drained/);
    expect(await k('get', 'node', NODE, '-o', 'jsonpath={.spec.unschedulable}')).toBe('true');
    expect((await k('get', 'pods', '-A', '-o', 'name')).trim()).toBe('');
  });
});
