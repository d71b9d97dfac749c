// What the node cache keeps of each Node: only the fields some controller reads. A real Node is
// 10–20 KB of JSON (status.images, managedFields, nodeInfo, volumes); the controllers read well
// under 1 KB of it. Applied to every object as it arrives from LIST (page by page) and WATCH, as
// client-go's informer SetTransform is used to drop managedFields. Writes never send a cached
// object back (they are merge patches of the fields they change), so what is dropped here is
// never erased on the server.
import { POD_CIDR_POOL_ANNOTATION, PROVIDED_NODE_IP_ANNOTATION, type NodeObject, type Taint } from './node.js';
import { interner, sharedValues } from '../util/intern.js';

/** Annotations some controller reads; every other annotation is dropped from the cache (slimNode names these two). */
export const CACHED_NODE_ANNOTATIONS: readonly string[] = [PROVIDED_NODE_IP_ANNOTATION, POD_CIDR_POOL_ANNOTATION];

/** Node condition types some controller reads (lifecycle: Ready; CloudAllocator: NetworkUnavailable). */
export const CACHED_NODE_CONDITIONS: readonly string[] = ['Ready', 'NetworkUnavailable'];

const SPEC_KEYS = ['providerID', 'podCIDR', 'podCIDRs', 'taints'] as const;

/** Nearly every initialised node has `taints: []`: they all share this one, frozen like the conditions. */
const NO_TAINTS: Taint[] = Object.freeze([]) as unknown as Taint[];

// The cached node and its metadata are built by constructors, not by adding keys to `{}` one at a
// time, because that keeps every cached Node smaller (docs/benchmarks.md: "Why the cached Node is
// built the way it is"). Fields are declared, not defined, so an absent field stays absent, as in
// the JSON: the objects are plain data all the same.

/** A cached Node's metadata: the fields some controller reads (labels and annotations set apart). */
class CachedMetadata {
  declare name: string;
  declare uid?: string;
  declare resourceVersion?: string;
  declare creationTimestamp?: string;
  declare deletionTimestamp?: string;
  declare finalizers?: string[];
  declare labels?: Record<string, string>;
  declare annotations?: Record<string, string>;
  constructor(m: NodeObject['metadata'], labels: Record<string, string> | undefined, annotations: Record<string, string> | undefined) {
    this.name = m.name;
    if (m.uid !== undefined) this.uid = m.uid;
    if (m.resourceVersion !== undefined) this.resourceVersion = m.resourceVersion;
    if (m.creationTimestamp !== undefined) this.creationTimestamp = m.creationTimestamp;
    if (m.deletionTimestamp !== undefined) this.deletionTimestamp = m.deletionTimestamp as string;
    if (m.finalizers !== undefined) this.finalizers = m.finalizers as string[];
    if (labels !== undefined) this.labels = labels;
    if (annotations !== undefined) this.annotations = annotations;
  }
}

/** A cached Node's status: the two lists some controller reads (two fields, not a literal's four). */
class CachedStatus {
  declare addresses?: NonNullable<NodeObject['status']>['addresses'];
  declare conditions?: NonNullable<NodeObject['status']>['conditions'];
  constructor(addresses: NonNullable<NodeObject['status']>['addresses'] | undefined, conditions: NonNullable<NodeObject['status']>['conditions'] | undefined) {
    if (addresses !== undefined) this.addresses = addresses;
    if (conditions !== undefined) this.conditions = conditions;
  }
}

/** A cached Node: its metadata, and spec and status when the input has them. */
class CachedNode {
  declare apiVersion?: string;
  declare kind?: string;
  declare metadata: CachedMetadata;
  declare spec?: NonNullable<NodeObject['spec']>;
  declare status?: NonNullable<NodeObject['status']>;
  constructor(node: NodeObject, metadata: CachedMetadata, spec: NodeObject['spec'], status: NodeObject['status']) {
    if (node.apiVersion !== undefined) this.apiVersion = node.apiVersion;
    if (node.kind !== undefined) this.kind = node.kind;
    this.metadata = metadata;
    if (spec !== undefined) this.spec = spec;
    if (status !== undefined) this.status = status;
  }
}

/**
 * Strings that repeat across nodes (label values such as a zone or an instance type, address
 * and condition types) are kept once: JSON.parse makes a new copy for every node. Bounded, so a
 * label unique to each node fills it once and is then kept as it comes.
 */
const intern = interner(4096);

/**
 * Kept conditions, as one frozen list per distinct combination: nearly every node holds the same
 * two or three (Ready True, NetworkUnavailable False), so 100,000 nodes share a handful of lists
 * instead of holding 100,000 (about 140 B each). Frozen, so a caller that tried to change one in
 * place would fail at once rather than change every node's. Bounded like the intern table.
 */
const sharedConditions = sharedValues<{ type: string; status?: string }[]>(256);

function conditionsOf(kept: { type: string; status?: string }[]): { type: string; status?: string }[] {
  const key = kept.map((c) => `${c.type}\u0000${c.status ?? '\u0001'}`).join('\u0000\u0000');
  return sharedConditions(key, () => Object.freeze(kept.map((c) => Object.freeze(c))) as { type: string; status?: string }[]);
}

