// The probe: the calls this project and kubectl make, as data. Each step is sent, in this order,
// to the double and to the real kube-apiserver (runner.ts), and the answers are compared field by
// field (compare.ts). Names say what a step checks; `$(step:path)` refers to an earlier answer of
// the same server (a uid, a resourceVersion, a continue token).
//
// Where the calls come from:
// - the controllers (src/manager/adapters.ts, src/controllers): merge patches of nodes and
//   nodes/status guarded by metadata.resourceVersion (cloud node, IPAM), a strategic merge patch of
//   nodes/status conditions (cloud allocator), the taint list replaced whole by a guarded merge
//   patch (node lifecycle), deletes with a uid precondition, JSON patches with a `test` on
//   resourceVersion (ClusterCIDR finalizers), ClusterCIDR create/delete, list?limit=1 for a
//   resourceVersion, paged lists and watches from a version with bookmarks (src/kube/watcher.ts);
//   leader election's Lease get/create/update (src/kube/leader.ts); Events created and then merge
//   patched with count/lastTimestamp/message (src/kube/events.ts); ServiceCIDR list/watch;
// - kubectl, as test/kubectl drives it: apply/annotate/label (merge and strategic patches), taint
//   (strategic), patch --subresource=status, get -o wide (Tables), wait (a metadata.name field
//   selector watch), describe (pods by spec.nodeName, events by involvedObject), drain
//   (cordon, pods by spec.nodeName, evictions, --dry-run=server), create --dry-run=server, delete.
import type { ProbeStep, RequestStep } from './runner.js';

export const PROBE_NAMESPACE = 'probe';
/** A uid no object has: what a guard sends when the name now holds another object. */
export const FOREIGN_UID = '00000000-0000-4000-8000-000000000000';

