// The four PATCH bodies kube-apiserver accepts: JSON Patch (RFC 6902), JSON merge patch
// (RFC 7386), strategic merge patch (per-field list strategies taken from the Go struct tags of
// the built-in types), and server-side apply (approximated; see docs/apiserver-double.md).
// Pure functions over plain JSON values; inputs are never mutated. The merge patches share the
// subtrees of the document they leave alone (a 12 KB Node is not copied to change one field), so a
// caller that mutates the result must copy the part it mutates first.
import { ApiError, badRequest, patchNotApplied } from './errors.js';
import { goFormat } from './go-format.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ak = Object.keys(a as object);
  const bo = b as Record<string, unknown>;
  return ak.length === Object.keys(bo).length && ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && deepEqual((a as Record<string, unknown>)[k], bo[k]));
}

// kube-apiserver answers a JSON patch that parses but cannot be applied with a bare 422 that names
// nothing (see patchNotApplied); what went wrong is kept as the error's cause, for the double's log.
function unprocessable(message: string): ApiError {
  const e = patchNotApplied();
  e.cause = new Error(message);
  return e;
}

// ---------------------------------------------------------------- JSON Patch (RFC 6902)

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw unprocessable(`json patch: invalid pointer "${pointer}": must start with "/"`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(arr: Json[], seg: string, pointer: string, allowEnd: boolean): number {
  if (seg === '-' && allowEnd) return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(seg)) throw unprocessable(`json patch: invalid array index "${seg}" in "${pointer}"`);
  const i = Number(seg);
  if (i > arr.length || (!allowEnd && i === arr.length)) throw unprocessable(`json patch: index ${i} out of bounds in "${pointer}"`);
  return i;
}

/** Returns [parent container, last segment] for a pointer, failing when the parent is missing. */
function resolveParent(doc: Json, pointer: string): [JsonObject | Json[], string] {
  const segs = parsePointer(pointer);
  if (segs.length === 0) throw unprocessable(`json patch: operation on the document root is not supported`);
  let cur: Json = doc;
  for (const seg of segs.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, seg, pointer, false)];
    else if (isObject(cur) && Object.prototype.hasOwnProperty.call(cur, seg)) cur = cur[seg];
    else throw unprocessable(`json patch: path "${pointer}" does not exist: missing "${seg}"`);
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw unprocessable(`json patch: path "${pointer}" does not exist`);
  return [cur, segs[segs.length - 1]];
}

function getAt(doc: Json, pointer: string): Json {
  if (pointer === '') return doc;
  const [parent, last] = resolveParent(doc, pointer);
  if (Array.isArray(parent)) return parent[arrayIndex(parent, last, pointer, false)];
  if (!Object.prototype.hasOwnProperty.call(parent, last)) throw unprocessable(`json patch: path "${pointer}" does not exist`);
  return parent[last];
}

function addAt(doc: Json, pointer: string, value: Json): void {
  const [parent, last] = resolveParent(doc, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, pointer, true), 0, value);
  else parent[last] = value;
}

function removeAt(doc: Json, pointer: string): Json {
  const [parent, last] = resolveParent(doc, pointer);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, last, pointer, false), 1)[0];
  if (!Object.prototype.hasOwnProperty.call(parent, last)) throw unprocessable(`json patch: cannot remove "${pointer}": it does not exist`);
  const v = parent[last];
  delete parent[last];
  return v;
}

