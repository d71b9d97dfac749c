// The flags pool in MultiCIDRRangeAllocator mode (KEP-2593 "Startup"): --cluster-cidr and the
// mask flags are mirrored as one live `created-from-flags-<hash>` ClusterCIDR when one object can
// express them (one family, or equal host bits in both); a stale mirror from earlier flags is
// deleted and then waits on its finalizer like any pool in use. When no single object can express
// the flags (e.g. /24 IPv4 and /64 IPv6 blocks), the pool stays in memory and a Warning says why.
import {
  CLUSTER_CIDR_API_VERSION, CLUSTER_CIDR_KIND, createdFromFlagsName, flagsPoolMirrorable, flagsPoolToClusterCIDR, immutableFieldChanged,
  parseClusterCIDR, toClusterCIDRObject, type ClusterCIDR, type FlagsPool,
} from '../../ipam/index.js';

export const CREATED_FROM_FLAGS_PREFIX = 'created-from-flags-';

export interface MirrorObject {
  metadata: { name: string; deletionTimestamp?: string | null; uid?: string; [k: string]: unknown };
  spec?: unknown;
}

/** What to do with the flags pool, decided from the existing objects. Pure. */
export type MirrorPlan = {
  /** The created-from-flags objects to delete (stale: other flags, not yet terminating). */
  deleteStale: string[];
} & (
  | { kind: 'none' }
  /** The object exists, live, with these flags: nothing to write. */
  | { kind: 'exists'; name: string; pool: ClusterCIDR }
  /** Create the object (and use its pool at once). */
  | { kind: 'create'; name: string; pool: ClusterCIDR; object: ReturnType<typeof toClusterCIDRObject> }
  /** Keep the pool in memory only, with the reason for the Warning event. */
  | { kind: 'memory'; name: string; pool: ClusterCIDR; reason: string }
);

/**
 * Plans the mirror. `existing`: every ClusterCIDR object (the watcher's cache, or a GET of the
 * mirror's name). Without flags every live created-from-flags object is stale.
 */
export function planFlagsMirror(flags: FlagsPool | undefined, existing: readonly MirrorObject[]): MirrorPlan {
  const name = flags ? createdFromFlagsName(flags) : undefined;
  const deleteStale = existing
    .filter((o) => o.metadata.name.startsWith(CREATED_FROM_FLAGS_PREFIX) && o.metadata.name !== name && !o.metadata.deletionTimestamp)
    .map((o) => o.metadata.name)
    .sort();
  if (!flags || !name) return { kind: 'none', deleteStale };
  if (!flagsPoolMirrorable(flags)) {
    const sizes = flags.families.map((f) => `IPv${f.family} /${f.maskSize} (${f.cidr.bits - f.maskSize} host bits)`).join(' and ');
    return {
      kind: 'memory',
      name,
      pool: flagsPoolToClusterCIDR(flags, name),
      reason: `--cluster-cidr ${flags.families.map((f) => f.cidr.text).join(',')} stays an in-memory pool: a ClusterCIDR has one perNodeHostBits for both families, and the flags ask for ${sizes}`,
      deleteStale,
    };
  }
  const object = toClusterCIDRObject({ ...flagsPoolToClusterCIDR(flags, name), fromFlags: false });
  const pool = parseClusterCIDR(object);
  const cur = existing.find((o) => o.metadata.name === name);
  if (!cur) return { kind: 'create', name, pool, object, deleteStale };
  if (cur.metadata.deletionTimestamp) {
    return { kind: 'memory', name, pool: flagsPoolToClusterCIDR(flags, name), reason: `ClusterCIDR ${name} is being deleted; the flags pool stays in memory until it is gone and the controller restarts`, deleteStale };
  }
  let curPool: ClusterCIDR | undefined;
  try {
    curPool = parseClusterCIDR({ apiVersion: CLUSTER_CIDR_API_VERSION, kind: CLUSTER_CIDR_KIND, ...cur });
  } catch {
    curPool = undefined;
  }
  const changed = curPool ? immutableFieldChanged(curPool, pool) : 'spec';
  if (changed) {
    return { kind: 'memory', name, pool: flagsPoolToClusterCIDR(flags, name), reason: `ClusterCIDR ${name} exists with a different ${changed} than the flags; the flags pool stays in memory`, deleteStale };
  }
  return { kind: 'exists', name, pool, deleteStale };
}
