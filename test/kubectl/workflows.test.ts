// Everyday kubectl workflows against the API server double with the real controller manager
// running (the built binary, as a child process) behind it: kubectl is the client, the double
// must answer it as kube-apiserver does, and the controller's effects are read back with kubectl.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { startDoubleTarget, type DoubleTarget, type StaticNodeEntry } from '../kit/double.js';
import type { CliProcess } from '../kit/processes.js';
import { describeKubectl, kubectl, kubectlWithController } from './kubectl.js';

const TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';
const ANNOTATION = 'alpha.kubernetes.io/provided-node-ip';
const I = (address: string): { type: 'InternalIP'; address: string } => ({ type: 'InternalIP', address });

/** The cloud's instances, one per workflow, so the tests do not depend on each other. */
const CLOUD: Record<string, StaticNodeEntry> = {
  'kc-apply': { addresses: [I('10.1.0.1'), I('10.1.0.2'), I('fd00:1::1')], zone: 'zone-a', region: 'region-1', instanceType: 'sim.large' },
  'kc-annotate': { addresses: [I('10.2.0.1'), I('10.2.0.2')] },
  'kc-label': { addresses: [I('10.3.0.1')], zone: 'zone-a', region: 'region-1' },
  'kc-taint': { addresses: [I('10.4.0.1')] },
  'kc-status': { addresses: [I('10.5.0.1'), I('10.5.0.2')] },
  'kc-pool': { addresses: [I('10.6.0.1'), I('fd00:6::1')] },
  'kc-wide': { addresses: [I('10.7.0.1'), { type: 'ExternalIP', address: '203.0.113.7' }] },
  'kc-ssa': { addresses: [I('10.8.0.1')] },
  'kc-delete': { addresses: [I('10.9.0.1')] },
};

function nodeYaml(name: string, extra: { labels?: Record<string, string>; annotations?: Record<string, string>; spec?: Record<string, unknown> } = {}): string {
  return toYaml({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...extra.labels }, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: { taints: [{ key: TAINT, value: 'true', effect: 'NoSchedule' }], ...extra.spec },
  });
}

