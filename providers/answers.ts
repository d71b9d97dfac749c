// The answers of an adapter this project did not write (a module loaded with
// --cloud-provider-module, the webhook's inventory), held to what the controllers rely on before
// they see them: exactly one outcome per node asked about, canonical IPs and CIDRs, no label in
// the kubernetes.io namespaces. A wrong answer costs that node's answer (a retryable error: the
// node waits), never a node's addresses, and is never read as "not found". Pure, no I/O.
import { isReservedLabelKey } from '../src/model/label-keys.js';
import { NODE_ADDRESS_TYPES, type NodeAddress, type NodeAddressType } from '../src/model/node-address.js';
import { canonicalCIDR, canonicalIP } from './ip.js';
import { BatchError, type InstanceMetadata, type InstanceResult, type NodeRef, type PodCIDRDetails } from './types.js';

/** The checked answers: one entry per node asked about, and what was wrong with the rest. */
export interface CheckedAnswers<T> {
  results: Map<string, InstanceResult<T>>;
  /** One line per problem that did not cost a node its answer (an extra node, a dropped label). */
  notes: string[];
}

/** A value as an error message shows it: short, quoted like JSON. */
export function showValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

class AnswerProblem extends Error {}

function problem(field: string, message: string, value: unknown): never {
  throw new AnswerProblem(`${field}: ${message} (value ${showValue(value)})`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optionalString(obj: Record<string, unknown>, key: string): string | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') problem(key, 'must be a string', v);
  return v;
}

const IP_TYPES: ReadonlySet<string> = new Set(['InternalIP', 'ExternalIP']);

function checkAddresses(v: unknown): NodeAddress[] {
  if (!Array.isArray(v)) problem('addresses', 'must be a list', v);
  return v.map((a: unknown, i): NodeAddress => {
    const at = `addresses[${i}]`;
    if (!isRecord(a)) problem(at, 'must be an object {type, address}', a);
    if (typeof a.type !== 'string' || !NODE_ADDRESS_TYPES.includes(a.type as NodeAddressType)) {
      problem(`${at}.type`, `must be one of ${NODE_ADDRESS_TYPES.join(', ')}`, a.type);
    }
    const type = a.type as NodeAddressType;
    if (typeof a.address !== 'string' || a.address === '' || /\s/.test(a.address)) problem(`${at}.address`, 'must be a non-empty string without white space', a.address);
    if (!IP_TYPES.has(type)) return { type, address: a.address };
    const ip = canonicalIP(a.address);
    if (ip === undefined) problem(`${at}.address`, `${type} must be an IP address`, a.address);
    return { type, address: ip };
  });
}

function checkPodCIDRs(v: unknown): string[] {
  if (!Array.isArray(v)) problem('podCIDRs', 'must be a list', v);
  return v.map((c: unknown, i) => {
    const r = canonicalCIDR(c as string);
    if ('problem' in r) problem(`podCIDRs[${i}]`, r.problem, c);
    return r.cidr;
  });
}

function checkDetails(v: unknown): PodCIDRDetails {
  if (!isRecord(v)) problem('podCIDRDetails', 'must be an object', v);
  const out: PodCIDRDetails = {};
  if (v.notes !== undefined) {
    if (!Array.isArray(v.notes) || v.notes.some((n) => typeof n !== 'string')) problem('podCIDRDetails.notes', 'must be a list of strings', v.notes);
    out.notes = [...(v.notes as string[])];
  }
  const missing = optionalString(v, 'missing');
  if (missing !== undefined) out.missing = missing;
  if (v.exclusive !== undefined) {
    if (typeof v.exclusive !== 'boolean') problem('podCIDRDetails.exclusive', 'must be true or false', v.exclusive);
    out.exclusive = v.exclusive;
  }
  if (v.request !== undefined) {
    const r = v.request;
    if (!isRecord(r) || typeof r.target !== 'string' || typeof r.what !== 'string') problem('podCIDRDetails.request', 'must be {target, what} (strings)', r);
    out.request = { target: r.target, what: r.what };
  }
  return out;
}

/** Labels without the reserved ones (each named in `notes`); a value that is not a string is a problem. */
function checkLabels(v: unknown, node: string, notes: string[]): Record<string, string> {
  if (!isRecord(v)) problem('labels', 'must be an object of strings', v);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(v)) {
    if (typeof value !== 'string') problem(`labels[${JSON.stringify(key)}]`, 'must be a string', value);
    if (isReservedLabelKey(key)) {
      notes.push(`node ${node}: label ${JSON.stringify(key)} dropped: the kubernetes.io and k8s.io namespaces are not the cloud's`);
      continue;
    }
    out[key] = value;
  }
  return out;
}

