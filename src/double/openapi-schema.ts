// The schemas of the served kinds, in a compact hand-written form: one description from which
// the OpenAPI v2 and v3 documents (openapi.ts) and the unknown-field check of
// fieldValidation=Strict are generated. Definition names follow kube-apiserver's, so kubectl
// shows the same type names (`spec <NodeSpec>`). Field lists follow the v1 API types; the
// descriptions are this project's own words.
import type { Resource } from './store.js';

export type Schema =
  | { t: 'string' | 'integer' | 'number' | 'boolean'; d?: string; format?: string; maxLength?: number; enum?: string[] }
  | { t: 'object'; d?: string; props: Record<string, Schema>; required?: string[]; atomic?: boolean }
  | { t: 'array'; d?: string; items: Schema; listType?: 'atomic' | 'set' | 'map'; mapKeys?: string[]; mergeKey?: string; strategy?: 'merge' | 'replace' | 'retainKeys' }
  | { t: 'map'; d?: string; values: Schema }
  | { t: 'ref'; d?: string; name: string }
  /** Any JSON value (fields whose content the double does not model). */
  | { t: 'any'; d?: string };

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const CORE = 'io.k8s.api.core.v1';

const str = (d?: string, format?: string): Schema => ({ t: 'string', d, format });
const int = (d?: string, format = 'int32'): Schema => ({ t: 'integer', d, format });
const bool = (d?: string): Schema => ({ t: 'boolean', d });
const obj = (props: Record<string, Schema>, d?: string, required?: string[]): Schema => ({ t: 'object', props, d, required });
const arr = (items: Schema, d?: string, extra: Partial<Extract<Schema, { t: 'array' }>> = {}): Schema => ({ t: 'array', items, d, ...extra });
const map = (values: Schema, d?: string): Schema => ({ t: 'map', values, d });
const ref = (name: string, d?: string): Schema => ({ t: 'ref', name, d });
const time = (d?: string): Schema => ref(`${META}.Time`, d);
const microTime = (d?: string): Schema => ref(`${META}.MicroTime`, d);
const meta = (): Schema => ref(`${META}.ObjectMeta`, "Standard object metadata: name, namespace, labels, annotations, and the fields the server maintains.");
const typeFields = (): Record<string, Schema> => ({
  apiVersion: str('The versioned schema of this representation of the object (group/version).'),
  kind: str('The REST resource kind of this object, in CamelCase.'),
});

