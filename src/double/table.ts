// Server-side Tables (Accept: application/json;as=Table;v=v1;g=meta.k8s.io): what `kubectl get`
// prints. Columns and cell rules per kind follow kube-apiserver's printers (priority 1 columns
// are the ones `-o wide` adds); ClusterCIDR's come from its CRD's additionalPrinterColumns.
import type { KObject } from './resource-def.js';
import type { Resource } from './store.js';

export interface ColumnDefinition {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  priority: number;
}

type Cell = string | number | boolean | null;

/** A TableRow condition: kube-apiserver marks the rows of finished pods `Completed`. */
interface RowCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

interface TableSpec {
  columns: ColumnDefinition[];
  cells: (obj: KObject, now: Date) => Cell[];
  conditions?: (obj: KObject) => RowCondition[] | undefined;
}

const col = (name: string, description: string, extra: Partial<ColumnDefinition> = {}): ColumnDefinition => ({ name, type: 'string', format: '', description, priority: 0, ...extra });
const NAME = col('Name', 'Name of the object, unique within its namespace or the cluster.', { format: 'name' });
const AGE = col('Age', 'Time since the object was created.');

/** A duration as kubectl shows ages: 45s, 3m20s, 17m, 5h12m, 30h, 6d4h, 60d, 2y30d, 9y. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  const withUnit = (big: number, bigUnit: string, small: number, smallUnit: string): string => (small === 0 ? `${big}${bigUnit}` : `${big}${bigUnit}${small}${smallUnit}`);
  if (minutes < 10) return withUnit(minutes, 'm', seconds % 60, 's');
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return withUnit(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) return withUnit(days, 'd', hours % 24, 'h');
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) return withUnit(years, 'y', days % 365, 'd');
  return `${years}y`;
}

/** Age of a timestamp, `<unknown>` when absent. */
export function since(timestamp: unknown, now: Date): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now.getTime() - t);
}

function get(obj: unknown, path: string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (!cur || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const orUnknown = (v: unknown): string => text(v) || '<unknown>';

// ------------------------------------------------------------------ nodes

/** Roles from node-role.kubernetes.io/<role> labels and the kubernetes.io/role label, sorted. */
export function nodeRoles(labels: Record<string, string> | undefined): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role) roles.add(role);
    } else if (k === 'kubernetes.io/role' && v) roles.add(v);
  }
  return [...roles].sort();
}

