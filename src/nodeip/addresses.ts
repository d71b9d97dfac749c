// Selection of node.status.addresses from the cloud's list and the provided-node-ip annotation
// (KEP-3705). The explain function is the single implementation; the plain functions project it.
import { parseNodeIPAnnotation } from './annotation.js';
import { NodeIPError } from './errors.js';
import { goQuote } from './go-text.js';
import { isUnspecifiedIP, parseIPSloppy } from './ip.js';
import { describeStack, type StackName } from './stack.js';
import type { NodeAddress, NodeAddressType } from '../model/node-address.js';

export type KeptReasonCode = 'matched-node-ip' | 'type-not-claimed' | 'no-node-ip';

export interface ExplainedAddress extends NodeAddress {
  /** Position of this entry in the cloud list given to the explain function. */
  cloudIndex: number;
  code: KeptReasonCode;
  /** The node IP this entry matched (code "matched-node-ip"). */
  nodeIP?: string;
  reason: string;
}

export interface DroppedAddress extends NodeAddress {
  cloudIndex: number;
  code: 'type-claimed';
  /** The node IPs that claimed this entry's type. */
  claimedBy: string[];
  reason: string;
}

export interface NodeAddressExplanation {
  /** The raw annotation value, undefined when the node has none. */
  annotation: string | undefined;
  /** Canonical node IPs parsed from the annotation, in its order. */
  nodeIPs: string[];
  addresses: ExplainedAddress[];
  dropped: DroppedAddress[];
  stack: StackName;
}

const ORDINALS = ['first', 'second'];

/**
 * Explains how the cloud-controller-manager builds a node's addresses: which cloud addresses are
 * kept and why, which are dropped and why. `annotation` undefined means the node has no
 * provided-node-ip annotation, so the cloud list is used as is. Throws NodeIPError on a bad
 * annotation or a node IP that no cloud address carries (the node then stays tainted).
 */
export function explainNodeAddresses(
  annotation: string | undefined,
  cloudAddresses: readonly NodeAddress[],
  options: { allowDualStack: boolean },
): NodeAddressExplanation {
  if (annotation === undefined) {
    const addresses = cloudAddresses.map((a, cloudIndex): ExplainedAddress => ({
      type: a.type,
      address: a.address,
      cloudIndex,
      code: 'no-node-ip',
      reason: 'kept: no node IP annotation, the cloud list is used as is',
    }));
    return { annotation, nodeIPs: [], addresses, dropped: [], stack: describeStack(addresses) };
  }

  let nodeIPs: string[];
  try {
    nodeIPs = parseNodeIPAnnotation(annotation, options);
  } catch (err) {
    throw new NodeIPError(`failed to parse node IP ${goQuote(annotation)}: ${(err as Error).message}`);
  }

  // Parse each cloud address once; entries that are not IPs (Hostname, DNS names) never match.
  const cloudIPs = cloudAddresses.map((a) => parseIPSloppy(a.address)?.canonical);
  const addresses: ExplainedAddress[] = [];
  const claimedBy = new Map<NodeAddressType, string[]>();
  const used = new Set<number>();
  nodeIPs.forEach((nodeIP, position) => {
    let matched = false;
    cloudAddresses.forEach((a, cloudIndex) => {
      if (cloudIPs[cloudIndex] !== nodeIP) return;
      matched = true;
      used.add(cloudIndex);
      const owners = claimedBy.get(a.type) ?? [];
      if (!owners.includes(nodeIP)) owners.push(nodeIP);
      claimedBy.set(a.type, owners);
      const which = nodeIPs.length > 1 ? ` (${ORDINALS[position]} in the annotation)` : '';
      addresses.push({ type: a.type, address: a.address, cloudIndex, code: 'matched-node-ip', nodeIP, reason: `matches node IP ${nodeIP}${which}` });
    });
    if (!matched) throw new NodeIPError(`failed to get node address from cloud provider that matches ip: ${nodeIP}`, nodeIP);
  });

  const dropped: DroppedAddress[] = [];
  cloudAddresses.forEach((a, cloudIndex) => {
    if (used.has(cloudIndex)) return;
    const owners = claimedBy.get(a.type);
    if (owners) {
      const who = owners.length > 1 ? `node IPs ${owners.join(' and ')}` : `node IP ${owners[0]}`;
      dropped.push({
        type: a.type,
        address: a.address,
        cloudIndex,
        code: 'type-claimed',
        claimedBy: [...owners],
        reason: `dropped: type ${a.type} is claimed by ${who}, and this address is not a node IP`,
      });
    } else {
      addresses.push({
        type: a.type,
        address: a.address,
        cloudIndex,
        code: 'type-not-claimed',
        reason: `kept: type ${a.type} is not claimed by any node IP`,
      });
    }
  });
  return { annotation, nodeIPs, addresses, dropped, stack: describeStack(addresses) };
}

/**
 * The addresses an external cloud provider's node controller sets for a node with the
 * provided-node-ip annotation `providedNodeIP`: the cloud addresses equal to each node IP (in
 * annotation order) first, then every cloud address of a type that no node IP matched.
 */
export function nodeAddressesFromNodeIP(
  providedNodeIP: string,
  cloudAddresses: NodeAddress[],
  options: { allowDualStack: boolean },
): NodeAddress[] {
  return explainNodeAddresses(providedNodeIP, cloudAddresses, options).addresses.map(({ type, address }) => ({ type, address }));
}

/**
 * The legacy (in-tree provider) selection from a single node IP: undefined keeps the cloud list;
 * 0.0.0.0 or :: moves non-IP entries and the matching family first, then the other family, each
 * in cloud order; a specific IP selects as nodeAddressesFromNodeIP does.
 */
export function nodeAddressesFromNodeIPLegacy(nodeIP: string | undefined, cloudAddresses: NodeAddress[]): NodeAddress[] {
  if (nodeIP === undefined) return cloudAddresses.map(({ type, address }) => ({ type, address }));
  const ip = parseIPSloppy(nodeIP);
  if (!ip) throw new NodeIPError(`failed to parse node IP ${goQuote(nodeIP)}: could not parse ${goQuote(nodeIP)}`);
  if (!isUnspecifiedIP(ip)) {
    return nodeAddressesFromNodeIP(ip.canonical, cloudAddresses, { allowDualStack: false });
  }
  const preferred: NodeAddress[] = [];
  const other: NodeAddress[] = [];
  for (const { type, address } of cloudAddresses) {
    const family = parseIPSloppy(address)?.family;
    (family === undefined || family === ip.family ? preferred : other).push({ type, address });
  }
  return [...preferred, ...other];
}
