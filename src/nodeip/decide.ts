// The one decision about a node's addresses that the cloud node controller acts on and `explain`
// prints, so the two cannot disagree. It follows the order Kubernetes' cloud node controller
// uses:
//  * initialising a tainted node: the provided-node-ip annotation (when its key exists) must be
//    satisfiable from the cloud's own list, before the kubelet's Hostname is added and even when
//    that list is empty; otherwise the node stays tainted. Then, when the cloud reported
//    addresses, the Hostname is added and the annotation selects from the result;
//  * refreshing an initialised node: a cloud that reports nothing changes nothing; otherwise the
//    same selection, and an annotation that no longer matches only leaves the addresses alone.
import { explainNodeAddresses, type NodeAddressExplanation } from './addresses.js';
import { NodeIPError } from './errors.js';
import type { NodeAddress } from '../model/node-address.js';

export interface NodeAddressInputs {
  /** The provided-node-ip annotation's value; undefined when the key is absent (empty counts as present). */
  annotation: string | undefined;
  /** The cloud's addresses, in its order. */
  cloudAddresses: readonly NodeAddress[];
  /** The node's current status.addresses (its Hostname entries are what kubelet reported). */
  nodeAddresses: readonly NodeAddress[];
  /** The CloudDualStackNodeIPs gate. */
  allowDualStack: boolean;
}

export type NodeAddressDecision =
  /** The cloud reported no addresses (and no annotation stands in the way): status.addresses is left alone. */
  | { kind: 'noCloudAddresses' }
  /** The annotation cannot be parsed or satisfied: `error` is Kubernetes' wording. */
  | { kind: 'invalid'; annotation: string; error: string }
  /**
   * The addresses to set. `considered` is the list the annotation selected from (the cloud's,
   * then any mirrored Hostname); `mirrored` holds the positions in it that came from the node.
   */
  | { kind: 'ok'; addresses: NodeAddress[]; explanation: NodeAddressExplanation; considered: NodeAddress[]; mirrored: ReadonlySet<number> };

export type NodeAddressPhase = 'initialize' | 'refresh';

/** The cloud's list plus the kubelet's Hostname entries when the cloud reports no Hostname. */
function withKubeletHostnames(cloud: readonly NodeAddress[], node: readonly NodeAddress[]): { considered: NodeAddress[]; mirrored: Set<number> } {
  const considered = cloud.map(({ type, address }) => ({ type, address }));
  const mirrored = new Set<number>();
  if (!considered.some((a) => a.type === 'Hostname')) {
    for (const a of node) {
      if (a.type !== 'Hostname') continue;
      mirrored.add(considered.length);
      considered.push({ type: a.type, address: a.address });
    }
  }
  return { considered, mirrored };
}

function invalid(annotation: string, err: unknown): NodeAddressDecision {
  if (!(err instanceof NodeIPError)) throw err;
  return { kind: 'invalid', annotation, error: err.message };
}

export function decideNodeAddresses(input: NodeAddressInputs, phase: NodeAddressPhase): NodeAddressDecision {
  const { annotation, cloudAddresses, allowDualStack } = input;
  const { considered, mirrored } = withKubeletHostnames(cloudAddresses, input.nodeAddresses);
  // Checked against the cloud's addresses alone: the kubelet's Hostname is no proof that the
  // cloud knows the node IP, and an empty list satisfies no annotation. When no Hostname was
  // mirrored, the selection below reads that very list and fails the same way: one reading.
  if (phase === 'initialize' && annotation !== undefined && (cloudAddresses.length === 0 || mirrored.size > 0)) {
    try {
      explainNodeAddresses(annotation, cloudAddresses, { allowDualStack });
    } catch (err) {
      return invalid(annotation, err);
    }
  }
  if (cloudAddresses.length === 0) return { kind: 'noCloudAddresses' };
  let explanation: NodeAddressExplanation;
  try {
    explanation = explainNodeAddresses(annotation, considered, { allowDualStack });
  } catch (err) {
    if (annotation === undefined) throw err;
    return invalid(annotation, err);
  }
  const addresses = explanation.addresses.map(({ type, address }) => ({ type, address }));
  return { kind: 'ok', addresses, explanation, considered, mirrored };
}
