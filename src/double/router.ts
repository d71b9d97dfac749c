// URL → request: which resource, namespace, name and subresource, and which audit verb.
import { apiGroup, apiGroupList, apiResourceList, coreVersions, SERVER_VERSION } from './discovery.js';
import { ApiError, badRequest, PageNotFound } from './errors.js';
import type { Verb } from './faults.js';
import { openApiV2, openApiV3, openApiV3Index } from './openapi.js';
import type { Resource } from './store.js';

export interface Route {
  kind: 'resource';
  resource: Resource;
  namespace: string;
  name: string;
  subresource: string;
}

export interface NonResourceRoute {
  kind: 'nonresource';
  /** The document to answer, or undefined for 404. */
  body: object | string | undefined;
}

export function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v === 'true' || v === '1';
}

/** The audit verb of a request. */
export function verbOf(method: string, route: Route, q: URLSearchParams): Verb {
  if (route.subresource !== '' && route.subresource !== 'status') {
    // An action subresource (pods/eviction) is created, never read or written.
    if (method === 'POST') return 'create';
    throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  }
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (boolParam(q, 'watch')) return 'watch';
      return route.name ? 'get' : 'list';
    case 'POST':
      if (route.name) throw new ApiError(405, 'MethodNotAllowed', 'POST is not allowed on a named object; create through the collection');
      return 'create';
    case 'PUT':
      if (!route.name) throw new ApiError(405, 'MethodNotAllowed', 'PUT needs an object name');
      return 'update';
    case 'PATCH':
      if (!route.name) throw new ApiError(405, 'MethodNotAllowed', 'PATCH needs an object name');
      return 'patch';
    case 'DELETE':
      return route.name ? 'delete' : 'deletecollection';
    default:
      throw new ApiError(405, 'MethodNotAllowed', `method ${method} is not supported`);
  }
}

/** Maps a URL path to a resource request, or to the body of a discovery/health endpoint. */
export function route(pathname: string, resources: readonly Resource[], findResource: (group: string, version: string, plural: string) => Resource | undefined): Route | NonResourceRoute {
  let parts: string[];
  try {
    parts = pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
  } catch {
    throw badRequest(`malformed URL path "${pathname}"`);
  }
  if (parts.length === 0) return { kind: 'nonresource', body: { paths: ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/readyz', '/version', ...[...new Set(resources.filter((r) => r.group).map((r) => `/apis/${r.group}/${r.version}`))]] } };
  if (['healthz', 'livez', 'readyz'].includes(parts[0])) return { kind: 'nonresource', body: 'ok' };
  if (parts[0] === 'version' && parts.length === 1) return { kind: 'nonresource', body: SERVER_VERSION };
  if (parts[0] === 'openapi') {
    if (parts[1] === 'v2' && parts.length === 2) return { kind: 'nonresource', body: openApiV2(resources) };
    if (parts[1] === 'v3' && parts.length === 2) return { kind: 'nonresource', body: openApiV3Index(resources) };
    if (parts[1] === 'v3') return { kind: 'nonresource', body: openApiV3(resources, parts.slice(2).join('/')) };
    return { kind: 'nonresource', body: undefined };
  }
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length === 1) return { kind: 'nonresource', body: coreVersions() };
    group = '';
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { kind: 'nonresource', body: apiGroupList(resources) };
    if (parts.length === 2) return { kind: 'nonresource', body: apiGroup(resources, parts[1]) };
    group = parts[1];
    version = parts[2];
    rest = parts.slice(3);
  } else return { kind: 'nonresource', body: undefined };
  if (rest.length === 0) return { kind: 'nonresource', body: apiResourceList(resources, group, version) };
  // A group-version nothing is served under is no API at all: the mux's plain 404.
  if (apiResourceList(resources, group, version) === undefined) throw new PageNotFound();
  let namespace = '';
  // /namespaces/<ns>/<resource>/… addresses a namespaced resource, except for the
  // namespace object itself and its subresources.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(group === '' && rest.length === 3 && ['status', 'finalize'].includes(rest[2]))) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name = '', subresource = '', ...extra] = rest;
  const resource = findResource(group, version, plural);
  if (!resource || extra.length > 0) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  if (resource.namespaced !== (namespace !== '') && !(resource.namespaced && !name)) {
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  }
  if (subresource && !(subresource === 'status' && resource.status) && !resource.actions.some((a) => a.name === subresource)) {
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  }
  return { kind: 'resource', resource, namespace, name, subresource };
}
