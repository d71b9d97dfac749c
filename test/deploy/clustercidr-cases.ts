// What the ClusterCIDR CRD (deploy/base/crd-clustercidrs.yaml) must accept and refuse, as one
// table for two judges: the offline schema and CEL evaluator (test/deploy/manifests.test.ts) and
// kube-apiserver itself, which runs the CRD's CEL (test/realserver/clustercidr.test.ts). An error
// is written as the offline validator words it, `<path>: <message>`; serverErrorFragments says
// what kube-apiserver's 422 answer carries for it.
import type { JsonObject } from './kustomize.js';

export const clusterCIDR = (spec: JsonObject | undefined, metadata: JsonObject = {}): JsonObject => ({
  apiVersion: 'networking.x-k8s.io/v1',
  kind: 'ClusterCIDR',
  metadata: { name: 'c', ...metadata },
  ...(spec ? { spec } : {}),
});

const selector = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] }] };
const otherSelector = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['b'] }] }] };

export interface CreateCase {
  title: string;
  object: JsonObject;
  /** [] when the object is accepted. */
  errors: string[];
}

export interface UpdateCase {
  title: string;
  old: JsonObject;
  new: JsonObject;
  errors: string[];
  /**
   * `old` cannot be created under this CRD (node-ipam-controller's CRD allowed it): kube-apiserver
   * gets it created under a copy of the CRD without the create-only rule.
   */
  legacy?: boolean;
}

export const CREATE_CASES: CreateCase[] = [
  { title: 'IPv4 only', object: clusterCIDR({ perNodeHostBits: 8, ipv4: '10.0.0.0/16' }), errors: [] },
  { title: 'IPv6 only', object: clusterCIDR({ perNodeHostBits: 64, ipv6: 'fd00::/48' }), errors: [] },
  { title: 'dual-stack with a node selector', object: clusterCIDR({ perNodeHostBits: 8, ipv4: '10.0.0.0/16', ipv6: 'fd00::/112', nodeSelector: selector }), errors: [] },
  { title: 'the "" of node-ipam-controller for an unused family', object: clusterCIDR({ perNodeHostBits: 8, ipv4: '', ipv6: 'fd00::/112' }), errors: [] },
  { title: 'no spec', object: clusterCIDR(undefined), errors: ['<root>: spec is required'] },
  { title: 'no perNodeHostBits', object: clusterCIDR({ ipv4: '10.0.0.0/16' }), errors: ['.spec: perNodeHostBits is required'] },
  { title: 'no family', object: clusterCIDR({ perNodeHostBits: 8 }), errors: ['.spec: at least one of ipv4 and ipv6 must be set'] },
  { title: 'both families ""', object: clusterCIDR({ perNodeHostBits: 8, ipv4: '', ipv6: '' }), errors: ['.spec: at least one of ipv4 and ipv6 must be set'] },
  { title: 'an IPv6 CIDR as ipv4', object: clusterCIDR({ perNodeHostBits: 8, ipv4: 'fd00::/64' }), errors: ['.spec.ipv4: ipv4 must be an IPv4 CIDR'] },
  { title: 'an IPv4 CIDR as ipv6', object: clusterCIDR({ perNodeHostBits: 8, ipv6: '10.0.0.0/8' }), errors: ['.spec.ipv6: ipv6 must be an IPv6 CIDR'] },
  { title: 'an address without a prefix length', object: clusterCIDR({ perNodeHostBits: 8, ipv4: '10.0.0.0' }), errors: ['.spec.ipv4: ipv4 must be an IPv4 CIDR'] },
  { title: 'a prefix length past 32', object: clusterCIDR({ perNodeHostBits: 8, ipv4: '10.0.0.0/33' }), errors: ['.spec.ipv4: ipv4 must be an IPv4 CIDR'] },
  { title: 'an unknown field', object: clusterCIDR({ perNodeHostBits: 8, ipv4: '10.0.0.0/8', ipv4CIDR: '10.0.0.0/8' }), errors: ['.spec.ipv4CIDR: unknown field'] },
  { title: 'perNodeHostBits 3', object: clusterCIDR({ perNodeHostBits: 3, ipv4: '10.0.0.0/16' }), errors: ['.spec.perNodeHostBits: perNodeHostBits must be at least 4'] },
  { title: 'perNodeHostBits 4', object: clusterCIDR({ perNodeHostBits: 4, ipv4: '10.0.0.0/16' }), errors: [] },
];