const NODES = '/api/v1/nodes';
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${PROBE_NAMESPACE}/leases`;
// Events about Nodes (cluster-scoped) must live in "default" (src/kube/events.ts writes them there).
const EVENTS = '/api/v1/namespaces/default/events';
const PROBE_EVENTS = `/api/v1/namespaces/${PROBE_NAMESPACE}/events`;
const EVENTS_V1 = '/apis/events.k8s.io/v1/namespaces/default/events';
const CLUSTERCIDRS = '/apis/networking.x-k8s.io/v1/clustercidrs';
const SERVICECIDRS = '/apis/networking.k8s.io/v1/servicecidrs';
const PODS = `/api/v1/namespaces/${PROBE_NAMESPACE}/pods`;
const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';
const UNINITIALIZED = 'node.cloudprovider.kubernetes.io/uninitialized';

const get = (name: string, path: string, extra: Partial<RequestStep> = {}): RequestStep => ({ name, method: 'GET', path, ...extra });
const post = (name: string, path: string, body: unknown, extra: Partial<RequestStep> = {}): RequestStep => ({ name, method: 'POST', path, body, ...extra });
const put = (name: string, path: string, body: unknown, extra: Partial<RequestStep> = {}): RequestStep => ({ name, method: 'PUT', path, body, ...extra });
const patch = (name: string, path: string, contentType: string, body: unknown, extra: Partial<RequestStep> = {}): RequestStep => ({ name, method: 'PATCH', path, contentType, body, ...extra });
const del = (name: string, path: string, body?: unknown, extra: Partial<RequestStep> = {}): RequestStep => ({ name, method: 'DELETE', path, ...(body === undefined ? {} : { body }), ...extra });

/** A Node as a kubelet registers it under an external cloud provider: tainted, with addresses. */
function kubeletNode(name: string, labels: Record<string, string> = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { probe: 'yes', 'kubernetes.io/hostname': name, ...labels } },
    spec: { taints: [{ key: UNINITIALIZED, value: 'true', effect: 'NoSchedule' }] },
    status: {
      addresses: [
        { type: 'InternalIP', address: '10.0.0.1' },
        { type: 'Hostname', address: name },
      ],
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: '2025-01-01T00:00:00Z', lastTransitionTime: '2025-01-01T00:00:00Z' }],
      capacity: { cpu: '2', memory: '4Gi', pods: '110' },
      nodeInfo: { kubeletVersion: 'v1.35.4', osImage: 'Debian GNU/Linux 12', kernelVersion: '6.1.0', containerRuntimeVersion: 'containerd://2.0.0', operatingSystem: 'linux', architecture: 'amd64', machineID: 'm', systemUUID: 's', bootID: 'b', kubeProxyVersion: '' },
    },
  };
}

const nodeSteps: ProbeStep[] = [
  post('node.create', NODES, kubeletNode('probe-a', { 'topology.kubernetes.io/zone': 'z1' })),
  post('node.create-b', NODES, { ...kubeletNode('probe-b'), spec: { unschedulable: true } }),
  post('node.create-generate-name', NODES, { metadata: { generateName: 'probegen-', labels: { probe: 'generated' } } }),
  post('node.create-exists', NODES, kubeletNode('probe-a')),
  post('node.create-invalid-name', NODES, { metadata: { name: 'Probe_Bad' } }),
  post('node.create-invalid-label', NODES, { metadata: { name: 'probe-bad-label', labels: { 'bad key!': 'x' } } }),
  post('node.create-with-resourceversion', NODES, { metadata: { name: 'probe-rv', resourceVersion: '12' } }),
  post('node.create-bad-json', NODES, '{"metadata": ', { contentType: 'application/json' }),
  post('node.create-wrong-kind', NODES, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe-kind' } }),
  post('node.create-unknown-field-strict', `${NODES}?fieldValidation=Strict`, { metadata: { name: 'probe-strict' }, spec: { bogus: 1 } }),
  post('node.create-unknown-field-warn', `${NODES}?fieldValidation=Warn&dryRun=All`, { metadata: { name: 'probe-warn' }, spec: { bogus: 1 } }),
  post('node.create-dry-run', `${NODES}?dryRun=All`, { metadata: { name: 'probe-dry' } }),
  get('node.get-dry-run-absent', `${NODES}/probe-dry`),
  post('node.create-dry-run-bad-value', `${NODES}?dryRun=Some`, { metadata: { name: 'probe-dry2' } }),
  get('node.get', `${NODES}/probe-a`),
  get('node.get-missing', `${NODES}/probe-missing`),
  get('node.get-status', `${NODES}/probe-a/status`),

  // Lists: selectors, paging.
  get('node.list-label', `${NODES}?labelSelector=probe%3Dyes`),
  get('node.list-label-set', `${NODES}?labelSelector=probe%20in%20(yes,generated),topology.kubernetes.io%2Fzone`),
  get('node.list-label-bad', `${NODES}?labelSelector=probe%20in%20(yes`),
  get('node.list-field-name', `${NODES}?fieldSelector=metadata.name%3Dprobe-a`),
  get('node.list-field-unschedulable', `${NODES}?fieldSelector=spec.unschedulable%3Dtrue`),
  get('node.list-field-unschedulable-false', `${NODES}?fieldSelector=spec.unschedulable%3Dfalse`),
  get('node.list-field-providerid', `${NODES}?fieldSelector=spec.providerID%3Dstatic%3A%2F%2Fprobe-a`),
  get('node.list-field-unknown', `${NODES}?fieldSelector=status.phase%3DReady`),
  get('node.list-limit-for-rv', `${NODES}?limit=1`),
  get('node.list-page-1', `${NODES}?limit=2`),
  get('node.list-page-2', `${NODES}?limit=2&continue=$(node.list-page-1:body.metadata.continue)`),
  get('node.list-page-selector', `${NODES}?limit=1&labelSelector=probe%3Dyes`),
  get('node.list-continue-garbage', `${NODES}?limit=1&continue=bm90LWEtdG9rZW4`),
  get('node.list-rv-future', `${NODES}?resourceVersion=999999999`, { mask: ['body.message'] }),
  get('node.list-rv-zero', `${NODES}?resourceVersion=0&labelSelector=probe%3Dyes`),

  // Merge patches: what the controllers send.
  patch('node.merge-labels', `${NODES}/probe-a`, MERGE, { metadata: { labels: { 'node.kubernetes.io/instance-type': 'm5.large', 'topology.kubernetes.io/zone': null } } }),
  patch('node.merge-uid-foreign', `${NODES}/probe-a`, MERGE, { metadata: { uid: FOREIGN_UID, labels: { guarded: 'foreign' } } }),
  patch('node.merge-uid-same', `${NODES}/probe-a`, MERGE, { metadata: { uid: '$(node.create:body.metadata.uid)', labels: { guarded: 'same' } } }),
  patch('node.merge-rv-stale', `${NODES}/probe-a`, MERGE, { metadata: { resourceVersion: '$(node.create:body.metadata.resourceVersion)', labels: { guarded: 'stale' } } }),
  patch('node.merge-rv-stale-uid-foreign', `${NODES}/probe-a`, MERGE, { metadata: { uid: FOREIGN_UID, resourceVersion: '$(node.create:body.metadata.resourceVersion)' } }),
  patch('node.merge-rv-current-uid-foreign', `${NODES}/probe-a`, MERGE, { metadata: { uid: FOREIGN_UID, resourceVersion: '$(node.merge-uid-same:body.metadata.resourceVersion)' } }),
  patch('node.merge-rv-current', `${NODES}/probe-a`, MERGE, {
    metadata: { resourceVersion: '$(node.merge-uid-same:body.metadata.resourceVersion)', uid: '$(node.create:body.metadata.uid)', annotations: { 'example.com/pool': 'default' } },
    spec: { providerID: 'static://probe-a', podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'], taints: null },
  }),
  patch('node.merge-uid-missing-node', `${NODES}/probe-missing`, MERGE, { metadata: { uid: FOREIGN_UID } }),
  patch('node.merge-podcidrs-change', `${NODES}/probe-a`, MERGE, { spec: { podCIDRs: ['10.244.9.0/24'] } }),
  patch('node.merge-providerid-change', `${NODES}/probe-a`, MERGE, { spec: { providerID: 'static://other' } }),
  patch('node.merge-taints-replace', `${NODES}/probe-b`, MERGE, { spec: { taints: [{ key: 'example.com/a', effect: 'NoSchedule' }, { key: 'example.com/b', value: 'x', effect: 'NoExecute' }] } }),
  patch('node.merge-taint-bad-effect', `${NODES}/probe-b`, MERGE, { spec: { taints: [{ key: 'example.com/a', effect: 'Sometimes' }] } }),
  patch('node.merge-taint-duplicate', `${NODES}/probe-b`, MERGE, { spec: { taints: [{ key: 'example.com/a', effect: 'NoSchedule' }, { key: 'example.com/a', value: 'y', effect: 'NoSchedule' }] } }),
  patch('node.merge-status-ignored', `${NODES}/probe-b`, MERGE, { status: { capacity: { cpu: '64' } }, metadata: { labels: { via: 'main' } } }),
  patch('node.merge-malformed', `${NODES}/probe-a`, MERGE, '{"metadata":'),
  patch('node.merge-array-body', `${NODES}/probe-a`, MERGE, [{ metadata: {} }]),
  patch('node.merge-no-change', `${NODES}/probe-a`, MERGE, { metadata: { labels: { guarded: 'same' } } }),
  patch('node.patch-unsupported-type', `${NODES}/probe-a`, 'text/plain', '{"metadata":{}}'),
  patch('node.patch-force-not-apply', `${NODES}/probe-a?force=true`, MERGE, { metadata: {} }),

  // Strategic merge: lists by their patch strategy (taints atomic; addresses and conditions by type).
  patch('node.strategic-taints', `${NODES}/probe-b`, STRATEGIC, { spec: { taints: [{ key: 'example.com/c', effect: 'NoSchedule' }] } }),
  patch('node.strategic-cordon', `${NODES}/probe-b`, STRATEGIC, { spec: { unschedulable: false } }),
  patch('node.strategic-uid-foreign', `${NODES}/probe-b`, STRATEGIC, { metadata: { uid: FOREIGN_UID } }),
  patch('node.strategic-podcidrs-set', `${NODES}/probe-b`, STRATEGIC, { spec: { podCIDRs: ['10.244.2.0/24'] } }),
  patch('node.strategic-podcidrs-add', `${NODES}/probe-b`, STRATEGIC, { spec: { podCIDRs: ['fd00:10:244:2::/64'] } }),
  patch('node.strategic-finalizers', `${NODES}/probe-b`, STRATEGIC, { metadata: { finalizers: ['example.com/probe'] } }),
  patch('node.strategic-finalizers-add', `${NODES}/probe-b`, STRATEGIC, { metadata: { finalizers: ['example.com/other'] } }),
  patch('node.strategic-finalizers-delete', `${NODES}/probe-b`, STRATEGIC, { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/probe', 'example.com/other'] } }),
  patch('node.strategic-malformed', `${NODES}/probe-b`, STRATEGIC, '[1,2'),
  patch('node.strategic-bad-directive', `${NODES}/probe-b`, STRATEGIC, { spec: { $patch: 'explode' } }),

  // nodes/status: addresses and conditions by type, the rest of the object untouched.
  patch('node.status-strategic-address', `${NODES}/probe-a/status`, STRATEGIC, { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.9' }] } }),
  patch('node.status-strategic-dual-stack', `${NODES}/probe-a/status`, STRATEGIC, { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.2' }, { type: 'InternalIP', address: 'fd00::2' }] } }),
  patch('node.status-strategic-replace', `${NODES}/probe-a/status`, STRATEGIC, { status: { addresses: [{ $patch: 'replace' }, { type: 'InternalIP', address: '10.0.0.3' }, { type: 'InternalIP', address: 'fd00::3' }, { type: 'Hostname', address: 'probe-a' }] } }),
  patch('node.status-strategic-condition', `${NODES}/probe-a/status`, STRATEGIC, { status: { conditions: [{ type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'RouteController created a route', lastTransitionTime: '2025-01-02T00:00:00Z', lastHeartbeatTime: '2025-01-02T00:00:00Z' }] } }),
  patch('node.status-merge-addresses', `${NODES}/probe-a/status`, MERGE, { metadata: { resourceVersion: '$(node.status-strategic-condition:body.metadata.resourceVersion)' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.4' }, { type: 'ExternalIP', address: '203.0.113.4' }] } }),
  patch('node.status-merge-rv-stale', `${NODES}/probe-a/status`, MERGE, { metadata: { resourceVersion: '$(node.create:body.metadata.resourceVersion)' }, status: { addresses: [] } }),
  patch('node.status-merge-uid-foreign', `${NODES}/probe-a/status`, MERGE, { metadata: { uid: FOREIGN_UID }, status: { capacity: { cpu: '4' } } }),
  patch('node.status-merge-spec-ignored', `${NODES}/probe-a/status`, MERGE, { spec: { unschedulable: true } }),
  patch('node.status-merge-labels', `${NODES}/probe-a/status`, MERGE, { metadata: { labels: { via: 'status' }, annotations: { via: 'status' } } }),
  patch('node.status-json-test-rv', `${NODES}/probe-a/status`, JSON_PATCH, [{ op: 'test', path: '/metadata/resourceVersion', value: '$(node.status-merge-labels:body.metadata.resourceVersion)' }, { op: 'replace', path: '/status/capacity/cpu', value: '8' }]),

  // JSON patches: tests on uid and resourceVersion, paths that do not exist.
  patch('node.json-test-uid-foreign', `${NODES}/probe-a`, JSON_PATCH, [{ op: 'test', path: '/metadata/uid', value: FOREIGN_UID }, { op: 'add', path: '/metadata/labels/json', value: 'foreign' }]),
  patch('node.json-test-uid-same', `${NODES}/probe-a`, JSON_PATCH, [{ op: 'test', path: '/metadata/uid', value: '$(node.create:body.metadata.uid)' }, { op: 'add', path: '/metadata/labels/json', value: 'same' }]),
  patch('node.json-test-rv-stale', `${NODES}/probe-a`, JSON_PATCH, [{ op: 'test', path: '/metadata/resourceVersion', value: '$(node.create:body.metadata.resourceVersion)' }, { op: 'remove', path: '/metadata/labels/json' }]),
  patch('node.json-replace-uid', `${NODES}/probe-a`, JSON_PATCH, [{ op: 'replace', path: '/metadata/uid', value: FOREIGN_UID }]),
  patch('node.json-remove-missing', `${NODES}/probe-a`, JSON_PATCH, [{ op: 'remove', path: '/metadata/labels/absent' }]),
  patch('node.json-add-deep-missing', `${NODES}/probe-a`, JSON_PATCH, [{ op: 'add', path: '/metadata/nothere/deeper', value: 'x' }]),
  patch('node.json-bad-op', `${NODES}/probe-a`, JSON_PATCH, [{ op: 'frobnicate', path: '/metadata/labels/x' }]),
  patch('node.json-not-array', `${NODES}/probe-a`, JSON_PATCH, { op: 'add', path: '/metadata/labels/x', value: 'y' }),
  patch('node.json-malformed', `${NODES}/probe-a`, JSON_PATCH, '[{"op":'),
  patch('node.json-remove-taint-by-index', `${NODES}/probe-b`, JSON_PATCH, [{ op: 'test', path: '/spec/taints/0/key', value: 'example.com/c' }, { op: 'remove', path: '/spec/taints/0' }]),

  // Updates (PUT): what leader election and kubectl replace send.
  put('node.update', `${NODES}/probe-b`, { ...kubeletNode('probe-b'), metadata: { name: 'probe-b', resourceVersion: '$(node.json-remove-taint-by-index:body.metadata.resourceVersion)', labels: { probe: 'yes', replaced: 'true' } } }),
  put('node.update-stale', `${NODES}/probe-b`, { metadata: { name: 'probe-b', resourceVersion: '$(node.create-b:body.metadata.resourceVersion)', labels: { probe: 'yes' } } }),
  put('node.update-uid-foreign', `${NODES}/probe-b`, { metadata: { name: 'probe-b', uid: FOREIGN_UID, labels: { probe: 'yes' } } }),
  put('node.update-unconditional', `${NODES}/probe-b`, { metadata: { name: 'probe-b', labels: { probe: 'yes', unconditional: 'true' } }, spec: { unschedulable: true } }),
  put('node.update-name-mismatch', `${NODES}/probe-b`, { metadata: { name: 'probe-c' } }),
  put('node.update-missing', `${NODES}/probe-missing`, { metadata: { name: 'probe-missing' } }),
  put('node.update-status', `${NODES}/probe-b/status`, { metadata: { name: 'probe-b', labels: { 'status-put': 'true' } }, spec: { unschedulable: false }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.7' }] } }),
  patch('node.patch-dry-run', `${NODES}/probe-a?dryRun=All`, MERGE, { metadata: { labels: { dry: 'run' } } }),
  get('node.get-after-dry-run', `${NODES}/probe-a`),
];

const watchSteps: ProbeStep[] = [
  {
    name: 'node.watch-from-rv',
    watch: `${NODES}?watch=true&labelSelector=probe%3Dyes&resourceVersion=$(node.get-after-dry-run:body.metadata.resourceVersion)`,
    during: [
      post('node.watch-create', NODES, kubeletNode('probe-w')),
      patch('node.watch-patch', `${NODES}/probe-w`, MERGE, { metadata: { labels: { step: 'patched' } } }),
      patch('node.watch-status', `${NODES}/probe-w/status`, MERGE, { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] } }),
      patch('node.watch-leave-selector', `${NODES}/probe-w`, MERGE, { metadata: { labels: { probe: 'no' } } }),
      patch('node.watch-rejoin-selector', `${NODES}/probe-w`, MERGE, { metadata: { labels: { probe: 'yes' } } }),
      del('node.watch-delete', `${NODES}/probe-w`),
    ],
    // probe-b's update and status update (after probe-a's resourceVersion), then probe-w's six.
    events: 8,
  },
  {
    name: 'node.watch-field-name',
    watch: `${NODES}?watch=true&fieldSelector=metadata.name%3Dprobe-a&resourceVersion=$(node.watch-rejoin-selector:body.metadata.resourceVersion)`,
    during: [patch('node.watch-field-name-patch', `${NODES}/probe-a`, MERGE, { metadata: { annotations: { watched: 'yes' } } })],
    events: 1,
  },
  {
    // kubectl get -w, client-node's informer without a resourceVersion: the current objects first.
    name: 'node.watch-initial-state',
    watch: `${NODES}?watch=true&labelSelector=probe%3Dyes`,
    events: 2,
  },
  {
    name: 'node.watch-initial-events-end',
    watch: `${NODES}?watch=true&labelSelector=probe%3Dyes&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    untilInitialEventsEnd: true,
    bookmarks: true,
  },
  {
    name: 'node.watch-send-initial-events-without-bookmarks',
    watch: `${NODES}?watch=true&labelSelector=probe%3Dyes&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`,
    events: 2,
    timeoutMs: 3000,
  },
  get('node.watch-send-initial-events-without-match', `${NODES}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`),
  get('node.watch-match-without-send-initial-events', `${NODES}?watch=true&resourceVersionMatch=NotOlderThan`),
  {
    // Bookmarks come on each server's timer; a short timeoutSeconds makes the end of the stream comparable.
    name: 'node.watch-timeout-seconds',
    watch: `${NODES}?watch=true&labelSelector=probe%3Dnone&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion=$(node.watch-field-name-patch:body.metadata.resourceVersion)`,
    events: 1000,
    timeoutMs: 10_000,
  },
  {
    name: 'node.watch-table',
    watch: `${NODES}?watch=true&fieldSelector=metadata.name%3Dprobe-a`,
    accept: TABLE,
    events: 1,
    mask: ['events[*].object.rows[*].cells[3]'],
  },
  get('node.list-page-before-compaction', `${NODES}?limit=1`),
  { name: 'compact', action: 'compact' },
  {
    // Older than anything either server keeps. ClusterCIDRs, not Nodes: kube-apiserver serves a
    // watch from its watch cache, which for a built-in resource starts at the server's first
    // revisions and so still holds resourceVersion 2; the CRD's cache starts when the CRD is served.
    name: 'clustercidr.watch-too-old',
    watch: `${CLUSTERCIDRS}?watch=true&resourceVersion=2`,
    events: 1,
    timeoutMs: 5000,
    mask: ['events[0].object.message'],
  },
  get('node.list-continue-after-compaction', `${NODES}?limit=1&continue=$(node.list-page-before-compaction:body.metadata.continue)`),
  get('node.list-rv-exact-compacted', `${NODES}?resourceVersion=$(node.list-page-before-compaction:body.metadata.resourceVersion)&resourceVersionMatch=Exact`),
];

