// The resource table: one row per served resource. Adding a resource is adding a row.
import ipaddr from 'ipaddr.js';
import type { FieldError } from './errors.js';
import type { KObject, ResourceDef } from './resource-def.js';
import { METADATA_SMP, type SmpSchema } from './patch.js';
import { evictPod, podDefaults, podFieldValue, POD_FIELD_SELECTORS, POD_SMP, preparePod, validatePod } from './pods.js';

function isCidrOfFamily(value: unknown, family: 'ipv4' | 'ipv6'): boolean {
  if (typeof value !== 'string') return false;
  try {
    return ipaddr.parseCIDR(value)[0].kind() === family;
  } catch {
    return false;
  }
}

/** The messages of the CEL rules in deploy/base/crd-clustercidrs.yaml, answered word for word. */
export const CLUSTERCIDR_RULE_MESSAGES = {
  atLeastOne: 'at least one of ipv4 and ipv6 must be set',
  ipv4Family: 'ipv4 must be an IPv4 CIDR',
  ipv6Family: 'ipv6 must be an IPv6 CIDR',
  hostBitsMin: 'perNodeHostBits must be at least 4',
  nodeSelectorImmutable: 'nodeSelector is immutable',
  perNodeHostBitsImmutable: 'perNodeHostBits is immutable',
  ipv4Immutable: 'ipv4 is immutable',
  ipv6Immutable: 'ipv6 is immutable',
} as const;

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

// CEL rule failures show the value as its type name, as kube-apiserver reports them.
function celError(field: string, value: unknown, message: string): FieldError {
  return { field, type: 'FieldValueInvalid', value: jsonType(value), detail: message };
}

function typeError(field: string, value: unknown, want: string): FieldError {
  return { field, type: 'FieldValueInvalid', value: jsonType(value), detail: `${field} in body must be of type ${want}: "${jsonType(value)}"` };
}