describeKubectl('kubectl against the double and the running controller manager', () => {
  let target: DoubleTarget;
  let ccm: CliProcess;
  let dir: string;
  let kc: string;
  /** kubectl as the admin; failures show the controller's last output too. */
  const k = kubectlWithController(() => kc, () => ccm.tail(30));
  const file = (name: string, text: string): string => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const jsonpath = (name: string, expr: string): Promise<string> => k('get', 'node', name, '-o', `jsonpath=${expr}`);
  /** Applies a tainted node and waits until the controller has initialised it. */
  const applyAndWait = async (name: string, extra?: Parameters<typeof nodeYaml>[1]): Promise<void> => {
    await k('apply', '-f', file(`${name}.yaml`, nodeYaml(name, extra)));
    await k('wait', `node/${name}`, `--for=jsonpath={.spec.providerID}=static://${name}`, '--timeout=20s');
  };

  beforeAll(async () => {
    target = await startDoubleTarget();
    // The target's folder (removed with it) holds the admin kubeconfig and the applied YAML.
    dir = target.dir;
    kc = target.kubeconfigPath;
    target.writeCloudConfig(Object.fromEntries(Object.entries(CLOUD).map(([n, e]) => [n, { providerID: `static://${n}`, ...e }])));
    ccm = target.startRun(['--cidr-allocator-type=MultiCIDRRangeAllocator']);
  });
  afterAll(async () => {
    await target?.close();
  });

  it('apply (with client validation from the OpenAPI documents): the node is initialised; get -o json shows what the controller wrote', async () => {
    await applyAndWait('kc-apply');
    const node = JSON.parse(await k('get', 'node', 'kc-apply', '-o', 'json')) as {
      spec: { taints?: { key: string }[]; podCIDRs?: string[] };
      metadata: { labels: Record<string, string> };
      status: { addresses: { type: string; address: string }[] };
    };
    expect(node.spec.taints ?? []).toEqual([]);
    expect(node.status.addresses.filter((a) => a.type === 'InternalIP').map((a) => a.address)).toEqual(['10.1.0.1', '10.1.0.2', 'fd00:1::1']);
    expect(node.metadata.labels).toMatchObject({ 'topology.kubernetes.io/zone': 'zone-a', 'topology.kubernetes.io/region': 'region-1', 'node.kubernetes.io/instance-type': 'sim.large' });
    expect(node.spec.podCIDRs).toHaveLength(2);
    // Applying the same file again changes nothing the controller wrote.
    expect(await k('apply', '-f', path.join(dir, 'kc-apply.yaml'))).toMatch(/node\/kc-apply (unchanged|configured)/);
  });

  it('annotate with another of the cloud IPs: the addresses follow at the next refresh', async () => {
    await applyAndWait('kc-annotate', { annotations: { [ANNOTATION]: '10.2.0.1' } });
    expect(await jsonpath('kc-annotate', '{.status.addresses[?(@.type=="InternalIP")].address}')).toBe('10.2.0.1');
    expect(await k('annotate', 'node', 'kc-annotate', '--overwrite', `${ANNOTATION}=10.2.0.2`)).toMatch(/node\/kc-annotate annotated/);
    await k('wait', 'node/kc-annotate', '--for=jsonpath={.status.addresses[0].address}=10.2.0.2', '--timeout=20s');
    expect(await jsonpath('kc-annotate', '{.status.addresses[?(@.type=="InternalIP")].address}')).toBe('10.2.0.2');
  });

  it('label with a beta topology label: the controller copies it to its GA twin', async () => {
    await applyAndWait('kc-label');
    expect(await k('label', 'node', 'kc-label', '--overwrite', 'failure-domain.beta.kubernetes.io/zone=zone-b')).toMatch(/node\/kc-label labeled/);
    await k('wait', 'node/kc-label', '--for=jsonpath={.metadata.labels.topology\\.kubernetes\\.io/zone}=zone-b', '--timeout=20s');
    expect(await k('get', 'nodes', '-l', 'topology.kubernetes.io/zone=zone-b', '-o', 'name')).toBe('node/kc-label\n');
  });

  it('taint an initialised node again: the controller initialises it again and removes the taint; other taints stay', async () => {
    await applyAndWait('kc-taint');
    await k('taint', 'node', 'kc-taint', 'dedicated=infra:NoSchedule');
    await k('taint', 'node', 'kc-taint', `${TAINT}=true:NoSchedule`);
    // kubectl wait refuses (rather than polls) a jsonpath that matches two values, so ask for the
    // last taint only: the re-added one until the controller removes it, then 'dedicated'.
    await k('wait', 'node/kc-taint', '--for=jsonpath={.spec.taints[-1:].key}=dedicated', '--timeout=20s');
    await k('taint', 'node', 'kc-taint', 'dedicated-');
    expect(await jsonpath('kc-taint', '{.spec.taints}')).toBe('');
  });

  it('patch --subresource=status: a wrong address list is put right at the next refresh; a condition set there is waited for', async () => {
    await applyAndWait('kc-status');
    await k('patch', 'node', 'kc-status', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { addresses: [I('192.0.2.9')] } }));
    await k('wait', 'node/kc-status', '--for=jsonpath={.status.addresses[0].address}=10.5.0.1', '--timeout=20s');
    expect(await jsonpath('kc-status', '{.status.addresses[*].address}')).toBe('10.5.0.1 10.5.0.2');
    // What a kubelet reports: Ready, through the status subresource; wait --for=condition sees it.
    const ready = { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() };
    await k('patch', 'node', 'kc-status', '--subresource=status', '--type=strategic', '-p', JSON.stringify({ status: { conditions: [ready] } }));
    expect(await k('wait', 'node/kc-status', '--for=condition=Ready', '--timeout=10s')).toMatch(/condition met/);
    // A spec change through the status subresource is ignored, as kube-apiserver does.
    await k('patch', 'node', 'kc-status', '--subresource=status', '--type=merge', '-p', '{"spec":{"unschedulable":true}}');
    expect(await jsonpath('kc-status', '{.spec.unschedulable}')).toBe('');
  });

  it('ClusterCIDR: a node labelled for it gets its pod CIDRs there; deleting the ClusterCIDR waits for the node (finalizer)', async () => {
    const cc = {
      apiVersion: 'networking.x-k8s.io/v1',
      kind: 'ClusterCIDR',
      metadata: { name: 'kc-blue' },
      spec: { perNodeHostBits: 8, ipv4: '10.200.0.0/16', ipv6: 'fd00:200::/112', nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['blue'] }] }] } },
    };
    await k('apply', '-f', file('kc-blue.yaml', toYaml(cc)));
    await k('wait', 'clustercidr/kc-blue', '--for=jsonpath={.metadata.finalizers[0]}=networking.x-k8s.io/cluster-cidr-finalizer', '--timeout=20s');
    await applyAndWait('kc-pool', { labels: { pool: 'blue' } });
    expect(await jsonpath('kc-pool', '{.spec.podCIDRs[*]}')).toMatch(/^10\.200\.\d+\.0\/24 fd00:200::[0-9a-f]*\/120$/);
    expect(await k('delete', 'clustercidr', 'kc-blue', '--wait=false')).toMatch(/clustercidr.networking.x-k8s.io "kc-blue" deleted/);
    expect(await k('get', 'clustercidr', 'kc-blue', '-o', 'jsonpath={.metadata.deletionTimestamp}')).not.toBe('');
    await k('delete', 'node', 'kc-pool');
    await k('wait', '--for=delete', 'clustercidr/kc-blue', '--timeout=20s');
    expect((await kubectl(kc, ['get', 'clustercidr', 'kc-blue'])).stderr).toMatch(/NotFound.*"kc-blue" not found/);
  });

  it('get -o wide prints kube-apiserver\'s node columns, addresses included (server-side Table)', async () => {
    await applyAndWait('kc-wide');
    const out = await k('get', 'node', 'kc-wide', '-o', 'wide');
    const [header, row] = out.trimEnd().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION', 'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME']);
    expect(row).toMatch(/^kc-wide\s+\S.*\s10\.7\.0\.1\s+203\.0\.113\.7\s/);
  });

  it('get clustercidrs prints the CRD\'s printer columns', async () => {
    await k('apply', '-f', file('kc-cols.yaml', toYaml({ apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name: 'kc-cols' }, spec: { perNodeHostBits: 8, ipv4: '10.201.0.0/16' } })));
    const out = await k('get', 'clustercidr', 'kc-cols');
    const [header, row] = out.trimEnd().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['NAME', 'PERNODEHOSTBITS', 'IPV4', 'IPV6', 'AGE']);
    // An absent IPv6 is an empty cell (kubectl may print it as <none>).
    expect(row).toMatch(/^kc-cols\s+8\s+10\.201\.0\.0\/16\s+(<none>\s+)?\d+s$/);
  });

  it('apply refuses a field the schema lacks, as kubectl reports it for a real server', async () => {
    const bad = file('bad.yaml', nodeYaml('kc-bad', { spec: { podCIDRz: ['10.9.0.0/24'] } }));
    const r = await kubectl(kc, ['apply', '-f', bad]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown field "spec\.podCIDRz"/);
    expect((await kubectl(kc, ['get', 'node', 'kc-bad'])).stderr).toMatch(/NotFound/);
  });

  it('--dry-run=server validates and stores nothing', async () => {
    const f = file('dry.yaml', nodeYaml('kc-dry'));
    expect(await k('create', '--dry-run=server', '-f', f)).toMatch(/node\/kc-dry created \(server dry run\)/);
    expect((await kubectl(kc, ['get', 'node', 'kc-dry'])).stderr).toMatch(/NotFound/);
  });

  it('apply --server-side never overwrites a field another manager owns without --force-conflicts', async () => {
    await applyAndWait('kc-ssa');
    await k('annotate', 'node', 'kc-ssa', 'owner=kubectl-annotate');
    const f = file('ssa.yaml', nodeYaml('kc-ssa', { annotations: { owner: 'server-side-apply' } }));
    const r = await kubectl(kc, ['apply', '--server-side', '-f', f]);
    // Either refused (415: use client-side apply) or a conflict: never applied with wrong semantics.
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/client-side apply|conflict/i);
    expect(await jsonpath('kc-ssa', '{.metadata.annotations.owner}')).toBe('kubectl-annotate');
  });

  it('delete: the initialised node goes (wait --for=delete)', async () => {
    await applyAndWait('kc-delete');
    const cidrs = await jsonpath('kc-delete', '{.spec.podCIDRs[*]}');
    expect(cidrs).not.toBe('');
    expect(await k('delete', 'node', 'kc-delete', '--wait=false')).toMatch(/node "kc-delete" deleted/);
    await k('wait', '--for=delete', 'node/kc-delete', '--timeout=10s');
    expect((await kubectl(kc, ['get', 'node', 'kc-delete'])).stderr).toMatch(/NotFound/);
  });

  it('explain reads the OpenAPI documents: a built-in field and a ClusterCIDR field', async () => {
    const podCIDRs = await k('explain', 'node.spec.podCIDRs');
    expect(podCIDRs).toMatch(/KIND:\s+Node/);
    expect(podCIDRs).toMatch(/FIELD:\s+podCIDRs <\[\]string>/);
    const hostBits = await k('explain', 'clustercidrs.spec.perNodeHostBits');
    expect(hostBits).toMatch(/GROUP:\s+networking\.x-k8s\.io/);
    expect(hostBits).toMatch(/FIELD:\s+perNodeHostBits <integer>/);
  });
});