/** Every named schema, keyed by its OpenAPI definition name. */
export const DEFINITIONS: Record<string, Schema> = {
  [`${META}.Time`]: str('A timestamp in RFC 3339 form, to the second.', 'date-time'),
  [`${META}.MicroTime`]: str('A timestamp in RFC 3339 form, to the microsecond.', 'date-time'),
  'io.k8s.apimachinery.pkg.api.resource.Quantity': str('A quantity such as 4, 500m or 16Gi.'),
  [`${META}.Patch`]: { t: 'object', props: {}, d: 'A patch body; its format is given by the request\'s Content-Type.' },
  [`${META}.OwnerReference`]: obj(
    {
      apiVersion: str('API version of the owner.'),
      kind: str('Kind of the owner.'),
      name: str('Name of the owner.'),
      uid: str('UID of the owner.'),
      controller: bool('Whether the owner is the managing controller.'),
      blockOwnerDeletion: bool('Whether the owner cannot be deleted from the key-value store before this object.'),
    },
    'Names an object that owns this one.',
    ['apiVersion', 'kind', 'name', 'uid'],
  ),
  [`${META}.ManagedFieldsEntry`]: obj(
    {
      apiVersion: str('Version of the fields named in fieldsV1.'),
      fieldsType: str('Format of the fields: FieldsV1.'),
      fieldsV1: { t: 'any', d: 'The set of fields this manager owns.' },
      manager: str('The manager that wrote these fields.'),
      operation: str('Apply or Update.'),
      subresource: str('The subresource the fields were written through, if any.'),
      time: time('When the fields were last written.'),
    },
    'Which manager owns which fields.',
  ),
  [`${META}.ObjectMeta`]: obj(
    {
      annotations: map(str(), 'Unstructured key-value data kept with the object, not used for selection.'),
      creationTimestamp: time('When the object was created; set by the server, read-only.'),
      deletionGracePeriodSeconds: int('Seconds allowed for graceful termination once deletionTimestamp is set; read-only.', 'int64'),
      deletionTimestamp: time('When the object will be deleted; set by the server when deletion is requested, read-only.'),
      finalizers: arr(str(), 'Conditions that must be cleared before the object is removed from storage.', { listType: 'set', strategy: 'merge' }),
      generateName: str('Prefix from which the server makes a unique name when name is not given.'),
      generation: int('Sequence number of the desired state; maintained by the server, read-only.', 'int64'),
      labels: map(str(), 'Key-value pairs used to organise and select objects.'),
      managedFields: arr(ref(`${META}.ManagedFieldsEntry`), 'Field ownership, maintained by the server.'),
      name: str('Unique name within the namespace (or cluster, for cluster-scoped kinds).'),
      namespace: str('Namespace of a namespaced object; empty for cluster-scoped kinds.'),
      ownerReferences: arr(ref(`${META}.OwnerReference`), 'Objects this one depends on.', { listType: 'map', mapKeys: ['uid'], mergeKey: 'uid', strategy: 'merge' }),
      resourceVersion: str('Opaque version of the object, changed on every write; used for optimistic concurrency and watches.'),
      selfLink: str('Deprecated; not set.'),
      uid: str('Unique identifier of the object for its whole life; set by the server, read-only.'),
    },
    'Metadata every persisted object has.',
  ),
  [`${META}.Condition`]: obj(
    {
      lastTransitionTime: time('When the status last changed.'),
      message: str('Human-readable details.'),
      observedGeneration: int('The metadata.generation the condition was set for.', 'int64'),
      reason: str('Machine-readable reason, in CamelCase.'),
      status: str('True, False or Unknown.'),
      type: str('Condition type, in CamelCase.'),
    },
    'One aspect of the current state of an object.',
    ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  ),
  [`${CORE}.ObjectReference`]: obj(
    {
      apiVersion: str('API version of the referent.'),
      fieldPath: str('A path into the referent, e.g. spec.containers{name}.'),
      kind: str('Kind of the referent.'),
      name: str('Name of the referent.'),
      namespace: str('Namespace of the referent.'),
      resourceVersion: str('Version of the referent the reference was made at.'),
      uid: str('UID of the referent.'),
    },
    'Refers to another object.',
  ),

  // ------------------------------------------------------------------ Node
  [`${CORE}.Taint`]: obj(
    {
      effect: { t: 'string', d: 'What happens to pods that do not tolerate the taint: NoSchedule, PreferNoSchedule or NoExecute.', enum: ['NoExecute', 'NoSchedule', 'PreferNoSchedule'] },
      key: str('The taint key.'),
      timeAdded: time('When a NoExecute taint was added.'),
      value: str('The taint value.'),
    },
    'A taint keeps pods that do not tolerate it off the node.',
    ['key', 'effect'],
  ),
  [`${CORE}.NodeSpec`]: obj(
    {
      configSource: { t: 'any', d: 'Deprecated: dynamic kubelet configuration was removed.' },
      externalID: str('Deprecated.'),
      podCIDR: str('The first pod CIDR of the node; kept equal to podCIDRs[0].'),
      podCIDRs: arr(str(), 'Pod IP ranges of the node, at most one per IP family; fixed once set.', { listType: 'set', strategy: 'merge' }),
      providerID: str('The node\'s ID in the cloud provider: <provider>://<id>.'),
      taints: arr(ref(`${CORE}.Taint`), 'Taints of the node.', { listType: 'atomic' }),
      unschedulable: bool('Whether new pods may not be scheduled on the node.'),
    },
    'How the node is to be configured.',
  ),
  [`${CORE}.NodeAddress`]: obj({ address: str('The address.'), type: str('Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.') }, 'One address of the node.', ['type', 'address']),
  [`${CORE}.NodeCondition`]: obj(
    {
      lastHeartbeatTime: time('When the condition was last probed.'),
      lastTransitionTime: time('When the status last changed.'),
      message: str('Human-readable details.'),
      reason: str('Why the status last changed, in CamelCase.'),
      status: str('True, False or Unknown.'),
      type: str('Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable, …'),
    },
    'One condition of the node.',
    ['type', 'status'],
  ),
  [`${CORE}.NodeSystemInfo`]: obj(
    {
      architecture: str('CPU architecture.'),
      bootID: str('Boot ID of the node.'),
      containerRuntimeVersion: str('Container runtime and its version, e.g. containerd://1.7.0.'),
      kernelVersion: str('Kernel version (uname -r).'),
      kubeProxyVersion: str('Deprecated.'),
      kubeletVersion: str('Kubelet version.'),
      machineID: str('Machine ID of the node.'),
      operatingSystem: str('Operating system, e.g. linux.'),
      osImage: str('OS image, e.g. Debian GNU/Linux 12.'),
      swap: obj({ capacity: int('Swap space in bytes.', 'int64') }, 'Swap memory of the node.'),
      systemUUID: str('System UUID of the node.'),
    },
    'Facts about the node reported by the kubelet.',
  ),
  [`${CORE}.NodeStatus`]: obj(
    {
      addresses: arr(ref(`${CORE}.NodeAddress`), 'Addresses of the node, set by the kubelet or the cloud controller manager.', { listType: 'map', mapKeys: ['type'], mergeKey: 'type', strategy: 'merge' }),
      allocatable: map(ref('io.k8s.apimachinery.pkg.api.resource.Quantity'), 'Resources available to pods.'),
      capacity: map(ref('io.k8s.apimachinery.pkg.api.resource.Quantity'), 'Total resources of the node.'),
      conditions: arr(ref(`${CORE}.NodeCondition`), 'Current conditions of the node.', { listType: 'map', mapKeys: ['type'], mergeKey: 'type', strategy: 'merge' }),
      config: { t: 'any', d: 'Status of the dynamic kubelet configuration (deprecated).' },
      daemonEndpoints: obj({ kubeletEndpoint: obj({ Port: int('Port number.') }, 'Where the kubelet listens.', ['Port']) }, 'Endpoints of daemons on the node.'),
      features: obj({ supplementalGroupsPolicy: bool('Whether the node supports SupplementalGroupsPolicy.') }, 'Features the node supports.'),
      images: arr(obj({ names: arr(str(), 'Names of the image.', { listType: 'atomic' }), sizeBytes: int('Size in bytes.', 'int64') }, 'An image on the node.'), 'Images on the node.', { mergeKey: 'names', strategy: 'merge' }),
      nodeInfo: ref(`${CORE}.NodeSystemInfo`, 'Facts about the node.'),
      phase: str('Deprecated.'),
      runtimeHandlers: arr(obj({ features: obj({ recursiveReadOnlyMounts: bool(), userNamespaces: bool() }, 'Features of the handler.'), name: str('Handler name; empty for the default.') }, 'A runtime handler.'), 'Runtime handlers on the node.', { listType: 'atomic' }),
      volumesAttached: arr(obj({ devicePath: str('Device path.'), name: str('Volume name.') }, 'An attached volume.', ['name', 'devicePath']), 'Volumes attached to the node.', { mergeKey: 'name', strategy: 'merge' }),
      volumesInUse: arr(str(), 'Volumes in use on the node.', { listType: 'atomic' }),
    },
    'The most recently observed state of the node.',
  ),
  [`${CORE}.Node`]: obj({ ...typeFields(), metadata: meta(), spec: ref(`${CORE}.NodeSpec`, 'Desired configuration of the node.'), status: ref(`${CORE}.NodeStatus`, 'Observed state of the node, written by the kubelet and controllers (read-only for most users).') }, 'A worker machine of the cluster.'),

  // ------------------------------------------------------------------ Namespace, ConfigMap
  [`${CORE}.Namespace`]: obj(
    {
      ...typeFields(),
      metadata: meta(),
      spec: obj({ finalizers: arr(str(), 'Must be empty before the namespace is removed from storage.', { listType: 'atomic' }) }, 'How the namespace is to be handled.'),
      status: obj(
        {
          conditions: arr(obj({ lastTransitionTime: time(), message: str(), reason: str(), status: str(), type: str() }, 'A namespace condition.', ['type', 'status']), 'Conditions of the namespace.', { listType: 'map', mapKeys: ['type'], mergeKey: 'type', strategy: 'merge' }),
          phase: str('Active or Terminating.'),
        },
        'Current state of the namespace.',
      ),
    },
    'A scope for names.',
  ),
  [`${CORE}.ConfigMap`]: obj(
    {
      ...typeFields(),
      binaryData: map(str(undefined, 'byte'), 'Binary values, base64-encoded.'),
      data: map(str(), 'UTF-8 values.'),
      immutable: bool('Whether the data can no longer be changed.'),
      metadata: meta(),
    },
    'Non-confidential configuration data.',
  ),

  // ------------------------------------------------------------------ Events
  [`${CORE}.Event`]: obj(
    {
      ...typeFields(),
      action: str('What was done, or failed to be done.'),
      count: int('How many times the event occurred.'),
      eventTime: microTime('When the event first occurred.'),
      firstTimestamp: time('When the event was first recorded.'),
      involvedObject: ref(`${CORE}.ObjectReference`, 'The object the event is about.'),
      lastTimestamp: time('When the event was last recorded.'),
      message: str('Human-readable description.'),
      metadata: meta(),
      reason: str('Short machine-readable reason, in CamelCase.'),
      related: ref(`${CORE}.ObjectReference`, 'A second object involved.'),
      reportingComponent: str('The controller that emitted the event.'),
      reportingInstance: str('The controller instance that emitted the event.'),
      series: obj({ count: int('Occurrences so far.'), lastObservedTime: microTime('Time of the last occurrence.') }, 'Data about a series of occurrences.'),
      source: obj({ component: str('Component that reported the event.'), host: str('Node it was reported from.') }, 'Who reported the event.'),
      type: str('Normal or Warning.'),
    },
    'A report of something that happened in the cluster.',
    ['metadata', 'involvedObject'],
  ),
  'io.k8s.api.events.v1.Event': obj(
    {
      ...typeFields(),
      action: str('What was done, or failed to be done.'),
      deprecatedCount: int('Deprecated count field of core/v1 events.'),
      deprecatedFirstTimestamp: time('Deprecated firstTimestamp of core/v1 events.'),
      deprecatedLastTimestamp: time('Deprecated lastTimestamp of core/v1 events.'),
      deprecatedSource: obj({ component: str(), host: str() }, 'Deprecated source of core/v1 events.'),
      eventTime: microTime('When the event first occurred.'),
      metadata: meta(),
      note: str('Human-readable description.'),
      reason: str('Short machine-readable reason, in CamelCase.'),
      regarding: ref(`${CORE}.ObjectReference`, 'The object the event is about.'),
      related: ref(`${CORE}.ObjectReference`, 'A second object involved.'),
      reportingController: str('The controller that emitted the event.'),
      reportingInstance: str('The controller instance that emitted the event.'),
      series: obj({ count: int('Occurrences so far.'), lastObservedTime: microTime('Time of the last occurrence.') }, 'Data about a series of occurrences.', ['count', 'lastObservedTime']),
      type: str('Normal or Warning.'),
    },
    'A report of something that happened in the cluster.',
    ['eventTime'],
  ),

  // ------------------------------------------------------------------ Lease, ServiceCIDR
  'io.k8s.api.coordination.v1.Lease': obj(
    {
      ...typeFields(),
      metadata: meta(),
      spec: obj(
        {
          acquireTime: microTime('When the current lease was acquired.'),
          holderIdentity: str('Who holds the lease.'),
          leaseDurationSeconds: int('How long candidates wait before taking the lease over.'),
          leaseTransitions: int('How many times the holder changed.'),
          preferredHolder: str('The holder the lease should go to next.'),
          renewTime: microTime('When the holder last renewed the lease.'),
          strategy: str('How the next holder is chosen.'),
        },
        'The lease\'s holder and timing.',
      ),
    },
    'A lease: leader election and heartbeats.',
  ),
  'io.k8s.api.networking.v1.ServiceCIDR': obj(
    {
      ...typeFields(),
      metadata: meta(),
      spec: obj({ cidrs: arr(str(), 'Up to two CIDRs, one per IP family; immutable.', { listType: 'atomic' }) }, 'The ranges of the ServiceCIDR.'),
      status: obj({ conditions: arr(ref(`${META}.Condition`), 'Conditions of the ServiceCIDR.', { listType: 'map', mapKeys: ['type'], mergeKey: 'type', strategy: 'merge' }) }, 'Current state of the ServiceCIDR.'),
    },
    'A range of Service cluster IPs.',
  ),
};

