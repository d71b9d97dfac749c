// Label rules shared by the cloud node controller: which cloud labels may be written, and the
// beta → GA topology label copy for nodes that are already initialised.
import { goQuote } from '../nodeip/go-text.js';
import {
  LABEL_INSTANCE_TYPE, LABEL_INSTANCE_TYPE_BETA, LABEL_REGION, LABEL_REGION_BETA, LABEL_ZONE, LABEL_ZONE_BETA,
  type NodeObject,
} from '../model/node.js';
import { isReservedLabelKey } from '../model/label-keys.js';

export { isReservedLabelKey };

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key` is not a valid label key, or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `label key ${goQuote(key)}: prefix must be a DNS subdomain of at most 253 characters`;
  }
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) {
    return `label key ${goQuote(key)}: name must be 1-63 alphanumeric characters, '-', '_' or '.', starting and ending alphanumeric`;
  }
  return undefined;
}

/** Why `value` is not a valid label value for `key`, or undefined when it is. */
export function labelValueProblem(key: string, value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63 || !NAME.test(value)) {
    return `label value ${goQuote(value)}: must be at most 63 alphanumeric characters, '-', '_' or '.', starting and ending alphanumeric`;
  }
  return undefined;
}

/** Pairs of (beta, GA) label keys that the reference keeps in step on initialised nodes. */
export const BETA_TO_GA_LABELS: ReadonlyArray<readonly [beta: string, ga: string]> = [
  [LABEL_INSTANCE_TYPE_BETA, LABEL_INSTANCE_TYPE],
  [LABEL_ZONE_BETA, LABEL_ZONE],
  [LABEL_REGION_BETA, LABEL_REGION],
];

/**
 * Labels to set on an initialised node so each GA topology/instance-type label matches its beta
 * twin: copied when the GA label is missing or differs; nothing when the beta label is absent.
 */
export function betaToGALabelUpdates(node: NodeObject): Record<string, string> {
  const labels = node.metadata.labels ?? {};
  const updates: Record<string, string> = {};
  for (const [beta, ga] of BETA_TO_GA_LABELS) {
    if (!Object.prototype.hasOwnProperty.call(labels, beta)) continue;
    const value = labels[beta] as string;
    if (labels[ga] !== value) updates[ga] = value;
  }
  return updates;
}
