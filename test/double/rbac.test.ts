// RBAC enforcement from a folder of manifests: what is granted works, the rest is 403.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { kubeConfigFor, parseRbacYaml, startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { expectStatus, fakeNode, rawRequest } from './target.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/rbac');
const SA = 'system:serviceaccount:kube-system:ccm';
let s: ApiServerDouble;

beforeAll(async () => {
  s = await startApiServerDouble({
    rbac: fixtures,
    users: [
      { name: SA, token: 'ccm-token' },
      { name: 'reader', token: 'reader-token', groups: ['fixture-readers'] },
      { name: 'nobody', token: 'nobody-token' },
    ],
  });
  s.store.create('nodes', fakeNode('n1'));
});

afterAll(async () => {
  await s.stop();
});

describe('RBAC', () => {
  it('allows what the bound ClusterRole grants to the service account', async () => {
    const core = kubeConfigFor(s, SA).makeApiClient(CoreV1Api);
    expect((await core.listNode()).items.map((n) => n.metadata?.name)).toEqual(['n1']);
    await core.patchNode({ name: 'n1', body: { metadata: { labels: { ok: 'yes' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await core.patchNodeStatus({ name: 'n1', body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await core.createNamespacedEvent({ namespace: 'default', body: { metadata: { name: 'e1' }, involvedObject: { kind: 'Node', name: 'n1' }, reason: 'R', message: 'm' } });
  });

  it('answers 403 Forbidden with kube-apiserver\'s message for everything else', async () => {
    const core = kubeConfigFor(s, SA).makeApiClient(CoreV1Api);
    const st = await expectStatus(core.deleteNode({ name: 'n1' }), 403, 'Forbidden');
    expect(st.message).toBe(`nodes "n1" is forbidden: User "${SA}" cannot delete resource "nodes" in API group "" at the cluster scope`);
    await expectStatus(core.replaceNodeStatus({ name: 'n1', body: fakeNode('n1') as V1Node }), 403, 'Forbidden');
    await expectStatus(core.createNode({ body: fakeNode('n2') as V1Node }), 403, 'Forbidden');
    const cm = await expectStatus(core.listNamespacedConfigMap({ namespace: 'default' }), 403, 'Forbidden');
    expect(cm.message).toContain('in the namespace "default"');
  });

  it('scopes RoleBindings to their namespace and resourceNames to named requests', async () => {
    const leases = kubeConfigFor(s, SA).makeApiClient(CoordinationV1Api);
    await leases.createNamespacedLease({ namespace: 'kube-system', body: { metadata: { name: 'fixture-ccm' }, spec: { holderIdentity: 'me' } } });
    const l = await leases.readNamespacedLease({ namespace: 'kube-system', name: 'fixture-ccm' });
    await leases.replaceNamespacedLease({ namespace: 'kube-system', name: 'fixture-ccm', body: l });
    await expectStatus(leases.readNamespacedLease({ namespace: 'kube-system', name: 'other' }), 403, 'Forbidden');
    await expectStatus(leases.listNamespacedLease({ namespace: 'kube-system' }), 403, 'Forbidden');
    await expectStatus(leases.createNamespacedLease({ namespace: 'default', body: { metadata: { name: 'fixture-ccm' } } }), 403, 'Forbidden');
    // A Group subject: the reader gets the Role's grants in kube-system only.
    const reader = kubeConfigFor(s, 'reader').makeApiClient(CoordinationV1Api);
    expect((await reader.readNamespacedLease({ namespace: 'kube-system', name: 'fixture-ccm' })).spec?.holderIdentity).toBe('me');
    await expectStatus(kubeConfigFor(s, 'reader').makeApiClient(CoreV1Api).listNode(), 403, 'Forbidden');
  });

  it('counts refused requests by user and code (no proxy needed to see who was refused)', async () => {
    s.resetCounters();
    const core = kubeConfigFor(s, SA).makeApiClient(CoreV1Api);
    await core.listNode();
    await expectStatus(core.deleteNode({ name: 'n1' }), 403, 'Forbidden');
    await expectStatus(kubeConfigFor(s, 'reader').makeApiClient(CoreV1Api).listNode(), 403, 'Forbidden');
    expect(s.count({ user: SA, code: 403 })).toBe(1);
    expect(s.count({ user: SA, verb: 'delete', resource: 'nodes', code: 403 })).toBe(1);
    expect(s.count({ user: SA, verb: 'list', code: 200 })).toBe(1);
    expect(s.count({ user: 'reader', verb: 'list', resource: 'nodes', code: 403 })).toBe(1);
    expect(s.detailedCounters().filter((r) => r.code === 403).map((r) => `${r.user} ${r.verb} ${r.resource}`).sort()).toEqual(['reader list nodes', `${SA} delete nodes`]);
  });

  it('lets every user read discovery, rejects unknown tokens with 401, and always allows the admin', async () => {
    const nobody = kubeConfigFor(s, 'nobody');
    expect((await rawRequest(nobody, 'GET', '/api/v1')).status).toBe(200);
    expect((await rawRequest(nobody, 'GET', '/api/v1/nodes')).status).toBe(403);
    const bad = await fetch(`${s.url}/api/v1/nodes`, { headers: { Authorization: 'Bearer wrong' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    await kubeConfigFor(s).makeApiClient(CoreV1Api).deleteNamespacedEvent({ namespace: 'default', name: 'e1' });
  });
});

describe('parseRbacYaml', () => {
  it.each([
    ['a Role without namespace', 'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\nrules: []', /needs metadata.namespace/],
    ['a ClusterRoleBinding to a Role', 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {kind: Role, name: r}\nsubjects: []', /can only reference a ClusterRole/],
    ['a ServiceAccount subject without namespace', 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {kind: ClusterRole, name: r}\nsubjects: [{kind: ServiceAccount, name: x}]', /needs a namespace/],
    ['verbs that are not a list', 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\nrules: [{verbs: get}]', /verbs: must be a list/],
  ])('rejects %s', (_what, yaml, message) => {
    expect(() => parseRbacYaml(yaml, 'x.yaml')).toThrow(message);
  });

  it('reads roles and bindings and ignores other kinds', () => {
    const p = parseRbacYaml('apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\nrules: [{verbs: [get], apiGroups: [""], resources: [nodes]}]');
    expect(p).toEqual({ roles: [{ kind: 'ClusterRole', name: 'r', namespace: undefined, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'], resourceNames: [], nonResourceURLs: [] }] }], bindings: [] });
  });
});
