// A small kustomize renderer for the subset of kustomization.yaml that deploy/ uses, so the
// overlays can be rendered and checked in `npm test` without a kustomize binary. The real
// renderer is `kubectl kustomize` / `kubectl apply -k`; this one refuses any field it does not
// implement instead of ignoring it, so an overlay cannot silently depend on something untested.
//
// Supported: resources (files and directories), components (kind Component directories),
// patches (strategic merge, or JSON 6902 with a target), images (name/newName/newTag/digest). Strategic merge knows the merge keys of the
// Pod template lists deploy/ patches (containers, env, volumes, volumeMounts, ports ...); every
// other list is replaced, as in Kubernetes.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface K8sObject extends JsonObject {
  apiVersion: string;
  kind: string;
  metadata: JsonObject & { name: string; namespace?: string };
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every YAML document of a file; empty documents are skipped, any YAML error throws. */
export function loadYamlFile(file: string): Json[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'), { prettyErrors: true });
  const out: Json[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    if (doc.warnings.length > 0) throw new Error(`${file}: ${doc.warnings.map((e) => e.message).join('; ')}`);
    const value = doc.toJS({ maxAliasCount: 0 }) as Json;
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

export function asK8sObject(value: Json, where: string): K8sObject {
  if (!isObject(value)) throw new Error(`${where}: not a mapping`);
  const { apiVersion, kind, metadata } = value;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !isObject(metadata) || typeof metadata.name !== 'string') {
    throw new Error(`${where}: not a Kubernetes object (apiVersion, kind, metadata.name)`);
  }
  return value as K8sObject;
}

export function objectId(o: K8sObject): string {
  return `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

const KUSTOMIZATION_KEYS = new Set(['apiVersion', 'kind', 'resources', 'components', 'patches', 'images']);

/** The kinds a kustomization.yaml may be: a Kustomization, or a Component (reusable, see below). */
const KINDS: Record<string, string> = { Kustomization: 'kustomize.config.k8s.io/v1beta1', Component: 'kustomize.config.k8s.io/v1alpha1' };

function loadKustomization(dir: string): { file: string; k: JsonObject } {
  const file = path.join(dir, 'kustomization.yaml');
  const [k, ...rest] = loadYamlFile(file);
  if (!isObject(k) || rest.length > 0) throw new Error(`${file}: expected one mapping`);
  if (typeof k.kind !== 'string' || KINDS[k.kind] === undefined || KINDS[k.kind] !== k.apiVersion) {
    throw new Error(`${file}: not a ${KINDS.Kustomization} Kustomization or a ${KINDS.Component} Component`);
  }
  for (const key of Object.keys(k)) {
    if (!KUSTOMIZATION_KEYS.has(key)) throw new Error(`${file}: field "${key}" is not supported by this renderer`);
  }
  return { file, k };
}

/**
 * Render the kustomization in `dir` (kustomization.yaml) like `kubectl kustomize dir`. A
 * Component renders alone too (its own resources, patches and images), as kubectl does.
 */
export function render(dir: string): K8sObject[] {
  const objects: K8sObject[] = [];
  accumulate(dir, loadKustomization(dir), objects, new Set());
  return objects;
}

/**
 * Adds what `dir` declares to `objects`: its resources, then its components, then its patches
 * and images over everything accumulated. A component works on the accumulation of the
 * kustomization that lists it (kustomize's semantics): its patches reach the parent's resources.
 */
function accumulate(dir: string, { file, k }: { file: string; k: JsonObject }, objects: K8sObject[], seen: Set<string>): void {
  const add = (o: K8sObject): void => {
    const id = objectId(o);
    if (seen.has(id)) throw new Error(`${file}: ${id} is defined twice`);
    seen.add(id);
    objects.push(o);
  };
  for (const entry of asArray(k.resources, `${file}: resources`)) {
    if (typeof entry !== 'string') throw new Error(`${file}: resources entries must be paths`);
    const target = path.resolve(dir, entry);
    if (statSync(target).isDirectory()) {
      if (loadKustomization(target).k.kind === 'Component') throw new Error(`${file}: ${entry} is a Component: list it under components, not resources`);
      render(target).forEach(add);
    } else loadYamlFile(target).forEach((v, i) => add(asK8sObject(v, `${target}#${i}`)));
  }
  for (const entry of asArray(k.components, `${file}: components`)) {
    if (typeof entry !== 'string') throw new Error(`${file}: components entries must be paths`);
    const target = path.resolve(dir, entry);
    const component = loadKustomization(target);
    if (component.k.kind !== 'Component') throw new Error(`${file}: components entry ${entry} is not a Component`);
    accumulate(target, component, objects, seen);
  }

  for (const [i, p] of asArray(k.patches, `${file}: patches`).entries()) {
    applyPatch(objects, p, dir, `${file}: patches[${i}]`);
  }
  for (const [i, img] of asArray(k.images, `${file}: images`).entries()) {
    applyImage(objects, img, `${file}: images[${i}]`);
  }
}

