// OpenAPI documents of the served resources, generated from openapi-schema.ts:
// - /openapi/v2: one Swagger 2.0 document (JSON, or protobuf — what kubectl asks for — in
//   openapi-proto.ts); kubectl's client-side validation parses it before any write.
// - /openapi/v3: an index of group-versions, and one OpenAPI 3.0 document per group-version
//   with the schemas (kubectl explain, apply's strategic-merge patch metadata) and the paths
//   whose PATCH operation tells kubectl the server takes `fieldValidation`.
import { createHash } from 'node:crypto';
import { DEFINITIONS, definitionOf, type Schema } from './openapi-schema.js';
import { SERVER_VERSION } from './discovery.js';
import type { Resource } from './store.js';

type Json = Record<string, unknown>;
type RefStyle = 'v2' | 'v3';

const PATCH_DEF = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';

function refPath(name: string, style: RefStyle): string {
  return style === 'v2' ? `#/definitions/${name}` : `#/components/schemas/${name}`;
}

/** One schema in OpenAPI form (v2 and v3 differ only in how a described reference is written). */
export function toOpenApi(s: Schema, style: RefStyle): Json {
  const d = s.d !== undefined ? { description: s.d } : {};
  switch (s.t) {
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
      return { ...d, type: s.t, ...(s.format ? { format: s.format } : {}), ...(s.maxLength !== undefined ? { maxLength: s.maxLength } : {}), ...(s.enum ? { enum: s.enum } : {}) };
    case 'object': {
      const props: Json = {};
      for (const [k, v] of Object.entries(s.props)) props[k] = toOpenApi(v, style);
      return {
        ...d,
        type: 'object',
        ...(Object.keys(props).length > 0 ? { properties: props } : {}),
        ...(s.required?.length ? { required: s.required } : {}),
        ...(s.atomic ? { 'x-kubernetes-map-type': 'atomic' } : {}),
      };
    }
    case 'array':
      return {
        ...d,
        type: 'array',
        items: toOpenApi(s.items, style),
        ...(s.listType ? { 'x-kubernetes-list-type': s.listType } : {}),
        ...(s.mapKeys ? { 'x-kubernetes-list-map-keys': s.mapKeys } : {}),
        ...(s.mergeKey ? { 'x-kubernetes-patch-merge-key': s.mergeKey } : {}),
        ...(s.strategy ? { 'x-kubernetes-patch-strategy': s.strategy } : {}),
      };
    case 'map':
      return { ...d, type: 'object', additionalProperties: toOpenApi(s.values, style) };
    case 'ref':
      // kube-apiserver's v3 documents wrap a described reference in allOf; v2 puts them side by side.
      if (s.d === undefined) return { $ref: refPath(s.name, style) };
      return style === 'v3' ? { ...d, allOf: [{ $ref: refPath(s.name, style) }] } : { ...d, $ref: refPath(s.name, style) };
    case 'any':
      return style === 'v3' ? { ...d, type: 'object', 'x-kubernetes-preserve-unknown-fields': true } : { ...d, type: 'object' };
  }
}

function gvkOf(r: Resource): Json {
  return { group: r.group, kind: r.kind, version: r.version };
}

/** Definition names reachable from `roots`. */
function closure(roots: string[]): string[] {
  const seen = new Set<string>();
  const visit = (s: Schema): void => {
    if (s.t === 'ref') add(s.name);
    else if (s.t === 'object') Object.values(s.props).forEach(visit);
    else if (s.t === 'array') visit(s.items);
    else if (s.t === 'map') visit(s.values);
  };
  const add = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    const def = DEFINITIONS[name];
    if (!def) throw new Error(`openapi: no definition named ${name}`);
    visit(def);
  };
  roots.forEach(add);
  return [...seen].sort();
}

/** Definitions (name → OpenAPI schema) of `names`, kinds tagged with their group-version-kinds. */
function definitions(names: string[], resources: readonly Resource[], style: RefStyle): Json {
  const out: Json = {};
  for (const name of names) {
    const schema = toOpenApi(DEFINITIONS[name], style);
    const gvks = resources.filter((r) => definitionOf(r) === name).map(gvkOf);
    if (gvks.length > 0) schema['x-kubernetes-group-version-kind'] = gvks;
    out[name] = schema;
  }
  return out;
}

