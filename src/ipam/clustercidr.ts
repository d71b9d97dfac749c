// The ClusterCIDR model (networking.x-k8s.io/v1, the CRD of kubernetes-sigs/node-ipam-controller)
// and its validation from a plain object, with errors that name the object and field.
import { CIDRParseError, parseCIDR, type CIDR, type IPFamily } from './cidr.js';
import { CompiledSelector, SelectorError, type NodeSelector } from './selector.js';

export const CLUSTER_CIDR_API_VERSION = 'networking.x-k8s.io/v1';
export const CLUSTER_CIDR_KIND = 'ClusterCIDR';

/** One family of a pool: the range and the per-node mask size. */
export interface PoolFamily {
  family: IPFamily;
  cidr: CIDR;
  maskSize: number;
}

/** A validated pool: a ClusterCIDR object, or the flags pool. */
export interface ClusterCIDR {
  name: string;
  selector: CompiledSelector;
  /** The selector as given (undefined for nil). */
  nodeSelector?: NodeSelector;
  perNodeHostBits: number;
  ipv4?: string;
  ipv6?: string;
  /** Families in pod-CIDR order (IPv4 then IPv6 for ClusterCIDR objects). */
  families: PoolFamily[];
  /** Set once the object has a deletionTimestamp: no new allocations. */
  terminating: boolean;
  /** True for the in-memory pool built from --cluster-cidr flags. */
  fromFlags?: boolean;
}

export class ClusterCIDRValidationError extends Error {
  override name = 'ClusterCIDRValidationError';
  constructor(
    readonly object: string,
    readonly field: string,
    detail: string,
  ) {
    super(`ClusterCIDR "${object}": ${field}: ${detail}`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Validates a plain ClusterCIDR object as kubectl prints it (`{ metadata, spec }`). */
export function parseClusterCIDR(obj: unknown): ClusterCIDR {
  if (!isObject(obj)) throw new ClusterCIDRValidationError('?', '(object)', 'must be an object');
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const name = typeof meta.name === 'string' && meta.name !== '' ? meta.name : undefined;
  const label = name ?? '?';
  if (!name) throw new ClusterCIDRValidationError(label, 'metadata.name', 'is required');
  if (obj.kind !== undefined && obj.kind !== CLUSTER_CIDR_KIND) {
    throw new ClusterCIDRValidationError(label, 'kind', `expected ${CLUSTER_CIDR_KIND}, got ${JSON.stringify(obj.kind)}`);
  }
  if (!isObject(obj.spec)) throw new ClusterCIDRValidationError(label, 'spec', 'is required');
  const spec = obj.spec;
  const hb = spec.perNodeHostBits;
  if (typeof hb !== 'number' || !Number.isInteger(hb) || hb < 0) {
    throw new ClusterCIDRValidationError(label, 'spec.perNodeHostBits', `must be a non-negative integer, got ${JSON.stringify(hb)}`);
  }
  const families: PoolFamily[] = [];
  const out: { ipv4?: string; ipv6?: string } = {};
  for (const [field, family] of [
    ['ipv4', 4],
    ['ipv6', 6],
  ] as const) {
    const v = spec[field];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') throw new ClusterCIDRValidationError(label, `spec.${field}`, `must be a string, got ${JSON.stringify(v)}`);
    let c: CIDR;
    try {
      c = parseCIDR(v);
    } catch (err) {
      if (err instanceof CIDRParseError) throw new ClusterCIDRValidationError(label, `spec.${field}`, err.message);
      throw err;
    }
    if (c.family !== family) throw new ClusterCIDRValidationError(label, `spec.${field}`, `"${v}" is not an IPv${family} CIDR`);
    const hostBits = c.bits - c.prefix;
    if (hb > hostBits) {
      throw new ClusterCIDRValidationError(label, 'spec.perNodeHostBits', `${hb} is larger than the ${hostBits} host bits of spec.${field} "${c.text}"`);
    }
    const maskSize = c.bits - hb;
    families.push({ family, cidr: c, maskSize });
    out[field] = c.text;
  }
  if (families.length === 0) throw new ClusterCIDRValidationError(label, 'spec', 'at least one of spec.ipv4 and spec.ipv6 is required');
  let selector: CompiledSelector;
  try {
    selector = CompiledSelector.compile(spec.nodeSelector, 'spec.nodeSelector');
  } catch (err) {
    if (err instanceof SelectorError) throw new ClusterCIDRValidationError(label, err.field, err.message.slice(err.field.length + 2));
    throw err;
  }
  return {
    name,
    selector,
    nodeSelector: spec.nodeSelector === null || spec.nodeSelector === undefined ? undefined : (spec.nodeSelector as NodeSelector),
    perNodeHostBits: hb,
    ...out,
    families,
    terminating: meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null,
  };
}

/** True when two pools differ in a field the KEP makes immutable. */
export function immutableFieldChanged(a: ClusterCIDR, b: ClusterCIDR): string | undefined {
  if (a.ipv4 !== b.ipv4) return 'spec.ipv4';
  if (a.ipv6 !== b.ipv6) return 'spec.ipv6';
  if (a.families.map((f) => f.maskSize).join() !== b.families.map((f) => f.maskSize).join()) return 'spec.perNodeHostBits';
  if (a.selector.text !== b.selector.text) return 'spec.nodeSelector';
  return undefined;
}

/** The pool as a ClusterCIDR object (for writing it to the API server). */
export function toClusterCIDRObject(pool: ClusterCIDR): {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { nodeSelector?: NodeSelector; perNodeHostBits: number; ipv4?: string; ipv6?: string };
} {
  return {
    apiVersion: CLUSTER_CIDR_API_VERSION,
    kind: CLUSTER_CIDR_KIND,
    metadata: { name: pool.name },
    spec: {
      perNodeHostBits: pool.perNodeHostBits,
      ...(pool.nodeSelector ? { nodeSelector: pool.nodeSelector } : {}),
      ...(pool.ipv4 ? { ipv4: pool.ipv4 } : {}),
      ...(pool.ipv6 ? { ipv6: pool.ipv6 } : {}),
    },
  };
}
