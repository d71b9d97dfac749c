// The static provider's cloud-config: a YAML (or JSON) file listing nodes and their metadata.
// Parsing is pure and strict: every problem is reported with the field path and the bad value,
// so an operator can fix the file from the log line alone.
import { parse as parseYAML } from 'yaml';
import { DuplicateJsonKeyError, duplicateKeyError, findDuplicateJsonKey, parseJsonConfig, splitJsonConfig } from '../../src/util/json-text.js';
import { interner, sharedValues } from '../../src/util/intern.js';
import { z } from 'zod';
import type { InstanceMetadata } from '../types.js';
import { NODE_ADDRESS_TYPES, type NodeAddress, type NodeAddressType } from '../../src/model/node-address.js';
import { canonicalCIDR, canonicalIP } from '../ip.js';

export interface StaticNode extends InstanceMetadata {
  /** Reported by instancesShutdown. */
  shutdown: boolean;
}

/**
 * One entry as callers get it. A constructor keeps every field inside the object (an object
 * literal grown past four keys moves them to a separate array); fields are declared, not defined,
 * so an absent one stays absent.
 */
class StaticEntry implements StaticNode {
  declare providerID: string;
  declare addresses: NodeAddress[];
  declare shutdown: boolean;
  declare instanceType?: string;
  declare zone?: string;
  declare region?: string;
  declare podCIDRs?: string[];
  declare labels?: Record<string, string>;
  constructor(providerID: string, addresses: NodeAddress[], shutdown: boolean, o: { instanceType: string | undefined; zone: string | undefined; region: string | undefined; podCIDRs: string[] | undefined; labels: Record<string, string> | undefined }) {
    this.providerID = providerID;
    this.addresses = addresses;
    this.shutdown = shutdown;
    if (o.instanceType !== undefined) this.instanceType = o.instanceType;
    if (o.zone !== undefined) this.zone = o.zone;
    if (o.region !== undefined) this.region = o.region;
    if (o.podCIDRs !== undefined) this.podCIDRs = o.podCIDRs;
    if (o.labels !== undefined) this.labels = o.labels;
  }
}

/** What entries have in common: everything but the providerID and the addresses' values. */
interface Shape {
  readonly instanceType: string | undefined;
  readonly zone: string | undefined;
  readonly region: string | undefined;
  readonly shutdown: boolean;
  /**
   * The types of the entry's addresses, in order, when the entry keeps their values alone (in
   * `Kept.address`); undefined when it keeps the whole list.
   */
  readonly addressTypes: readonly NodeAddressType[] | undefined;
}

/** Separates the values of several addresses kept as one string: no value holds it (the config refuses whitespace). */
const VALUE_SEPARATOR = '\n';

/** An entry as kept: its own values, and a shape most entries share. */
class Kept {
  constructor(
    /** undefined: `static://<name>`, what an entry without one gets (most of a generated file). */
    readonly providerID: string | undefined,
    /**
     * The addresses' values in the shape's order, as one string (several joined by a newline), or
     * the whole list when some value holds a newline (set() takes entries from anywhere).
     */
    readonly address: string | readonly NodeAddress[],
    readonly shape: Shape,
    readonly rest: { readonly podCIDRs?: readonly string[]; readonly labels?: Readonly<Record<string, string>> } | undefined,
  ) {}
}

/** The provider ID of an entry that names none. */
function defaultProviderID(name: string): string {
  return `static://${name}`;
}

/**
 * The listed nodes by name. Each is kept as its providerID (none when it is the default), its
 * addresses' values in one string, and a shape shared with the entries of the same instance type,
 * zone, region and address types: for 130,000 nodes with two addresses each (issue 41) the
 * entries were 43.6 MiB (an object, an address list and two address objects each, and a
 * providerID string) and are 19.3 MiB (heap snapshots; docs/benchmarks.md, "Where the memory
 * goes"). get() builds the entry anew on each call, so callers may keep or change it.
 */
export class StaticNodes implements ReadonlyMap<string, StaticNode> {
  readonly #kept = new Map<string, Kept>();
  readonly #shapes = sharedValues<Shape>(4096);