function served(resources: readonly Resource[]): Resource[] {
  return resources.filter((r) => definitionOf(r) !== undefined);
}

/** The Swagger 2.0 document: every definition (kubectl reads only these from v2). */
export function openApiV2(resources: readonly Resource[]): Json {
  const names = closure(served(resources).map((r) => definitionOf(r) as string));
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion },
    paths: {},
    definitions: definitions(names, resources, 'v2'),
  };
}

/** `api/v1`, `apis/<group>/<version>`: the key of a group-version in the v3 index. */
export function groupVersionPath(r: Pick<Resource, 'group' | 'version'>): string {
  return r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`;
}

const query = (name: string, description: string): Json => ({ name, in: 'query', description, schema: { type: 'string', uniqueItems: true } });
const WRITE_PARAMS = [
  query('dryRun', 'All: validate the request and answer what would be stored, without storing it.'),
  query('fieldManager', 'Name of the actor making the change.'),
  query('fieldValidation', 'Ignore, Warn or Strict: what to do with fields the schema does not declare.'),
];

function operation(r: Resource, action: string, id: string, extra: Json = {}): Json {
  const body = { 'application/json': { schema: { $ref: refPath(definitionOf(r) as string, 'v3') } } };
  return {
    operationId: id,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvkOf(r),
    responses: { '200': { description: 'OK', content: body } },
    ...extra,
  };
}

function pathsOf(r: Resource): Json {
  const base = `/${groupVersionPath(r)}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}`;
  const id = (verb: string, sub = ''): string => `${verb}${r.kind}${sub}`;
  const write = { parameters: WRITE_PARAMS };
  // Built-in kinds take strategic merge patches; custom resources do not.
  const patchTypes = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', ...(r.custom ? [] : ['application/strategic-merge-patch+json'])];
  const patchBody = { requestBody: { content: Object.fromEntries(patchTypes.map((t) => [t, { schema: { $ref: refPath(PATCH_DEF, 'v3') } }])), required: true } };
  const patchParams = { parameters: [...WRITE_PARAMS, query('force', 'Apply patches only: take over fields other managers own.')] };
  const item = {
    get: operation(r, 'get', id('read')),
    put: operation(r, 'put', id('replace'), write),
    patch: operation(r, 'patch', id('patch'), { ...patchParams, ...patchBody }),
    delete: operation(r, 'delete', id('delete'), { parameters: [WRITE_PARAMS[0]] }),
  };
  const out: Json = {
    [base]: { get: operation(r, 'list', id('list')), post: operation(r, 'post', id('create'), write), delete: operation(r, 'deletecollection', id('deleteCollection'), { parameters: [WRITE_PARAMS[0]] }) },
    [`${base}/{name}`]: item,
  };
  if (r.status) {
    out[`${base}/{name}/status`] = { get: operation(r, 'get', id('read', 'Status')), put: operation(r, 'put', id('replace', 'Status'), write), patch: operation(r, 'patch', id('patch', 'Status'), { ...patchParams, ...patchBody }) };
  }
  return out;
}

/** The OpenAPI 3.0 document of one group-version (`api/v1`, `apis/g/v`), or undefined. */
export function openApiV3(resources: readonly Resource[], gvPath: string): Json | undefined {
  const rs = served(resources).filter((r) => groupVersionPath(r) === gvPath);
  if (rs.length === 0) return undefined;
  const paths: Json = {};
  for (const r of rs) Object.assign(paths, pathsOf(r));
  const names = closure([...rs.map((r) => definitionOf(r) as string), PATCH_DEF]);
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion },
    paths,
    components: { schemas: definitions(names, resources, 'v3') },
  };
}

/** The v3 index: each group-version and the URL of its document (with a content hash, as kubectl caches by it). */
export function openApiV3Index(resources: readonly Resource[]): Json {
  const paths: Json = {};
  for (const gv of [...new Set(served(resources).map(groupVersionPath))].sort()) {
    const hash = createHash('sha512').update(JSON.stringify(openApiV3(resources, gv))).digest('hex').slice(0, 128).toUpperCase();
    paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${hash}` };
  }
  return { paths };
}
