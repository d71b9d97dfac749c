// URL paths → resource requests and audit verbs, table-driven.
import { describe, expect, it } from 'vitest';
import { ApiError, Store } from '../../src/double/index.js';
import { route, verbOf, type Route } from '../../src/double/router.js';

const store = new Store({ namespaces: [] });
const find = (g: string, v: string, p: string) => store.findResource(g, v, p);
const at = (path: string) => route(path, store.resources, find);

describe('route', () => {
  it.each<[string, string, string, string, string]>([
    ['/api/v1/nodes', 'nodes', '', '', ''],
    ['/api/v1/nodes/n1', 'nodes', '', 'n1', ''],
    ['/api/v1/nodes/n1/status', 'nodes', '', 'n1', 'status'],
    ['/api/v1/namespaces', 'namespaces', '', '', ''],
    ['/api/v1/namespaces/kube-system', 'namespaces', '', 'kube-system', ''],
    ['/api/v1/namespaces/kube-system/status', 'namespaces', '', 'kube-system', 'status'],
    ['/api/v1/namespaces/default/events', 'events', 'default', '', ''],
    ['/api/v1/events', 'events', '', '', ''],
    ['/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l%2E1', 'leases.coordination.k8s.io', 'kube-system', 'l.1', ''],
    ['/apis/networking.k8s.io/v1/servicecidrs/kubernetes/status', 'servicecidrs.networking.k8s.io', '', 'kubernetes', 'status'],
    ['/apis/networking.x-k8s.io/v1/clustercidrs/c', 'clustercidrs.networking.x-k8s.io', '', 'c', ''],
    ['/api/v1/pods', 'pods', '', '', ''],
    ['/api/v1/namespaces/default/pods/p/status', 'pods', 'default', 'p', 'status'],
    ['/api/v1/namespaces/default/pods/p/eviction', 'pods', 'default', 'p', 'eviction'],
  ])('%s', (path, id, namespace, name, subresource) => {
    const r = at(path) as Route;
    expect([r.kind, r.resource.id, r.namespace, r.name, r.subresource]).toEqual(['resource', id, namespace, name, subresource]);
  });

  it.each([
    ['/api/v1/services', 404],
    ['/api/v1/namespaces/default/pods/p/log', 404],
    ['/api/v1/nodes/n1/eviction', 404],
    ['/api/v2/nodes', 404],
    ['/api/v1/namespaces/default/nodes/n1', 404],
    ['/api/v1/namespaces/default/configmaps/c/status', 404],
    ['/api/v1/configmaps/c', 404],
    ['/api/v1/nodes/n1/status/extra', 404],
    ['/api/v1/nodes/%E0%A4%A', 400],
  ])('refuses %s with %i', (path, code) => {
    expect(() => at(path)).toThrow(ApiError);
    try {
      at(path);
    } catch (e) {
      expect((e as ApiError).code).toBe(code);
    }
  });

  it('answers discovery and health paths', () => {
    expect(at('/healthz')).toEqual({ kind: 'nonresource', body: 'ok' });
    expect(at('/api')).toMatchObject({ kind: 'nonresource', body: { kind: 'APIVersions', versions: ['v1'] } });
    expect(at('/apis/coordination.k8s.io')).toMatchObject({ body: { kind: 'APIGroup', preferredVersion: { groupVersion: 'coordination.k8s.io/v1' } } });
    expect(at('/apis/unknown.example')).toEqual({ kind: 'nonresource', body: undefined });
  });
});

describe('verbOf', () => {
  const q = (s: string) => new URLSearchParams(s);
  it.each<[string, string, string, string]>([
    ['GET', '/api/v1/nodes/n1', '', 'get'],
    ['GET', '/api/v1/nodes', '', 'list'],
    ['GET', '/api/v1/nodes', 'watch=true', 'watch'],
    ['GET', '/api/v1/nodes', 'watch=1', 'watch'],
    ['POST', '/api/v1/nodes', '', 'create'],
    ['PUT', '/api/v1/nodes/n1', '', 'update'],
    ['PATCH', '/api/v1/nodes/n1/status', '', 'patch'],
    ['DELETE', '/api/v1/nodes/n1', '', 'delete'],
    ['DELETE', '/api/v1/nodes', '', 'deletecollection'],
    ['POST', '/api/v1/namespaces/default/pods/p/eviction', '', 'create'],
  ])('%s %s?%s → %s', (method, path, query, verb) => {
    expect(verbOf(method, at(path) as Route, q(query))).toBe(verb);
  });

  it.each([
    ['POST', '/api/v1/nodes/n1'],
    ['PUT', '/api/v1/nodes'],
    ['PATCH', '/api/v1/nodes'],
    ['OPTIONS', '/api/v1/nodes/n1'],
    ['GET', '/api/v1/namespaces/default/pods/p/eviction'],
    ['PUT', '/api/v1/namespaces/default/pods/p/eviction'],
  ])('%s %s is not allowed (405)', (method, path) => {
    expect(() => verbOf(method, at(path) as Route, q(''))).toThrow(expect.objectContaining({ code: 405 }));
  });
});