/**
 * Kept annotations that are the pool annotation alone (every node the allocator placed): one
 * frozen object per pool, shared like the conditions, instead of one object per node.
 */
const sharedPoolAnnotation = sharedValues<Record<string, string>>(256);

// A node's own kept annotations (the provided-node-ip one: every node whose kubelet has
// --node-ip) are built by constructors for the same reason as the cached Node: an object literal
// keeps room for four keys, 56 B for one or two; these take 32 and 40 B.

/** The provided-node-ip annotation alone. */
class NodeIPAnnotation {
  declare [PROVIDED_NODE_IP_ANNOTATION]: string;
  constructor(ip: string) {
    this[PROVIDED_NODE_IP_ANNOTATION] = ip;
  }
}

/** The provided-node-ip annotation and the pool annotation, in CACHED_NODE_ANNOTATIONS' order. */
class NodeIPAndPoolAnnotations {
  declare [PROVIDED_NODE_IP_ANNOTATION]: string;
  declare [POD_CIDR_POOL_ANNOTATION]: string;
  constructor(ip: string, pool: string) {
    this[PROVIDED_NODE_IP_ANNOTATION] = ip;
    this[POD_CIDR_POOL_ANNOTATION] = pool;
  }
}

/** The node's own name where a value repeats it (the hostname label, the Hostname address). */
function shared(value: string, name: string): string {
  return value === name ? name : intern(value);
}

/** The cached form of a Node: a new object sharing nothing mutable with the input's dropped parts. */
export function slimNode<T extends NodeObject>(node: T): T {
  const m = node.metadata;
  const name = m.name;
  let labels: Record<string, string> | undefined;
  if (m.labels) {
    // A spread copy keeps its keys inside the object; only the values are replaced.
    labels = { ...m.labels };
    for (const k in labels) {
      const v = labels[k];
      if (typeof v === 'string') labels[k] = shared(v, name);
    }
  }
  let annotations: Record<string, string> | undefined;
  const all = m.annotations;
  if (all) {
    const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(all, k);
    // The pool annotation's value repeats across nodes; the node-IP one is kept as it comes.
    const pool = has(POD_CIDR_POOL_ANNOTATION) ? intern(all[POD_CIDR_POOL_ANNOTATION] as string) : undefined;
    const ip = has(PROVIDED_NODE_IP_ANNOTATION) ? (all[PROVIDED_NODE_IP_ANNOTATION] as string) : undefined;
    if (ip !== undefined && pool !== undefined) annotations = new NodeIPAndPoolAnnotations(ip, pool) as unknown as Record<string, string>;
    else if (ip !== undefined) annotations = new NodeIPAnnotation(ip) as unknown as Record<string, string>;
    else if (pool !== undefined) annotations = sharedPoolAnnotation(pool, () => Object.freeze({ [POD_CIDR_POOL_ANNOTATION]: pool }));
  }
  let spec: NodeObject['spec'];
  if (node.spec) {
    spec = {};
    for (const k of SPEC_KEYS) if (node.spec[k] !== undefined) (spec as Record<string, unknown>)[k] = node.spec[k];
    // podCIDR repeats podCIDRs[0]: one string for both.
    if (typeof spec.podCIDR === 'string' && Array.isArray(spec.podCIDRs) && spec.podCIDRs[0] === spec.podCIDR) {
      spec.podCIDRs = [spec.podCIDR, ...spec.podCIDRs.slice(1)];
    }
    if (Array.isArray(spec.taints) && spec.taints.length === 0) spec.taints = NO_TAINTS;
  }
  let status: NodeObject['status'];
  if (node.status) {
    let keptAddresses: NonNullable<NodeObject['status']>['addresses'];
    let keptConditions: NonNullable<NodeObject['status']>['conditions'];
    const addresses = node.status.addresses;
    if (addresses !== undefined) {
      keptAddresses = Array.isArray(addresses)
        ? addresses.map((a) => (typeof a?.type === 'string' && typeof a.address === 'string' ? { type: intern(a.type) as typeof a.type, address: shared(a.address, name) } : a))
        : addresses;
    }
    const conditions = node.status.conditions;
    if (Array.isArray(conditions)) {
      // Only type and status are read (Ready for the lifecycle, NetworkUnavailable for CloudAllocator);
      // timestamps, reason and message are a third of what a cached node would otherwise hold.
      keptConditions = conditionsOf(conditions
        .filter((c: { type?: unknown }) => typeof c?.type === 'string' && CACHED_NODE_CONDITIONS.includes(c.type))
        .map((c: { type: string; status?: unknown }) => (typeof c.status === 'string' ? { type: intern(c.type), status: intern(c.status) } : { type: intern(c.type) })));
    }
    status = new CachedStatus(keptAddresses, keptConditions) as NonNullable<NodeObject['status']>;
  }
  return new CachedNode(node, new CachedMetadata(m, labels, annotations), spec, status) as unknown as T;
}
