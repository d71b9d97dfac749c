// TokenReview and SubjectAccessReview, answered from the double's own tokens and RBAC, so
// delegated authentication and authorization (a component's /metrics) are tested for real.
// reviewAccess() is the RBAC evaluation of any access review (SelfSubjectAccessReview can reuse it).
import { badRequest, invalid } from './errors.js';
import { ALL_RULES, type Authorizer, type UserInfo } from './rbac.js';

export interface ReviewEndpoint {
  group: string;
  version: string;
  plural: string;
  kind: string;
}

export const TOKEN_REVIEWS: ReviewEndpoint = { group: 'authentication.k8s.io', version: 'v1', plural: 'tokenreviews', kind: 'TokenReview' };
export const SUBJECT_ACCESS_REVIEWS: ReviewEndpoint = { group: 'authorization.k8s.io', version: 'v1', plural: 'subjectaccessreviews', kind: 'SubjectAccessReview' };
export const SELF_SUBJECT_ACCESS_REVIEWS: ReviewEndpoint = { group: 'authorization.k8s.io', version: 'v1', plural: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview' };
export const SELF_SUBJECT_RULES_REVIEWS: ReviewEndpoint = { group: 'authorization.k8s.io', version: 'v1', plural: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview' };
export const SELF_SUBJECT_REVIEWS: ReviewEndpoint = { group: 'authentication.k8s.io', version: 'v1', plural: 'selfsubjectreviews', kind: 'SelfSubjectReview' };
/** The review endpoints, served in discovery too (create only). */
export const REVIEWS: readonly ReviewEndpoint[] = [TOKEN_REVIEWS, SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_RULES_REVIEWS, SELF_SUBJECT_REVIEWS];

/** The review endpoint a URL path names (create-only, cluster-scoped, never stored), if any. */
export function reviewEndpoint(pathname: string): ReviewEndpoint | undefined {
  return REVIEWS.find((r) => pathname.replace(/\/+$/, '') === `/apis/${r.group}/${r.version}/${r.plural}`);
}

export interface ResourceAttributesSpec {
  verb?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface NonResourceAttributesSpec {
  verb?: string;
  path?: string;
}

export interface AccessReviewStatus {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
}

/**
 * Whether `user` may do what the attributes describe, under `authorizer` (undefined: the double
 * runs without RBAC and allows everything, as its requests are).
 */
export function reviewAccess(authorizer: Authorizer | undefined, user: UserInfo, attrs: { resourceAttributes?: ResourceAttributesSpec; nonResourceAttributes?: NonResourceAttributesSpec }): AccessReviewStatus {
  if (!authorizer) return { allowed: true, reason: 'the API server double runs without RBAC' };
  if (attrs.nonResourceAttributes) {
    const a = attrs.nonResourceAttributes;
    const allowed = authorizer.authorizePath(user, { verb: a.verb ?? '', path: a.path ?? '' });
    return allowed ? { allowed, reason: 'RBAC: allowed' } : { allowed };
  }
  const a = attrs.resourceAttributes ?? {};
  const allowed = authorizer.authorizeResource(user, {
    verb: a.verb ?? '', apiGroup: a.group ?? '', resource: a.resource ?? '', subresource: a.subresource ?? '', namespace: a.namespace ?? '', name: a.name ?? '',
  });
  // A denial carries no reason, as RBAC's "no opinion" has none (kubectl auth can-i prints a bare "no").
  return allowed ? { allowed, reason: 'RBAC: allowed' } : { allowed };
}

function objectBody(body: unknown, kind: string): { spec: Record<string, unknown>; metadata?: unknown } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest(`a ${kind} must be a JSON object`);
  const b = body as { kind?: unknown; spec?: unknown; metadata?: unknown };
  if (b.kind !== undefined && b.kind !== kind) throw badRequest(`the body is a ${String(b.kind)}, this endpoint takes a ${kind}`);
  const spec = b.spec && typeof b.spec === 'object' && !Array.isArray(b.spec) ? (b.spec as Record<string, unknown>) : {};
  return { spec, metadata: b.metadata };
}

function answer(r: ReviewEndpoint, metadata: unknown, spec: unknown, status: unknown): object {
  return { kind: r.kind, apiVersion: `${r.group}/${r.version}`, metadata: metadata && typeof metadata === 'object' ? metadata : {}, spec, status };
}

/** Answers a TokenReview: who the token's user is, from the double's tokens. */
export function tokenReview(body: unknown, lookup: (token: string) => UserInfo | undefined): object {
  const { spec, metadata } = objectBody(body, TOKEN_REVIEWS.kind);
  const token = spec.token;
  if (typeof token !== 'string' || token === '') {
    throw invalid(TOKEN_REVIEWS.kind, TOKEN_REVIEWS.group, '', [{ field: 'spec.token', type: 'FieldValueRequired', detail: 'Required value' }]);
  }
  const user = lookup(token);
  const audiences = Array.isArray(spec.audiences) ? spec.audiences : undefined;
  const status = user
    ? { authenticated: true, user: { username: user.name, uid: user.name, groups: user.groups }, ...(audiences ? { audiences } : {}) }
    : { authenticated: false, error: 'invalid bearer token' };
  return answer(TOKEN_REVIEWS, metadata, spec, status);
}

/** Answers a SubjectAccessReview from RBAC (kube-apiserver validates as below). */
export function subjectAccessReview(body: unknown, authorizer: Authorizer | undefined): object {
  const { spec, metadata } = objectBody(body, SUBJECT_ACCESS_REVIEWS.kind);
  const res = spec.resourceAttributes as ResourceAttributesSpec | undefined;
  const nonRes = spec.nonResourceAttributes as NonResourceAttributesSpec | undefined;
  const invalidField = (field: string, detail: string) => invalid(SUBJECT_ACCESS_REVIEWS.kind, SUBJECT_ACCESS_REVIEWS.group, '', [{ field, type: 'FieldValueInvalid', detail }]);
  if ((res === undefined) === (nonRes === undefined)) throw invalidField('spec.resourceAttributes', 'exactly one of nonResourceAttributes or resourceAttributes must be specified');
  const user = typeof spec.user === 'string' ? spec.user : '';
  const groups = Array.isArray(spec.groups) ? spec.groups.filter((g): g is string => typeof g === 'string') : [];
  if (user === '' && groups.length === 0) throw invalidField('spec.user', 'at least one of user or group must be specified');
  const status = reviewAccess(authorizer, { name: user, groups }, { ...(res ? { resourceAttributes: res } : {}), ...(nonRes ? { nonResourceAttributes: nonRes } : {}) });
  return answer(SUBJECT_ACCESS_REVIEWS, metadata, spec, status);
}

function attributesOf(kind: string, group: string, spec: Record<string, unknown>): { resourceAttributes?: ResourceAttributesSpec; nonResourceAttributes?: NonResourceAttributesSpec } {
  const res = spec.resourceAttributes as ResourceAttributesSpec | undefined;
  const nonRes = spec.nonResourceAttributes as NonResourceAttributesSpec | undefined;
  if ((res === undefined) === (nonRes === undefined)) {
    throw invalid(kind, group, '', [{ field: 'spec.resourceAttributes', type: 'FieldValueInvalid', detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified' }]);
  }
  return res ? { resourceAttributes: res } : { nonResourceAttributes: nonRes };
}

/** Answers a SelfSubjectAccessReview: may the requesting user do this (kubectl auth can-i)? */
export function selfSubjectAccessReview(body: unknown, authorizer: Authorizer | undefined, user: UserInfo): object {
  const r = SELF_SUBJECT_ACCESS_REVIEWS;
  const { spec, metadata } = objectBody(body, r.kind);
  return answer(r, metadata, spec, reviewAccess(authorizer, user, attributesOf(r.kind, r.group, spec)));
}

/** Answers a SelfSubjectRulesReview: the rules that apply to the requesting user in spec.namespace (kubectl auth can-i --list). */
export function selfSubjectRulesReview(body: unknown, authorizer: Authorizer | undefined, user: UserInfo): object {
  const r = SELF_SUBJECT_RULES_REVIEWS;
  const { spec, metadata } = objectBody(body, r.kind);
  const namespace = typeof spec.namespace === 'string' ? spec.namespace : '';
  const rules = authorizer ? authorizer.rulesReview(user, namespace) : ALL_RULES;
  return answer(r, metadata, spec, { ...rules, incomplete: false });
}

/** Answers a SelfSubjectReview: who the requesting user is (kubectl auth whoami). */
export function selfSubjectReview(body: unknown, user: UserInfo): object {
  const r = SELF_SUBJECT_REVIEWS;
  const { metadata } = objectBody(body, r.kind);
  return { kind: r.kind, apiVersion: `${r.group}/${r.version}`, metadata: metadata && typeof metadata === 'object' ? metadata : {}, status: { userInfo: { username: user.name, groups: user.groups } } };
}
