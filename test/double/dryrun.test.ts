// dryRun=All on every write, fieldValidation, server-side apply refused, and the self-subject
// reviews, over HTTP against the double: a dry run is validated and answered like the write,
// and leaves no object, no watch event and no resourceVersion bump behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { kubeConfigFor, parseRbacYaml, startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { collectWatch, expectStatus, rawRequest, type Collector } from './target.js';

let s: ApiServerDouble;
let core: CoreV1Api;
let watch: Collector;

const POLICY = parseRbacYaml(`
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: leases, namespace: kube-system}
rules: [{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, update], resourceNames: [ccm]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: leases, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: leases}
subjects: [{kind: User, name: ccm}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: nodes}
rules:
  - {apiGroups: [""], resources: [nodes], verbs: [list]}
  - {nonResourceURLs: [/metrics], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: nodes}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: nodes}
subjects: [{kind: User, name: ccm}]
`);

beforeAll(async () => {
  s = await startApiServerDouble({ rbac: POLICY, users: [{ name: 'ccm', token: 'ccm-token' }] });
  core = kubeConfigFor(s).makeApiClient(CoreV1Api);
  await core.createNode({ body: { metadata: { name: 'live', labels: { a: '1' } }, spec: { podCIDRs: ['10.0.0.0/24'] } } });
  await core.createNode({ body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
  watch = await collectWatch(kubeConfigFor(s), '/api/v1/nodes', { resourceVersion: String(s.store.resourceVersion) });
});

afterAll(async () => {
  watch?.stop();
  await s.stop();
});

/** Runs `write` and checks it changed nothing: same resourceVersion, no watch event. */
async function unchanged<T>(write: () => Promise<T>): Promise<T> {
  const rv = s.store.resourceVersion;
  const events = watch.events.length;
  const out = await write();
  // A real write would have reached the watcher by now; give it the chance.
  await new Promise((r) => setTimeout(r, 100));
  expect(s.store.resourceVersion).toBe(rv);
  expect(watch.events.length).toBe(events);
  return out;
}

describe('dryRun=All', () => {
  it('create answers the object as it would be stored (defaults, uid), stores nothing', async () => {
    const n = await unchanged(() => core.createNode({ body: { metadata: { name: 'ghost' }, spec: { podCIDR: '10.1.0.0/24' } }, dryRun: 'All' }));
    expect(n.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(n.metadata?.resourceVersion).toBeUndefined();
    expect(n.spec?.podCIDRs).toEqual(['10.1.0.0/24']);
    expect(s.store.peek('nodes', 'ghost')).toBeUndefined();
  });

  it('is validated like the write: 422, 409 and 404 answer as they would', async () => {
    await unchanged(() => expectStatus(core.createNode({ body: { metadata: { name: 'bad' }, spec: { podCIDRs: ['nope'] } }, dryRun: 'All' }), 422, 'Invalid'));
    await unchanged(() => expectStatus(core.createNode({ body: { metadata: { name: 'live' } }, dryRun: 'All' }), 409, 'AlreadyExists'));
    await unchanged(() => expectStatus(core.deleteNode({ name: 'nowhere', dryRun: 'All' }), 404, 'NotFound'));
    // Both fields: a podCIDRs that disagrees with podCIDR loses to it (no change), as on kube-apiserver.
    const patch = await unchanged(() => rawRequest(kubeConfigFor(s), 'PATCH', '/api/v1/nodes/live?dryRun=All', '{"spec":{"podCIDR":"10.9.0.0/24","podCIDRs":["10.9.0.0/24"]}}', 'application/merge-patch+json'));
    expect(patch.status).toBe(422);
  });

  it('update and patch answer the changed object; the stored one keeps its labels', async () => {
    const live = await core.readNode({ name: 'live' });
    const updated = await unchanged(() => core.replaceNode({ name: 'live', body: { ...live, metadata: { ...live.metadata, labels: { a: '2' } } }, dryRun: 'All' }));
    expect(updated.metadata?.labels).toEqual({ a: '2' });
    const patched = await unchanged(() => rawRequest(kubeConfigFor(s), 'PATCH', '/api/v1/nodes/live?dryRun=All', '{"metadata":{"labels":{"b":"3"}}}', 'application/merge-patch+json'));
    expect(JSON.parse(patched.body).metadata.labels).toEqual({ a: '1', b: '3' });
    expect(s.store.get('nodes', 'live').metadata?.labels).toEqual({ a: '1' });
  });

  it('delete answers as the delete would (Status, or the object marked for deletion) and keeps the object', async () => {
    const gone = await unchanged(() => rawRequest(kubeConfigFor(s), 'DELETE', '/api/v1/nodes/live?dryRun=All'));
    expect(JSON.parse(gone.body)).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'live' } });
    const viaBody = await unchanged(() => rawRequest(kubeConfigFor(s), 'DELETE', '/api/v1/nodes/live', '{"dryRun":["All"]}'));
    expect(viaBody.status).toBe(200);
    const held = await unchanged(() => rawRequest(kubeConfigFor(s), 'DELETE', '/api/v1/nodes/held?dryRun=All'));
    expect(JSON.parse(held.body).metadata.deletionTimestamp).toBeDefined();
    expect(s.store.get('nodes', 'held').metadata?.deletionTimestamp).toBeUndefined();
    expect(s.store.peek('nodes', 'live')).toBeDefined();
    const all = await unchanged(() => rawRequest(kubeConfigFor(s), 'DELETE', '/api/v1/nodes?dryRun=All'));
    expect(JSON.parse(all.body).items.map((n: { metadata: { name: string } }) => n.metadata.name)).toEqual(['held', 'live']);
  });

  it('refuses any other value (422, as kube-apiserver validates the options)', async () => {
    const r = await unchanged(() => rawRequest(kubeConfigFor(s), 'POST', '/api/v1/nodes?dryRun=Some', '{"metadata":{"name":"x"}}'));
    expect(r.status).toBe(422);
    expect(JSON.parse(r.body).message).toBe('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"');
  });
});

