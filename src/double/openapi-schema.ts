// The schemas of the served kinds, in a compact hand-written form: one description from which
// the OpenAPI v2 and v3 documents (openapi.ts) and the unknown-field check of
// fieldValidation=Strict are generated. Definition names follow kube-apiserver's, so kubectl
// shows the same type names (`spec <NodeSpec>`). Field lists follow the v1 API types; the
// descriptions are this project's own words.
import type { Resource } from './store.js';

export type Schema =
  | { t: 'string' | 'integer' | 'number' | 'boolean'; d?: string; format?: string; maxLength?: number; enum?: string[] }
  | { t: 'object'; d?: string; props: Record<string, Schema>; required?: string[]; atomic?: boolean }
  | { t: 'array'; d?: string; items: Schema; listType?: 'atomic' | 'set' | 'map'; mapKeys?: string[]; mergeKey?: string; strategy?: 'merge' | 'replace' | 'retainKeys' | 'merge,retainKeys' }
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
const any = (d?: string): Schema => ({ t: 'any', d });
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

// ------------------------------------------------------------------ Pod
// Every field of core/v1 PodSpec, Container and PodStatus is declared, so fieldValidation=Strict
// refuses exactly the fields kube-apiserver refuses at that level and `kubectl explain pod.spec`
// lists them all. Sub-objects the double never reads (probes, affinity, security contexts,
// volume sources…) are free-form: a typo inside them is stored, not refused.
const QUANTITIES = (d: string): Schema => map(ref('io.k8s.apimachinery.pkg.api.resource.Quantity'), d);
const keyed = (items: Schema, d: string, mergeKey: string, extra: Partial<Extract<Schema, { t: 'array' }>> = {}): Schema => arr(items, d, { listType: 'map', mapKeys: [mergeKey], mergeKey, strategy: 'merge', ...extra });

/** The fields Container and EphemeralContainer share. */
const containerFields = (): Record<string, Schema> => ({
  args: arr(str(), 'Arguments to the entrypoint; the image\'s CMD when absent.', { listType: 'atomic' }),
  command: arr(str(), 'The entrypoint; the image\'s ENTRYPOINT when absent.', { listType: 'atomic' }),
  env: keyed(ref(`${CORE}.EnvVar`), 'Environment variables of the container.', 'name'),
  envFrom: arr(obj({ configMapRef: any('A ConfigMap whose keys become variables.'), prefix: str('Prefix added to each variable name.'), secretRef: any('A Secret whose keys become variables.') }, 'A source of environment variables.'), 'Sources of environment variables.', { listType: 'atomic' }),
  image: str('The container image, e.g. registry.k8s.io/pause:3.10.'),
  imagePullPolicy: { t: 'string', d: 'Always, Never or IfNotPresent; Always for :latest or untagged images by default.', enum: ['Always', 'IfNotPresent', 'Never'] },
  lifecycle: any('Hooks run after the container starts and before it stops.'),
  livenessProbe: any('Probe whose failure restarts the container.'),
  name: str('Name of the container, a DNS label unique in the pod.'),
  ports: arr(ref(`${CORE}.ContainerPort`), 'Ports the container exposes (informational).', { listType: 'map', mapKeys: ['containerPort', 'protocol'], mergeKey: 'containerPort', strategy: 'merge' }),
  readinessProbe: any('Probe whose failure takes the container out of service endpoints.'),
  resizePolicy: arr(any('How one resource is resized.'), 'How each resource may be resized in place.', { listType: 'atomic' }),
  resources: ref(`${CORE}.ResourceRequirements`, 'Compute resources the container requests and is limited to.'),
  restartPolicy: str('Always makes an init container a sidecar that runs for the life of the pod.'),
  securityContext: any('Security options of the container.'),
  startupProbe: any('Probe that must succeed before the other probes start.'),
  stdin: bool('Whether the container keeps a stdin buffer.'),
  stdinOnce: bool('Whether stdin closes after the first attach session.'),
  terminationMessagePath: str('File whose content becomes the termination message.'),
  terminationMessagePolicy: str('File or FallbackToLogsOnError.'),
  tty: bool('Whether the container gets a TTY.'),
  volumeDevices: keyed(obj({ devicePath: str('Path of the device in the container.'), name: str('Name of the persistentVolumeClaim volume.') }, 'A raw block device.', ['name', 'devicePath']), 'Block devices the container uses.', 'devicePath'),
  volumeMounts: keyed(ref(`${CORE}.VolumeMount`), 'Volumes mounted into the container.', 'mountPath'),
  workingDir: str('Working directory; the image\'s when absent.'),
});

