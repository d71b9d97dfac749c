// The resource table: one row per served resource. Adding a resource is adding a row.
import ipaddr from 'ipaddr.js';
import type { FieldError } from './errors.js';
import { METADATA_SMP, type SmpSchema } from './patch.js';

export type KObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [k: string]: unknown;
};

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  managedFields?: unknown[];
  [k: string]: unknown;
}

export interface ResourceDef {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  /** Served with a /status subresource that alone may change `.status`. */
  status: boolean;
  /** A custom resource (served by apiextensions): no strategic merge patch, generation kept. */
  custom: boolean;
  /** Whether a create may carry status (kubelet registers Nodes with status). */
  keepStatusOnCreate: boolean;
  /** Whether metadata.generation is maintained (bumped on spec changes). */
  generation: boolean;
  /** Whether PUT on a missing object creates it. */
  createOnUpdate: boolean;
  shortNames: string[];
  /** Field selectors beyond metadata.name / metadata.namespace. */
  fieldSelectors: string[];
  smp: SmpSchema;
  /** Returns field errors for a create (old undefined) or an update. */
  validate?: (obj: KObject, old: KObject | undefined) => FieldError[];
  /** Another resource stored together with this one: every write shows up there, converted. */
  mirror?: { resource: string; convert: (obj: KObject) => KObject };
  /** Fills defaults on create, as kube-apiserver's defaulting and PrepareForCreate do. */
  defaults?: (obj: KObject) => void;
}

export function apiVersionOf(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

function isCidrOfFamily(value: unknown, family: 'ipv4' | 'ipv6'): boolean {
  if (typeof value !== 'string') return false;
  try {
    return ipaddr.parseCIDR(value)[0].kind() === family;
  } catch {
    return false;
  }
}

// The ClusterCIDR CRD schema and its CEL rules, enforced by hand.
function validateClusterCidr(obj: KObject, old: KObject | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj.spec as Record<string, unknown> | undefined;
  if (spec === undefined || spec === null || typeof spec !== 'object') {
    return [{ field: 'spec', type: 'FieldValueRequired', detail: 'spec is required' }];
  }
  const bits = spec.perNodeHostBits;
  if (bits === undefined) errs.push({ field: 'spec.perNodeHostBits', type: 'FieldValueRequired', detail: 'spec.perNodeHostBits is required' });
  else if (typeof bits !== 'number' || !Number.isInteger(bits)) errs.push({ field: 'spec.perNodeHostBits', type: 'FieldValueInvalid', value: bits, detail: 'spec.perNodeHostBits in body must be of type integer' });
  else if (bits < 4) errs.push({ field: 'spec.perNodeHostBits', type: 'FieldValueInvalid', value: bits, detail: 'spec.perNodeHostBits in body should be greater than or equal to 4' });
  if (spec.ipv4 === undefined && spec.ipv6 === undefined) {
    errs.push({ field: 'spec', type: 'FieldValueInvalid', value: 'object', detail: 'at least one of ipv4 or ipv6 must be specified' });
  }
  for (const family of ['ipv4', 'ipv6'] as const) {
    const v = spec[family];
    if (v !== undefined && !isCidrOfFamily(v, family)) {
      errs.push({ field: `spec.${family}`, type: 'FieldValueInvalid', value: v, detail: `must be an ${family === 'ipv4' ? 'IPv4' : 'IPv6'} network in CIDR notation` });
    }
  }
  if (old) {
    const oldSpec = (old.spec ?? {}) as Record<string, unknown>;
    for (const f of ['nodeSelector', 'perNodeHostBits', 'ipv4', 'ipv6']) {
      if (JSON.stringify(spec[f]) !== JSON.stringify(oldSpec[f])) {
        errs.push({ field: `spec.${f}`, type: 'FieldValueInvalid', value: spec[f] ?? null, detail: 'Value is immutable' });
      }
    }
  }
  return errs;
}

function validateServiceCidr(obj: KObject): FieldError[] {
  const cidrs = (obj.spec as { cidrs?: unknown } | undefined)?.cidrs;
  if (cidrs === undefined) return [];
  if (!Array.isArray(cidrs) || cidrs.length > 2) return [{ field: 'spec.cidrs', type: 'FieldValueInvalid', value: cidrs, detail: 'at most two CIDRs, one per IP family' }];
  const errs: FieldError[] = [];
  cidrs.forEach((c, i) => {
    if (!isCidrOfFamily(c, 'ipv4') && !isCidrOfFamily(c, 'ipv6')) errs.push({ field: `spec.cidrs[${i}]`, type: 'FieldValueInvalid', value: c, detail: 'must be a valid CIDR' });
  });
  return errs;
}

function validateLease(obj: KObject): FieldError[] {
  const spec = (obj.spec ?? {}) as Record<string, unknown>;
  const errs: FieldError[] = [];
  for (const f of ['leaseDurationSeconds', 'leaseTransitions']) {
    const v = spec[f];
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isInteger(v) || v < (f === 'leaseDurationSeconds' ? 1 : 0))) {
      errs.push({ field: `spec.${f}`, type: 'FieldValueInvalid', value: v, detail: f === 'leaseDurationSeconds' ? 'must be greater than 0' : 'must be greater than or equal to 0' });
    }
  }
  return errs;
}

