// RBAC authorization over Role/ClusterRole and their bindings, read from YAML manifests (the
// ones shipped in deploy/). Decides allow or deny; everything not granted is denied.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Role {
  kind: 'Role' | 'ClusterRole';
  name: string;
  namespace?: string;
  rules: PolicyRule[];
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  namespace?: string;
}

export interface Binding {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  name: string;
  namespace?: string;
  roleRef: { kind: 'Role' | 'ClusterRole'; name: string };
  subjects: Subject[];
}

export interface RbacPolicy {
  roles: Role[];
  bindings: Binding[];
}

export interface UserInfo {
  name: string;
  groups: string[];
}

export interface ResourceAttributes {
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

export interface NonResourceAttributes {
  verb: string;
  path: string;
}

function asStrings(v: unknown, where: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new Error(`${where}: must be a list of strings, got ${JSON.stringify(v)}`);
  return v as string[];
}

/** Parses RBAC objects out of (multi-document) YAML text; other kinds are ignored. */
export function parseRbacYaml(text: string, source = '<yaml>'): RbacPolicy {
  const policy: RbacPolicy = { roles: [], bindings: [] };
  const docs = parseAllDocuments(text);
  const objects: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${source}: invalid YAML: ${doc.errors[0].message}`);
    const v = doc.toJSON() as unknown;
    if (v && typeof v === 'object' && (v as { kind?: string }).kind === 'List') objects.push(...(((v as { items?: unknown[] }).items) ?? []));
    else if (v) objects.push(v);
  }
  for (const raw of objects) {
    const o = raw as { kind?: string; apiVersion?: string; metadata?: { name?: string; namespace?: string }; rules?: unknown[]; roleRef?: { kind?: string; name?: string }; subjects?: unknown[] };
    if (!o.apiVersion?.startsWith('rbac.authorization.k8s.io/')) continue;
    const name = o.metadata?.name;
    const where = `${source}: ${o.kind}/${name ?? '?'}`;
    if (!name) throw new Error(`${where}: metadata.name is required`);
    if (o.kind === 'Role' || o.kind === 'ClusterRole') {
      if (o.kind === 'Role' && !o.metadata?.namespace) throw new Error(`${where}: a Role needs metadata.namespace`);
      const rules = (o.rules ?? []).map((r, i) => {
        const rr = r as Record<string, unknown>;
        return {
          verbs: asStrings(rr.verbs, `${where} rules[${i}].verbs`),
          apiGroups: asStrings(rr.apiGroups, `${where} rules[${i}].apiGroups`),
          resources: asStrings(rr.resources, `${where} rules[${i}].resources`),
          resourceNames: asStrings(rr.resourceNames, `${where} rules[${i}].resourceNames`),
          nonResourceURLs: asStrings(rr.nonResourceURLs, `${where} rules[${i}].nonResourceURLs`),
        };
      });
      policy.roles.push({ kind: o.kind, name, namespace: o.kind === 'Role' ? o.metadata?.namespace : undefined, rules });
    } else if (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') {
      if (o.kind === 'RoleBinding' && !o.metadata?.namespace) throw new Error(`${where}: a RoleBinding needs metadata.namespace`);
      const ref = o.roleRef;
      if (!ref || (ref.kind !== 'Role' && ref.kind !== 'ClusterRole') || !ref.name) throw new Error(`${where}: roleRef needs kind Role or ClusterRole and a name`);
      if (o.kind === 'ClusterRoleBinding' && ref.kind !== 'ClusterRole') throw new Error(`${where}: a ClusterRoleBinding can only reference a ClusterRole`);
      const subjects = (o.subjects ?? []).map((s, i) => {
        const ss = s as Subject;
        if (!['User', 'Group', 'ServiceAccount'].includes(ss.kind) || !ss.name) throw new Error(`${where} subjects[${i}]: needs kind User, Group or ServiceAccount and a name`);
        if (ss.kind === 'ServiceAccount' && !ss.namespace) throw new Error(`${where} subjects[${i}]: a ServiceAccount subject needs a namespace`);
        return { kind: ss.kind, name: ss.name, namespace: ss.namespace };
      });
      policy.bindings.push({ kind: o.kind, name, namespace: o.kind === 'RoleBinding' ? o.metadata?.namespace : undefined, roleRef: { kind: ref.kind, name: ref.name }, subjects });
    }
  }
  return policy;
}

/** Reads every *.yaml, *.yml and *.json file of a folder (not recursive). */
export function loadRbacDir(dir: string): RbacPolicy {
  let files: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new Error('not a directory');
    files = readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f)).sort();
  } catch (err) {
    throw new Error(`rbac: cannot read folder "${dir}": ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const policy: RbacPolicy = { roles: [], bindings: [] };
  for (const f of files) {
    const p = parseRbacYaml(readFileSync(path.join(dir, f), 'utf8'), path.join(dir, f));
    policy.roles.push(...p.roles);
    policy.bindings.push(...p.bindings);
  }
  return policy;
}

function has(list: string[] | undefined, value: string): boolean {
  return !!list && (list.includes('*') || list.includes(value));
}

function ruleAllowsResource(rule: PolicyRule, a: ResourceAttributes): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!has(rule.apiGroups, a.apiGroup)) return false;
  const res = rule.resources ?? [];
  const full = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resourceOk = res.includes('*') || res.includes(full) || (a.subresource !== '' && res.includes(`*/${a.subresource}`));
  if (!resourceOk) return false;
  // resourceNames only grant requests that name an object.
  if (rule.resourceNames && rule.resourceNames.length > 0) return a.name !== '' && rule.resourceNames.includes(a.name);
  return true;
}