const legacy = clusterCIDR({ perNodeHostBits: 2, ipv4: '10.0.0.0/24', ipv6: '' });
const legacyWithFinalizer = clusterCIDR({ perNodeHostBits: 2, ipv4: '10.0.0.0/24', ipv6: '' }, { finalizers: ['networking.k8s.io/cluster-cidr-finalizer'] });
const base = clusterCIDR({ perNodeHostBits: 8, ipv4: '10.0.0.0/16', nodeSelector: selector });
const withSpec = (spec: JsonObject): JsonObject => ({ ...base, spec: { ...(base.spec as JsonObject), ...spec } });
const { nodeSelector: _ns, ...noSelector } = base.spec as JsonObject;

export const UPDATE_CASES: UpdateCase[] = [
  { title: 'a finalizer added to an object node-ipam-controller created with 2 host bits', old: legacy, new: legacyWithFinalizer, errors: [], legacy: true },
  { title: 'that finalizer removed again', old: legacyWithFinalizer, new: legacy, errors: [], legacy: true },
  { title: 'perNodeHostBits changed', old: base, new: withSpec({ perNodeHostBits: 9 }), errors: ['.spec.perNodeHostBits: perNodeHostBits is immutable'] },
  { title: 'ipv4 changed', old: base, new: withSpec({ ipv4: '10.1.0.0/16' }), errors: ['.spec.ipv4: ipv4 is immutable'] },
  { title: 'ipv6 added', old: base, new: withSpec({ ipv6: 'fd00::/112' }), errors: ['.spec: ipv6 is immutable'] },
  { title: 'the node selector removed', old: base, new: { ...base, spec: noSelector }, errors: ['.spec: nodeSelector is immutable'] },
  { title: 'the node selector changed', old: base, new: withSpec({ nodeSelector: otherSelector }), errors: ['.spec.nodeSelector: nodeSelector is immutable'] },
  // "" and absent are the same value: node-ipam-controller writes "" for an unused family.
  { title: 'ipv6 "" added to an object without ipv6', old: base, new: withSpec({ ipv6: '' }), errors: [] },
  // Labels and finalizers are not spec: they change freely.
  { title: 'a label added', old: base, new: { ...base, metadata: { name: 'c', labels: { a: 'b' } } }, errors: [] },
];

/**
 * kube-apiserver's status code for a refusal: 400 when a field is unknown (fieldValidation=Strict
 * fails the decoding, before any validation), else 422 Invalid.
 */
export function serverErrorCode(errors: string[]): number {
  return errors.some((e) => e.endsWith(': unknown field')) ? 400 : 422;
}

/**
 * What kube-apiserver's answer says for an offline error: the field path without its leading dot,
 * then "Required value", "Invalid value: …: <message>", or (fieldValidation=Strict) `unknown field`.
 */
export function serverErrorFragments(error: string): string[] {
  const at = error.indexOf(': ');
  const where = error.slice(0, at);
  const message = error.slice(at + 2);
  const path = where === '<root>' ? '' : where.slice(1);
  const required = /^(\w+) is required$/.exec(message);
  if (required) return [`${path ? `${path}.` : ''}${required[1]}: Required value`];
  if (message === 'unknown field') return [`unknown field "${path}"`];
  return [`${path}: Invalid value: `, `: ${message}`];
}