  /** Adds (or replaces) an entry. */
  set(name: string, node: StaticNode): this {
    const valuesAlone = node.addresses.every((a) => !a.address.includes(VALUE_SEPARATOR));
    const addressTypes = valuesAlone ? node.addresses.map((a) => a.type) : undefined;
    const key = [node.instanceType, node.zone, node.region, addressTypes?.join(',')].map((v) => (v === undefined ? '\u0001' : v)).join('\u0000') + (node.shutdown ? '\u0000t' : '\u0000f');
    const shape = this.#shapes(key, (): Shape => ({ instanceType: node.instanceType, zone: node.zone, region: node.region, shutdown: node.shutdown, addressTypes: addressTypes && Object.freeze(addressTypes) }));
    const rest = node.podCIDRs !== undefined || node.labels !== undefined
      ? { ...(node.podCIDRs !== undefined ? { podCIDRs: [...node.podCIDRs] } : {}), ...(node.labels !== undefined ? { labels: { ...node.labels } } : {}) }
      : undefined;
    const address = valuesAlone
      ? node.addresses.map((a) => a.address).join(VALUE_SEPARATOR)
      : node.addresses.map((a) => ({ type: a.type, address: a.address }));
    this.#kept.set(name, new Kept(node.providerID === defaultProviderID(name) ? undefined : node.providerID, address, shape, rest));
    return this;
  }

  get(name: string): StaticNode | undefined {
    const k = this.#kept.get(name);
    if (!k) return undefined;
    const types = k.shape.addressTypes;
    let addresses: NodeAddress[];
    if (typeof k.address !== 'string') addresses = k.address.map((a) => ({ type: a.type, address: a.address }));
    else if (types!.length === 0) addresses = [];
    else if (types!.length === 1) addresses = [{ type: types![0]!, address: k.address }];
    else addresses = k.address.split(VALUE_SEPARATOR).map((address, i) => ({ type: types![i]!, address }));
    return new StaticEntry(k.providerID ?? defaultProviderID(name), addresses, k.shape.shutdown, {
      instanceType: k.shape.instanceType, zone: k.shape.zone, region: k.shape.region,
      podCIDRs: k.rest?.podCIDRs ? [...k.rest.podCIDRs] : undefined,
      labels: k.rest?.labels ? { ...k.rest.labels } : undefined,
    });
  }

  has(name: string): boolean {
    return this.#kept.has(name);
  }

  get size(): number {
    return this.#kept.size;
  }

  keys(): MapIterator<string> {
    return this.#kept.keys();
  }

  *values(): MapIterator<StaticNode> {
    for (const name of this.#kept.keys()) yield this.get(name)!;
  }

  *entries(): MapIterator<[string, StaticNode]> {
    for (const name of this.#kept.keys()) yield [name, this.get(name)!];
  }

  [Symbol.iterator](): MapIterator<[string, StaticNode]> {
    return this.entries();
  }

  forEach(callback: (value: StaticNode, key: string, map: ReadonlyMap<string, StaticNode>) => void, thisArg?: unknown): void {
    for (const [name, node] of this.entries()) callback.call(thisArg, node, name, this);
  }
}

export interface StaticCloudConfig {
  nodes: StaticNodes;
}

export class StaticConfigError extends Error {
  constructor(
    message: string,
    /** Dotted path of the first bad field, e.g. `nodes.node-a.addresses[0].type`. */
    readonly field: string,
  ) {
    super(message);
    this.name = 'StaticConfigError';
  }
}

// Kubernetes label syntax: optional DNS-subdomain prefix, a name of up to 63 characters, and a
// value of up to 63 characters (may be empty).
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

function validLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  if (slash < 0) return LABEL_NAME.test(key);
  const prefix = key.slice(0, slash);
  return prefix.length > 0 && prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix) && LABEL_NAME.test(key.slice(slash + 1));
}

const nonEmpty = z.string().min(1, 'must not be empty');