const tableSteps: ProbeStep[] = [
  get('node.table-get', `${NODES}/probe-a`, { accept: TABLE, mask: ['body.rows[*].cells[3]'] }),
  get('node.table-list', `${NODES}?labelSelector=probe%3Dyes`, { accept: TABLE, mask: ['body.rows[*].cells[3]'] }),
  get('node.table-include-none', `${NODES}/probe-a?includeObject=None`, { accept: TABLE, mask: ['body.rows[*].cells[3]'] }),
  get('node.table-include-object', `${NODES}/probe-a?includeObject=Object`, { accept: TABLE, mask: ['body.rows[*].cells[3]'] }),
  get('node.table-include-bad', `${NODES}/probe-a?includeObject=Everything`, { accept: TABLE }),
  get('node.table-paged', `${NODES}?limit=1`, { accept: TABLE, mask: ['body.rows[*].cells[3]'] }),
];

const authSteps: ProbeStep[] = [
  get('auth.list-nodes-forbidden', NODES, { user: 'nobody' }),
  get('auth.get-node-forbidden', `${NODES}/probe-a`, { user: 'nobody' }),
  patch('auth.patch-status-forbidden', `${NODES}/probe-a/status`, MERGE, { status: {} }, { user: 'nobody' }),
  post('auth.create-lease-forbidden', LEASES, { metadata: { name: 'x' } }, { user: 'nobody' }),
  get('auth.unknown-token', NODES, { user: 'bogus' }),
];

