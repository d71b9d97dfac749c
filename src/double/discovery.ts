// Discovery documents (/api, /apis, /apis/<group>/<version>, /version) built from the resource
// table, in the unaggregated form client libraries fall back to.
import { REVIEWS } from './reviews.js';
import type { Resource } from './store.js';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const SERVER_VERSION = {
  major: '1',
  minor: '33',
  gitVersion: 'v1.33.0-apiserver-double',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'n/a',
  compiler: 'n/a',
  platform: 'linux/amd64',
};

export function coreVersions(): object {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }] };
}

function groupsOf(resources: readonly Resource[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  // The review endpoints (create-only, never stored) are discovered like resources.
  for (const r of [...resources, ...REVIEWS]) {
    if (!r.group) continue;
    const versions = groups.get(r.group) ?? [];
    if (!versions.includes(r.version)) versions.push(r.version);
    groups.set(r.group, versions);
  }
  return groups;
}

function groupDoc(name: string, versions: string[]): object {
  const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(resources: readonly Resource[]): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [...groupsOf(resources)].map(([g, v]) => groupDoc(g, v)) };
}

export function apiGroup(resources: readonly Resource[], group: string): object | undefined {
  const versions = groupsOf(resources).get(group);
  return versions ? { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(group, versions) } : undefined;
}

export function apiResourceList(resources: readonly Resource[], group: string, version: string): object | undefined {
  const rs = resources.filter((r) => r.group === group && r.version === version);
  const reviews = REVIEWS.filter((r) => r.group === group && r.version === version);
  if (rs.length === 0 && reviews.length === 0) return undefined;
  const list: object[] = reviews.map((r) => ({ name: r.plural, singularName: r.kind.toLowerCase(), namespaced: false, kind: r.kind, verbs: ['create'] }));
  for (const r of rs) {
    list.push({ name: r.plural, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs: VERBS, ...(r.shortNames.length ? { shortNames: r.shortNames } : {}), ...(r.categories.length ? { categories: r.categories } : {}), storageVersionHash: '' });
    if (r.status) list.push({ name: `${r.plural}/status`, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs: ['get', 'patch', 'update'] });
    // An action of another group-version names it, as kube-apiserver lists pods/eviction
    // (policy/v1 Eviction): kubectl drain evicts only when it finds this entry.
    for (const a of r.actions) list.push({ name: `${r.plural}/${a.name}`, singularName: '', namespaced: r.namespaced, group: a.group, version: a.version, kind: a.kind, verbs: ['create'] });
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources: list };
}