const addressSchema = z
  .strictObject({
    type: z.string().refine((t) => (NODE_ADDRESS_TYPES as readonly string[]).includes(t), {
      message: `unknown address type (known: ${NODE_ADDRESS_TYPES.join(', ')})`,
    }),
    address: nonEmpty,
  })
  .superRefine((a, ctx) => {
    if ((a.type === 'InternalIP' || a.type === 'ExternalIP') && canonicalIP(a.address) === undefined) {
      ctx.addIssue({ code: 'custom', path: ['address'], message: `${a.type} must be an IP address` });
    }
    if (/\s/.test(a.address)) ctx.addIssue({ code: 'custom', path: ['address'], message: 'must not contain whitespace' });
  });

const nodeSchema = z.strictObject({
  // "" stands for a cloud that reports no providerID (the node then stays tainted); absent means
  // static://<node name>.
  providerID: z.string().optional(),
  instanceType: nonEmpty.optional(),
  zone: nonEmpty.optional(),
  region: nonEmpty.optional(),
  addresses: z.array(addressSchema).default([]),
  podCIDRs: z
    .array(
      z.string().superRefine((c, ctx) => {
        const r = canonicalCIDR(c);
        if ('problem' in r) ctx.addIssue({ code: 'custom', message: `not a CIDR: ${r.problem}` });
      }),
    )
    .optional(),
  labels: z
    .record(
      z.string().refine(validLabelKey, { message: 'not a valid label key' }),
      z.string().refine((v) => LABEL_VALUE.test(v), { message: 'not a valid label value (at most 63 characters: letters, digits, "-", "_", ".")' }),
    )
    .optional(),
  shutdown: z.boolean().optional(),
});

// The nodes are checked one at a time, each as a record of one entry (so a problem's path, and
// which problem is named first, are those of one check of the whole file): zod's copy of a
// 100,000-node file, beside the parsed file and the entries built from it, was most of a 180 MB
// heap at start-up. configSchema then checks the rest of the file.
const entrySchema = z.record(nonEmpty, nodeSchema.nullable());
const configSchema = z.strictObject({
  nodes: z.record(z.string(), z.unknown()).nullable().default({}),
});

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out || '(top level)';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

