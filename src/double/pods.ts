// core/v1 Pods as far as kubectl's node workflows need them (describe node, get pods, drain):
// the defaults and validation kube-apiserver applies on write, the fields a field selector can
// name, the list strategies of strategic merge patches, and the eviction subresource. Nothing
// runs pods: there is no scheduler, no kubelet and no disruption controller, so a pod stays as
// written until someone changes it (docs/apiserver-double.md lists what that leaves out).
import { badRequest, type FieldError } from './errors.js';
import { dryRunOfBody } from './dryrun.js';
import { METADATA_SMP, type ListStrategy, type SmpSchema } from './patch.js';
import type { ActionRequest, KObject } from './resource-def.js';
import { fieldValue } from './selectors.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

// ------------------------------------------------------------------ field selectors

/** Selectable pod fields beyond metadata.name and metadata.namespace, as kube-apiserver has them. */
export const POD_FIELD_SELECTORS = ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'];

/**
 * The value a field selector compares. Two are not plain paths: hostNetwork is "false" when
 * absent (a boolean always has a value), and status.podIP is the first of status.podIPs, which
 * kube-apiserver keeps as the authoritative list (the singular field only mirrors it).
 */
export function podFieldValue(pod: KObject, field: string): string {
  if (field === 'spec.hostNetwork') return String((pod.spec as Obj | undefined)?.hostNetwork === true);
  if (field === 'status.podIP') {
    const status = (pod.status ?? {}) as Obj;
    const first = objects(status.podIPs)[0]?.ip;
    return typeof first === 'string' && first !== '' ? first : fieldValue(pod, field);
  }
  return fieldValue(pod, field);
}

// ------------------------------------------------------------------ strategic merge patch

/** List strategies of one container kind (containers, initContainers, ephemeralContainers). */
function containerLists(at: string): Record<string, ListStrategy> {
  return {
    [at]: { mergeKey: 'name' },
    [`${at}.ports`]: { mergeKey: 'containerPort' },
    [`${at}.env`]: { mergeKey: 'name' },
    [`${at}.volumeMounts`]: { mergeKey: 'mountPath' },
    [`${at}.volumeDevices`]: { mergeKey: 'devicePath' },
  };
}

/** The patch strategies of core/v1 PodSpec and PodStatus (a test keeps them equal to the OpenAPI schema's). */
export const POD_SMP: SmpSchema = {
  ...METADATA_SMP,
  ...containerLists('spec.containers'),
  ...containerLists('spec.initContainers'),
  ...containerLists('spec.ephemeralContainers'),
  'spec.volumes': { mergeKey: 'name' },
  'spec.imagePullSecrets': { mergeKey: 'name' },
  'spec.hostAliases': { mergeKey: 'ip' },
  'spec.schedulingGates': { mergeKey: 'name' },
  'spec.resourceClaims': { mergeKey: 'name' },
  'spec.topologySpreadConstraints': { mergeKey: 'topologyKey' },
  'status.conditions': { mergeKey: 'type' },
  'status.podIPs': { mergeKey: 'ip' },
  'status.hostIPs': { mergeKey: 'ip' },
  'status.resourceClaimStatuses': { mergeKey: 'name' },
};

// ------------------------------------------------------------------ defaults

const CONTAINER_KINDS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

function setIfAbsent(o: Obj, key: string, value: unknown): void {
  if (value !== undefined && (o[key] === undefined || o[key] === null || o[key] === '')) o[key] = value;
}

