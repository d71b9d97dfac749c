// What an RBAC policy grants one user, flattened to (verb, group, resource, subresource) rows.
import type { PolicyRule, RbacPolicy, Subject } from '../../../src/double/index.js';

export interface Grant {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  /** '' for cluster-wide (ClusterRoleBinding), else the RoleBinding's namespace. */
  namespace: string;
  resourceNames: string[];
  /** `Kind/name` of the role that grants it. */
  via: string;
}

export function grantKey(g: { verb: string; group: string; resource: string; subresource: string }): string {
  const res = g.subresource ? `${g.resource}/${g.subresource}` : g.resource;
  return `${g.verb} ${res}${g.group ? `.${g.group}` : ''}`;
}

function subjectMatches(s: Subject, user: string, groups: readonly string[]): boolean {
  if (s.kind === 'User') return s.name === user;
  if (s.kind === 'Group') return groups.includes(s.name);
  return user === `system:serviceaccount:${s.namespace}:${s.name}`;
}

function expandRule(rule: PolicyRule, namespace: string, via: string): Grant[] {
  const out: Grant[] = [];
  for (const verb of rule.verbs) {
    for (const group of rule.apiGroups ?? []) {
      for (const res of rule.resources ?? []) {
        const [resource = '', subresource = ''] = res.split('/');
        out.push({ verb, group, resource, subresource, namespace, resourceNames: [...(rule.resourceNames ?? [])], via });
      }
    }
  }
  return out;
}

/** Every resource grant the policy gives `user` (with its implicit groups) through its bindings. */
export function grantsFor(policy: RbacPolicy, user: string, groups: readonly string[] = []): Grant[] {
  const out: Grant[] = [];
  for (const b of policy.bindings) {
    if (!b.subjects.some((s) => subjectMatches(s, user, groups))) continue;
    const role = policy.roles.find((r) => r.kind === b.roleRef.kind && r.name === b.roleRef.name && (r.kind === 'ClusterRole' || r.namespace === b.namespace));
    if (!role) continue;
    for (const rule of role.rules) out.push(...expandRule(rule, b.kind === 'RoleBinding' ? (b.namespace ?? '') : '', `${role.kind}/${role.name}`));
  }
  return out;
}

/** A copy of the policy with `verb` removed from every rule that grants it on `resource` (e.g. `nodes/status`). */
export function withoutVerb(policy: RbacPolicy, verb: string, resource: string): RbacPolicy {
  return {
    bindings: policy.bindings.map((b) => ({ ...b, subjects: [...b.subjects] })),
    roles: policy.roles.map((r) => ({
      ...r,
      rules: r.rules
        .map((rule) => ((rule.resources ?? []).includes(resource) && rule.verbs.includes(verb) ? { ...rule, verbs: rule.verbs.filter((v) => v !== verb) } : rule))
        .filter((rule) => rule.verbs.length > 0),
    })),
  };
}