function show(v: unknown): string {
  if (v === undefined) return 'missing';
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** A plain object (what a YAML or JSON mapping parses to). */
function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The error for a zod issue found at `at` (the path of what was checked) in the parsed file `raw`. */
function configError(raw: unknown, issue: z.core.$ZodIssue, at: PropertyKey[]): StaticConfigError {
  let path = [...at, ...issue.path];
  if (issue.code === 'unrecognized_keys') {
    path = [...path, issue.keys[0]!];
    return new StaticConfigError(`cloud-config ${formatPath(path)}: unknown field (value ${show(valueAt(raw, path))})`, formatPath(path));
  }
  if (issue.code === 'invalid_key') {
    // Record keys: the path ends at the offending key itself.
    const key = path[path.length - 1];
    return new StaticConfigError(`cloud-config ${formatPath(path)}: ${issue.issues[0]?.message ?? issue.message} (key ${show(key)})`, formatPath(path));
  }
  return new StaticConfigError(`cloud-config ${formatPath(path)}: ${issue.message} (value ${show(valueAt(raw, path))})`, formatPath(path));
}

/**
 * Parses and validates the static cloud-config text (YAML or JSON). Throws StaticConfigError
 * naming the first bad field and its value. Addresses and CIDRs come back in canonical form.
 */
export function parseStaticCloudConfig(text: string): StaticCloudConfig {
  return parseJsonByEntry(text) ?? parseWhole(text);
}

type Once = ReturnType<typeof interner>;

/** Checks one listed node and adds it; the first problem found, or undefined. */
function addEntry(nodes: StaticNodes, name: string, value: unknown, once: Once): z.core.$ZodIssue | undefined {
  const checked = entrySchema.safeParse({ [name]: value });
  if (!checked.success) return checked.error.issues[0]!;
  const n = checked.data[name] ?? { addresses: [] };
  const addresses: NodeAddress[] = n.addresses.map((a) => ({
    type: once(a.type) as NodeAddressType,
    address: a.type === 'InternalIP' || a.type === 'ExternalIP' ? canonicalIP(a.address)! : a.address,
  }));
  nodes.set(name, new StaticEntry(n.providerID ?? `static://${name}`, addresses, n.shutdown ?? false, {
    instanceType: n.instanceType === undefined ? undefined : once(n.instanceType),
    zone: n.zone === undefined ? undefined : once(n.zone),
    region: n.region === undefined ? undefined : once(n.region),
    podCIDRs: n.podCIDRs?.map((c) => (canonicalCIDR(c) as { cidr: string }).cidr),
    labels: n.labels === undefined ? undefined : { ...n.labels },
  }));
  return undefined;
}

/**
 * A JSON file with a `nodes` object, read one node at a time (splitJsonConfig): at start-up the
 * whole file parsed at once took the process from 60 to 297 MiB for 140,000 nodes, the peak of a
 * 130,000-node run before its node cache had filled. The outcome and the errors are those of
 * parseWhole, in the same order: a text that is not JSON goes to it (undefined), then a duplicate
 * key, then the first bad node, then the rest of the file.
 */
function parseJsonByEntry(text: string): StaticCloudConfig | undefined {
  const split = splitJsonConfig(text, 'nodes');
  if (!split) return undefined;
  const nodes = new StaticNodes();
  const once = interner();
  let bad: { issue: z.core.$ZodIssue; name: string; value: unknown } | undefined;
  for (let i = 0; i < split.size; i++) {
    let name: string;
    let value: unknown;
    try {
      name = split.key(i);
      value = split.value(i);
    } catch {
      return undefined; // not JSON after all: parseWhole reports it as the YAML parser does
    }
    // Past the first bad node the rest is only parsed: a text that is not JSON further on is
    // reported as such, as parseWhole would.
    if (bad) continue;
    const issue = addEntry(nodes, name, value, once);
    if (issue) bad = { issue, name, value };
  }
  const dup = findDuplicateJsonKey(text);
  if (dup) throw new StaticConfigError(`cloud-config: ${duplicateKeyError(dup).message}`, '(top level)');
  if (bad) throw configError({ nodes: { [bad.name]: bad.value } }, bad.issue, ['nodes']);
  const result = configSchema.safeParse(split.rest);
  if (!result.success) throw configError(split.rest, result.error.issues[0]!, []);
  return { nodes };
}

/**
 * Any YAML or JSON text, parsed whole: the reading parseStaticCloudConfig gives for every text
 * (exported for the property test that holds the node-at-a-time path to it).
 */
export function parseWhole(text: string): StaticCloudConfig {
  let raw: unknown;
  try {
    // JSON (what generators write for big fleets) takes the fast path: same value, same refusal
    // of duplicate keys, half a second instead of over a minute for 100,000 nodes.
    const json = parseJsonConfig(text);
    raw = json ? json.value : parseYAML(text, { uniqueKeys: true });
  } catch (err) {
    if (err instanceof DuplicateJsonKeyError) throw new StaticConfigError(`cloud-config: ${err.message}`, '(top level)');
    throw new StaticConfigError(`cloud-config: not valid YAML: ${(err as Error).message}`, '(top level)');
  }
  if (raw === null || raw === undefined) raw = {};
  const nodes = new StaticNodes();
  // A parsed file holds a new string for every occurrence of a value; zones, regions, instance
  // types and address types repeat across thousands of nodes and are kept once.
  const once = interner();
  const listed = isRecord(raw) ? raw.nodes : undefined;
  // Entries first: one check of the whole file names a problem in the nodes before an unknown
  // top-level field.
  if (isRecord(listed)) {
    for (const name of Object.keys(listed)) {
      const issue = addEntry(nodes, name, listed[name], once);
      if (issue) throw configError(raw, issue, ['nodes']);
    }
  }
  // The entries are checked: the rest of the file is, without a copy of its nodes.
  const result = configSchema.safeParse(isRecord(listed) ? { ...(raw as Record<string, unknown>), nodes: {} } : raw);
  if (!result.success) throw configError(raw, result.error.issues[0]!, []);
  return { nodes };
}