function asArray(v: Json | undefined, where: string): Json[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new Error(`${where} must be a list`);
  return v;
}

// ---------------------------------------------------------------------------------------------
// patches

interface Target {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
}

function matches(o: K8sObject, t: Target): boolean {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  return (
    (t.group === undefined || t.group === group) &&
    (t.version === undefined || t.version === version) &&
    (t.kind === undefined || t.kind === o.kind) &&
    (t.name === undefined || t.name === o.metadata.name) &&
    (t.namespace === undefined || t.namespace === (o.metadata.namespace ?? ''))
  );
}

function applyPatch(objects: K8sObject[], entry: Json, dir: string, where: string): void {
  if (!isObject(entry)) throw new Error(`${where}: must be a mapping`);
  for (const key of Object.keys(entry)) {
    if (!['path', 'patch', 'target'].includes(key)) throw new Error(`${where}: field "${key}" is not supported`);
  }
  let docs: Json[];
  if (typeof entry.path === 'string' && entry.patch === undefined) {
    docs = loadYamlFile(path.resolve(dir, entry.path));
  } else if (typeof entry.patch === 'string' && entry.path === undefined) {
    const parsed = parseAllDocuments(entry.patch);
    docs = parsed.map((d) => {
      if (d.errors.length > 0) throw new Error(`${where}: ${d.errors.map((e) => e.message).join('; ')}`);
      return d.toJS() as Json;
    });
  } else {
    throw new Error(`${where}: exactly one of path and patch is required`);
  }
  if (docs.length !== 1) throw new Error(`${where}: one patch document expected`);
  const doc = docs[0];
  let target: Target | undefined;
  if (entry.target !== undefined) {
    if (!isObject(entry.target)) throw new Error(`${where}: target must be a mapping`);
    for (const [key, value] of Object.entries(entry.target)) {
      if (!['group', 'version', 'kind', 'name', 'namespace'].includes(key) || typeof value !== 'string') {
        throw new Error(`${where}: target field "${key}" is not supported`);
      }
    }
    target = entry.target as Target;
  }

  if (Array.isArray(doc)) {
    if (!target) throw new Error(`${where}: a JSON 6902 patch needs a target`);
    const hits = objects.filter((o) => matches(o, target));
    if (hits.length === 0) throw new Error(`${where}: target matches no resource`);
    for (const o of hits) {
      const patched = applyJson6902(o, doc, where);
      objects[objects.indexOf(o)] = asK8sObject(patched, where);
    }
    return;
  }

  const smp = asK8sObject(doc, where);
  const [group, version] = smp.apiVersion.includes('/') ? smp.apiVersion.split('/') : ['', smp.apiVersion];
  const t: Target = target ?? { group, version, kind: smp.kind, name: smp.metadata.name, namespace: smp.metadata.namespace };
  const hits = objects.filter((o) => matches(o, t));
  if (hits.length === 0) throw new Error(`${where}: patch matches no resource`);
  for (const o of hits) {
    const patched = strategicMerge(o, { ...smp, metadata: { ...smp.metadata, name: o.metadata.name } }, where);
    objects[objects.indexOf(o)] = asK8sObject(patched, where);
  }
}

/** Merge keys of the lists deploy/ patches; any other list is replaced wholesale. */
export const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  imagePullSecrets: 'name',
};

/** Strategic merge patch (no $patch / $setElementOrder directives). */
export function strategicMerge(base: Json, patch: Json, where: string, field = ''): Json {
  if (isObject(patch)) {
    for (const key of Object.keys(patch)) {
      if (key.startsWith('$')) throw new Error(`${where}: directive ${key} is not supported`);
    }
    if (!isObject(base)) return stripNulls(patch);
    const out: JsonObject = { ...base };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete out[key];
      else out[key] = key in base ? strategicMerge(base[key], value, where, key) : stripNulls(value);
    }
    return out;
  }
  if (Array.isArray(patch)) {
    const mergeKey = MERGE_KEYS[field];
    if (!mergeKey || !Array.isArray(base)) return patch;
    // kustomize's order (checked against `kubectl kustomize` in kubectl-kustomize.test.ts): the
    // patch's items first, in the patch's order (merged with the base item of the same key), then
    // the base items the patch does not name, in the base's order.
    const key = (v: Json): Json | undefined => (isObject(v) ? v[mergeKey] : undefined);
    const merged: Json[] = [];
    for (const item of patch) {
      if (!isObject(item) || !(mergeKey in item)) throw new Error(`${where}: ${field} item without ${mergeKey}`);
      const old = base.find((b) => key(b) === item[mergeKey]);
      merged.push(old === undefined ? stripNulls(item) : strategicMerge(old, item, where, field));
    }
    const named = new Set(patch.map(key));
    return [...merged, ...base.filter((b) => !named.has(key(b)))];
  }
  return patch;
}

function stripNulls(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, stripNulls(x)]));
  return v;
}

