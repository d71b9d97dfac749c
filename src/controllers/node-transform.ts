// What the node cache keeps of each Node: only the fields some controller reads. A real Node is
// 10–20 KB of JSON (status.images, managedFields, nodeInfo, volumes); the controllers read well
// under 1 KB of it. Applied to every object as it arrives from LIST (page by page) and WATCH, as
// client-go's informer SetTransform is used to drop managedFields. Writes never send a cached
// object back (they are merge patches of the fields they change), so what is dropped here is
// never erased on the server.
import { PROVIDED_NODE_IP_ANNOTATION, type NodeObject } from './node.js';
import { POD_CIDR_POOL_ANNOTATION } from '../audit/findings.js';
import { interner, sharedValues } from '../util/intern.js';

/** Annotations some controller reads; every other annotation is dropped from the cache. */
export const CACHED_NODE_ANNOTATIONS: readonly string[] = [PROVIDED_NODE_IP_ANNOTATION, POD_CIDR_POOL_ANNOTATION];

/** Node condition types some controller reads (lifecycle: Ready; CloudAllocator: NetworkUnavailable). */
export const CACHED_NODE_CONDITIONS: readonly string[] = ['Ready', 'NetworkUnavailable'];

// Labels are copied apart (their values interned).
const META_KEYS = ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'finalizers'] as const;
const SPEC_KEYS = ['providerID', 'podCIDR', 'podCIDRs', 'taints'] as const;

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

/** The node's own name where a value repeats it (the hostname label, the Hostname address). */
function shared(value: string, name: string): string {
  return value === name ? name : intern(value);
}

/** The cached form of a Node: a new object sharing nothing mutable with the input's dropped parts. */
export function slimNode<T extends NodeObject>(node: T): T {
  const m = node.metadata;
  const name = m.name;
  const metadata: NodeObject['metadata'] = { name };
  for (const k of META_KEYS) if (m[k] !== undefined) (metadata as Record<string, unknown>)[k] = m[k];
  if (m.labels) {
    const labels: Record<string, string> = {};
    for (const [k, v] of Object.entries(m.labels)) labels[k] = typeof v === 'string' ? shared(v, name) : v;
    metadata.labels = labels;
  }
  if (m.annotations) {
    const kept: Record<string, string> = {};
    let any = false;
    for (const k of CACHED_NODE_ANNOTATIONS) {
      if (Object.prototype.hasOwnProperty.call(m.annotations, k)) {
        // The pool annotation's value repeats across nodes; the node-IP one is kept as it comes.
        kept[k] = k === POD_CIDR_POOL_ANNOTATION ? intern(m.annotations[k] as string) : (m.annotations[k] as string);
        any = true;
      }
    }
    if (any) metadata.annotations = kept;
  }
  const out: NodeObject = { metadata };
  if (node.apiVersion !== undefined) out.apiVersion = node.apiVersion;
  if (node.kind !== undefined) out.kind = node.kind;
  if (node.spec) {
    const spec: NonNullable<NodeObject['spec']> = {};
    for (const k of SPEC_KEYS) if (node.spec[k] !== undefined) (spec as Record<string, unknown>)[k] = node.spec[k];
    // podCIDR repeats podCIDRs[0]: one string for both.
    if (typeof spec.podCIDR === 'string' && Array.isArray(spec.podCIDRs) && spec.podCIDRs[0] === spec.podCIDR) {
      spec.podCIDRs = [spec.podCIDR, ...spec.podCIDRs.slice(1)];
    }
    out.spec = spec;
  }
  if (node.status) {
    const status: NonNullable<NodeObject['status']> = {};
    const addresses = node.status.addresses;
    if (addresses !== undefined) {
      status.addresses = Array.isArray(addresses)
        ? addresses.map((a) => (typeof a?.type === 'string' && typeof a.address === 'string' ? { type: intern(a.type) as typeof a.type, address: shared(a.address, name) } : a))
        : addresses;
    }
    const conditions = node.status.conditions;
    if (Array.isArray(conditions)) {
      // Only type and status are read (Ready for the lifecycle, NetworkUnavailable for CloudAllocator);
      // timestamps, reason and message are a third of what a cached node would otherwise hold.
      status.conditions = conditionsOf(conditions
        .filter((c: { type?: unknown }) => typeof c?.type === 'string' && CACHED_NODE_CONDITIONS.includes(c.type))
        .map((c: { type: string; status?: unknown }) => (typeof c.status === 'string' ? { type: intern(c.type), status: intern(c.status) } : { type: intern(c.type) })));
    }
    out.status = status;
  }
  return out as T;
}
