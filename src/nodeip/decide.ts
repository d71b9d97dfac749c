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
import { parseNodeIPAnnotation } from './annotation.js';
import { NodeIPError } from './errors.js';
import type { AddressExclusion, ExcludedAddress } from './exclude.js';
import { parseIPSloppy } from './ip.js';
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
  /** --node-address-exclude-cidrs: cloud addresses inside these are taken out first (absent: none). */
  exclude?: AddressExclusion;
  /**
   * Why the cloud, as configured, reports no address of a family (the aws provider without ipv6
   * in nodeIPFamilies): added to the refusal of a node IP of a family the cloud's list lacks.
   */
  familyHint?: FamilyHint;
}

/** The provider's explanation for a family it does not report, if it has one. */
export type FamilyHint = (family: 'IPv4' | 'IPv6') => string | undefined;

export type NodeAddressDecision =
  /** The cloud reported no addresses (and no annotation stands in the way): status.addresses is left alone. */
  | { kind: 'noCloudAddresses' }
  /**
   * The annotation cannot be parsed or satisfied: `error` is Kubernetes' wording (or, for an
   * excluded address, ours); `hint` says why the cloud's list lacks the IP's family, when it does.
   */
  | { kind: 'invalid'; annotation: string; error: string; hint?: string }
  /**
   * The addresses to set. `considered` is the list the annotation selected from (the cloud's,
   * then any mirrored Hostname); `mirrored` holds the positions in it that came from the node.
   */
  | { kind: 'ok'; addresses: NodeAddress[]; explanation: NodeAddressExplanation; considered: NodeAddress[]; mirrored: ReadonlySet<number>; excluded: ExcludedAddress[] };

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

function invalid(annotation: string, err: unknown, cloud: readonly NodeAddress[], familyHint: FamilyHint | undefined): NodeAddressDecision {
  if (!(err instanceof NodeIPError)) throw err;
  const hint = missingFamilyNote(err.unmatchedIP, cloud, familyHint);
  return { kind: 'invalid', annotation, error: err.message, ...(hint !== undefined ? { hint } : {}) };
}

/**
 * When a node IP matched nothing because the cloud reported no address of its family at all,
 * say so, with the provider's reason if it has one: the classic trap is an IPv6 annotation on
 * aws with the default nodeIPFamilies [ipv4] (cloud-provider-aws#638).
 */
function missingFamilyNote(ip: string | undefined, cloud: readonly NodeAddress[], familyHint: FamilyHint | undefined): string | undefined {
  const parsed = ip === undefined ? undefined : parseIPSloppy(ip);
  if (!parsed) return undefined;
  const family = parsed.family === 4 ? 'IPv4' : 'IPv6';
  const families = new Set(cloud.map((a) => parseIPSloppy(a.address)?.family));
  // Only when the cloud did report IPs, all of the other family: an empty list says nothing of families.
  if (families.has(parsed.family) || !families.has(parsed.family === 4 ? 6 : 4)) return undefined;
  const hint = familyHint?.(family);
  return `the cloud reported no ${family} address${hint ? `; ${hint}` : ''}`;
}

/** An annotation that names an excluded address is refused, never silently satisfied from another network. */
function excludedNodeIP(annotation: string, exclude: AddressExclusion, allowDualStack: boolean): NodeIPError | undefined {
  let ips: string[];
  try {
    ips = parseNodeIPAnnotation(annotation, { allowDualStack });
  } catch {
    return undefined; // the selection below reports the parse error in Kubernetes' words
  }
  for (const ip of ips) {
    const cidr = exclude.cidrOf(ip);
    if (cidr !== undefined) return new NodeIPError(`node IP ${ip} is inside ${cidr}, which --node-address-exclude-cidrs excludes`);
  }
  return undefined;
}

export function decideNodeAddresses(input: NodeAddressInputs, phase: NodeAddressPhase): NodeAddressDecision {
  const { annotation, allowDualStack, familyHint } = input;
  // Excluded networks go first: what follows is Kubernetes' selection over the rest.
  const { kept: cloudAddresses, excluded } = input.exclude ? input.exclude.split(input.cloudAddresses) : { kept: input.cloudAddresses, excluded: [] };
  if (annotation !== undefined && input.exclude) {
    const refused = excludedNodeIP(annotation, input.exclude, allowDualStack);
    if (refused) return invalid(annotation, refused, cloudAddresses, undefined);
  }
  const { considered, mirrored } = withKubeletHostnames(cloudAddresses, input.nodeAddresses);
  // Checked against the cloud's addresses alone: the kubelet's Hostname is no proof that the
  // cloud knows the node IP, and an empty list satisfies no annotation. When no Hostname was
  // mirrored, the selection below reads that very list and fails the same way: one reading.
  if (phase === 'initialize' && annotation !== undefined && (cloudAddresses.length === 0 || mirrored.size > 0)) {
    try {
      explainNodeAddresses(annotation, cloudAddresses, { allowDualStack });
    } catch (err) {
      return invalid(annotation, err, cloudAddresses, familyHint);
    }
  }
  if (cloudAddresses.length === 0) return { kind: 'noCloudAddresses' };
  let explanation: NodeAddressExplanation;
  try {
    explanation = explainNodeAddresses(annotation, considered, { allowDualStack });
  } catch (err) {
    if (annotation === undefined) throw err;
    return invalid(annotation, err, cloudAddresses, familyHint);
  }
  const addresses = explanation.addresses.map(({ type, address }) => ({ type, address }));
  return { kind: 'ok', addresses, explanation, considered, mirrored, excluded };
}