// The ClusterCIDR CRD (deploy/base/crd-clustercidrs.yaml): its OpenAPI schema and CEL rules,
// enforced by hand. "" and absent are the same for ipv4 and ipv6.
function validateClusterCidr(obj: KObject, old: KObject | undefined): FieldError[] {
  const M = CLUSTERCIDR_RULE_MESSAGES;
  const errs: FieldError[] = [];
  const spec = obj.spec as Record<string, unknown> | undefined;
  if (spec === undefined || spec === null) return [{ field: 'spec', type: 'FieldValueRequired', detail: 'Required value' }];
  if (jsonType(spec) !== 'object') return [typeError('spec', spec, 'object')];
  const bits = spec.perNodeHostBits;
  if (bits === undefined || bits === null) errs.push({ field: 'spec.perNodeHostBits', type: 'FieldValueRequired', detail: 'Required value' });
  else if (jsonType(bits) !== 'integer') errs.push(typeError('spec.perNodeHostBits', bits, 'integer'));
  else if ((bits as number) > 2147483647 || (bits as number) < -2147483648) errs.push({ field: 'spec.perNodeHostBits', type: 'FieldValueInvalid', value: bits, detail: 'must fit in int32' });
  else if (!old && (bits as number) < 4) errs.push(celError('spec.perNodeHostBits', bits, M.hostBitsMin));
  for (const family of ['ipv4', 'ipv6'] as const) {
    const v = spec[family];
    const field = `spec.${family}`;
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') errs.push(typeError(field, v, 'string'));
    else if (v.length > 64) errs.push({ field, type: 'FieldValueTooLong', value: v, detail: 'may not be more than 64 bytes' });
    else if (!isCidrOfFamily(v, family)) errs.push(celError(field, v, family === 'ipv4' ? M.ipv4Family : M.ipv6Family));
  }
  const sel = spec.nodeSelector;
  if (sel !== undefined && sel !== null) {
    const terms = (sel as { nodeSelectorTerms?: unknown }).nodeSelectorTerms;
    if (jsonType(sel) !== 'object') errs.push(typeError('spec.nodeSelector', sel, 'object'));
    else if (terms === undefined) errs.push({ field: 'spec.nodeSelector.nodeSelectorTerms', type: 'FieldValueRequired', detail: 'Required value' });
    else if (!Array.isArray(terms)) errs.push(typeError('spec.nodeSelector.nodeSelectorTerms', terms, 'array'));
    else {
      terms.forEach((term, i) => {
        for (const kind of ['matchExpressions', 'matchFields']) {
          const reqs = (term as Record<string, unknown> | null)?.[kind];
          if (reqs === undefined) continue;
          if (!Array.isArray(reqs)) {
            errs.push(typeError(`spec.nodeSelector.nodeSelectorTerms[${i}].${kind}`, reqs, 'array'));
            continue;
          }
          reqs.forEach((r, j) => {
            for (const f of ['key', 'operator']) {
              if (typeof (r as Record<string, unknown> | null)?.[f] !== 'string') {
                errs.push({ field: `spec.nodeSelector.nodeSelectorTerms[${i}].${kind}[${j}].${f}`, type: 'FieldValueRequired', detail: 'Required value' });
              }
            }
          });
        }
      });
    }
  }
  const present = (v: unknown): boolean => v !== undefined && v !== null && v !== '';
  if (!present(spec.ipv4) && !present(spec.ipv6)) errs.push(celError('spec', spec, M.atLeastOne));
  if (old) {
    const oldSpec = (old.spec ?? {}) as Record<string, unknown>;
    const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
    // Field-level transition rules run only when the field exists before and after.
    const fieldRule = (f: string, message: string): void => {
      if (spec[f] !== undefined && oldSpec[f] !== undefined && !same(spec[f], oldSpec[f])) errs.push(celError(`spec.${f}`, spec[f], message));
    };
    fieldRule('nodeSelector', M.nodeSelectorImmutable);
    fieldRule('perNodeHostBits', M.perNodeHostBitsImmutable);
    fieldRule('ipv4', M.ipv4Immutable);
    fieldRule('ipv6', M.ipv6Immutable);
    // spec-level rules also catch a field being added or removed.
    if ((spec.ipv4 ?? '') !== (oldSpec.ipv4 ?? '')) errs.push(celError('spec', spec, M.ipv4Immutable));
    if ((spec.ipv6 ?? '') !== (oldSpec.ipv6 ?? '')) errs.push(celError('spec', spec, M.ipv6Immutable));
    if ((spec.nodeSelector !== undefined) !== (oldSpec.nodeSelector !== undefined)) errs.push(celError('spec', spec, M.nodeSelectorImmutable));
  }
  return errs;
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

// v1 Nodes carry podCIDR and podCIDRs; kube-apiserver stores podCIDRs and derives podCIDR.
// A changed spec is a new object: the one given may be shared with a stored Node.
function prepareNode(obj: KObject): void {
  const spec = obj.spec as { podCIDR?: string; podCIDRs?: string[] } | undefined;
  if (!spec || typeof spec !== 'object') return;
  const podCIDRs = (!spec.podCIDRs || spec.podCIDRs.length === 0) && spec.podCIDR ? [spec.podCIDR] : spec.podCIDRs;
  const podCIDR = Array.isArray(podCIDRs) && podCIDRs.length > 0 ? podCIDRs[0] : spec.podCIDR;
  if (podCIDRs !== spec.podCIDRs || podCIDR !== spec.podCIDR) obj.spec = { ...spec, podCIDRs, podCIDR };
}

// The parts of kube-apiserver's Node validation a cloud controller manager meets: pod CIDRs,
// providerID and taints.
function validateNode(obj: KObject, old: KObject | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const spec = (obj.spec ?? {}) as { podCIDRs?: unknown; providerID?: unknown; taints?: unknown };
  const cidrs = spec.podCIDRs;
  if (cidrs !== undefined && cidrs !== null) {
    if (!Array.isArray(cidrs)) errs.push({ field: 'spec.podCIDRs', type: 'FieldValueInvalid', value: cidrs, detail: 'must be a list of CIDRs' });
    else {
      if (cidrs.length > 2) errs.push({ field: 'spec.podCIDRs', type: 'FieldValueInvalid', value: cidrs, detail: 'must have at most 2 items' });
      const families: string[] = [];
      cidrs.forEach((c, i) => {
        try {
          families.push(ipaddr.parseCIDR(String(c))[0].kind());
        } catch {
          errs.push({ field: `spec.podCIDRs[${i}]`, type: 'FieldValueInvalid', value: c, detail: 'must be a valid CIDR, e.g. 10.244.1.0/24 or fd00:10:244:1::/64' });
        }
      });
      if (families.length === 2 && families[0] === families[1]) errs.push({ field: 'spec.podCIDRs', type: 'FieldValueInvalid', value: cidrs, detail: 'may specify no more than one CIDR for each IP family' });
    }
  }
  if (Array.isArray(spec.taints)) {
    const seen = new Set<string>();
    spec.taints.forEach((t: { key?: unknown; effect?: unknown }, i) => {
      if (typeof t?.key !== 'string' || !QUALIFIED_NAME.test(t.key)) errs.push({ field: `spec.taints[${i}].key`, type: 'FieldValueInvalid', value: t?.key ?? '', detail: 'must be a qualified name' });
      if (!TAINT_EFFECTS.includes(String(t?.effect))) errs.push({ field: `spec.taints[${i}].effect`, type: 'FieldValueNotSupported', value: t?.effect ?? '', detail: `supported values: ${TAINT_EFFECTS.map((e) => `"${e}"`).join(', ')}` });
      const id = `${String(t?.key)}:${String(t?.effect)}`;
      if (seen.has(id)) errs.push({ field: `spec.taints[${i}]`, type: 'FieldValueDuplicate', value: t, detail: 'taints must be unique by key and effect pair' });
      seen.add(id);
    });
  }
  if (old) {
    const oldSpec = (old.spec ?? {}) as { podCIDRs?: string[]; providerID?: string };
    // Once assigned, pod CIDRs and providerID are fixed for the life of the Node.
    if ((oldSpec.podCIDRs ?? []).length > 0 && JSON.stringify(oldSpec.podCIDRs) !== JSON.stringify(spec.podCIDRs ?? [])) {
      errs.push({ field: 'spec.podCIDRs', type: 'FieldValueForbidden', detail: 'node updates may not change podCIDR except from "" to valid' });
    }
    if (oldSpec.providerID && spec.providerID !== oldSpec.providerID) {
      errs.push({ field: 'spec.providerID', type: 'FieldValueForbidden', detail: 'node updates may not change providerID except from "" to valid' });
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
    actions: [],
    returnDeletedObject: false,
    categories: [],
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
    prepare: prepareNode,
    validate: validateNode,
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
  // Pods for kubectl describe node and drain: no scheduler or kubelet acts on them (pods.ts).
  row({
    group: '',
    version: 'v1',
    plural: 'pods',
    kind: 'Pod',
    namespaced: true,
    status: true,
    shortNames: ['po'],
    categories: ['all'],
    fieldSelectors: POD_FIELD_SELECTORS,
    fieldValue: podFieldValue,
    defaults: podDefaults,
    prepare: preparePod,
    validate: validatePod,
    returnDeletedObject: true,
    smp: POD_SMP,
    actions: [{ name: 'eviction', group: 'policy', version: 'v1', kind: 'Eviction', create: evictPod }],
  }),
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
