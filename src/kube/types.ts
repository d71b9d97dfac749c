// Wire shapes (plain JSON as the API server sends it) for the few resources this runtime touches.
// Controllers keep their own richer object types; anything with `metadata.name` fits `KubeObject`.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

/** metav1.Status, the body of every API error response. */
export interface Status {
  kind?: 'Status';
  apiVersion?: string;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
    retryAfterSeconds?: number;
  };
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T> {
  type: WatchEventType;
  /** The object, or a Status for ERROR events. */
  object: T;
}

/** Where a resource lives in the API. */
export interface ResourceType {
  /** API group, '' for core. */
  group: string;
  version: string;
  /** Lowercase plural, as in the URL. */
  plural: string;
  namespaced: boolean;
}

export const NODES: ResourceType = { group: '', version: 'v1', plural: 'nodes', namespaced: false };
export const EVENTS: ResourceType = { group: '', version: 'v1', plural: 'events', namespaced: true };
export const LEASES: ResourceType = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true };
/** ClusterCIDR as served by kubernetes-sigs/node-ipam-controller's CRD. */
export const CLUSTERCIDRS: ResourceType = { group: 'networking.x-k8s.io', version: 'v1', plural: 'clustercidrs', namespaced: false };
/** ServiceCIDR, GA in networking.k8s.io/v1 since Kubernetes 1.33. */
export const SERVICECIDRS: ResourceType = { group: 'networking.k8s.io', version: 'v1', plural: 'servicecidrs', namespaced: false };
export const SERVICECIDRS_V1BETA1: ResourceType = { ...SERVICECIDRS, version: 'v1beta1' };

export interface ServiceCIDRObject extends KubeObject {
  spec?: { cidrs?: string[] };
}

export interface LeaseObject extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
    [key: string]: unknown;
  };
}

export interface ObjectReference {
  kind?: string;
  apiVersion?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EventObject extends KubeObject {
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  type?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string | null;
  count?: number;
  reportingComponent?: string;
  reportingInstance?: string;
  action?: string;
}

function segment(field: string, value: string): string {
  if (value === '' || value.includes('/') || value === '.' || value === '..') {
    throw new Error(`${field}: not a valid path segment: ${JSON.stringify(value)}`);
  }
  return encodeURIComponent(value);
}

/** The URL path of a collection or object: `/api/v1/nodes/n1/status`, `/apis/g/v/namespaces/ns/leases/x`. */
export function resourcePath(res: ResourceType, opts: { namespace?: string; name?: string; subresource?: string } = {}): string {
  let p = res.group === '' ? `/api/${res.version}` : `/apis/${res.group}/${res.version}`;
  if (res.namespaced) {
    if (opts.namespace === undefined) throw new Error(`namespace: required for namespaced resource ${res.plural}`);
    p += `/namespaces/${segment('namespace', opts.namespace)}`;
  } else if (opts.namespace !== undefined) {
    throw new Error(`namespace: ${res.plural} are cluster-scoped, got namespace ${JSON.stringify(opts.namespace)}`);
  }
  p += `/${res.plural}`;
  if (opts.name !== undefined) p += `/${segment('name', opts.name)}`;
  if (opts.subresource !== undefined) {
    if (opts.name === undefined) throw new Error(`subresource: needs a name (${opts.subresource})`);
    p += `/${segment('subresource', opts.subresource)}`;
  }
  return p;
}

/**
 * Cache transform for objects whose every field may be read: only metadata.managedFields (often
 * the largest part) is dropped. Writes are patches, so it is never sent back empty.
 */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (!('managedFields' in obj.metadata)) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata as KubeObject['metadata'] & { managedFields?: unknown };
  return { ...obj, metadata } as T;
}
