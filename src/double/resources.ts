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

// CEL rule failures show a scalar field's value, and no value for an object or a list
// (k8s.io/apiextensions-apiserver schema/cel validation.go: field.OmitValueType for them).
function celError(field: string, value: unknown, message: string): FieldError {
  const t = jsonType(value);
  return t === 'object' || t === 'array' ? { field, type: 'FieldValueInvalid', rendered: null, detail: message } : { field, type: 'FieldValueInvalid', value, detail: message };
}

function typeError(field: string, value: unknown, want: string): FieldError {
  return { field, type: 'FieldValueInvalid', value: jsonType(value), detail: `${field} in body must be of type ${want}: "${jsonType(value)}"` };
}

// The ClusterCIDR CRD (deploy/base/crd-clustercidrs.yaml): its OpenAPI schema and CEL rules,
// enforced by hand. "" and absent are the same for ipv4 and ipv6.
// The cause kube-apiserver adds when schema errors kept a custom resource's CEL rules from running.
const RULES_NOT_CHECKED: FieldError = { field: '<nil>', type: 'FieldValueInvalid', value: null, detail: 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation' };

function validateClusterCidr(obj: KObject, old: KObject | undefined): FieldError[] {
  const M = CLUSTERCIDR_RULE_MESSAGES;
  // Schema errors (errs) and CEL rule failures (cel): with any of the former the rules are not
  // run, and kube-apiserver says so in one more cause.
  const errs: FieldError[] = [];
  const cel: FieldError[] = [];
  const spec = obj.spec as Record<string, unknown> | undefined;
  if (spec === undefined || spec === null) return [{ field: 'spec', type: 'FieldValueRequired', detail: 'Required value' }, RULES_NOT_CHECKED];
  if (jsonType(spec) !== 'object') return [typeError('spec', spec, 'object'), RULES_NOT_CHECKED];
  const bits = spec.perNodeHostBits;
  if (bits === undefined || bits === null) errs.push({ field: 'spec.perNodeHostBits', type: 'FieldValueRequired', detail: 'Required value' });
  else if (jsonType(bits) !== 'integer') errs.push(typeError('spec.perNodeHostBits', bits, 'integer'));
  else if ((bits as number) > 2147483647 || (bits as number) < -2147483648) errs.push({ field: 'spec.perNodeHostBits', type: 'FieldValueInvalid', value: bits, detail: 'must fit in int32' });
  else if (!old && (bits as number) < 4) cel.push(celError('spec.perNodeHostBits', bits, M.hostBitsMin));
  for (const family of ['ipv4', 'ipv6'] as const) {
    const v = spec[family];
    const field = `spec.${family}`;
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') errs.push(typeError(field, v, 'string'));
    else if (v.length > 64) errs.push({ field, type: 'FieldValueTooLong', value: v, detail: 'may not be more than 64 bytes' });
    else if (!isCidrOfFamily(v, family)) cel.push(celError(field, v, family === 'ipv4' ? M.ipv4Family : M.ipv6Family));
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
  // spec's own rules are reported before the rules of its fields.
  const specRules: FieldError[] = [];
  if (!present(spec.ipv4) && !present(spec.ipv6)) specRules.push(celError('spec', spec, M.atLeastOne));
  if (old) {
    const oldSpec = (old.spec ?? {}) as Record<string, unknown>;
    const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
    // Field-level transition rules run only when the field exists before and after.
    const fieldRule = (f: string, message: string): void => {
      if (spec[f] !== undefined && oldSpec[f] !== undefined && !same(spec[f], oldSpec[f])) cel.push(celError(`spec.${f}`, spec[f], message));
    };
    fieldRule('nodeSelector', M.nodeSelectorImmutable);
    fieldRule('perNodeHostBits', M.perNodeHostBitsImmutable);
    fieldRule('ipv4', M.ipv4Immutable);
    fieldRule('ipv6', M.ipv6Immutable);
    // spec-level rules also catch a field being added or removed.
    if ((spec.ipv4 ?? '') !== (oldSpec.ipv4 ?? '')) specRules.push(celError('spec', spec, M.ipv4Immutable));
    if ((spec.ipv6 ?? '') !== (oldSpec.ipv6 ?? '')) specRules.push(celError('spec', spec, M.ipv6Immutable));
    if ((spec.nodeSelector !== undefined) !== (oldSpec.nodeSelector !== undefined)) specRules.push(celError('spec', spec, M.nodeSelectorImmutable));
  }
  if (errs.length > 0) return [...errs, RULES_NOT_CHECKED];
  return [...specRules, ...cel];
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

// v1 Nodes carry podCIDR and podCIDRs; kube-apiserver stores podCIDRs and derives podCIDR.
// A changed spec is a new object: the one given may be shared with a stored Node.
// When both are set and podCIDR is not podCIDRs[0], podCIDR wins and podCIDRs becomes [podCIDR]
// (pkg/apis/core/v1 conversion.go, Convert_v1_NodeSpec_To_core_NodeSpec): a strategic merge patch
// that adds a CIDR to podCIDRs puts it first and so changes nothing.
function prepareNode(obj: KObject): void {
  const spec = obj.spec as { podCIDR?: string; podCIDRs?: string[] } | undefined;
  if (!spec || typeof spec !== 'object') return;
  const given = Array.isArray(spec.podCIDRs) && spec.podCIDRs.length > 0 ? spec.podCIDRs : undefined;
  const podCIDRs = spec.podCIDR && (!given || given[0] !== spec.podCIDR) ? [spec.podCIDR] : spec.podCIDRs;
  const podCIDR = Array.isArray(podCIDRs) && podCIDRs.length > 0 ? podCIDRs[0] : spec.podCIDR;
  if (podCIDRs !== spec.podCIDRs || podCIDR !== spec.podCIDR) obj.spec = { ...spec, podCIDRs, podCIDR };
}

// core/v1 NodeSystemInfo's string fields, none omitempty, in the order Go writes them.
const NODE_INFO_FIELDS = ['machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage', 'containerRuntimeVersion', 'kubeletVersion', 'kubeProxyVersion', 'operatingSystem', 'architecture'];
const EMPTY_NODE_INFO = Object.fromEntries(NODE_INFO_FIELDS.map((f) => [f, '']));

function isEmptyOmitted(v: unknown): boolean {
  return v === undefined || v === null || v === '' || v === false || (Array.isArray(v) && v.length === 0);
}

/**
 * A Node as kube-apiserver writes it (k8s.io/api core/v1 types.go, pkg/apis/core/v1 defaults.go):
 * `spec` and `status` always present, `status.daemonEndpoints` and `status.nodeInfo` with their
 * zero values (non-pointer structs), `allocatable` defaulted from `capacity`, and spec's empty
 * omitempty fields (`taints: []`, `unschedulable: false`, …) dropped.
 */
function encodeNodeAsGo(obj: KObject): void {
  const spec = (obj.spec && typeof obj.spec === 'object' ? obj.spec : {}) as Record<string, unknown>;
  if (Object.values(spec).some(isEmptyOmitted) || obj.spec !== spec) obj.spec = Object.fromEntries(Object.entries(spec).filter(([, v]) => !isEmptyOmitted(v)));
  const status = (obj.status && typeof obj.status === 'object' ? obj.status : {}) as Record<string, unknown>;
  const next: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(status)) if (!(Array.isArray(v) && v.length === 0)) next[k] = v;
  if (next.allocatable === undefined && next.capacity !== undefined) next.allocatable = next.capacity;
  const endpoint = (next.daemonEndpoints as { kubeletEndpoint?: { Port?: number } } | undefined)?.kubeletEndpoint;
  next.daemonEndpoints = { ...(next.daemonEndpoints as object), kubeletEndpoint: { ...endpoint, Port: endpoint?.Port ?? 0 } };
  next.nodeInfo = { ...EMPTY_NODE_INFO, ...(next.nodeInfo as object) };
  obj.status = next;
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
    // Reported under metadata.taints, as upstream's validateNodeTaints is called; an update runs
    // it twice (ValidateNode and ValidateNodeUpdate), so each error comes as two causes.
    const taintErrors: FieldError[] = [];
    const seen = new Set<string>();
    spec.taints.forEach((t: { key?: unknown; value?: unknown; effect?: unknown; timeAdded?: unknown }, i) => {
      const at = `metadata.taints[${i}]`;
      if (typeof t?.key !== 'string' || !QUALIFIED_NAME.test(t.key)) taintErrors.push({ field: `${at}.key`, type: 'FieldValueInvalid', value: t?.key ?? '', detail: 'must be a qualified name' });
      if (t?.effect === undefined || t.effect === '') taintErrors.push({ field: `${at}.effect`, type: 'FieldValueRequired', detail: 'Required value' });
      else if (!TAINT_EFFECTS.includes(String(t.effect))) taintErrors.push({ field: `${at}.effect`, type: 'FieldValueNotSupported', value: t.effect, detail: `supported values: ${TAINT_EFFECTS.map((e) => `"${e}"`).join(', ')}` });
      const id = `${String(t?.key)}:${String(t?.effect)}`;
      if (seen.has(id)) {
        // The internal Go struct, printed as JSON: field names as declared, no json tags.
        const rendered = JSON.stringify({ Key: t?.key ?? '', Value: t?.value ?? '', Effect: t?.effect ?? '', TimeAdded: t?.timeAdded ?? null });
        taintErrors.push({ field: at, type: 'FieldValueDuplicate', rendered, detail: 'taints must be unique by key and effect pair' });
      }
      seen.add(id);
    });
    errs.push(...taintErrors, ...(old ? taintErrors : []));
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

// ServiceCIDR spec validation (pkg/apis/networking/validation, validateServiceCIDRSpec and
// ValidateServiceCIDRUpdate): one or two CIDRs, one per family; immutable, except that a
// single-stack range may gain its second family.
function validateServiceCidrSpec(cidrs: unknown): FieldError[] {
  if (!Array.isArray(cidrs) || cidrs.length === 0) return [{ field: 'spec.cidrs', type: 'FieldValueRequired', detail: 'at least one CIDR required' }];
  // Go prints the whole internal spec struct here.
  if (cidrs.length > 2) return [{ field: 'spec.cidrs', type: 'FieldValueInvalid', value: { CIDRs: cidrs }, detail: 'may only hold up to 2 values' }];
  const errs: FieldError[] = [];
  cidrs.forEach((c, i) => {
    if (!isCidrOfFamily(c, 'ipv4') && !isCidrOfFamily(c, 'ipv6')) errs.push({ field: `spec.cidrs[${i}]`, type: 'FieldValueInvalid', value: c, detail: 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)' });
  });
  if (errs.length === 0 && cidrs.length === 2 && isCidrOfFamily(cidrs[0], 'ipv4') === isCidrOfFamily(cidrs[1], 'ipv4')) {
    errs.push({ field: 'spec.cidrs', type: 'FieldValueInvalid', value: cidrs, detail: 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64' });
  }
  return errs;
}

function validateServiceCidr(obj: KObject, old: KObject | undefined): FieldError[] {
  const cidrs = (obj.spec as { cidrs?: unknown } | undefined)?.cidrs;
  if (!old) return validateServiceCidrSpec(cidrs);
  const was = ((old.spec as { cidrs?: string[] } | undefined)?.cidrs ?? []) as string[];
  const now = (Array.isArray(cidrs) ? cidrs : []) as string[];
  const immutable = (field: string, value: unknown): FieldError => ({ field, type: 'FieldValueInvalid', value, detail: 'field is immutable' });
  if (was.length === now.length) return was.flatMap((c, i) => (c !== now[i] ? [immutable(`spec.cidrs[${i}]`, now[i])] : []));
  if (was.length === 1 && now.length === 2) return [...(now[0] !== was[0] ? [immutable('spec.cidrs[0]', now[0])] : []), ...validateServiceCidrSpec(now)];
  return [immutable('spec.cidrs', now)];
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

/**
 * The namespace rule of core/v1 Event validation (pkg/apis/core/validation/events.go,
 * legacyValidateEvent): an Event about a cluster-scoped object (involvedObject without a
 * namespace) lives in "default" (or, for one with eventTime, "kube-system"); any other Event lives
 * in its object's namespace.
 */
function validateCoreEvent(obj: KObject): FieldError[] {
  const ns = obj.metadata?.namespace ?? '';
  const involvedNs = String((obj.involvedObject as { namespace?: unknown } | undefined)?.namespace ?? '');
  const ok = involvedNs !== '' ? ns === involvedNs : ns === '' || ns === 'default' || (!!obj.eventTime && ns === 'kube-system');
  return ok ? [] : [{ field: 'involvedObject.namespace', type: 'FieldValueInvalid', value: involvedNs, detail: 'does not match event.namespace' }];
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

// Go's encoding of the two Event types (k8s.io/api core/v1 and events/v1 types.go): zero
// timestamps are null, struct fields ({} source) always present, core's reportingComponent and
// reportingInstance always present (no omitempty), events/v1's empty strings left out.
function encodeCoreEventAsGo(obj: KObject): void {
  for (const f of ['firstTimestamp', 'lastTimestamp', 'eventTime']) if (obj[f] === undefined) obj[f] = null;
  obj.involvedObject ??= {};
  obj.source ??= {};
  obj.reportingComponent ??= '';
  obj.reportingInstance ??= '';
}

function encodeEventsV1AsGo(obj: KObject): void {
  for (const f of ['eventTime', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp']) if (obj[f] === undefined) obj[f] = null;
  obj.regarding ??= {};
  obj.deprecatedSource ??= {};
  for (const f of ['reportingController', 'reportingInstance', 'action', 'reason', 'note', 'type']) if (obj[f] === '') delete obj[f];
}

function convertEvent(obj: KObject, toEventsV1: boolean): KObject {
  const out: KObject = { apiVersion: toEventsV1 ? 'events.k8s.io/v1' : 'v1', kind: 'Event', metadata: obj.metadata };
  for (const f of SAME_EVENT_FIELDS) if (obj[f] !== undefined) out[f] = obj[f];
  for (const [core, ev] of EVENT_FIELD_MAP) {
    const [from, to] = toEventsV1 ? [core, ev] : [ev, core];
    if (obj[from] !== undefined) out[to] = obj[from];
  }
  // series: core/v1 {count, lastObservedTime} and events.k8s.io/v1 {count, lastObservedTime} match.
  if (obj.series !== undefined) out.series = obj.series;
  if (toEventsV1) encodeEventsV1AsGo(out);
  else encodeCoreEventAsGo(out);
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
    encodeAsGo: encodeNodeAsGo,
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
    // Pods track metadata.generation since 1.35 (PodObservedGenerationTracking).
    generation: true,
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
    validate: validateCoreEvent,
    encodeAsGo: encodeCoreEventAsGo,
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
    encodeAsGo: encodeEventsV1AsGo,
    mirror: { resource: 'events', convert: (o) => convertEvent(o, false) },
  }),
  row({ group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true, createOnUpdate: true, validate: validateLease }),
  row({
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'servicecidrs',
    kind: 'ServiceCIDR',
    status: true,
    smp: CONDITIONS,
    validate: validateServiceCidr,
    // ServiceCIDRStatus is a struct: an object without conditions still has `status: {}`.
    encodeAsGo: (obj) => {
      if (obj.status === undefined || obj.status === null) obj.status = {};
    },
  }),
  row({ group: 'networking.x-k8s.io', version: 'v1', plural: 'clustercidrs', kind: 'ClusterCIDR', custom: true, generation: true, validate: validateClusterCidr }),
];
