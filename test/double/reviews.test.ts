// TokenReview and SubjectAccessReview through @kubernetes/client-node against the double: who a
// token is, and what RBAC (plus the bootstrap system:auth-delegator ClusterRole) lets a user do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationV1Api, AuthorizationV1Api } from '@kubernetes/client-node';
import { kubeConfigFor, parseRbacYaml, reviewAccess, startApiServerDouble, Authorizer, type ApiServerDouble } from '../../src/double/index.js';
import { expectStatus } from './target.js';

const DELEGATOR = 'system:serviceaccount:kube-system:ccm';
const SCRAPER = 'system:serviceaccount:monitoring:prometheus';
const POLICY = parseRbacYaml(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ccm-auth-delegator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator}
subjects: [{kind: ServiceAccount, name: ccm, namespace: kube-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: metrics}
rules:
  - {nonResourceURLs: ["/metrics"], verbs: ["get"]}
  - {apiGroups: [""], resources: ["nodes"], verbs: ["list"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: metrics}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: metrics}
subjects: [{kind: Group, name: scrapers}]
`);

let s: ApiServerDouble;
let authn: AuthenticationV1Api;
let authz: AuthorizationV1Api;

beforeAll(async () => {
  s = await startApiServerDouble({
    rbac: POLICY,
    users: [{ name: DELEGATOR, token: 'ccm-token' }, { name: SCRAPER, token: 'scraper-token', groups: ['scrapers'] }, { name: 'nobody', token: 'nobody-token' }],
  });
  authn = kubeConfigFor(s, DELEGATOR).makeApiClient(AuthenticationV1Api);
  authz = kubeConfigFor(s, DELEGATOR).makeApiClient(AuthorizationV1Api);
});

afterAll(async () => {
  await s.stop();
});

describe('TokenReview', () => {
  it('authenticates a known token as its user with its groups', async () => {
    const r = await authn.createTokenReview({ body: { spec: { token: 'scraper-token' } } });
    expect(r.status).toMatchObject({ authenticated: true, user: { username: SCRAPER } });
    expect(r.status?.user?.groups).toEqual(['scrapers', 'system:serviceaccounts', 'system:serviceaccounts:monitoring', 'system:authenticated']);
  });

  it('does not authenticate an unknown token', async () => {
    const r = await authn.createTokenReview({ body: { spec: { token: 'made-up' } } });
    expect(r.status).toEqual({ authenticated: false, error: 'invalid bearer token' });
  });

  it('requires spec.token (422), and create tokenreviews (403 without system:auth-delegator)', async () => {
    await expectStatus(authn.createTokenReview({ body: { spec: {} } }), 422, 'Invalid');
    const nobody = kubeConfigFor(s, 'nobody').makeApiClient(AuthenticationV1Api);
    const st = await expectStatus(nobody.createTokenReview({ body: { spec: { token: 'scraper-token' } } }), 403, 'Forbidden');
    expect(st.message).toContain('User "nobody" cannot create resource "tokenreviews" in API group "authentication.k8s.io"');
    expect(s.count({ user: DELEGATOR, verb: 'create', resource: 'tokenreviews', code: 201 })).toBe(2);
  });
});

describe('SubjectAccessReview', () => {
  const sar = (spec: Record<string, unknown>) => authz.createSubjectAccessReview({ body: { spec: spec as never } });

  it.each([
    [{ user: SCRAPER, groups: ['scrapers'], nonResourceAttributes: { path: '/metrics', verb: 'get' } }, true],
    [{ user: SCRAPER, groups: ['scrapers'], nonResourceAttributes: { path: '/metrics', verb: 'post' } }, false],
    [{ user: SCRAPER, groups: ['scrapers'], nonResourceAttributes: { path: '/debug/pprof', verb: 'get' } }, false],
    [{ user: 'nobody', groups: ['system:authenticated'], nonResourceAttributes: { path: '/metrics', verb: 'get' } }, false],
    // kube-apiserver's public paths.
    [{ user: 'nobody', groups: ['system:authenticated'], nonResourceAttributes: { path: '/healthz', verb: 'get' } }, true],
    [{ user: SCRAPER, groups: ['scrapers'], resourceAttributes: { verb: 'list', resource: 'nodes' } }, true],
    [{ user: SCRAPER, groups: ['scrapers'], resourceAttributes: { verb: 'delete', resource: 'nodes', name: 'n1' } }, false],
    // The bootstrap role applies to reviews of reviews too.
    [{ user: DELEGATOR, resourceAttributes: { verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' } }, true],
  ])('%j → allowed %s', async (spec, allowed) => {
    const r = await sar(spec);
    expect(r.status?.allowed).toBe(allowed);
    expect(r.spec).toMatchObject(spec);
  });

  it('requires exactly one kind of attributes and a user or group (422)', async () => {
    await expectStatus(sar({ user: SCRAPER }), 422, 'Invalid');
    await expectStatus(sar({ user: SCRAPER, resourceAttributes: { verb: 'get', resource: 'nodes' }, nonResourceAttributes: { path: '/metrics', verb: 'get' } }), 422, 'Invalid');
    await expectStatus(sar({ nonResourceAttributes: { path: '/metrics', verb: 'get' } }), 422, 'Invalid');
  });

  it('reviewAccess: the same evaluation for any access review; a double without RBAC allows everything', () => {
    const authorizer = new Authorizer(POLICY);
    const user = { name: SCRAPER, groups: ['scrapers'] };
    expect(reviewAccess(authorizer, user, { nonResourceAttributes: { path: '/metrics', verb: 'get' } }).allowed).toBe(true);
    expect(reviewAccess(authorizer, user, { resourceAttributes: { verb: 'patch', resource: 'nodes' } }).allowed).toBe(false);
    expect(reviewAccess(undefined, user, { resourceAttributes: { verb: 'patch', resource: 'nodes' } }).allowed).toBe(true);
  });
});