// core/v1 Event field ↔ events.k8s.io/v1 Event field, for the fields whose names differ.
const EVENT_FIELD_MAP: readonly [string, string][] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['reportingComponent', 'reportingController'],
];
const SAME_EVENT_FIELDS = ['reason', 'type', 'action', 'related', 'reportingInstance', 'eventTime'];

function convertEvent(obj: KObject, toEventsV1: boolean): KObject {
  const out: KObject = { apiVersion: toEventsV1 ? 'events.k8s.io/v1' : 'v1', kind: 'Event', metadata: obj.metadata };
  for (const f of SAME_EVENT_FIELDS) if (obj[f] !== undefined) out[f] = obj[f];
  for (const [core, ev] of EVENT_FIELD_MAP) {
    const [from, to] = toEventsV1 ? [core, ev] : [ev, core];
    if (obj[from] !== undefined) out[to] = obj[from];
  }
  // series: core/v1 {count, lastObservedTime} and events.k8s.io/v1 {count, lastObservedTime} match.
  if (obj.series !== undefined) out.series = obj.series;
  return out;
}

function row(partial: Partial<ResourceDef> & Pick<ResourceDef, 'group' | 'version' | 'plural' | 'kind'>): ResourceDef {
  return {
    singular: partial.kind.toLowerCase(),
    namespaced: false,
    status: false,
    custom: false,
    keepStatusOnCreate: false,
    generation: false,
    createOnUpdate: false,
    shortNames: [],
    fieldSelectors: [],
    ...partial,
    smp: { ...METADATA_SMP, ...(partial.smp ?? {}) },
  };
}

const CONDITIONS: SmpSchema = { 'status.conditions': { mergeKey: 'type' } };
const EVENT_FIELDS = ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'];

export const DEFAULT_RESOURCES: readonly ResourceDef[] = [
  row({
    group: '',
    version: 'v1',
    plural: 'nodes',
    kind: 'Node',
    status: true,
    keepStatusOnCreate: true,
    shortNames: ['no'],
    fieldSelectors: ['spec.unschedulable'],
    // Struct tags of core/v1 NodeSpec and NodeStatus. spec.taints carries no patch strategy
    // upstream: a strategic merge patch replaces the whole list.
    smp: {
      'spec.podCIDRs': { set: true },
      'status.conditions': { mergeKey: 'type' },
      'status.addresses': { mergeKey: 'type' },
      'status.images': { mergeKey: 'names' },
      'status.volumesAttached': { mergeKey: 'name' },
    },
  }),
  row({
    group: '',
    version: 'v1',
    plural: 'namespaces',
    kind: 'Namespace',
    status: true,
    shortNames: ['ns'],
    fieldSelectors: ['status.phase'],
    smp: CONDITIONS,
    defaults: (obj) => {
      obj.spec = { finalizers: ['kubernetes'], ...((obj.spec as object) ?? {}) };
      obj.status = { phase: 'Active' };
    },
  }),
  row({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] }),
  row({
    group: '',
    version: 'v1',
    plural: 'events',
    kind: 'Event',
    namespaced: true,
    createOnUpdate: true,
    shortNames: ['ev'],
    fieldSelectors: EVENT_FIELDS,
    mirror: { resource: 'events.events.k8s.io', convert: (o) => convertEvent(o, true) },
  }),
  row({
    group: 'events.k8s.io',
    version: 'v1',
    plural: 'events',
    kind: 'Event',
    namespaced: true,
    createOnUpdate: true,
    shortNames: ['ev'],
    fieldSelectors: ['regarding.kind', 'regarding.namespace', 'regarding.name', 'regarding.uid', 'reason', 'reportingController', 'type'],
    mirror: { resource: 'events', convert: (o) => convertEvent(o, false) },
  }),
  row({ group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true, createOnUpdate: true, validate: validateLease }),
  row({ group: 'networking.k8s.io', version: 'v1', plural: 'servicecidrs', kind: 'ServiceCIDR', status: true, smp: CONDITIONS, validate: validateServiceCidr }),
  row({ group: 'networking.x-k8s.io', version: 'v1', plural: 'clustercidrs', kind: 'ClusterCIDR', custom: true, generation: true, validate: validateClusterCidr }),
];