/** RFC 6902 add / remove / replace / test with RFC 6901 pointers. */
export function applyJson6902(doc: Json, ops: Json[], where: string): Json {
  let root = structuredClone(doc);
  for (const [n, op] of ops.entries()) {
    const at = `${where}: op ${n}`;
    if (!isObject(op) || typeof op.op !== 'string' || typeof op.path !== 'string') throw new Error(`${at}: needs op and path`);
    const tokens = parsePointer(op.path, at);
    if (tokens.length === 0) {
      if (op.op === 'add' || op.op === 'replace') root = structuredClone(op.value ?? null);
      else throw new Error(`${at}: ${op.op} on the document root is not supported`);
      continue;
    }
    const parent = resolve(root, tokens.slice(0, -1), at);
    const last = tokens[tokens.length - 1];
    switch (op.op) {
      case 'add': {
        if (op.value === undefined) throw new Error(`${at}: add needs a value`);
        const value = structuredClone(op.value);
        if (Array.isArray(parent)) {
          const i = last === '-' ? parent.length : arrayIndex(last, parent.length + 1, at);
          parent.splice(i, 0, value);
        } else parent[last] = value;
        break;
      }
      case 'replace': {
        if (op.value === undefined) throw new Error(`${at}: replace needs a value`);
        const value = structuredClone(op.value);
        if (Array.isArray(parent)) parent[arrayIndex(last, parent.length, at)] = value;
        else {
          if (!(last in parent)) throw new Error(`${at}: ${op.path} does not exist`);
          parent[last] = value;
        }
        break;
      }
      case 'remove': {
        if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, at), 1);
        else {
          if (!(last in parent)) throw new Error(`${at}: ${op.path} does not exist`);
          delete parent[last];
        }
        break;
      }
      case 'test': {
        const actual = Array.isArray(parent) ? parent[arrayIndex(last, parent.length, at)] : parent[last];
        if (JSON.stringify(actual) !== JSON.stringify(op.value)) throw new Error(`${at}: test failed at ${op.path}`);
        break;
      }
      default:
        throw new Error(`${at}: op "${op.op}" is not supported`);
    }
  }
  return root;
}

function parsePointer(pointer: string, where: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`${where}: path must start with /`);
  return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(token: string, limit: number, where: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Error(`${where}: bad array index "${token}"`);
  const i = Number(token);
  if (i >= limit) throw new Error(`${where}: array index ${i} out of range`);
  return i;
}

function resolve(root: Json, tokens: string[], where: string): Json[] | JsonObject {
  let cur: Json = root;
  for (const t of tokens) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(t, cur.length, where)];
    else if (isObject(cur) && t in cur) cur = cur[t];
    else throw new Error(`${where}: path segment "${t}" does not exist`);
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw new Error(`${where}: parent is not a container`);
  return cur;
}

// ---------------------------------------------------------------------------------------------
// images

/** Split an image reference into name, tag and digest (a registry port is part of the name). */
export function parseImage(ref: string): { name: string; tag?: string; digest?: string } {
  const [rest, digest] = ref.split('@', 2) as [string, string | undefined];
  const slash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > slash) return { name: rest.slice(0, colon), tag: rest.slice(colon + 1), digest };
  return { name: rest, digest };
}

function applyImage(objects: K8sObject[], entry: Json, where: string): void {
  if (!isObject(entry) || typeof entry.name !== 'string') throw new Error(`${where}: needs a name`);
  for (const [key, value] of Object.entries(entry)) {
    if (!['name', 'newName', 'newTag', 'digest'].includes(key) || typeof value !== 'string') {
      throw new Error(`${where}: field "${key}" is not supported`);
    }
  }
  const { name, newName, newTag, digest } = entry as Record<string, string | undefined>;
  for (const o of objects) {
    for (const c of podContainers(o)) {
      if (typeof c.image !== 'string') continue;
      const img = parseImage(c.image);
      if (img.name !== name) continue;
      const finalName = newName ?? img.name;
      if (digest !== undefined) c.image = `${finalName}@${digest}`;
      else if (newTag !== undefined) c.image = `${finalName}:${newTag}`;
      else c.image = `${finalName}${img.tag ? `:${img.tag}` : ''}${img.digest ? `@${img.digest}` : ''}`;
    }
  }
}

/** The containers and init containers of a workload's pod template (or a Pod). */
export function podContainers(o: K8sObject): JsonObject[] {
  const podSpec = podSpecOf(o);
  if (!podSpec) return [];
  return ['containers', 'initContainers'].flatMap((f) => (Array.isArray(podSpec[f]) ? (podSpec[f] as Json[]).filter(isObject) : []));
}

export function podSpecOf(o: K8sObject): JsonObject | undefined {
  if (o.kind === 'Pod') return isObject(o.spec) ? o.spec : undefined;
  let spec: Json | undefined = o.spec;
  if (o.kind === 'CronJob' && isObject(spec) && isObject(spec.jobTemplate)) spec = spec.jobTemplate.spec;
  if (isObject(spec) && isObject(spec.template) && isObject(spec.template.spec)) return spec.template.spec;
  return undefined;
}