const lease = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'probe-lease' },
  spec: { holderIdentity: 'replica-a_1', leaseDurationSeconds: 15, acquireTime: '2025-01-01T00:00:00.000000Z', renewTime: '2025-01-01T00:00:00.000000Z', leaseTransitions: 0 },
};

const leaseSteps: ProbeStep[] = [
  get('lease.get-missing', `${LEASES}/probe-lease`),
  post('lease.create', LEASES, lease),
  get('lease.get', `${LEASES}/probe-lease`),
  put('lease.renew', `${LEASES}/probe-lease`, { ...lease, metadata: { name: 'probe-lease', resourceVersion: '$(lease.create:body.metadata.resourceVersion)' }, spec: { ...lease.spec, renewTime: '2025-01-01T00:00:05.123456Z' } }),
  put('lease.renew-stale', `${LEASES}/probe-lease`, { ...lease, metadata: { name: 'probe-lease', resourceVersion: '$(lease.create:body.metadata.resourceVersion)' }, spec: { ...lease.spec, holderIdentity: 'replica-b_1' } }),
  put('lease.put-creates', `${LEASES}/probe-lease-2`, { ...lease, metadata: { name: 'probe-lease-2' } }),
  post('lease.create-invalid', LEASES, { ...lease, metadata: { name: 'probe-lease-bad' }, spec: { ...lease.spec, leaseDurationSeconds: 0, leaseTransitions: -1 } }),
  post('lease.create-namespace-mismatch', LEASES, { ...lease, metadata: { name: 'probe-lease-ns', namespace: 'default' } }),
  post('lease.create-missing-namespace', '/apis/coordination.k8s.io/v1/namespaces/probe-none/leases', lease),
  get('lease.list', LEASES),
  get('lease.table', `${LEASES}/probe-lease`, { accept: TABLE, mask: ['body.rows[*].cells[2]'] }),
  del('lease.delete', `${LEASES}/probe-lease`),
  del('lease.delete-2', `${LEASES}/probe-lease-2`),
];

