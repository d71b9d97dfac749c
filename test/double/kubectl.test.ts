// The double answers the real kubectl (v1.32, /usr/bin/kubectl) as kube-apiserver does for what
// it serves: OpenAPI-driven apply and explain, strict field validation, server-side Tables,
// server dry runs, access reviews, and server-side apply refused. Skipped, saying so, where
// kubectl is not installed (CI has it).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRbacYaml, startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { KUBECTL } from '../kubectl/kubectl.js';
import { eventually } from '../kit/wait.js';

// One lookup for every kubectl suite ($KUBECTL, /usr/bin/kubectl, the PATH); it says why when
// kubectl is absent, and fails in CI.
const HAVE_KUBECTL = KUBECTL !== undefined;
const KUBECTL_BIN = KUBECTL ?? 'kubectl';

const POLICY = parseRbacYaml(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-reader}
rules:
  - {apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"]}
  - {apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: node-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-reader}
subjects: [{kind: User, name: viewer}]
`);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let s: ApiServerDouble;
let dir: string;
let adminKc: string;
let viewerKc: string;

function kubectl(args: string[], options: { input?: string; kubeconfig?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(KUBECTL_BIN, ['--kubeconfig', options.kubeconfig ?? adminKc, '--cache-dir', path.join(dir, 'cache'), ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    child.stdin?.end(options.input ?? '');
  });
}

async function ok(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, { input });
  expect(r.stderr, `kubectl ${args.join(' ')}`).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

/** Rows of kubectl's column output, split on runs of two or more spaces. */
function rows(out: string): string[][] {
  return out.trimEnd().split('\n').map((l) => l.trimEnd().split(/ {2,}/));
}

const NODE = (name: string, extra = ''): string => `apiVersion: v1
kind: Node
metadata:
  name: ${name}
  labels: {node-role.kubernetes.io/worker: ""}
spec:
  podCIDRs: [10.7.0.0/24]
${extra}`;

beforeAll(async () => {
  if (!HAVE_KUBECTL) return;
  // HTTPS: kubectl sends the kubeconfig's bearer token over TLS only.
  s = await startApiServerDouble({ tls: true, rbac: POLICY, users: [{ name: 'viewer', token: 'viewer-token' }] });
  dir = mkdtempSync(path.join(tmpdir(), 'kubectl-double-'));
  adminKc = path.join(dir, 'admin.kubeconfig');
  viewerKc = path.join(dir, 'viewer.kubeconfig');
  writeFileSync(adminKc, s.kubeconfig);
  writeFileSync(viewerKc, s.kubeconfigFor('viewer'));
});

afterAll(async () => {
  await s?.stop();
});

describe.runIf(HAVE_KUBECTL)('kubectl against the API server double', () => {
  it('apply -f creates, then updates by a client-side three-way patch; default validation passes', async () => {
    expect(await ok(['apply', '-f', '-'], NODE('k-apply'))).toBe('node/k-apply created\n');
    expect(await ok(['apply', '-f', '-'], NODE('k-apply'))).toBe('node/k-apply unchanged\n');
    const labelled = NODE('k-apply').replace('labels: {', 'labels: {team: a, ');
    expect(await ok(['apply', '-f', '-'], labelled)).toBe('node/k-apply configured\n');
    const node = s.store.get('nodes', 'k-apply');
    expect(node.metadata?.labels).toEqual({ 'node-role.kubernetes.io/worker': '', team: 'a' });
    expect(node.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toContain('"team":"a"');
    expect(node.spec).toEqual({ podCIDR: '10.7.0.0/24', podCIDRs: ['10.7.0.0/24'] });
  });

  it('refuses fields the schema lacks with kube-apiserver\'s strict decoding error (create and patch), --validate=false drops them', async () => {
    const bad = NODE('k-strict', '  bogus: 1\n  taints: [{key: k, effect: NoSchedule, colour: red}]\n');
    const create = await kubectl(['apply', '-f', '-'], { input: bad });
    expect(create.code).toBe(1);
    expect(create.stderr).toBe('Error from server (BadRequest): error when creating "STDIN": Node in version "v1" cannot be handled as a Node: strict decoding error: unknown field "spec.bogus", unknown field "spec.taints[0].colour"\n');
    expect(s.store.peek('nodes', 'k-strict')).toBeUndefined();
    await ok(['apply', '-f', '-'], NODE('k-strict'));
    const patch = await kubectl(['apply', '-f', '-'], { input: bad });
    expect(patch.code).toBe(1);
    expect(patch.stderr).toContain('strict decoding error: unknown field "spec.bogus", unknown field "spec.taints[0].colour"');
    expect(s.store.get('nodes', 'k-strict').spec).toEqual({ podCIDR: '10.7.0.0/24', podCIDRs: ['10.7.0.0/24'] });
    const loose = await kubectl(['create', '--validate=false', '-f', '-'], { input: NODE('k-loose', '  bogus: 1\n') });
    // fieldValidation=Ignore: stored without the unknown field, and no warning (as kube-apiserver).
    expect([loose.code, loose.stderr]).toEqual([0, '']);
    expect(s.store.get('nodes', 'k-loose').spec).toEqual({ podCIDR: '10.7.0.0/24', podCIDRs: ['10.7.0.0/24'] });
  });

  it('explain reads the OpenAPI v3 schema; explain over v2 decodes the protobuf document', async () => {
    const v3 = await ok(['explain', 'node.spec.podCIDRs']);
    expect(v3).toContain('FIELD: podCIDRs <[]string>');
    expect(v3).toContain('at most one per IP family');
    const v2 = await ok(['explain', 'node.status.addresses', '--output=plaintext-openapiv2']);
    expect(v2).toContain('RESOURCE: addresses <[]Object>');
    expect(v2).toMatch(/address\s+<string> -required-/);
    const cr = await ok(['explain', 'clustercidrs.spec']);
    expect(cr).toMatch(/perNodeHostBits\s+<integer> -required-/);
  });

  it('get prints kube-apiserver\'s node columns, and the wide ones with -o wide', async () => {
    await ok(['apply', '-f', '-'], NODE('k-wide'));
    s.store.update('nodes', { ...s.store.get('nodes', 'k-wide'), status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: '10.0.0.9' }], nodeInfo: { kubeletVersion: 'v1.32.1', osImage: 'Debian GNU/Linux 12', kernelVersion: '6.1.0', containerRuntimeVersion: 'containerd://1.7.0' } } }, { subresource: 'status' });
    await ok(['cordon', 'k-wide']);
    const [head, row] = rows(await ok(['get', 'node', 'k-wide']));
    expect(head).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    expect(row).toEqual(['k-wide', 'Ready,SchedulingDisabled', 'worker', expect.stringMatching(/^\d+s$/), 'v1.32.1']);
    const [wideHead, wideRow] = rows(await ok(['get', 'node', 'k-wide', '-o', 'wide']));
    expect(wideHead).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION', 'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME']);
    expect(wideRow.slice(4)).toEqual(['v1.32.1', '10.0.0.9', '<none>', 'Debian GNU/Linux 12', '6.1.0', 'containerd://1.7.0']);
  });

  it('get clustercidrs prints the CRD\'s printer columns; leases and events their own', async () => {
    await ok(['apply', '-f', '-'], 'apiVersion: networking.x-k8s.io/v1\nkind: ClusterCIDR\nmetadata: {name: k-pool}\nspec: {perNodeHostBits: 8, ipv4: 10.1.0.0/16}\n');
    const [head, row] = rows(await ok(['get', 'clustercidrs']));
    expect(head).toEqual(['NAME', 'PERNODEHOSTBITS', 'IPV4', 'IPV6', 'AGE']);
    expect(row.slice(0, 3)).toEqual(['k-pool', '8', '10.1.0.0/16']);
    s.store.create('leases.coordination.k8s.io', { metadata: { name: 'k-lease', namespace: 'kube-system' }, spec: { holderIdentity: 'ccm-1' } });
    const leases = rows(await ok(['get', 'leases', '-n', 'kube-system']));
    expect(leases[0]).toEqual(['NAME', 'HOLDER', 'AGE']);
    expect(leases[1].slice(0, 2)).toEqual(['k-lease', 'ccm-1']);
    s.store.create('events', { metadata: { name: 'k-ev', namespace: 'default' }, involvedObject: { kind: 'Node', name: 'k-wide' }, reason: 'Synced', message: 'addresses set', type: 'Normal', source: { component: 'ccm' }, count: 2, lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });
    const events = rows(await ok(['get', 'events', '-o', 'wide']));
    expect(events[0]).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME']);
    expect(events[1].slice(1, 4)).toEqual(['Normal', 'Synced', 'node/k-wide']);
    expect(events[1].slice(-2)).toEqual(['2', 'k-ev']);
  });

  it('get -w prints a row per change in the same columns; api-resources lists the review endpoints', async () => {
    await ok(['apply', '-f', '-'], NODE('k-watch'));
    const child = spawn(KUBECTL_BIN, ['--kubeconfig', adminKc, '--cache-dir', path.join(dir, 'cache'), 'get', 'node', 'k-watch', '-w', '-o', 'wide'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const lines = (n: number): Promise<string[][]> => eventually(() => {
      const r = rows(out);
      return r.length >= n && r;
    }, { timeoutMs: 20_000, intervalMs: 100, what: `${n} rows from kubectl get -w`, describe: () => out });
    try {
      expect((await lines(2))[0]).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION', 'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME']);
      s.store.update('nodes', { ...s.store.get('nodes', 'k-watch'), status: { conditions: [{ type: 'Ready', status: 'False' }] } }, { subresource: 'status' });
      const seen = await lines(3);
      expect(seen[2].slice(0, 3)).toEqual(['k-watch', 'NotReady', 'worker']);
    } finally {
      child.kill('SIGTERM');
    }
    const resources = rows(await ok(['api-resources', '--api-group=authorization.k8s.io']));
    expect(resources.map((r) => r[0]).sort()).toEqual(['NAME', 'selfsubjectaccessreviews', 'selfsubjectrulesreviews', 'subjectaccessreviews']);
  });

  it('--dry-run=server validates and answers, and stores nothing (create, patch, delete)', async () => {
    const rv = s.store.resourceVersion;
    expect(await ok(['create', '--dry-run=server', '-f', '-', '-o', 'name'], NODE('k-dry'))).toBe('node/k-dry\n');
    const invalid = await kubectl(['create', '--dry-run=server', '-f', '-'], { input: NODE('k-dry').replace('10.7.0.0/24', 'not-a-cidr') });
    expect(invalid.stderr).toContain('spec.podCIDRs[0]: Invalid value: "not-a-cidr"');
    await ok(['label', 'node', 'k-wide', 'dry=run', '--dry-run=server']);
    expect(await ok(['delete', 'node', 'k-wide', '--dry-run=server'])).toBe('node "k-wide" deleted (server dry run)\n');
    expect(s.store.peek('nodes', 'k-dry')).toBeUndefined();
    expect(s.store.get('nodes', 'k-wide').metadata?.labels?.dry).toBeUndefined();
    expect(s.store.resourceVersion).toBe(rv);
  });

  it('auth can-i and can-i --list answer from the RBAC the double enforces; whoami names the user', async () => {
    // kubectl itself warns that nodes are not namespaced (the kubeconfig names a namespace).
    expect(await kubectl(['auth', 'can-i', 'patch', 'nodes'])).toMatchObject({ code: 0, stdout: 'yes\n' });
    const as = (args: string[]): Promise<Run> => kubectl(args, { kubeconfig: viewerKc });
    expect(await as(['auth', 'can-i', 'list', 'nodes'])).toMatchObject({ code: 0, stdout: 'yes\n' });
    expect(await as(['auth', 'can-i', 'patch', 'nodes'])).toMatchObject({ code: 1, stdout: 'no\n' });
    expect(await as(['auth', 'can-i', 'patch', 'nodes', '--subresource=status'])).toMatchObject({ code: 0, stdout: 'yes\n' });
    const list = rows((await as(['auth', 'can-i', '--list'])).stdout);
    expect(list).toContainEqual(['nodes', '[]', '[]', '[get list watch]']);
    expect(list).toContainEqual(['selfsubjectaccessreviews.authorization.k8s.io', '[]', '[]', '[create]']);
    expect((await as(['auth', 'whoami'])).stdout).toMatch(/Username\s+viewer/);
  });

  it('refuses apply --server-side with 415 and says to use client-side apply; nothing changes', async () => {
    const before = s.store.get('nodes', 'k-apply');
    const r = await kubectl(['apply', '--server-side', '-f', '-'], { input: NODE('k-apply').replace('labels: {', 'labels: {team: b, ') });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('use client-side apply (kubectl apply without --server-side)');
    expect(s.store.get('nodes', 'k-apply')).toEqual(before);
  });
});
