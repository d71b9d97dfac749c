// Whether a provider's answer belongs to the node it was asked about, judged by the providerID
// it carries. An answer whose providerID names another instance than the node's own (compared as
// the provider tells its instances apart: CloudProvider.instanceKey), or an instance another live
// Node already has, is another machine's: nothing of it (addresses, labels, pod ranges) is
// written, and the node stays as it is with a Warning naming both. Kubernetes' cloud node
// controller takes the answer on trust (README, deliberate deviations). Pure.
import { goQuote } from '../../nodeip/index.js';
import type { NodeObject } from '../../model/node.js';

export const ProviderIDEventReason = {
  /** The answer's providerID names another instance than the node's spec.providerID. */
  Mismatch: 'ProviderIDMismatch',
  /** Another live Node already has the instance the node's (or the answer's) providerID names. */
  InUse: 'ProviderIDInUse',
} as const;

/** A live Node holding an instance: its name and its providerID as written. */
export interface InstanceHolder {
  name: string;
  providerID: string;
}

/** How the instances behind providerIDs are told apart, and who holds which. */
export interface InstanceIdentity {
  /** The instance a providerID names (the provider's instanceKey; the ID as written without one). */
  keyOf(providerID: string): string;
  /** A live Node other than `node` (by uid) that holds the instance `key`. */
  holderOf(node: NodeObject, key: string): InstanceHolder | undefined;
}

export interface ProviderIDRefusal {
  reason: (typeof ProviderIDEventReason)[keyof typeof ProviderIDEventReason];
  message: string;
}

/**
 * Why the answer for `node`, carrying `answered` (empty: the cloud reports none), is not the
 * node's own; undefined when it is. `provider` names the provider in the message.
 */
export function refuseAnswer(node: NodeObject, answered: string, provider: string, identity: InstanceIdentity): ProviderIDRefusal | undefined {
  const name = node.metadata.name;
  const own = node.spec?.providerID || undefined;
  const ownKey = own === undefined ? undefined : identity.keyOf(own);
  if (own !== undefined && answered !== '' && answered !== own && ownKey !== identity.keyOf(answered)) {
    return {
      reason: ProviderIDEventReason.Mismatch,
      message: `cloud provider ${provider} answered for node ${goQuote(name)} with providerID ${goQuote(answered)}, another instance than the node's own ${goQuote(own)}; nothing of that answer is written`,
    };
  }
  const key = ownKey ?? (answered === '' ? undefined : identity.keyOf(answered));
  if (key === undefined) return undefined;
  const other = identity.holderOf(node, key);
  if (!other) return undefined;
  const whose = own !== undefined ? `node ${goQuote(name)} has providerID ${goQuote(own)}` : `cloud provider ${provider} answered for node ${goQuote(name)} with providerID ${goQuote(answered)}`;
  return {
    reason: ProviderIDEventReason.InUse,
    message: `${whose}, the instance node ${goQuote(other.name)} already has (${goQuote(other.providerID)}); two Nodes cannot be one instance, so nothing of the answer is written`,
  };
}

/** The lifecycle controller's Warning for a not-Ready Node whose instance another Node also claims. */
export function sharedInstanceMessage(node: NodeObject, other: InstanceHolder): string {
  return `node ${goQuote(node.metadata.name)} has providerID ${goQuote(node.spec?.providerID ?? '')}, the instance node ${goQuote(other.name)} also has (${goQuote(other.providerID)}); a Node whose instance another Node claims is neither deleted nor tainted`;
}