/** A found InstanceMetadata, copied field by field (nothing of the adapter's object is kept). */
export function checkMetadata(value: unknown, node: string, notes: string[]): InstanceMetadata {
  if (!isRecord(value)) problem('value', 'must be an object', value);
  if (typeof value.providerID !== 'string') problem('providerID', 'must be a string', value.providerID);
  const out: InstanceMetadata = { providerID: value.providerID, addresses: checkAddresses(value.addresses) };
  for (const key of ['instanceType', 'zone', 'region'] as const) {
    const s = optionalString(value, key);
    if (s !== undefined) out[key] = s;
  }
  if (value.podCIDRs !== undefined) out.podCIDRs = checkPodCIDRs(value.podCIDRs);
  if (value.podCIDRDetails !== undefined) out.podCIDRDetails = checkDetails(value.podCIDRDetails);
  if (value.labels !== undefined) out.labels = checkLabels(value.labels, node, notes);
  return out;
}

function checkBoolean(value: unknown): boolean {
  if (typeof value !== 'boolean') problem('value', 'must be true or false', value);
  return value;
}

function errorOf(e: unknown): Error {
  return e instanceof Error ? e : new Error(typeof e === 'string' ? e : `an error that is not an Error (${showValue(e)})`);
}

/** One outcome, checked; anything wrong with it makes it a retryable error that says what. */
function checkOutcome<T>(provider: string, node: string, answer: unknown, value: (v: unknown, node: string, notes: string[]) => T, notes: string[]): InstanceResult<T> {
  const bad = (why: string): InstanceResult<T> => ({ kind: 'error', error: new Error(`provider ${provider} answered badly for node ${node}: ${why}`), retryable: true });
  if (answer === undefined) return { kind: 'error', error: new Error(`provider ${provider} gave no answer for node ${node}`), retryable: true };
  if (!isRecord(answer)) return bad(`the answer must be an object {kind, ...} (value ${showValue(answer)})`);
  switch (answer.kind) {
    case 'found':
      try {
        return { kind: 'found', value: value(answer.value, node, notes) };
      } catch (err) {
        if (err instanceof AnswerProblem) return bad(err.message);
        throw err;
      }
    case 'notFound':
      if (answer.reason !== undefined && typeof answer.reason !== 'string') return bad(`reason: must be a string (value ${showValue(answer.reason)})`);
      return answer.reason === undefined ? { kind: 'notFound' } : { kind: 'notFound', reason: answer.reason };
    case 'error':
      // Whatever the adapter said about retrying: an error is never final, and never "not found".
      return { kind: 'error', error: errorOf(answer.error), retryable: true };
    default:
      return bad(`kind: must be found, notFound or error (value ${showValue(answer.kind)})`);
  }
}

function checkAll<T>(provider: string, asked: readonly NodeRef[], answers: unknown, value: (v: unknown, node: string, notes: string[]) => T): CheckedAnswers<T> {
  const results = new Map<string, InstanceResult<T>>();
  const notes: string[] = [];
  if (!(answers instanceof Map)) {
    // The call's failure, not any node's: one BatchError for all, which the controllers split.
    const error = new BatchError(`provider ${provider} answered with ${showValue(answers)}, not a Map of node name to outcome`);
    for (const { name } of asked) results.set(name, { kind: 'error', error, retryable: true });
    notes.push(error.message);
    return { results, notes };
  }
  for (const { name } of asked) {
    if (!results.has(name)) results.set(name, checkOutcome(provider, name, answers.get(name), value, notes));
  }
  const extra = [...answers.keys()].filter((k) => typeof k !== 'string' || !results.has(k));
  if (extra.length > 0) notes.push(`answers for ${extra.length} node(s) not asked about were dropped: ${extra.slice(0, 5).map((k) => showValue(k)).join(', ')}${extra.length > 5 ? ', ...' : ''}`);
  return { results, notes };
}

/** instancesMetadata's answer for `asked`, checked. */
export function checkMetadataAnswers(provider: string, asked: readonly NodeRef[], answers: unknown): CheckedAnswers<InstanceMetadata> {
  return checkAll(provider, asked, answers, checkMetadata);
}

/** instancesExist's or instancesShutdown's answer for `asked`, checked. */
export function checkBooleanAnswers(provider: string, asked: readonly NodeRef[], answers: unknown): CheckedAnswers<boolean> {
  return checkAll(provider, asked, answers, checkBoolean);
}