/** An image without a tag (or tagged latest) and without a digest is pulled every time. */
function pullPolicyOf(image: unknown): string {
  if (typeof image !== 'string' || image.includes('@')) return 'IfNotPresent';
  const lastPart = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastPart.lastIndexOf(':');
  const tag = colon >= 0 ? lastPart.slice(colon + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Obj): void {
  setIfAbsent(c, 'terminationMessagePath', '/dev/termination-log');
  setIfAbsent(c, 'terminationMessagePolicy', 'File');
  setIfAbsent(c, 'imagePullPolicy', pullPolicyOf(c.image));
  if (!isObj(c.resources)) c.resources = {};
  const res = c.resources as Obj;
  // A limit without a request requests as much as it limits.
  if (isObj(res.limits)) {
    const requests = isObj(res.requests) ? { ...res.requests } : {};
    for (const [k, v] of Object.entries(res.limits)) if (requests[k] === undefined) requests[k] = v;
    if (Object.keys(requests).length > 0) res.requests = requests;
  }
  for (const p of objects(c.ports)) setIfAbsent(p, 'protocol', 'TCP');
}

/**
 * The scheme defaults of a pod, applied to every create and update (kube-apiserver defaults
 * each decoded body, so a `kubectl replace` of the original YAML passes the immutability check).
 * Copies what it changes: the input may share parts with a stored object.
 */
export function preparePod(pod: KObject): void {
  if (!isObj(pod.spec)) return;
  const spec: Obj = { ...pod.spec };
  pod.spec = spec;
  setIfAbsent(spec, 'restartPolicy', 'Always');
  setIfAbsent(spec, 'dnsPolicy', 'ClusterFirst');
  setIfAbsent(spec, 'schedulerName', 'default-scheduler');
  setIfAbsent(spec, 'terminationGracePeriodSeconds', 30);
  if (spec.enableServiceLinks === undefined || spec.enableServiceLinks === null) spec.enableServiceLinks = true;
  if (!isObj(spec.securityContext)) spec.securityContext = {};
  // serviceAccount is the deprecated spelling of serviceAccountName; v1 shows both.
  setIfAbsent(spec, 'serviceAccountName', spec.serviceAccount);
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') spec.serviceAccount = spec.serviceAccountName;
  for (const kind of CONTAINER_KINDS) {
    if (!Array.isArray(spec[kind])) continue;
    spec[kind] = (spec[kind] as unknown[]).map((c) => {
      if (!isObj(c)) return c;
      const copy = JSON.parse(JSON.stringify(c)) as Obj;
      defaultContainer(copy);
      return copy;
    });
  }
}

/** A quantity (`500m`, `2`, `1Gi`, `1e3`) as a number, for comparing requests with limits. */
export function quantityValue(q: unknown): number {
  if (typeof q === 'number') return q;
  const m = /^([+-]?[0-9.]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+)?$/.exec(String(q).trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  const unit = m[2] ?? '';
  if (/^[eE]/.test(unit)) return n * 10 ** Number(unit.slice(1));
  const decimal: Record<string, number> = { '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
  const binary: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
  return n * (decimal[unit] ?? binary[unit]);
}

/**
 * The QoS class from the containers' CPU and memory: BestEffort when none asks for either,
 * Guaranteed when every container limits both and requests exactly its limits, else Burstable.
 */
export function qosClassOf(spec: unknown): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const s = isObj(spec) ? spec : {};
  const containers = [...objects(s.initContainers), ...objects(s.containers)];
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const res = isObj(c.resources) ? c.resources : {};
    const requests = isObj(res.requests) ? res.requests : {};
    const limits = isObj(res.limits) ? res.limits : {};
    for (const r of ['cpu', 'memory']) {
      const req = requests[r];
      const lim = limits[r];
      if ((req !== undefined && quantityValue(req) !== 0) || (lim !== undefined && quantityValue(lim) !== 0)) any = true;
      if (lim === undefined || (req !== undefined && quantityValue(req) !== quantityValue(lim))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/**
 * Create only: the status kube-apiserver starts every pod with (Pending, its QoS class, and a
 * gated PodScheduled condition when scheduling gates hold it), and what its default admission
 * plugins add (the default service account, priority 0, five minutes of tolerance for
 * not-ready and unreachable nodes).
 */
export function podDefaults(pod: KObject): void {
  preparePod(pod);
  const spec = (isObj(pod.spec) ? pod.spec : {}) as Obj;
  if (isObj(pod.spec)) {
    setIfAbsent(spec, 'serviceAccountName', 'default');
    setIfAbsent(spec, 'serviceAccount', spec.serviceAccountName);
    if (typeof spec.priority !== 'number') spec.priority = 0;
    setIfAbsent(spec, 'preemptionPolicy', 'PreemptLowerPriority');
    const tolerations = objects(spec.tolerations);
    const tolerated = (key: string): boolean => tolerations.some((t) => (t.key === key || ((t.key ?? '') === '' && t.operator === 'Exists')) && (t.effect === 'NoExecute' || (t.effect ?? '') === ''));
    const added = [NOT_READY, UNREACHABLE].filter((k) => !tolerated(k)).map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }));
    if (added.length > 0) spec.tolerations = [...(Array.isArray(spec.tolerations) ? spec.tolerations : []), ...added];
  }
  const status: Obj = { phase: 'Pending', qosClass: qosClassOf(spec) };
  if (objects(spec.schedulingGates).length > 0) {
    status.conditions = [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: 'the pod has scheduling gates, so it is not scheduled' }];
  }
  pod.status = status;
}

// ------------------------------------------------------------------ validation

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function oneOf(field: string, value: unknown, allowed: string[]): FieldError[] {
  if (value === undefined || allowed.includes(value as string)) return [];
  return [{ field, type: 'FieldValueNotSupported', value, detail: `supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}` }];
}

/** JSON with sorted keys: two specs compare equal whatever order a patch left their keys in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObj(v)) return `{${Object.keys(v).filter((k) => v[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** The spec with what an update may change taken out: container images, the deadline, tolerations, gates. */
function fixedPart(spec: Obj): string {
  const rest: Obj = { ...spec, activeDeadlineSeconds: undefined, tolerations: undefined, schedulingGates: undefined };
  for (const kind of ['containers', 'initContainers']) {
    if (Array.isArray(spec[kind])) rest[kind] = (spec[kind] as unknown[]).map((c) => (isObj(c) ? { ...c, image: undefined } : c));
  }
  return canonical(rest);
}

function updateErrors(spec: Obj, oldSpec: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (fixedPart(spec) !== fixedPart(oldSpec)) {
    errs.push({ field: 'spec', type: 'FieldValueForbidden', detail: 'a pod update may change only container images, activeDeadlineSeconds, tolerations (by adding to them) and schedulingGates (by removing from them)' });
  }
  const has = (list: unknown, item: Obj): boolean => objects(list).some((x) => canonical(x) === canonical(item));
  if (objects(oldSpec.tolerations).some((t) => !has(spec.tolerations, t))) errs.push({ field: 'spec.tolerations', type: 'FieldValueForbidden', detail: 'existing tolerations may not be removed or changed' });
  if (objects(spec.schedulingGates).some((g) => !has(oldSpec.schedulingGates, g))) errs.push({ field: 'spec.schedulingGates', type: 'FieldValueForbidden', detail: 'scheduling gates may only be removed' });
  const deadline = spec.activeDeadlineSeconds;
  const oldDeadline = oldSpec.activeDeadlineSeconds;
  if (typeof oldDeadline === 'number' && (typeof deadline !== 'number' || deadline > oldDeadline)) {
    errs.push({ field: 'spec.activeDeadlineSeconds', type: 'FieldValueInvalid', value: deadline ?? null, detail: 'may be set or lowered, never removed or raised' });
  }
  return errs;
}

/** What kube-apiserver refuses most often: no containers, nameless or imageless ones, unknown policies, spec changes. */
export function validatePod(pod: KObject, old: KObject | undefined): FieldError[] {
  if (!isObj(pod.spec)) return [{ field: 'spec.containers', type: 'FieldValueRequired', detail: 'Required value' }];
  const spec = pod.spec;
  const errs: FieldError[] = [];
  if (objects(spec.containers).length === 0) errs.push({ field: 'spec.containers', type: 'FieldValueRequired', detail: 'Required value' });
  const names = new Set<string>();
  for (const kind of CONTAINER_KINDS) {
    objects(spec[kind]).forEach((c, i) => {
      const at = `spec.${kind}[${i}]`;
      if (typeof c.name !== 'string' || c.name === '') errs.push({ field: `${at}.name`, type: 'FieldValueRequired', detail: 'Required value' });
      else if (!DNS_LABEL.test(c.name) || c.name.length > 63) errs.push({ field: `${at}.name`, type: 'FieldValueInvalid', value: c.name, detail: 'a container name must be a lowercase RFC 1123 label' });
      else if (names.has(c.name)) errs.push({ field: `${at}.name`, type: 'FieldValueDuplicate', value: c.name, detail: '' });
      else names.add(c.name);
      if (typeof c.image !== 'string' || c.image.trim() === '') errs.push({ field: `${at}.image`, type: 'FieldValueRequired', detail: 'Required value' });
    });
  }
  errs.push(...oneOf('spec.restartPolicy', spec.restartPolicy, ['Always', 'OnFailure', 'Never']));
  errs.push(...oneOf('spec.dnsPolicy', spec.dnsPolicy, ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None']));
  if (old && isObj(old.spec)) errs.push(...updateErrors(spec, old.spec));
  return errs;
}

// ------------------------------------------------------------------ eviction

/**
 * POST pods/<name>/eviction with a policy/v1 (or v1beta1) Eviction: the pod is deleted with the
 * Eviction's deleteOptions (preconditions, dryRun). No PodDisruptionBudgets are served, so no
 * budget can refuse it (kube-apiserver's 429) and none is consulted.
 */
export function evictPod(req: ActionRequest): [number, object] {
  const body = req.body;
  if (!isObj(body)) throw badRequest('the body of an eviction must be a JSON Eviction object');
  if (body.kind !== undefined && body.kind !== 'Eviction') throw badRequest(`the body of an eviction must be an Eviction, got kind "${String(body.kind)}"`);
  if (body.apiVersion !== undefined && body.apiVersion !== 'policy/v1' && body.apiVersion !== 'policy/v1beta1') {
    throw badRequest(`an Eviction must be policy/v1 or policy/v1beta1, got apiVersion "${String(body.apiVersion)}"`);
  }
  const meta = isObj(body.metadata) ? body.metadata : {};
  // kube-apiserver's words (pkg/registry/core/pod/storage/eviction.go).
  if (meta.name !== req.name) throw badRequest('name in URL does not match name in Eviction object');
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== req.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const options = isObj(body.deleteOptions) ? body.deleteOptions : {};
  const dryRun = req.dryRun || dryRunOfBody(options.dryRun);
  req.store.deleteRef('pods', req.name, req.namespace, { preconditions: options.preconditions as { uid?: string; resourceVersion?: string } | undefined, dryRun });
  return [201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }];
}