const event = {
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'probe-a.17f0000000000001', namespace: 'default' },
  involvedObject: { kind: 'Node', apiVersion: 'v1', name: 'probe-a', uid: '$(node.create:body.metadata.uid)' },
  reason: 'Synced',
  message: 'Node synced successfully',
  type: 'Normal',
  source: { component: 'cloud-node-controller' },
  firstTimestamp: '2025-01-01T00:00:00Z',
  lastTimestamp: '2025-01-01T00:00:00Z',
  count: 1,
  reportingComponent: 'cloud-node-controller',
  reportingInstance: '',
};

const eventSteps: ProbeStep[] = [
  post('event.create', EVENTS, event),
  patch('event.patch-count', `${EVENTS}/probe-a.17f0000000000001`, MERGE, { count: 2, lastTimestamp: '2025-01-01T00:01:00Z', message: 'Node synced successfully' }),
  get('event.list-involved-object', `${EVENTS}?fieldSelector=involvedObject.kind%3DNode,involvedObject.name%3Dprobe-a,involvedObject.namespace%3D,involvedObject.uid%3D$(node.create:body.metadata.uid)`),
  get('event.list-reason', `${EVENTS}?fieldSelector=reason%3DSynced,type%3DNormal`),
  get('event.get-events-v1', `${EVENTS_V1}/probe-a.17f0000000000001`),
  post('event.create-invalid', EVENTS, { ...event, metadata: { name: 'probe-bad-event' }, involvedObject: { kind: 'Node', name: 'probe-a', namespace: 'elsewhere' }, type: 'Sometimes' }),
  // A Node's Event outside "default": what a recorder configured with another namespace would write.
  post('event.create-node-event-elsewhere', PROBE_EVENTS, { ...event, metadata: { name: 'probe-a.17f0000000000002' } }),
  post('event.create-events-v1', EVENTS_V1, {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'probe-v1.1' },
    eventTime: '2025-01-01T00:00:00.000000Z',
    regarding: { kind: 'Node', apiVersion: 'v1', name: 'probe-a' },
    reason: 'Probe',
    note: 'events.k8s.io write',
    type: 'Normal',
    action: 'Probe',
    reportingController: 'example.com/probe',
    reportingInstance: 'probe-1',
  }),
  get('event.get-core-of-v1', `${EVENTS}/probe-v1.1`),
  get('event.table-list', `${EVENTS}?fieldSelector=involvedObject.name%3Dprobe-a`, { accept: TABLE, mask: ['body.rows[*].cells[0]', 'body.rows[*].cells[7]'] }),
];