export function applyJsonPatch(doc: unknown, patch: unknown): Json {
  if (!Array.isArray(patch)) throw badRequest('json patch: the body must be a JSON array of operations');
  let out = clone(doc) as Json;
  patch.forEach((raw, i) => {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw unprocessable(`json patch: operation ${i} needs string "op" and "path"`);
    }
    const op = raw as unknown as JsonPatchOp;
    const needsValue = op.op === 'add' || op.op === 'replace' || op.op === 'test';
    if (needsValue && !Object.prototype.hasOwnProperty.call(raw, 'value')) throw unprocessable(`json patch: operation ${i} (${op.op} ${op.path}) is missing "value"`);
    switch (op.op) {
      case 'add':
        if (op.path === '') out = clone(op.value as Json);
        else addAt(out, op.path, clone(op.value as Json));
        break;
      case 'remove':
        removeAt(out, op.path);
        break;
      case 'replace':
        if (op.path === '') out = clone(op.value as Json);
        else {
          getAt(out, op.path); // must exist
          const [parent, last] = resolveParent(out, op.path);
          if (Array.isArray(parent)) parent[arrayIndex(parent, last, op.path, false)] = clone(op.value as Json);
          else parent[last] = clone(op.value as Json);
        }
        break;
      case 'move': {
        if (typeof op.from !== 'string') throw unprocessable(`json patch: operation ${i} (move) is missing "from"`);
        const v = removeAt(out, op.from);
        addAt(out, op.path, v);
        break;
      }
      case 'copy': {
        if (typeof op.from !== 'string') throw unprocessable(`json patch: operation ${i} (copy) is missing "from"`);
        addAt(out, op.path, clone(getAt(out, op.from)));
        break;
      }
      case 'test': {
        let actual: Json | undefined;
        try {
          actual = getAt(out, op.path);
        } catch {
          actual = undefined;
        }
        if (!deepEqual(actual, op.value)) {
          throw unprocessable(`json patch test operation failed at "${op.path}"`);
        }
        break;
      }
      default:
        throw unprocessable(`json patch: unknown operation "${op.op}" at index ${i}`);
    }
  });
  return out;
}

// ---------------------------------------------------------------- JSON merge patch (RFC 7386)

export function applyMergePatch(doc: unknown, patch: unknown): Json {
  if (!isObject(patch)) return clone(patch as Json);
  const out: JsonObject = isObject(doc) ? { ...doc } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = isObject(v) ? applyMergePatch(out[k], v) : clone(v);
  }
  return out;
}

// ---------------------------------------------------------------- strategic merge patch

/** How one list field merges: by a key field, as a set of scalars, or (default) atomically. */
export type ListStrategy = { mergeKey: string } | { set: true };

/** Dotted field paths (no list indexes) → list strategy. Paths absent here are atomic lists. */
export type SmpSchema = Readonly<Record<string, ListStrategy>>;

/** List fields of ObjectMeta that carry patch strategies in every kind. */
export const METADATA_SMP: SmpSchema = {
  'metadata.finalizers': { set: true },
  'metadata.ownerReferences': { mergeKey: 'uid' },
};

const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';

function mergeKeyed(original: Json[], patch: Json[], key: string, path: string, schema: SmpSchema): Json[] {
  // A `{"$patch": "replace"}` element means: the rest of the patch list is the whole new list.
  if (patch.some((e) => isObject(e) && e.$patch === 'replace')) {
    return patch.filter((e) => !(isObject(e) && e.$patch === 'replace')).map((e) => stripDirectives(e));
  }
  const out = [...original];
  for (const el of patch) {
    if (!isObject(el)) throw badRequest(`strategic merge patch: ${path} elements must be objects with "${key}"`);
    if (!Object.prototype.hasOwnProperty.call(el, key)) {
      throw badRequest(`strategic merge patch: ${path}: map: ${JSON.stringify(el)} does not contain declared merge key: ${key}`);
    }
    // Like kube, the first element with the same key wins: lists holding duplicate keys merge lossily.
    const idx = out.findIndex((o) => isObject(o) && deepEqual(o[key], el[key]));
    if (el.$patch === 'delete') {
      for (let i = out.length - 1; i >= 0; i--) {
        const o = out[i];
        if (isObject(o) && deepEqual(o[key], el[key])) out.splice(i, 1);
      }
    } else if (idx >= 0) {
      out[idx] = mergeMap(out[idx] as JsonObject, el, path, schema);
    } else {
      out.push(stripDirectives(el));
    }
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    if (x === null) continue;
    out[k] = stripDirectives(x);
  }
  return out;
}

/**
 * The order strategic merge gives a merged list (k8s.io/apimachinery strategicpatch,
 * normalizeElementOrder and mergeSortedSlice): the elements the patch names, in the patch's order
 * (or its `$setElementOrder`), with the elements only the server has slotted in by their old order
 * where both are known, and after them otherwise. So a patch adding one finalizer or one CIDR puts
 * it first: `[b]` onto `[a]` gives `[b, a]`.
 */