// ClusterCIDR: the openAPIV3Schema of deploy/base/crd-clustercidrs.yaml (a test keeps the two
// equal field for field).
const selectorRequirement = (d: string): Schema => arr(
  obj({ key: str(), operator: str('In, NotIn, Exists, DoesNotExist, Gt or Lt.'), values: arr(str(), undefined, { listType: 'atomic' }) }, undefined, ['key', 'operator']),
  d,
  { listType: 'atomic' },
);
DEFINITIONS['io.x-k8s.networking.v1.ClusterCIDR'] = obj(
  {
    apiVersion: str(),
    kind: str(),
    metadata: { t: 'object', props: {} },
    spec: obj(
      {
        nodeSelector: {
          t: 'object',
          atomic: true,
          d: 'Which nodes this range applies to. Absent or empty selects all nodes. Immutable.',
          required: ['nodeSelectorTerms'],
          props: {
            nodeSelectorTerms: arr(
              { t: 'object', atomic: true, d: 'A node selector term; its requirements are ANDed.', props: { matchExpressions: selectorRequirement('Requirements on node labels.'), matchFields: selectorRequirement('Requirements on node fields.') } },
              'Node selector terms, ORed.',
              { listType: 'atomic' },
            ),
          },
        },
        perNodeHostBits: int('Host bits per node: each node gets a /(32-perNodeHostBits) IPv4 and/or a /(128-perNodeHostBits) IPv6 block. At least 4 on create. Immutable.'),
        ipv4: { t: 'string', maxLength: 64, d: 'IPv4 range in CIDR notation, e.g. 10.0.0.0/8. Empty or absent when unused. Immutable.' },
        ipv6: { t: 'string', maxLength: 64, d: 'IPv6 range in CIDR notation, e.g. fd00:10:244::/56. Empty or absent when unused. Immutable.' },
      },
      'ClusterCIDRSpec. Every field is immutable.',
      ['perNodeHostBits'],
    ),
  },
  'ClusterCIDR is one range of pod CIDRs for the nodes its nodeSelector matches. Each matching node gets a block of 2^perNodeHostBits addresses from ipv4 and/or ipv6.',
  ['spec'],
);

