// The object store: one table per resource, one global resourceVersion counter, kube-apiserver's
// create/update/delete rules (preconditions, status subresource, finalizers, generation).
// Stored objects are never mutated after they are stored, so readers and watch events can share
// them and their JSON encoding is cached once.
import { randomUUID } from 'node:crypto';
import { ApiError, alreadyExists, badRequest, conflict, invalid, notFound, type FieldError } from './errors.js';
import { apiVersionOf, type KObject, type ObjectMeta, type ResourceDef } from './resource-def.js';
import { DEFAULT_RESOURCES } from './resources.js';
import { fieldSelectorFor, matchesLabels, parseLabelSelector } from './selectors.js';
import { WatchHub, type ChangeEvent } from './watch.js';

export interface Resource extends ResourceDef {
  /** `plural` for the core group, `plural.group` otherwise (as Kubernetes qualifies resources). */
  id: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface UpdateOptions {
  subresource?: 'status';
  /**
   * The body's metadata.uid is a precondition (409 when it names another object), as for PUT:
   * kube-apiserver's update handler makes it one. Patches leave it off: there a uid that differs
   * is a change of an immutable field (422).
   */
  uidPrecondition?: boolean;
  /** Validate and answer as if written, store nothing (no event, no resourceVersion bump). */
  dryRun?: boolean;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Check and answer as if deleted, remove nothing. */
  dryRun?: boolean;
}

export interface DeleteResult {
  /** The object as stored when the call returned (with deletionTimestamp when finalizers remain). */
  object: KObject;
  /** True when the object is gone; false when finalizers keep it. */
  deleted: boolean;
}

export interface StoreOptions {
  /** Change events kept for watch resumption (default 10,000). */
  historySize?: number;
  resources?: readonly ResourceDef[];
  /** Namespaces present at start (default: default, kube-system, kube-public, kube-node-lease). */
  namespaces?: readonly string[];
  /** Clock, for tests. */
  now?: () => Date;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** apimachinery's RegexError (pkg/util/validation): the message, examples, and the regex itself. */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}
const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const NAME_MESSAGES = {
  label: regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", DNS1123_LABEL_FMT, 'my-name', '123-abc'),
  subdomain: regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`, 'example.com'),
};
const LABEL_NAME_PART_MESSAGE = `name part ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`;
const LABEL_VALUE_MESSAGE = regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", `(${LABEL_KEY_FMT})?`, 'MyValue', 'my_value', '12345');

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Everything but metadata and status: what bumps metadata.generation. */
function specPart(obj: KObject): string {
  const { metadata: _m, status: _s, ...rest } = obj;
  return JSON.stringify(rest);
}

/**
 * Whether two JSON values are equal as JSON (key order aside; a key whose value is undefined is
 * absent, as JSON.stringify has it). Shared subtrees compare by identity first, so comparing a
 * patched object with the one it was patched from costs only the parts the patch rebuilt.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let defined = 0;
  for (const k of Object.keys(ao)) {
    if (ao[k] === undefined) continue;
    defined++;
    if (!Object.prototype.hasOwnProperty.call(bo, k) || !sameJson(ao[k], bo[k])) return false;
  }
  for (const k of Object.keys(bo)) if (bo[k] !== undefined) defined--;
  return defined === 0;
}

interface Table {
  resource: Resource;
  items: Map<string, KObject>;
  sortedKeys: string[] | null;
}

/** Where kube-apiserver keeps an object in etcd (named in its storage errors). */
function storageKey(r: Resource, namespace: string, name: string): string {
  const prefix = r.custom ? `${r.group}/${r.plural}` : r.plural === 'nodes' ? 'minions' : r.plural;
  return `/registry/${prefix}/${namespace ? `${namespace}/` : ''}${name}`;
}

function keyOf(namespace: string, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export class Store {
  readonly hub: WatchHub;
  readonly resources: readonly Resource[];
  private readonly tables = new Map<string, Table>();
  private rv = 1000;
  private readonly json = new WeakMap<object, string>();
  private readonly jsonBytes = new WeakMap<object, Buffer>();
  private readonly listItemBytes = new WeakMap<object, Buffer>();
  private readonly now: () => Date;

  constructor(options: StoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.hub = new WatchHub(options.historySize ?? 10_000, this.rv);
    this.resources = (options.resources ?? DEFAULT_RESOURCES).map((d) => ({ ...d, id: d.group ? `${d.plural}.${d.group}` : d.plural }));
    for (const r of this.resources) this.tables.set(r.id, { resource: r, items: new Map(), sortedKeys: null });
    for (const ns of options.namespaces ?? ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      this.create('namespaces', { metadata: { name: ns } });
    }
  }

  /** The current (newest) resourceVersion. */
  get resourceVersion(): number {
    return this.rv;
  }

  /** Finds a resource by `plural` (core group) or `plural.group`. */
  resource(ref: string): Resource {
    const t = this.tables.get(ref);
    if (!t) throw new Error(`unknown resource "${ref}" (known: ${[...this.tables.keys()].join(', ')})`);
    return t.resource;
  }

  findResource(group: string, version: string, plural: string): Resource | undefined {
    const t = this.tables.get(group ? `${plural}.${group}` : plural);
    return t && t.resource.version === version ? t.resource : undefined;
  }

  /** JSON text of a stored object, computed once. */
  encode(obj: KObject): string {
    let s = this.json.get(obj);
    if (s === undefined) {
      s = JSON.stringify(obj);
      this.json.set(obj, s);
    }
    return s;
  }

  /**
   * UTF-8 JSON of a stored object, computed once: LIST pages are written as these buffers, so a
   * page of 500 large Nodes costs no string building, re-encoding or garbage.
   */
  encodeBytes(obj: KObject): Buffer {
    let b = this.jsonBytes.get(obj);
    if (b === undefined) {
      b = Buffer.from(this.json.get(obj) ?? JSON.stringify(obj));
      this.jsonBytes.set(obj, b);
    }
    return b;
  }

  /**
   * UTF-8 JSON of a stored object as a LIST item: without apiVersion and kind, which
   * kube-apiserver leaves out of list items (the list carries them). Computed once per object.
   */
  encodeListItemBytes(obj: KObject, custom = false): Buffer {
    // A custom resource's list is unstructured JSON: its items keep apiVersion and kind.
    if (custom) return this.encodeBytes(obj);
    let b = this.listItemBytes.get(obj);
    if (b === undefined) {
      const json = this.encode(obj);
      const head = `{"apiVersion":${JSON.stringify(obj.apiVersion)},"kind":${JSON.stringify(obj.kind)},`;
      if (json.startsWith(head)) b = Buffer.from(`{${json.slice(head.length)}`);
      else {
        const { apiVersion: _a, kind: _k, ...rest } = obj;
        b = Buffer.from(JSON.stringify(rest));
      }
      this.listItemBytes.set(obj, b);
    }
    return b;
  }

  private table(ref: string): Table {
    this.resource(ref);
    return this.tables.get(ref) as Table;
  }

  private nsFor(r: Resource, namespace: string | undefined): string {
    if (!r.namespaced) return '';
    if (!namespace) throw badRequest(`a namespace is required for ${r.id}`);
    return namespace;
  }

  /** The stored object (shared and frozen in spirit: callers must not mutate it). */
  peek(ref: string, name: string, namespace?: string): KObject | undefined {
    const t = this.table(ref);
    return t.items.get(keyOf(t.resource.namespaced ? (namespace ?? '') : '', name));
  }

  getRef(ref: string, name: string, namespace?: string): KObject {
    const r = this.resource(ref);
    const obj = this.peek(ref, name, namespace);
    if (!obj) throw notFound(r.group, r.plural, name);
    return obj;
  }

  /** A copy of an object; throws a 404 ApiError when absent. */
  get(ref: string, name: string, namespace?: string): KObject {
    return clone(this.getRef(ref, name, namespace));
  }

  /** Stored objects, sorted by namespace/name as etcd returns them (shared: do not mutate). */
  listRefs(ref: string, options: ListOptions = {}): KObject[] {
    const t = this.table(ref);
    const r = t.resource;
    const labels = parseLabelSelector(options.labelSelector);
    const fields = fieldSelectorFor(r, options.fieldSelector);
    if (!t.sortedKeys) t.sortedKeys = [...t.items.keys()].sort();
    const out: KObject[] = [];
    const prefix = r.namespaced && options.namespace ? `${options.namespace}/` : '';
    for (const k of t.sortedKeys) {
      if (prefix && !k.startsWith(prefix)) continue;
      const obj = t.items.get(k) as KObject;
      if (labels.length > 0 && !matchesLabels(labels, obj.metadata?.labels)) continue;
      if (!fields.matches(obj)) continue;
      out.push(obj);
    }
    return out;
  }

  list(ref: string, options: ListOptions = {}): KObject[] {
    return this.listRefs(ref, options).map(clone);
  }

  private nextRv(): number {
    return ++this.rv;
  }

  private emit(type: ChangeEvent['type'], r: Resource, object: KObject, previous?: KObject): void {
    this.hub.publish({ type, rv: Number(object.metadata?.resourceVersion), resource: r.id, namespace: object.metadata?.namespace ?? '', object, previous });
    if (!r.mirror) return;
    // Two API versions over one storage (core/v1 and events.k8s.io/v1 Events): the same write,
    // same uid and resourceVersion, seen through the other version too.
    const mt = this.table(r.mirror.resource);
    const converted = r.mirror.convert(object);
    if (type === 'DELETED') this.remove(mt, converted);
    else this.put(mt, converted);
    const prev = previous ? r.mirror.convert(previous) : undefined;
    this.hub.publish({ type, rv: Number(object.metadata?.resourceVersion), resource: mt.resource.id, namespace: object.metadata?.namespace ?? '', object: converted, previous: prev });
  }

  private put(t: Table, obj: KObject): void {
    const meta = obj.metadata as ObjectMeta;
    const k = keyOf(meta.namespace ?? '', meta.name as string);
    if (!t.items.has(k)) t.sortedKeys = null;
    t.items.set(k, obj);
  }

  private remove(t: Table, obj: KObject): void {
    const meta = obj.metadata as ObjectMeta;
    t.items.delete(keyOf(meta.namespace ?? '', meta.name as string));
    t.sortedKeys = null;
  }

  private validateMeta(r: Resource, obj: KObject): FieldError[] {
    const errs: FieldError[] = [];
    const meta = obj.metadata as ObjectMeta;
    const name = meta.name as string;
    const nameRe = r.plural === 'namespaces' ? DNS_LABEL : DNS_SUBDOMAIN;
    if (!nameRe.test(name) || name.length > 253) {
      errs.push({ field: 'metadata.name', type: 'FieldValueInvalid', value: name, detail: r.plural === 'namespaces' ? NAME_MESSAGES.label : NAME_MESSAGES.subdomain });
    }
    for (const [k, v] of Object.entries(meta.labels ?? {})) {
      if (!LABEL_KEY.test(k)) errs.push({ field: 'metadata.labels', type: 'FieldValueInvalid', value: k, detail: LABEL_NAME_PART_MESSAGE });
      if (typeof v !== 'string' || !LABEL_VALUE.test(v)) errs.push({ field: 'metadata.labels', type: 'FieldValueInvalid', value: v, detail: LABEL_VALUE_MESSAGE });
    }
    for (const [k, v] of Object.entries(meta.annotations ?? {})) {
      if (typeof v !== 'string') errs.push({ field: `metadata.annotations[${k}]`, type: 'FieldValueInvalid', value: v, detail: 'annotation values must be strings' });
    }
    return errs;
  }

  private check(r: Resource, obj: KObject, old: KObject | undefined, metaErrors: FieldError[] = []): void {
    const errs = [...metaErrors, ...this.validateMeta(r, obj), ...(r.validate ? r.validate(obj, old) : [])];
    if (errs.length > 0) throw invalid(r.kind, r.group, obj.metadata?.name ?? '', errs);
  }

  private normalize(r: Resource, input: unknown, namespace: string, owned: boolean): KObject {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw badRequest(`the body of a ${r.kind} must be a JSON object`);
    const obj = (owned ? input : clone(input)) as KObject;
    const av = apiVersionOf(r);
    if (obj.kind !== undefined && obj.kind !== r.kind) throw badRequest(`the kind "${String(obj.kind)}" of the body does not match the resource ${r.id} (kind ${r.kind})`);
    if (obj.apiVersion !== undefined && obj.apiVersion !== av) throw badRequest(`the apiVersion "${String(obj.apiVersion)}" of the body does not match ${av}`);
    const given = obj.metadata ?? {};
    if (typeof given !== 'object' || Array.isArray(given)) throw badRequest('metadata must be an object');
    // A copy: the store fills metadata in, and an owned input may share it with a stored object
    // (a merge patch leaves untouched parts of the stored object in place).
    const meta = { ...given } as ObjectMeta;
    if (r.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = namespace;
    } else delete meta.namespace;
    // Rebuild with apiVersion and kind first, as kube-apiserver serialises them.
    const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = obj;
    return { apiVersion: av, kind: r.kind, metadata: meta, ...rest };
  }

  create(ref: string, input: unknown, namespace?: string): KObject {
    return clone(this.createRef(ref, input, namespace));
  }

  /** Like create, returning the stored object. `owned`: the caller hands `input` over (no copy). */
  createRef(ref: string, input: unknown, namespace?: string, owned = false, dryRun = false): KObject {
    const t = this.table(ref);
    const r = t.resource;
    const ns = this.nsFor(r, namespace ?? (input as KObject | undefined)?.metadata?.namespace);
    const obj = this.normalize(r, input, ns, owned);
    const meta = obj.metadata as ObjectMeta;
    // kube-apiserver's storage refuses it with a plain error: 500, no reason.
    if (meta.resourceVersion) throw new ApiError(500, undefined, 'resourceVersion should not be set on objects to be created');
    if (!meta.name) {
      if (!meta.generateName) throw invalid(r.kind, r.group, '', [{ field: 'metadata.name', type: 'FieldValueRequired', detail: 'name or generateName is required' }]);
      let name: string;
      do {
        name = meta.generateName + Array.from({ length: 5 }, () => GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)]).join('');
      } while (t.items.has(keyOf(ns, name)));
      meta.name = name;
    }
    if (r.namespaced && !this.tables.get('namespaces')?.items.has(ns)) throw notFound('', 'namespaces', ns);
    if (t.items.has(keyOf(ns, meta.name))) throw alreadyExists(r.group, r.plural, meta.name);
    if (r.status && !r.keepStatusOnCreate) delete obj.status;
    r.defaults?.(obj);
    r.prepare?.(obj);
    r.encodeAsGo?.(obj);
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    this.check(r, obj, undefined);
    meta.uid = randomUUID();
    meta.creationTimestamp = this.timestamp();
    if (r.generation) meta.generation = 1;
    else delete meta.generation;
    // A dry run answers the object as it would be stored, without a resourceVersion.
    if (dryRun) return obj;
    meta.resourceVersion = String(this.nextRv());
    this.put(t, obj);
    this.emit('ADDED', r, obj);
    return obj;
  }

  private timestamp(): string {
    // Kubernetes timestamps have second precision.
    return this.now().toISOString().replace(/\.\d+Z$/, 'Z');
  }

  update(ref: string, input: unknown, options: UpdateOptions & { name?: string; namespace?: string } = {}): KObject {
    return clone(this.updateRef(ref, input, options));
  }

  /**
   * Replaces an object. `metadata.resourceVersion`, when set, must match the stored one (409).
   * With `subresource: 'status'` only status (and, for built-in kinds, metadata) changes;
   * otherwise status is kept from the stored object for resources with a status subresource.
   */
  updateRef(ref: string, input: unknown, options: UpdateOptions & { name?: string; namespace?: string; owned?: boolean } = {}): KObject {
    const t = this.table(ref);
    const r = t.resource;
    const body = input as KObject | undefined;
    const ns = this.nsFor(r, options.namespace ?? body?.metadata?.namespace);
    const obj = this.normalize(r, input, ns, options.owned ?? false);
    const meta = obj.metadata as ObjectMeta;
    const name = options.name ?? meta.name;
    if (!name) throw badRequest('metadata.name is required for an update');
    if (meta.name !== undefined && meta.name !== name) throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    meta.name = name;
    const old = t.items.get(keyOf(ns, name));
    if (!old) {
      if (r.createOnUpdate && !options.subresource) {
        delete meta.resourceVersion;
        return this.createRef(ref, obj, ns, true, options.dryRun);
      }
      throw notFound(r.group, r.plural, name);
    }
    const oldMeta = old.metadata as ObjectMeta;
    if (options.uidPrecondition && meta.uid && meta.uid !== oldMeta.uid) {
      // Checked by the storage layer before anything else (k8s.io/apiserver storage Preconditions.Check).
      throw conflict(r.group, r.plural, name, `StorageError: invalid object, Code: 4, Key: ${storageKey(r, ns, name)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${oldMeta.uid}`);
    }
    if (meta.resourceVersion) {
      if (meta.resourceVersion !== oldMeta.resourceVersion) {
        throw conflict(r.group, r.plural, name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
    } else if (r.custom) {
      // Custom resources refuse unconditional updates.
      // Reported against the resource, not the kind (apiextensions-apiserver's update strategy).
      throw invalid(r.plural, r.group, name, [{ field: 'metadata.resourceVersion', type: 'FieldValueInvalid', value: 0, detail: 'must be specified for an update' }]);
    }
    let next: KObject;
    if (options.subresource === 'status') {
      if (!r.status) throw notFound(r.group, r.plural, name);
      // Stored objects are immutable, so the new one may share unchanged parts with the old one.
      next = { ...old, metadata: r.custom ? { ...oldMeta } : meta };
      if (obj.status === undefined) delete next.status;
      else next.status = obj.status;
    } else {
      next = obj;
      if (r.status) {
        if (old.status === undefined) delete next.status;
        else next.status = old.status;
      }
    }
    const nm = next.metadata as ObjectMeta;
    // metadata.uid is immutable: a write naming another uid is refused (kube-apiserver checks it
    // twice, in the common metadata checks and again in the kind's update validation, and reports
    // both causes); one naming none keeps the stored uid. A write through /status of a custom
    // resource keeps all metadata, so only its own uid counts there.
    const givenUid = options.subresource === 'status' && r.custom ? (obj.metadata as ObjectMeta).uid : nm.uid;
    const uidErrors: FieldError[] = givenUid && givenUid !== oldMeta.uid
      ? Array.from({ length: 2 }, () => ({ field: 'metadata.uid', type: 'FieldValueInvalid' as const, value: givenUid, detail: 'field is immutable' }))
      : [];
    // System-owned metadata cannot be changed by writers.
    nm.uid = oldMeta.uid;
    nm.creationTimestamp = oldMeta.creationTimestamp;
    nm.namespace = oldMeta.namespace;
    if (!r.namespaced) delete nm.namespace;
    if (oldMeta.deletionTimestamp) {
      nm.deletionTimestamp = oldMeta.deletionTimestamp;
      nm.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
      const added = (nm.finalizers ?? []).filter((f) => !(oldMeta.finalizers ?? []).includes(f));
      if (added.length > 0) {
        // Go's %#v of the list; reported twice, as kube-apiserver's update validation runs this check twice.
        const detail = `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`;
        throw invalid(r.kind, r.group, name, [0, 1].map(() => ({ field: 'metadata.finalizers', type: 'FieldValueForbidden' as const, detail })));
      }
    } else {
      delete nm.deletionTimestamp;
      delete nm.deletionGracePeriodSeconds;
    }
    if (r.generation) nm.generation = (oldMeta.generation ?? 1) + (specPart(next) !== specPart(old) ? 1 : 0);
    else delete nm.generation;
    if (nm.finalizers && nm.finalizers.length === 0) delete nm.finalizers;
    nm.resourceVersion = oldMeta.resourceVersion;
    if (options.subresource !== 'status') r.prepare?.(next);
    r.encodeAsGo?.(next);
    this.check(r, next, old, uidErrors);
    // A write that changes nothing is not a write: no new resourceVersion, no event.
    if (sameJson(next, old)) return old;
    if (options.dryRun) return next;
    nm.resourceVersion = String(this.nextRv());
    if (nm.deletionTimestamp && (nm.finalizers ?? []).length === 0) {
      this.remove(t, next);
      this.emit('DELETED', r, next);
      return next;
    }
    this.put(t, next);
    this.emit('MODIFIED', r, next, old);
    return next;
  }

  delete(ref: string, name: string, namespace?: string, options: DeleteOptions = {}): DeleteResult {
    const res = this.deleteRef(ref, name, namespace, options);
    return { object: clone(res.object), deleted: res.deleted };
  }

  /** Deletes now, or marks deletionTimestamp when finalizers remain (the object stays until they go). */
  deleteRef(ref: string, name: string, namespace?: string, options: DeleteOptions = {}): DeleteResult {
    const t = this.table(ref);
    const r = t.resource;
    const ns = this.nsFor(r, namespace);
    const old = t.items.get(keyOf(ns, name));
    if (!old) throw notFound(r.group, r.plural, name);
    const meta = old.metadata as ObjectMeta;
    const pre = options.preconditions ?? {};
    // kube-apiserver checks delete preconditions early (k8s.io/apiserver registry/rest BeforeDelete),
    // naming the kind rather than the resource.
    if (pre.uid && pre.uid !== meta.uid) {
      throw conflict(r.group, r.kind, name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${meta.uid}). The object might have been deleted and then recreated`);
    }
    if (pre.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
      throw conflict(r.group, r.kind, name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${meta.resourceVersion}). The object might have been modified`);
    }
    if (options.dryRun) {
      const marked = (meta.finalizers ?? []).length > 0;
      if (!marked) return { object: old, deleted: true };
      const generation = r.generation ? { generation: (meta.generation ?? 1) + 1 } : {};
      return { object: meta.deletionTimestamp ? old : { ...old, metadata: { ...meta, deletionTimestamp: this.timestamp(), deletionGracePeriodSeconds: 0, ...generation } }, deleted: false };
    }
    if (r.plural === 'namespaces') this.deleteNamespaceContents(name);
    if ((meta.finalizers ?? []).length > 0) {
      if (meta.deletionTimestamp) return { object: old, deleted: false };
      const next: KObject = { ...old, metadata: { ...meta, deletionTimestamp: this.timestamp(), deletionGracePeriodSeconds: 0, resourceVersion: String(this.nextRv()) } };
      if (r.generation) (next.metadata as ObjectMeta).generation = (meta.generation ?? 1) + 1;
      this.put(t, next);
      this.emit('MODIFIED', r, next, old);
      return { object: next, deleted: false };
    }
    const gone: KObject = { ...old, metadata: { ...meta, resourceVersion: String(this.nextRv()) } };
    this.remove(t, old);
    this.emit('DELETED', r, gone);
    return { object: gone, deleted: true };
  }

  // The namespace controller's job, done synchronously: objects with finalizers stay (marked).
  private deleteNamespaceContents(ns: string): void {
    for (const t of this.tables.values()) {
      if (!t.resource.namespaced) continue;
      for (const obj of this.listRefs(t.resource.id, { namespace: ns })) this.deleteRef(t.resource.id, obj.metadata?.name as string, ns);
    }
  }

  /** Seeds many objects at once (no HTTP, same rules and events as create). */
  createMany(ref: string, inputs: Iterable<unknown>, namespace?: string): number {
    let n = 0;
    for (const o of inputs) {
      this.createRef(ref, o, namespace);
      n++;
    }
    return n;
  }

  /** Forgets watch history: resuming from an older resourceVersion gets 410 Expired. */
  compactHistory(): void {
    this.hub.compact(this.rv);
  }
}