export function smpOrder(merged: readonly Json[], patchOrder: readonly Json[], original: readonly Json[], key: string | undefined): Json[] {
  const keyOf = (e: Json): string => JSON.stringify(key && isObject(e) ? e[key] : e);
  const indexIn = (list: readonly Json[]): Map<string, number> => {
    const m = new Map<string, number>();
    list.forEach((e, i) => {
      const k = keyOf(e);
      if (!m.has(k)) m.set(k, i);
    });
    return m;
  };
  const inPatch = indexIn(patchOrder);
  const inServer = indexIn(original);
  const byIndex = (m: Map<string, number>) => (a: Json, b: Json): number => (m.get(keyOf(a)) ?? 0) - (m.get(keyOf(b)) ?? 0);
  const right = merged.filter((e) => inPatch.has(keyOf(e))).sort(byIndex(inPatch));
  const left = merged.filter((e) => !inPatch.has(keyOf(e))).sort(byIndex(inServer));
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) out.push(left[i++]);
    else if (i >= left.length) out.push(right[j++]);
    else {
      // A server-only element goes first only when both it and the patch element have a known
      // old position and its is earlier.
      const li = inServer.get(keyOf(left[i]));
      const ri = inServer.get(keyOf(right[j]));
      if (li !== undefined && ri !== undefined && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

function mergeMap(original: JsonObject, patch: JsonObject, basePath: string, schema: SmpSchema): JsonObject {
  if (patch.$patch === 'replace') return stripDirectives(patch) as JsonObject;
  if (patch.$patch !== undefined && patch.$patch !== 'merge' && patch.$patch !== 'delete') {
    // kube-apiserver fails such a patch as an internal error, printing the map as Go does.
    throw new ApiError(500, undefined, `unknown patch type: ${String(patch.$patch)} in map: ${goFormat(patch)}`);
  }
  let out: JsonObject = { ...original };
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys.map(String));
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }
  const orders: [string, Json[]][] = [];
  const deletions: [string, Json[]][] = [];
  // Merged lists: field, the patch's list, the list before, merge key (none for sets).
  const merges: [string, Json[], Json[], string | undefined][] = [];
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys') continue;
    if (k.startsWith(SET_ORDER)) {
      if (Array.isArray(v)) orders.push([k.slice(SET_ORDER.length), v]);
      continue;
    }
    if (k.startsWith(DELETE_PRIMITIVE)) {
      if (Array.isArray(v)) deletions.push([k.slice(DELETE_PRIMITIVE.length), v]);
      continue;
    }
    const path = basePath ? `${basePath}.${k}` : k;
    if (v === null) {
      delete out[k];
    } else if (isObject(v)) {
      if (v.$patch === 'delete') delete out[k];
      else out[k] = mergeMap(isObject(out[k]) ? out[k] : {}, v, path, schema);
    } else if (Array.isArray(v)) {
      const strategy = schema[path];
      const cur = Array.isArray(out[k]) ? out[k] : [];
      if (strategy && 'mergeKey' in strategy) {
        out[k] = mergeKeyed(cur, v, strategy.mergeKey, path, schema);
        const replaced = v.some((e) => isObject(e) && e.$patch === 'replace');
        if (!replaced) merges.push([k, v.filter((e) => !(isObject(e) && e.$patch === 'delete')), cur, strategy.mergeKey]);
      } else if (strategy && 'set' in strategy) {
        const merged = [...cur];
        for (const x of v) if (!merged.some((m) => deepEqual(m, x))) merged.push(clone(x));
        out[k] = merged;
        merges.push([k, v, cur, undefined]);
      } else out[k] = stripDirectives(v);
    } else {
      out[k] = v;
    }
  }
  for (const [field, values] of deletions) {
    if (Array.isArray(out[field])) out[field] = out[field].filter((x) => !values.some((d) => deepEqual(d, x)));
  }
  const ordered = new Map(orders);
  for (const [field, patchList, before, key] of merges) {
    if (Array.isArray(out[field]) && !ordered.has(field)) out[field] = smpOrder(out[field], patchList, before, key);
  }
  for (const [field, order] of orders) {
    const path = basePath ? `${basePath}.${field}` : field;
    const strategy = schema[path];
    const before = Array.isArray(original[field]) ? original[field] : [];
    if (Array.isArray(out[field])) out[field] = smpOrder(out[field], order, before, strategy && 'mergeKey' in strategy ? strategy.mergeKey : undefined);
  }
  return out;
}

export function applyStrategicMergePatch(doc: unknown, patch: unknown, schema: SmpSchema): Json {
  if (!isObject(patch)) throw badRequest('strategic merge patch: the body must be a JSON object');
  return mergeMap(isObject(doc) ? doc : {}, patch, '', schema);
}