function ruleAllowsPath(rule: PolicyRule, a: NonResourceAttributes): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))));
}

// kube-apiserver's bootstrap policy lets everyone read discovery and health endpoints.
const PUBLIC_PATHS: PolicyRule = { verbs: ['get'], nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/version', '/version/', '/healthz', '/livez', '/readyz', '/openapi', '/openapi/*'] };

/**
 * ClusterRoles every kube-apiserver has from its bootstrap policy that deploy/ binds to without
 * shipping: system:auth-delegator lets a component review the tokens and access of its clients.
 */
export const BOOTSTRAP_CLUSTER_ROLES: readonly Role[] = [
  {
    kind: 'ClusterRole',
    name: 'system:auth-delegator',
    rules: [
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'] },
      { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'] },
    ],
  },
];

/**
 * What kube-apiserver's bootstrap system:basic-user binding gives every authenticated user:
 * asking what they themselves may do, and who they are.
 */
export const SELF_REVIEW_RULES: readonly PolicyRule[] = [
  { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
  { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
];

/** Everything: what system:masters (and everyone, without RBAC) may do. */
export const ALL_RULES: { resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[] } = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
};

/** The policy with the bootstrap ClusterRoles it does not define itself. */
export function withBootstrapRoles(policy: RbacPolicy): RbacPolicy {
  const own = new Set(policy.roles.filter((r) => r.kind === 'ClusterRole').map((r) => r.name));
  return { bindings: policy.bindings, roles: [...policy.roles, ...BOOTSTRAP_CLUSTER_ROLES.filter((r) => !own.has(r.name))] };
}

export class Authorizer {
  private readonly policy: RbacPolicy;

  constructor(policy: RbacPolicy) {
    this.policy = withBootstrapRoles(policy);
  }

  private subjectMatches(s: Subject, user: UserInfo): boolean {
    if (s.kind === 'User') return s.name === user.name;
    if (s.kind === 'Group') return user.groups.includes(s.name);
    return user.name === `system:serviceaccount:${s.namespace}:${s.name}`;
  }

  /** Rules granted to a user in a namespace ('' = cluster scope: ClusterRoleBindings only). */
  private rulesFor(user: UserInfo, namespace: string): PolicyRule[] {
    const rules: PolicyRule[] = [];
    for (const b of this.policy.bindings) {
      if (b.kind === 'RoleBinding' && (namespace === '' || b.namespace !== namespace)) continue;
      if (!b.subjects.some((s) => this.subjectMatches(s, user))) continue;
      const role = this.policy.roles.find((r) => r.kind === b.roleRef.kind && r.name === b.roleRef.name && (r.kind === 'ClusterRole' || r.namespace === b.namespace));
      if (role) rules.push(...role.rules);
    }
    return rules;
  }

  authorizeResource(user: UserInfo, a: ResourceAttributes): boolean {
    if (user.groups.includes('system:masters')) return true;
    if (user.groups.includes('system:authenticated') && SELF_REVIEW_RULES.some((r) => ruleAllowsResource(r, a))) return true;
    return this.rulesFor(user, a.namespace).some((r) => ruleAllowsResource(r, a));
  }

  /** The rules that apply to `user` in `namespace` ('' = cluster scope), as a SelfSubjectRulesReview lists them. */
  rulesReview(user: UserInfo, namespace: string): { resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[] } {
    if (user.groups.includes('system:masters')) return ALL_RULES;
    const granted = [...(user.groups.includes('system:authenticated') ? SELF_REVIEW_RULES : []), ...this.rulesFor(user, namespace)];
    const resourceRules: PolicyRule[] = [];
    // Non-resource rules come from cluster-wide bindings only.
    const nonResourceRules: PolicyRule[] = [PUBLIC_PATHS];
    for (const r of granted) {
      if ((r.resources ?? []).length > 0) resourceRules.push({ verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources, ...((r.resourceNames ?? []).length ? { resourceNames: r.resourceNames } : {}) });
    }
    for (const r of this.rulesFor(user, '')) if ((r.nonResourceURLs ?? []).length > 0) nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
    return { resourceRules, nonResourceRules };
  }

  authorizePath(user: UserInfo, a: NonResourceAttributes): boolean {
    if (user.groups.includes('system:masters')) return true;
    if (ruleAllowsPath(PUBLIC_PATHS, a)) return true;
    return this.rulesFor(user, '').some((r) => ruleAllowsPath(r, a));
  }
}