/** Ready, NotReady or Unknown (no Ready condition), then SchedulingDisabled when cordoned. */
export function nodeStatus(node: KObject): string {
  const conditions = (get(node, ['status', 'conditions']) as { type?: string; status?: string }[] | undefined) ?? [];
  let ready: { status?: string } | undefined;
  for (const c of Array.isArray(conditions) ? conditions : []) if (c?.type === 'Ready') ready = c; // the last one wins
  const parts = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (get(node, ['spec', 'unschedulable']) === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function firstAddress(node: KObject, type: string): string {
  const addresses = get(node, ['status', 'addresses']);
  const found = Array.isArray(addresses) ? (addresses as { type?: string; address?: string }[]).find((a) => a?.type === type) : undefined;
  return found?.address || '<none>';
}

const NODE_TABLE: TableSpec = {
  columns: [
    NAME,
    col('Status', 'Whether the node is Ready, and SchedulingDisabled when cordoned.'),
    col('Roles', 'Roles of the node, from its node-role.kubernetes.io labels.'),
    AGE,
    col('Version', 'Kubelet version reported by the node.'),
    col('Internal-IP', 'First InternalIP address of the node.', { priority: 1 }),
    col('External-IP', 'First ExternalIP address of the node.', { priority: 1 }),
    col('OS-Image', 'Operating system image reported by the kubelet.', { priority: 1 }),
    col('Kernel-Version', 'Kernel version reported by the kubelet.', { priority: 1 }),
    col('Container-Runtime', 'Container runtime and its version.', { priority: 1 }),
  ],
  cells: (o, now) => {
    const info = (get(o, ['status', 'nodeInfo']) ?? {}) as Record<string, unknown>;
    return [
      text(o.metadata?.name),
      nodeStatus(o),
      nodeRoles(o.metadata?.labels).join(',') || '<none>',
      since(o.metadata?.creationTimestamp, now),
      text(info.kubeletVersion),
      firstAddress(o, 'InternalIP'),
      firstAddress(o, 'ExternalIP'),
      orUnknown(info.osImage),
      orUnknown(info.kernelVersion),
      orUnknown(info.containerRuntimeVersion),
    ];
  },
};

// ------------------------------------------------------------------ events (core/v1 form)

function eventSource(ev: KObject): string {
  const component = text(get(ev, ['source', 'component'])) || text(ev.reportingComponent);
  const instance = text(get(ev, ['source', 'host'])) || text(ev.reportingInstance);
  return instance ? `${component}, ${instance}` : component;
}

const EVENT_TABLE: TableSpec = {
  columns: [
    col('Last Seen', 'When the event was last seen.'),
    col('Type', 'Normal or Warning.'),
    col('Reason', 'Why the event was emitted, in CamelCase.'),
    col('Object', 'The object the event is about (kind/name).'),
    col('Subobject', 'The part of the object the event is about.', { priority: 1 }),
    col('Source', 'The component (and host or instance) that reported the event.', { priority: 1 }),
    col('Message', 'What happened.'),
    col('First Seen', 'When the event was first seen.', { priority: 1 }),
    col('Count', 'How many times the event was seen.', { priority: 1 }),
    col('Name', 'Name of the Event object.', { priority: 1, format: 'name' }),
  ],
  cells: (ev, now) => {
    const first = ev.firstTimestamp ? since(ev.firstTimestamp, now) : since(ev.eventTime, now);
    let last = ev.lastTimestamp ? since(ev.lastTimestamp, now) : first;
    let count = typeof ev.count === 'number' ? ev.count : 0;
    const series = ev.series as { count?: number; lastObservedTime?: string } | undefined;
    if (series && typeof series === 'object') {
      last = since(series.lastObservedTime, now);
      count = series.count ?? 0;
    } else if (count === 0) count = 1; // a singleton event of the events.k8s.io API has no count
    const involved = (ev.involvedObject ?? {}) as { kind?: string; name?: string; fieldPath?: string };
    const kind = text(involved.kind).toLowerCase();
    const target = involved.name ? `${kind}/${involved.name}` : kind;
    return [last, text(ev.type), text(ev.reason), target, text(involved.fieldPath), eventSource(ev), text(ev.message).trim(), first, count, text(ev.metadata?.name)];
  },
};

// ------------------------------------------------------------------ pods

interface ContainerState {
  waiting?: { reason?: string };
  running?: object;
  terminated?: { exitCode?: number; signal?: number; reason?: string; finishedAt?: string };
}

interface ContainerStatus {
  name?: string;
  ready?: boolean;
  started?: boolean;
  restartCount?: number;
  state?: ContainerState;
  lastState?: ContainerState;
}

interface PodCondition {
  type?: string;
  status?: string;
  reason?: string;
}

const listOf = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as unknown[]).filter((x) => x && typeof x === 'object') as T[] : []);