const clusterCidr = {
  apiVersion: 'networking.x-k8s.io/v1',
  kind: 'ClusterCIDR',
  metadata: { name: 'probe-pool' },
  spec: { perNodeHostBits: 8, ipv4: '10.250.0.0/16', ipv6: 'fd00:250::/48', nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'probe', operator: 'In', values: ['yes'] }] }] } },
};
const FINALIZER = 'networking.x-k8s.io/cluster-cidr-finalizer';

const clusterCidrSteps: ProbeStep[] = [
  post('clustercidr.create', CLUSTERCIDRS, clusterCidr),
  get('clustercidr.get', `${CLUSTERCIDRS}/probe-pool`),
  get('clustercidr.get-missing', `${CLUSTERCIDRS}/probe-none`),
  get('clustercidr.list', CLUSTERCIDRS),
  get('clustercidr.list-field-name', `${CLUSTERCIDRS}?fieldSelector=metadata.name%3Dprobe-pool`),
  post('clustercidr.create-small-host-bits', CLUSTERCIDRS, { ...clusterCidr, metadata: { name: 'probe-small' }, spec: { ...clusterCidr.spec, perNodeHostBits: 2 } }),
  post('clustercidr.create-bad-cidr', CLUSTERCIDRS, { ...clusterCidr, metadata: { name: 'probe-bad' }, spec: { perNodeHostBits: 8, ipv4: 'fd00::/64' } }),
  post('clustercidr.create-no-range', CLUSTERCIDRS, { ...clusterCidr, metadata: { name: 'probe-none' }, spec: { perNodeHostBits: 8 } }),
  post('clustercidr.create-no-kind', CLUSTERCIDRS, { metadata: { name: 'probe-nokind' }, spec: clusterCidr.spec }),
  post('clustercidr.create-no-spec', CLUSTERCIDRS, { apiVersion: clusterCidr.apiVersion, kind: clusterCidr.kind, metadata: { name: 'probe-nospec' } }),
  post('clustercidr.create-unknown-field', CLUSTERCIDRS, { ...clusterCidr, metadata: { name: 'probe-unknown' }, spec: { ...clusterCidr.spec, bogus: true } }),
  patch('clustercidr.merge-immutable', `${CLUSTERCIDRS}/probe-pool`, MERGE, { spec: { ipv4: '10.251.0.0/16' } }),
  patch('clustercidr.strategic-refused', `${CLUSTERCIDRS}/probe-pool`, STRATEGIC, { metadata: { labels: { a: 'b' } } }),
  patch('clustercidr.merge-uid-foreign', `${CLUSTERCIDRS}/probe-pool`, MERGE, { metadata: { uid: FOREIGN_UID, labels: { a: 'b' } } }),
  patch('clustercidr.json-add-finalizer', `${CLUSTERCIDRS}/probe-pool`, JSON_PATCH, [
    { op: 'test', path: '/metadata/resourceVersion', value: '$(clustercidr.create:body.metadata.resourceVersion)' },
    { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
  ]),
  patch('clustercidr.json-add-finalizer-stale', `${CLUSTERCIDRS}/probe-pool`, JSON_PATCH, [
    { op: 'test', path: '/metadata/resourceVersion', value: '$(clustercidr.create:body.metadata.resourceVersion)' },
    { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
  ]),
  put('clustercidr.update-unconditional', `${CLUSTERCIDRS}/probe-pool`, { ...clusterCidr, metadata: { name: 'probe-pool', labels: { put: 'yes' } } }),
  del('clustercidr.delete-dry-run', `${CLUSTERCIDRS}/probe-pool?dryRun=All`),
  del('clustercidr.delete', `${CLUSTERCIDRS}/probe-pool`),
  patch('clustercidr.json-add-finalizer-deleting', `${CLUSTERCIDRS}/probe-pool`, JSON_PATCH, [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/late' }]),
  patch('clustercidr.json-remove-finalizer', `${CLUSTERCIDRS}/probe-pool`, JSON_PATCH, [
    { op: 'test', path: '/metadata/resourceVersion', value: '$(clustercidr.delete:body.metadata.resourceVersion)' },
    { op: 'remove', path: '/metadata/finalizers' },
  ]),
  get('clustercidr.get-after-finalizer', `${CLUSTERCIDRS}/probe-pool`),
  get('clustercidr.table', CLUSTERCIDRS, { accept: TABLE, mask: ['body.rows[*].cells[4]'] }),
];

const serviceCidrSteps: ProbeStep[] = [
  get('servicecidr.get-default', `${SERVICECIDRS}/kubernetes`),
  post('servicecidr.create', SERVICECIDRS, { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'probe-services' }, spec: { cidrs: ['10.97.0.0/24'] } }),
  get('servicecidr.list-field-name', `${SERVICECIDRS}?fieldSelector=metadata.name%3Dprobe-services`),
  post('servicecidr.create-three', SERVICECIDRS, { metadata: { name: 'probe-three' }, spec: { cidrs: ['10.98.0.0/24', '10.99.0.0/24', 'fd00:99::/112'] } }),
  patch('servicecidr.merge-cidrs-immutable', `${SERVICECIDRS}/probe-services`, MERGE, { spec: { cidrs: ['10.97.1.0/24'] } }),
  del('servicecidr.delete', `${SERVICECIDRS}/probe-services`),
];

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'probe-pod', labels: { app: 'probe' } },
  spec: { nodeName: 'probe-a', containers: [{ name: 'app', image: 'registry.example/app:1.0' }] },
};

const podSteps: ProbeStep[] = [
  post('pod.create', PODS, pod),
  post('pod.create-unbound', PODS, { ...pod, metadata: { name: 'probe-pod-2' }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] } }),
  post('pod.create-invalid', PODS, { ...pod, metadata: { name: 'probe-pod-bad' }, spec: { containers: [] } }),
  patch('pod.status-running', `${PODS}/probe-pod/status`, MERGE, { status: { phase: 'Running', podIP: '10.244.1.5', podIPs: [{ ip: '10.244.1.5' }] } }),
  get('pod.list-on-node', `/api/v1/pods?fieldSelector=spec.nodeName%3Dprobe-a`),
  get('pod.list-describe', `/api/v1/pods?fieldSelector=spec.nodeName%3Dprobe-a,status.phase!%3DFailed,status.phase!%3DSucceeded`),
  get('pod.list-field-unsupported', `/api/v1/pods?fieldSelector=spec.containers%3Dapp`),
  post('pod.evict-dry-run', `${PODS}/probe-pod/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'probe-pod', namespace: PROBE_NAMESPACE }, deleteOptions: { dryRun: ['All'] } }),
  post('pod.evict-missing', `${PODS}/probe-nopod/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'probe-nopod', namespace: PROBE_NAMESPACE } }),
  post('pod.evict-name-mismatch', `${PODS}/probe-pod/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'other', namespace: PROBE_NAMESPACE } }),
  post('pod.evict', `${PODS}/probe-pod-2/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'probe-pod-2', namespace: PROBE_NAMESPACE } }),
  get('pod.get-after-evict', `${PODS}/probe-pod-2`),
  del('pod.delete-grace-0', `${PODS}/probe-pod`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 }),
];