describe('fieldValidation', () => {
  const body = '{"metadata":{"name":"fv"},"spec":{"bogus":1}}';
  // As kube-apiserver (test/realserver/double-vs-real.test.ts): unknown fields are dropped unless
  // Strict refuses them; Warn, the default, says so in a 299 Warning per field.
  it('Strict refuses unknown fields, Warn (and absent) drops them with a 299 Warning per field, Ignore drops them silently', async () => {
    const kc = kubeConfigFor(s);
    const strict = await rawRequest(kc, 'POST', '/api/v1/nodes?fieldValidation=Strict', body);
    expect([strict.status, JSON.parse(strict.body).message]).toEqual([400, 'Node in version "v1" cannot be handled as a Node: strict decoding error: unknown field "spec.bogus"']);
    const warn = await rawRequest(kc, 'POST', '/api/v1/nodes?fieldValidation=Warn', body);
    expect([warn.status, warn.headers.get('warning')]).toEqual([201, '299 - "unknown field \\"spec.bogus\\""']);
    const patched = await rawRequest(kc, 'PATCH', '/api/v1/nodes/fv?fieldValidation=Strict', '{"spec":{"other":2}}', 'application/strategic-merge-patch+json');
    expect([patched.status, JSON.parse(patched.body).message]).toEqual([422, ' "" is invalid: patch: Invalid value: "map[spec:map[other:2]]": strict decoding error: unknown field "spec.other"']);
    const ignored = await rawRequest(kc, 'PATCH', '/api/v1/nodes/fv?fieldValidation=Ignore', '{"spec":{"other":2,"unschedulable":true}}', 'application/merge-patch+json');
    expect([ignored.status, ignored.headers.get('warning')]).toEqual([200, null]);
    expect(s.store.get('nodes', 'fv').spec).toEqual({ unschedulable: true });
    const absent = await rawRequest(kc, 'PATCH', '/api/v1/nodes/fv', '{"spec":{"other":3}}', 'application/merge-patch+json');
    expect([absent.status, absent.headers.get('warning')]).toEqual([200, '299 - "unknown field \\"spec.other\\""']);
    expect(s.store.get('nodes', 'fv').spec).toEqual({ unschedulable: true });
    expect((await rawRequest(kc, 'POST', '/api/v1/nodes?fieldValidation=strict', body)).status).toBe(400);
  });
});

describe('server-side apply', () => {
  it('is refused with 415 naming client-side apply, and changes nothing', async () => {
    const before = s.store.get('nodes', 'live');
    const r = await unchanged(() => rawRequest(kubeConfigFor(s), 'PATCH', '/api/v1/nodes/live?fieldManager=me&force=true', 'metadata:\n  labels: {a: "9"}\n', 'application/apply-patch+yaml'));
    expect(r.status).toBe(415);
    expect(JSON.parse(r.body)).toMatchObject({ reason: 'UnsupportedMediaType', message: expect.stringContaining('use client-side apply') });
    expect(s.store.get('nodes', 'live')).toEqual(before);
  });
});

describe('self-subject reviews', () => {
  const authz = (): AuthorizationV1Api => kubeConfigFor(s, 'ccm').makeApiClient(AuthorizationV1Api);

  it('SelfSubjectAccessReview answers for the requesting user from RBAC, resourceNames and namespaces included', async () => {
    const ask = async (a: object) => (await authz().createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: a } } })).status?.allowed;
    expect(await ask({ verb: 'list', resource: 'nodes' })).toBe(true);
    expect(await ask({ verb: 'patch', resource: 'nodes' })).toBe(false);
    expect(await ask({ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-system', name: 'ccm' })).toBe(true);
    expect(await ask({ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-system', name: 'other' })).toBe(false);
    expect(await ask({ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'default', name: 'ccm' })).toBe(false);
    const nonRes = await authz().createSelfSubjectAccessReview({ body: { spec: { nonResourceAttributes: { verb: 'get', path: '/metrics' } } } });
    expect(nonRes.status?.allowed).toBe(true);
    await expectStatus(authz().createSelfSubjectAccessReview({ body: { spec: {} } }), 422, 'Invalid');
  });

  it('SelfSubjectRulesReview lists the rules of the namespace, the self-review rule and the public paths', async () => {
    const r = await authz().createSelfSubjectRulesReview({ body: { spec: { namespace: 'kube-system' } } });
    expect(r.status?.incomplete).toBe(false);
    expect(r.status?.resourceRules).toEqual([
      { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
      { verbs: ['get', 'update'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['ccm'] },
      { verbs: ['list'], apiGroups: [''], resources: ['nodes'] },
    ]);
    expect(r.status?.nonResourceRules?.map((x) => x.nonResourceURLs)).toContainEqual(['/metrics']);
    const dflt = await authz().createSelfSubjectRulesReview({ body: { spec: { namespace: 'default' } } });
    expect(dflt.status?.resourceRules?.map((x) => x.resources?.[0])).toEqual(['selfsubjectaccessreviews', 'selfsubjectreviews', 'nodes']);
    const admin = await kubeConfigFor(s).makeApiClient(AuthorizationV1Api).createSelfSubjectRulesReview({ body: { spec: { namespace: 'default' } } });
    expect(admin.status?.resourceRules).toEqual([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
  });
});