/** The volume sources a Volume may name, each a free-form object. */
const VOLUME_SOURCES = ['awsElasticBlockStore', 'azureDisk', 'azureFile', 'cephfs', 'cinder', 'configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'fc', 'flexVolume', 'flocker', 'gcePersistentDisk', 'gitRepo', 'glusterfs', 'hostPath', 'image', 'iscsi', 'nfs', 'persistentVolumeClaim', 'photonPersistentDisk', 'portworxVolume', 'projected', 'quobyte', 'rbd', 'scaleIO', 'secret', 'storageos', 'vsphereVolume'];

const containerState = obj(
  {
    running: obj({ startedAt: time('When the container started.') }, 'The container is running.'),
    terminated: obj(
      {
        containerID: str('ID of the container.'),
        exitCode: int('Exit status of its last run.'),
        finishedAt: time('When it ended.'),
        message: str('Details.'),
        reason: str('Why it ended, e.g. Completed, Error, OOMKilled.'),
        signal: int('Signal that ended it.'),
        startedAt: time('When it started.'),
      },
      'The container ran and ended.',
      ['exitCode'],
    ),
    waiting: obj({ message: str('Details.'), reason: str('Why it is not running yet, e.g. ContainerCreating, CrashLoopBackOff.') }, 'The container is not running yet.'),
  },
  'At most one of running, terminated and waiting.',
);

Object.assign(DEFINITIONS, {
  [`${CORE}.EnvVar`]: obj({ name: str('Name of the variable.'), value: str('Its value; $(VAR) references are expanded.'), valueFrom: any('Where the value comes from instead: a field, a resource, a ConfigMap or Secret key.') }, 'An environment variable.', ['name']),
  [`${CORE}.ContainerPort`]: obj(
    {
      containerPort: int('Port number in the pod.'),
      hostIP: str('Host IP to bind a host port to.'),
      hostPort: int('Port number on the node.'),
      name: str('Name of the port, an IANA service name.'),
      protocol: { t: 'string', d: 'TCP (default), UDP or SCTP.', enum: ['SCTP', 'TCP', 'UDP'] },
    },
    'A network port of a container.',
    ['containerPort'],
  ),
  [`${CORE}.ResourceRequirements`]: obj(
    {
      claims: arr(obj({ name: str('Name of an entry in spec.resourceClaims.'), request: str('One request of that claim.') }, 'A resource claim the container uses.', ['name']), 'Dynamic resource claims the container uses.', { listType: 'map', mapKeys: ['name'] }),
      limits: QUANTITIES('The most of each resource the container may use.'),
      requests: QUANTITIES('The resources the container needs, used for scheduling; default to the limits.'),
    },
    'Compute resources.',
  ),
  [`${CORE}.VolumeMount`]: obj(
    {
      mountPath: str('Path in the container.'),
      mountPropagation: str('None, HostToContainer or Bidirectional.'),
      name: str('Name of the volume.'),
      readOnly: bool('Whether the mount is read-only.'),
      recursiveReadOnly: str('Disabled, IfPossible or Enabled.'),
      subPath: str('Path inside the volume to mount instead of its root.'),
      subPathExpr: str('subPath with $(VAR) references expanded.'),
    },
    'A volume mounted into a container.',
    ['name', 'mountPath'],
  ),
  [`${CORE}.Container`]: obj(containerFields(), 'A container of a pod.', ['name']),
  [`${CORE}.EphemeralContainer`]: obj({ ...containerFields(), targetContainerName: str('The container whose namespaces the debug container joins.') }, 'A temporary container added to a running pod for debugging.', ['name']),
  [`${CORE}.Toleration`]: obj(
    {
      effect: str('The taint effect tolerated; empty for all effects.'),
      key: str('The taint key tolerated; empty with Exists for all taints.'),
      operator: str('Exists or Equal (default).'),
      tolerationSeconds: int('For NoExecute: how long the pod stays bound after the taint appears.', 'int64'),
      value: str('The taint value, with Equal.'),
    },
    'Lets a pod run on a node with a matching taint.',
  ),
  [`${CORE}.Volume`]: obj({ name: str('Name of the volume, a DNS label unique in the pod.'), ...Object.fromEntries(VOLUME_SOURCES.map((v) => [v, any(`A ${v} volume source.`)])) }, 'A volume the containers of the pod can mount.', ['name']),
  [`${CORE}.PodSpec`]: obj(
    {
      activeDeadlineSeconds: int('Seconds the pod may run before it is failed.', 'int64'),
      affinity: any('Node, pod and anti-pod affinity rules for scheduling.'),
      automountServiceAccountToken: bool('Whether a service account token is mounted.'),
      containers: keyed(ref(`${CORE}.Container`), 'The containers of the pod; at least one.', 'name'),
      dnsConfig: any('DNS options merged into those of dnsPolicy.'),
      dnsPolicy: str('ClusterFirst (default), ClusterFirstWithHostNet, Default or None.'),
      enableServiceLinks: bool('Whether Service environment variables are injected (default true).'),
      ephemeralContainers: keyed(ref(`${CORE}.EphemeralContainer`), 'Debug containers added to the running pod.', 'name'),
      hostAliases: keyed(obj({ hostnames: arr(str(), 'Hostnames for the IP.', { listType: 'atomic' }), ip: str('The IP address.') }, 'An /etc/hosts entry.', ['ip']), 'Entries added to /etc/hosts.', 'ip'),
      hostIPC: bool('Whether the pod uses the node\'s IPC namespace.'),
      hostNetwork: bool('Whether the pod uses the node\'s network namespace.'),
      hostPID: bool('Whether the pod uses the node\'s PID namespace.'),
      hostUsers: bool('Whether the pod uses the node\'s user namespace.'),
      hostname: str('The pod\'s hostname; its name by default.'),
      imagePullSecrets: keyed(obj({ name: str('Name of the Secret.') }, 'A Secret in the pod\'s namespace.'), 'Secrets with registry credentials.', 'name'),
      initContainers: keyed(ref(`${CORE}.Container`), 'Containers run to completion, in order, before the others start (sidecars keep running).', 'name'),
      nodeName: str('The node the pod is bound to; set by the scheduler, or by the writer to bypass it.'),
      nodeSelector: map(str(), 'Labels a node must have to run the pod.'),
      os: obj({ name: str('linux or windows.') }, 'The operating system the pod needs.', ['name']),
      overhead: QUANTITIES('Resources the runtime class adds to the pod.'),
      preemptionPolicy: str('PreemptLowerPriority (default) or Never.'),
      priority: int('Scheduling priority, from priorityClassName.'),
      priorityClassName: str('Name of the pod\'s PriorityClass.'),
      readinessGates: arr(obj({ conditionType: str('A pod condition type.') }, 'A condition that must be True for the pod to be ready.', ['conditionType']), 'Extra conditions for readiness.', { listType: 'atomic' }),
      resourceClaims: keyed(obj({ name: str('Name of the claim in the pod.'), resourceClaimName: str('An existing ResourceClaim.'), resourceClaimTemplateName: str('A template to make one from.') }, 'A dynamic resource claim.', ['name']), 'Dynamic resource claims of the pod.', 'name', { strategy: 'merge,retainKeys' }),
      resources: ref(`${CORE}.ResourceRequirements`, 'Resources of the pod as a whole.'),
      restartPolicy: { t: 'string', d: 'Always (default), OnFailure or Never.', enum: ['Always', 'Never', 'OnFailure'] },
      runtimeClassName: str('The RuntimeClass to run the pod with.'),
      schedulerName: str('The scheduler that places the pod (default-scheduler).'),
      schedulingGates: keyed(obj({ name: str('Name of the gate.') }, 'A gate that holds the pod back from scheduling.', ['name']), 'Gates that must all be removed before the pod is scheduled.', 'name'),
      securityContext: any('Security options of the pod.'),
      serviceAccount: str('Deprecated: serviceAccountName.'),
      serviceAccountName: str('The ServiceAccount the pod runs as.'),
      setHostnameAsFQDN: bool('Whether the hostname is the fully qualified domain name.'),
      shareProcessNamespace: bool('Whether the containers share one PID namespace.'),
      subdomain: str('Subdomain of the pod\'s DNS name.'),
      terminationGracePeriodSeconds: int('Seconds between the stop signal and the kill (default 30).', 'int64'),
      tolerations: arr(ref(`${CORE}.Toleration`), 'Taints the pod tolerates.', { listType: 'atomic' }),
      topologySpreadConstraints: arr(any('How pods spread over one topology domain.'), 'How matching pods spread over nodes, zones and regions.', { listType: 'map', mapKeys: ['topologyKey', 'whenUnsatisfiable'], mergeKey: 'topologyKey', strategy: 'merge' }),
      volumes: keyed(ref(`${CORE}.Volume`), 'Volumes the containers can mount.', 'name', { strategy: 'merge,retainKeys' }),
    },
    'What a pod runs and how.',
    ['containers'],
  ),
  [`${CORE}.ContainerStatus`]: obj(
    {
      allocatedResources: QUANTITIES('Resources the node allocated to the container.'),
      allocatedResourcesStatus: arr(any('Health of one allocated resource.'), 'Health of the allocated resources.', { listType: 'map', mapKeys: ['name'] }),
      containerID: str('ID of the container, <runtime>://<id>.'),
      image: str('The image the container runs.'),
      imageID: str('The image\'s ID.'),
      lastState: ref(`${CORE}.ContainerState`, 'State of the previous run, after a restart.'),
      name: str('Name of the container.'),
      ready: bool('Whether the container passes its readiness probe.'),
      resources: ref(`${CORE}.ResourceRequirements`, 'Resources the runtime applied.'),
      restartCount: int('How many times the container restarted.'),
      started: bool('Whether the container passed its startup probe.'),
      state: ref(`${CORE}.ContainerState`, 'Current state.'),
      stopSignal: str('The signal that stops the container.'),
      user: any('The user identity the container runs as.'),
      volumeMounts: arr(any('A mount as the runtime made it.'), 'Mounts of the container.', { listType: 'atomic' }),
    },
    'The observed state of one container.',
    ['name', 'ready', 'restartCount', 'image', 'imageID'],
  ),
  [`${CORE}.ContainerState`]: containerState,
  [`${CORE}.PodCondition`]: obj(
    {
      lastProbeTime: time('When the condition was last probed.'),
      lastTransitionTime: time('When the status last changed.'),
      message: str('Human-readable details.'),
      reason: str('Why the status last changed, in CamelCase.'),
      status: str('True, False or Unknown.'),
      type: str('PodScheduled, Initialized, ContainersReady, Ready, …'),
    },
    'One condition of the pod.',
    ['type', 'status'],
  ),
  [`${CORE}.PodStatus`]: obj(
    {
      conditions: keyed(ref(`${CORE}.PodCondition`), 'Current conditions of the pod.', 'type'),
      containerStatuses: arr(ref(`${CORE}.ContainerStatus`), 'Status of each container.', { listType: 'atomic' }),
      ephemeralContainerStatuses: arr(ref(`${CORE}.ContainerStatus`), 'Status of each debug container.', { listType: 'atomic' }),
      hostIP: str('IP of the node the pod runs on.'),
      hostIPs: keyed(obj({ ip: str('An IP address.') }, 'An IP of the node.', ['ip']), 'IPs of the node, one per family.', 'ip', { listType: 'atomic', mapKeys: undefined }),
      initContainerStatuses: arr(ref(`${CORE}.ContainerStatus`), 'Status of each init container.', { listType: 'atomic' }),
      message: str('Why the pod is in this phase.'),
      nominatedNodeName: str('The node preemption is making room on for this pod.'),
      phase: { t: 'string', d: 'Pending, Running, Succeeded, Failed or Unknown.', enum: ['Failed', 'Pending', 'Running', 'Succeeded', 'Unknown'] },
      podIP: str('The pod\'s first IP; podIPs[0].'),
      podIPs: keyed(obj({ ip: str('An IP address.') }, 'An IP of the pod.', ['ip']), 'IPs of the pod, one per family.', 'ip'),
      qosClass: str('BestEffort, Burstable or Guaranteed, from the containers\' requests and limits.'),
      reason: str('Why the pod is in this state, in CamelCase (e.g. Evicted).'),
      resize: str('Progress of an in-place resize.'),
      resourceClaimStatuses: keyed(obj({ name: str('Name of the claim in the pod.'), resourceClaimName: str('The ResourceClaim made for it.') }, 'The claim made for one entry.', ['name']), 'The ResourceClaims made for the pod.', 'name', { strategy: 'merge,retainKeys' }),
      startTime: time('When the kubelet accepted the pod.'),
    },
    'The observed state of the pod, written by the kubelet and the scheduler.',
  ),
  [`${CORE}.Pod`]: obj({ ...typeFields(), metadata: meta(), spec: ref(`${CORE}.PodSpec`, 'What the pod runs.'), status: ref(`${CORE}.PodStatus`, 'Observed state of the pod (read-only for most users).') }, 'A group of containers scheduled together on one node.'),
});

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

/**
 * `value` without the fields `schema` does not declare, as kube-apiserver stores an object whose
 * unknown fields it warned about (decoding into Go types drops them; a custom resource is
 * pruned). Parts without unknown fields are shared, not copied; `$` keys (strategic-merge
 * directives) are left alone.
 */
export function pruneUnknownFields(value: unknown, schema: Schema): unknown {
  const s = resolve(schema);
  if (value === null || typeof value !== 'object') return value;
  if (s.t === 'array' && Array.isArray(value)) {
    const items = value.map((v) => pruneUnknownFields(v, s.items));
    return items.every((v, i) => v === value[i]) ? value : items;
  }
  if (Array.isArray(value)) return value;
  const obj = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  const set = (k: string, v: unknown): void => {
    out ??= { ...obj };
    if (v === undefined) delete out[k];
    else out[k] = v;
  };
  if (s.t === 'object') {
    if (Object.keys(s.props).length === 0) return value;
    for (const [k, v] of Object.entries(obj)) {
      if (k.startsWith('$')) continue;
      const child = s.props[k];
      if (!child) set(k, undefined);
      else {
        const pruned = pruneUnknownFields(v, child);
        if (pruned !== v) set(k, pruned);
      }
    }
  } else if (s.t === 'map') {
    for (const [k, v] of Object.entries(obj)) {
      const pruned = pruneUnknownFields(v, s.values);
      if (pruned !== v) set(k, pruned);
    }
  }
  return out ?? value;
}