const deleteSteps: ProbeStep[] = [
  del('node.delete-uid-foreign', `${NODES}/probe-a`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: FOREIGN_UID } }),
  del('node.delete-rv-stale', `${NODES}/probe-a`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: '$(node.create:body.metadata.resourceVersion)' } }, { mask: ['body.message'] }),
  del('node.delete-dry-run', `${NODES}/probe-a?dryRun=All`),
  del('node.delete-uid-same', `${NODES}/probe-a`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: '$(node.create:body.metadata.uid)' } }),
  del('node.delete-missing', `${NODES}/probe-a`),
  post('node.recreate', NODES, kubeletNode('probe-a')),
  del('node.delete-old-uid-on-recreated', `${NODES}/probe-a`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: '$(node.create:body.metadata.uid)' } }),
  patch('node.b-add-finalizer', `${NODES}/probe-b`, MERGE, { metadata: { finalizers: ['example.com/probe'] } }),
  del('node.delete-b-finalizer', `${NODES}/probe-b`),
  del('node.delete-b-again', `${NODES}/probe-b`),
  get('node.get-b-deleting', `${NODES}/probe-b`),
  patch('node.b-remove-finalizer', `${NODES}/probe-b`, MERGE, { metadata: { finalizers: null } }),
  get('node.get-b-gone', `${NODES}/probe-b`),
  del('node.deletecollection', `${NODES}?labelSelector=probe%3Dgenerated`),
  get('misc.unknown-resource', '/api/v1/frobs'),
  get('misc.unknown-group', '/apis/example.com/v1/things'),
];

/** The whole probe, in order. */
export const PROBE: readonly ProbeStep[] = [
  ...nodeSteps,
  ...tableSteps,
  ...authSteps,
  ...leaseSteps,
  ...eventSteps,
  ...clusterCidrSteps,
  ...serviceCidrSteps,
  ...podSteps,
  ...watchSteps,
  ...deleteSteps,
];