/** How a container that stopped is described when its runtime gave no reason. */
function exitText(t: NonNullable<ContainerState['terminated']>): string {
  return t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode ?? 0}`;
}

/** Restarts so far, and when the latest restart's previous run ended (ms since the epoch; 0: unknown). */
class RestartTally {
  count = 0;
  lastMs = 0;
  add(cs: ContainerStatus): void {
    this.count += typeof cs.restartCount === 'number' ? cs.restartCount : 0;
    const ended = Date.parse(cs.lastState?.terminated?.finishedAt ?? '');
    if (!Number.isNaN(ended) && ended > this.lastMs) this.lastMs = ended;
  }
}

/**
 * READY, STATUS and RESTARTS of a pod, derived from its status the way kube-apiserver's pod
 * printer derives them: the phase (or status.reason) unless an init container that has not
 * finished explains the wait (`Init:1/2`, `Init:CrashLoopBackOff`), or a container's waiting or
 * terminated state does (`ContainerCreating`, `Completed`, `ExitCode:1`); `Terminating` once
 * deletion began. Sidecars (init containers with restartPolicy Always) count as containers.
 */
export function podSummary(pod: KObject, now: Date): { ready: string; status: string; restarts: string } {
  const spec = (pod.spec ?? {}) as { containers?: unknown; initContainers?: unknown };
  const st = (pod.status ?? {}) as { phase?: string; reason?: string; conditions?: unknown; initContainerStatuses?: unknown; containerStatuses?: unknown };
  const conditions = listOf<PodCondition>(st.conditions);
  const conditionTrue = (type: string): boolean => conditions.some((c) => c.type === type && c.status === 'True');
  const inits = listOf<{ name?: string; restartPolicy?: string }>(spec.initContainers);
  const sidecars = new Set(inits.filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
  const total = listOf(spec.containers).length + sidecars.size;
  let ready = 0;
  const phase = text(st.phase);
  let shown = text(st.reason) || phase;
  if (conditions.some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) shown = 'SchedulingGated';

  const all = new RestartTally();
  const ofSidecars = new RestartTally();
  let initializing = false;
  const initStatuses = listOf<ContainerStatus>(st.initContainerStatuses);
  for (const [i, cs] of initStatuses.entries()) {
    all.add(cs);
    const sidecar = sidecars.has(cs.name);
    if (sidecar) ofSidecars.add(cs);
    const done = cs.state?.terminated;
    if (done && (done.exitCode ?? 0) === 0) continue;
    if (sidecar && cs.started === true) {
      if (cs.ready) ready++;
      continue;
    }
    // The first init container still in the way says why the pod waits.
    initializing = true;
    const waiting = cs.state?.waiting?.reason;
    if (done) shown = `Init:${done.reason || exitText(done)}`;
    else if (waiting && waiting !== 'PodInitializing') shown = `Init:${waiting}`;
    else shown = `Init:${i}/${inits.length}`;
    break;
  }

  let tally = all;
  if (!initializing || conditionTrue('Initialized')) {
    // Past initialisation only sidecar restarts are carried over; the first container's state
    // has the last word (the statuses are read from the last to the first).
    tally = ofSidecars;
    let running = false;
    const statuses = listOf<ContainerStatus>(st.containerStatuses);
    for (const cs of [...statuses].reverse()) {
      tally.add(cs);
      const waiting = cs.state?.waiting?.reason;
      const done = cs.state?.terminated;
      if (waiting) shown = waiting;
      else if (done) shown = done.reason || exitText(done);
      else if (cs.ready && cs.state?.running) {
        running = true;
        ready++;
      }
    }
    if (shown === 'Completed' && running) shown = conditionTrue('Ready') ? 'Running' : 'NotReady';
  }
  if (pod.metadata?.deletionTimestamp) {
    if (st.reason === 'NodeLost') shown = 'Unknown';
    else if (phase !== 'Succeeded' && phase !== 'Failed') shown = 'Terminating';
  }
  const restarts = tally.count !== 0 && tally.lastMs !== 0 ? `${tally.count} (${humanDuration(now.getTime() - tally.lastMs)} ago)` : String(tally.count);
  return { ready: `${ready}/${total}`, status: shown, restarts };
}

/** `<true>/<all>` readiness gates whose condition is True, `<none>` without gates. */
function readinessGates(pod: KObject): string {
  const gates = listOf<{ conditionType?: string }>(get(pod, ['spec', 'readinessGates']));
  if (gates.length === 0) return '<none>';
  const conditions = listOf<PodCondition>(get(pod, ['status', 'conditions']));
  // The first condition of a gate's type decides it.
  const met = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True').length;
  return `${met}/${gates.length}`;
}

function podIP(pod: KObject): string {
  const ips = listOf<{ ip?: string }>(get(pod, ['status', 'podIPs']));
  return text(ips[0]?.ip) || text(get(pod, ['status', 'podIP'])) || '<none>';
}

const POD_TABLE: TableSpec = {
  columns: [
    NAME,
    col('Ready', 'Ready containers out of all (sidecars included).'),
    col('Status', 'The phase, or what the pod or one of its containers is waiting for or ended with.'),
    col('Restarts', 'Container restarts, and how long ago the latest one was.'),
    AGE,
    col('IP', 'The first IP address of the pod.', { priority: 1 }),
    col('Node', 'The node the pod is bound to.', { priority: 1 }),
    col('Nominated Node', 'The node the scheduler intends to place the pod on after preempting others.', { priority: 1 }),
    col('Readiness Gates', 'Readiness gates whose condition is True, out of all.', { priority: 1 }),
  ],
  cells: (o, now) => {
    const s = podSummary(o, now);
    return [text(o.metadata?.name), s.ready, s.status, s.restarts, since(o.metadata?.creationTimestamp, now), podIP(o), text(get(o, ['spec', 'nodeName'])) || '<none>', text(get(o, ['status', 'nominatedNodeName'])) || '<none>', readinessGates(o)];
  },
  conditions: (o) => {
    const phase = get(o, ['status', 'phase']);
    if (phase === 'Succeeded') return [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod ran to completion.' }];
    if (phase === 'Failed') return [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod ended in failure.' }];
    return undefined;
  },
};

// ------------------------------------------------------------------ the rest

const LEASE_TABLE: TableSpec = {
  columns: [NAME, col('Holder', 'Who holds the lease.'), AGE],
  cells: (o, now) => [text(o.metadata?.name), text(get(o, ['spec', 'holderIdentity'])), since(o.metadata?.creationTimestamp, now)],
};

const NAMESPACE_TABLE: TableSpec = {
  columns: [NAME, col('Status', 'Phase of the namespace: Active or Terminating.'), AGE],
  cells: (o, now) => [text(o.metadata?.name), text(get(o, ['status', 'phase'])), since(o.metadata?.creationTimestamp, now)],
};

const CONFIGMAP_TABLE: TableSpec = {
  columns: [NAME, col('Data', 'Number of keys in data and binaryData.', { type: 'integer' }), AGE],
  cells: (o, now) => [text(o.metadata?.name), Object.keys((o.data as object) ?? {}).length + Object.keys((o.binaryData as object) ?? {}).length, since(o.metadata?.creationTimestamp, now)],
};

const SERVICECIDR_TABLE: TableSpec = {
  columns: [NAME, col('CIDRs', 'The ranges of the ServiceCIDR.'), AGE],
  cells: (o, now) => {
    const cidrs = get(o, ['spec', 'cidrs']);
    return [text(o.metadata?.name), Array.isArray(cidrs) ? cidrs.join(',') : '', since(o.metadata?.creationTimestamp, now)];
  },
};

/** An additionalPrinterColumns entry of a CRD version. */
export interface PrinterColumn {
  name: string;
  type: ColumnDefinition['type'];
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

/** deploy/base/crd-clustercidrs.yaml's additionalPrinterColumns (a test keeps them equal). */
export const CLUSTERCIDR_PRINTER_COLUMNS: readonly PrinterColumn[] = [
  { name: 'PerNodeHostBits', type: 'integer', jsonPath: '.spec.perNodeHostBits' },
  { name: 'IPv4', type: 'string', jsonPath: '.spec.ipv4' },
  { name: 'IPv6', type: 'string', jsonPath: '.spec.ipv6' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/**
 * A custom resource's table: Name, then the printer columns. A missing value is a null cell
 * (kubectl prints <none>); date columns are shown as ages.
 */
export function customResourceTable(columns: readonly PrinterColumn[]): TableSpec {
  return {
    columns: [NAME, ...columns.map((c) => col(c.name, c.description ?? `the value at ${c.jsonPath}`, { type: c.type, format: c.format ?? '', priority: c.priority ?? 0 }))],
    cells: (o, now) => [
      text(o.metadata?.name),
      ...columns.map((c): Cell => {
        const v = get(o, c.jsonPath.replace(/^\./, '').split('.'));
        if (v === undefined || v === null) return null;
        if (c.type === 'date') return since(v, now);
        if (typeof v === 'object') return JSON.stringify(v);
        return v as Cell;
      }),
    ],
  };
}

const DEFAULT_TABLE: TableSpec = {
  columns: [NAME, col('Created At', 'When the object was created.', { type: 'date' })],
  cells: (o) => [text(o.metadata?.name), text(o.metadata?.creationTimestamp)],
};

/** The table layout of a resource. Events of events.k8s.io are shown in their core/v1 form. */
export function tableSpecOf(r: Pick<Resource, 'group' | 'plural'>): TableSpec {
  const key = r.group ? `${r.plural}.${r.group}` : r.plural;
  switch (key) {
    case 'nodes':
      return NODE_TABLE;
    case 'pods':
      return POD_TABLE;
    case 'events':
    case 'events.events.k8s.io':
      return EVENT_TABLE;
    case 'leases.coordination.k8s.io':
      return LEASE_TABLE;
    case 'namespaces':
      return NAMESPACE_TABLE;
    case 'configmaps':
      return CONFIGMAP_TABLE;
    case 'servicecidrs.networking.k8s.io':
      return SERVICECIDR_TABLE;
    case 'clustercidrs.networking.x-k8s.io':
      return customResourceTable(CLUSTERCIDR_PRINTER_COLUMNS);
    default:
      return DEFAULT_TABLE;
  }
}

/** The Table version a request's Accept header asks for (`v1` or `v1beta1`), if it asks for one first. */
export function tableRequested(accept: string | undefined): 'v1' | 'v1beta1' | undefined {
  for (const clause of (accept ?? '').split(',')) {
    const [type, ...params] = clause.split(';').map((p) => p.trim());
    if (type !== 'application/json' && type !== '*/*' && type !== 'application/*') continue;
    const p = Object.fromEntries(params.map((x) => x.split('=').map((y) => y.trim())));
    if (p.as === 'Table' && p.g === 'meta.k8s.io' && (p.v === 'v1' || p.v === 'v1beta1')) return p.v;
    // The first acceptable type without as=Table: the client takes plain objects.
    if (!p.as) return undefined;
  }
  return undefined;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableOptions {
  version: 'v1' | 'v1beta1';
  includeObject: IncludeObject;
  now: Date;
  /** core/v1 form of an object, for kinds shown through another version (events.k8s.io Events). */
  convert?: (obj: KObject) => KObject;
}

/** A metav1.Table of `items` with list metadata `meta`. */
export function buildTable(r: Pick<Resource, 'group' | 'plural'>, items: readonly KObject[], meta: Record<string, unknown>, options: TableOptions): object {
  const spec = tableSpecOf(r);
  const apiVersion = `meta.k8s.io/${options.version}`;
  const rows = items.map((item) => {
    const shown = options.convert ? options.convert(item) : item;
    const row: Record<string, unknown> = { cells: spec.cells(shown, options.now) };
    const conditions = spec.conditions?.(shown);
    if (conditions) row.conditions = conditions;
    if (options.includeObject === 'Object') row.object = item;
    else if (options.includeObject === 'Metadata') row.object = { kind: 'PartialObjectMetadata', apiVersion, metadata: item.metadata };
    // includeObject=None: the row's object is null (a RawExtension left empty), not absent.
    else row.object = null;
    return row;
  });
  // A Table's list metadata has no empty continue (a custom resource's list has one).
  const { continue: cont, ...rest } = meta;
  return { kind: 'Table', apiVersion, metadata: cont ? meta : rest, columnDefinitions: spec.columns, rows };
}