/** Definition name of a served resource's kind; undefined for a kind without a schema. */
export function definitionOf(r: Pick<Resource, 'group' | 'version' | 'kind'>): string | undefined {
  let name: string;
  if (r.group === '') name = `io.k8s.api.core.${r.version}.${r.kind}`;
  else if (r.group.endsWith('.k8s.io')) name = `io.k8s.api.${r.group.slice(0, -'.k8s.io'.length).split('.').join('.')}.${r.version}.${r.kind}`;
  else name = `${r.group.split('.').reverse().join('.')}.${r.version}.${r.kind}`;
  return DEFINITIONS[name] ? name : undefined;
}

/** Follows refs to the schema they name. */
export function resolve(s: Schema): Schema {
  let cur = s;
  for (let i = 0; cur.t === 'ref' && i < 16; i++) {
    const next = DEFINITIONS[cur.name];
    if (!next) throw new Error(`openapi: no definition named ${cur.name}`);
    cur = next;
  }
  return cur;
}

function quoteValue(v: unknown): string {
  return JSON.stringify(v);
}

/**
 * Paths of the fields of `value` that `schema` does not declare, in kube-apiserver's notation
 * (`spec.foo`, `status.addresses[0].bar`), in document order.
 */
export function unknownFields(value: unknown, schema: Schema, path = ''): string[] {
  const s = resolve(schema);
  const out: string[] = [];
  if (value === null || value === undefined) return out;
  if (s.t === 'object' && typeof value === 'object' && !Array.isArray(value)) {
    // An object schema without properties (a CRD's `metadata: {type: object}`) is free-form.
    if (Object.keys(s.props).length === 0) return out;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const child = s.props[k];
      const p = path ? `${path}.${k}` : k;
      if (!child) out.push(p);
      else out.push(...unknownFields(v, child, p));
    }
  } else if (s.t === 'map' && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out.push(...unknownFields(v, s.values, `${path}[${quoteValue(k).slice(1, -1)}]`));
  } else if (s.t === 'array' && Array.isArray(value)) {
    value.forEach((v, i) => out.push(...unknownFields(v, s.items, `${path}[${i}]`)));
  }
  return out;
}
