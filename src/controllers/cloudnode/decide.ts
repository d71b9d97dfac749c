// Pure decisions of the cloud node controller: given a node, what the cloud says about it and the
// CloudDualStackNodeIPs gate, what to write (or why the node stays tainted). No I/O here; the
// controller turns a decision into at most two API writes and one event.
import type { InstanceMetadata } from '../../../providers/types.js';
import { POD_CIDR_POOL_ANNOTATION } from '../../model/node.js';
import { decideNodeAddresses, goQuote, sameHostIPs, type NodeAddressInputs, type NodeAddressPhase } from '../../nodeip/index.js';
import type { NodeAddress } from '../../model/node-address.js';
import {
  LABEL_INSTANCE_TYPE, LABEL_INSTANCE_TYPE_BETA, LABEL_REGION, LABEL_REGION_BETA, LABEL_ZONE, LABEL_ZONE_BETA,
  providedNodeIP, sameAddresses, sameAddressSet, taintsWithoutUninitialized,
  type NodeObject, type Taint,
} from '../../model/node.js';
import { isReservedLabelKey, labelKeyProblem, labelValueProblem } from '../labels.js';

/** Event reasons the cloud node controller emits. */
export const EventReason = {
  Synced: 'Synced',
  /** The provided-node-ip annotation cannot be parsed or satisfied from the cloud's addresses. */
  InvalidNodeIP: 'ProvidedNodeIPInvalid',
  /** The cloud does not know the instance behind the node. */
  InstanceNotFound: 'InstanceNotFound',
  /** The cloud could not answer now. */
  CloudError: 'CloudProviderError',
  /** A write to the API server failed. */
  UpdateFailed: 'NodeUpdateFailed',
  /** Neither the node nor the cloud has a providerID: the node stays tainted. */
  MissingProviderID: 'ProviderIDMissing',
  /** A cloud label the API server would refuse was left out; the node is initialised without it. */
  InvalidCloudLabel: 'CloudLabelInvalid',
} as const;

export const SYNCED_MESSAGE = 'Node synced successfully';

/** Outcome of the address computation for one node. */
export type AddressDecision =
  /** The provider returned no addresses (and no annotation blocks): leave status.addresses alone. */
  | { kind: 'noCloudAddresses' }
  /** The provided-node-ip annotation cannot be parsed or satisfied. */
  | { kind: 'invalid'; annotation: string; message: string }
  | { kind: 'ok'; addresses: NodeAddress[]; changed: boolean };

/** The message of the ProvidedNodeIPInvalid event and log line (values quoted as Go's %q). */
export function invalidNodeIPMessage(annotation: string, error: string, hint?: string): string {
  return `provided node IP ${goQuote(annotation)} is not usable: ${error}${hint !== undefined ? ` (${hint})` : ''}`;
}

/**
 * How addresses are chosen besides the node and the cloud's answer: the CloudDualStackNodeIPs
 * gate, --node-address-exclude-cidrs, and the provider's hint for a family it does not report.
 */
export type AddressPolicy = Pick<NodeAddressInputs, 'allowDualStack' | 'exclude' | 'familyHint'>;

/**
 * The node's addresses as decideNodeAddresses (src/nodeip/decide.ts, which `explain` uses too)
 * decides them, with whether they differ from the node's and the event text of a refusal.
 */
function addressDecision(
  node: NodeObject,
  cloudAddresses: readonly NodeAddress[],
  policy: AddressPolicy,
  phase: NodeAddressPhase = 'initialize',
): AddressDecision {
  // Each field named, not `{ ...policy, … }`: Node 20's V8, once this code is optimised, gives
  // every object made by a spread and then extended a hidden class of its own, built in old space:
  // ~1 µs a call and old-space garbage on every node of every refresh round (docs/benchmarks.md,
  // "Object spread on Node 20").
  const inputs: NodeAddressInputs = {
    allowDualStack: policy.allowDualStack, exclude: policy.exclude, familyHint: policy.familyHint,
    annotation: providedNodeIP(node), cloudAddresses, nodeAddresses: node.status?.addresses ?? [],
  };
  const decision = decideNodeAddresses(inputs, phase);
  switch (decision.kind) {
    case 'noCloudAddresses':
      return decision;
    case 'invalid':
      return { kind: 'invalid', annotation: decision.annotation, message: invalidNodeIPMessage(decision.annotation, decision.error, decision.hint) };
    case 'ok': {
      // Initialising writes the list in its KEP-3705 order. A refresh rewrites it when the node
      // would otherwise not have exactly the decided addresses, or not the decided list's host IPs
      // (primary and secondary, as Kubernetes reads them): an annotation that now orders the
      // families differently moves the primary IP. Any other reordering changes nothing a
      // consumer reads, and is not written. A cloud that shuffles its list is the adapter's to
      // order stably (AWS: device index), not this check's to hide.
      const current = node.status?.addresses ?? [];
      const changed = phase === 'initialize'
        ? !sameAddresses(current, decision.addresses)
        : !sameAddressSet(current, decision.addresses) || !sameHostIPs(current, decision.addresses);
      return { kind: 'ok', addresses: decision.addresses, changed };
    }
  }
}

export interface SkippedLabel {
  key: string;
  reason: string;
}

/** A cloud label the API server would refuse (bad key or value): left out, with a Warning event. */
export interface RejectedLabel {
  key: string;
  value: string;
  reason: string;
}

/** The CloudLabelInvalid event message for one label. */
export function rejectedLabelMessage(label: RejectedLabel): string {
  return `cloud label ${goQuote(label.key)}=${goQuote(label.value)} not applied (the API server would refuse it): ${label.reason}; the node is initialised without it`;
}

/** The ProviderIDMissing event message. */
export function missingProviderIDMessage(nodeName: string): string {
  return `cloud provider does not set node provider ID for node ${goQuote(nodeName)}; the node stays tainted until the provider reports one`;
}

/** What to write to initialise a tainted node. */
export interface InitWrite {
  kind: 'initialize';
  /** Replacement for the whole status.addresses list; undefined when unchanged or the cloud gave none. */
  addresses?: NodeAddress[];
  /** spec.providerID to set (only when the node has none). */
  providerID?: string;
  /** Labels to add or set. */
  labels: Record<string, string>;
  /** The node's labels after this write: pod CIDRs are chosen against these. */
  labelsAfter: Record<string, string>;
  /** The node's taints after this write (the uninitialized taint removed). */
  taints: Taint[];
  /** Cloud labels left out by rule (reserved key, already on the node), with the reason (for the log). */
  skippedLabels: SkippedLabel[];
  /** Cloud labels left out because the API server would refuse them (a Warning event each). */
  rejectedLabels: RejectedLabel[];
}

/** The node stays tainted: no write, a Warning event with this reason and message, retry later. */
export interface InitBlocked {
  kind: 'blocked';
  reason: string;
  message: string;
}

export type InitDecision = InitWrite | InitBlocked;

/** Plans the initialisation of a node that carries the uninitialized taint. */
export function decideInitialization(node: NodeObject, metadata: InstanceMetadata, policy: AddressPolicy): InitDecision {
  // Kubernetes checks the providerID first (kubernetes#123024): spec.providerID is set only here,
  // so a node untainted without one would never get it.
  if (!node.spec?.providerID && !metadata.providerID) {
    return { kind: 'blocked', reason: EventReason.MissingProviderID, message: missingProviderIDMessage(node.metadata.name) };
  }
  const decision = addressDecision(node, metadata.addresses, policy, 'initialize');
  if (decision.kind === 'invalid') {
    return { kind: 'blocked', reason: EventReason.InvalidNodeIP, message: decision.message };
  }
  const current = node.metadata.labels ?? {};
  const labels: Record<string, string> = {};
  const skippedLabels: SkippedLabel[] = [];
  const rejectedLabels: RejectedLabel[] = [];

  const setTopology = (value: string | undefined, keys: readonly string[]): void => {
    if (value === undefined || value === '') return;
    for (const key of keys) {
      // Deliberate deviation (README): Kubernetes writes the value and the node stays tainted on
      // the API server's 422; here the label is left out, with a Warning, and the node initialised.
      const problem = labelValueProblem(key, value);
      if (problem) rejectedLabels.push({ key, value, reason: problem });
      else if (current[key] !== value) labels[key] = value;
    }
  };
  setTopology(metadata.instanceType, [LABEL_INSTANCE_TYPE, LABEL_INSTANCE_TYPE_BETA]);
  setTopology(metadata.zone, [LABEL_ZONE, LABEL_ZONE_BETA]);
  setTopology(metadata.region, [LABEL_REGION, LABEL_REGION_BETA]);

  for (const [key, value] of Object.entries(metadata.labels ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    // Reserved namespaces first, then keys already on the node: Kubernetes' order.
    if (isReservedLabelKey(key)) {
      skippedLabels.push({ key, reason: `label ${goQuote(key)} is in a reserved kubernetes.io/k8s.io namespace` });
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(current, key) || Object.prototype.hasOwnProperty.call(labels, key)) {
      skippedLabels.push({ key, reason: `label ${goQuote(key)} already exists on the node; not overwritten` });
      continue;
    }
    const problem = labelKeyProblem(key) ?? labelValueProblem(key, value);
    if (problem) {
      rejectedLabels.push({ key, value, reason: problem });
      continue;
    }
    labels[key] = value;
  }

  const write: InitWrite = {
    kind: 'initialize',
    labels,
    labelsAfter: { ...current, ...labels },
    taints: taintsWithoutUninitialized(node),
    skippedLabels,
    rejectedLabels,
  };
  if (decision.kind === 'ok' && decision.changed) write.addresses = decision.addresses;
  if (!node.spec?.providerID && metadata.providerID) write.providerID = metadata.providerID;
  return write;
}

/** What the periodic address refresh does for one initialised node. */
export type RefreshDecision =
  | { kind: 'unchanged' }
  | { kind: 'replace'; addresses: NodeAddress[] }
  /** The annotation is no longer satisfiable: a Warning event, nothing written, never re-tainted. */
  | { kind: 'warn'; reason: string; message: string };

export function decideAddressRefresh(node: NodeObject, metadata: InstanceMetadata, policy: AddressPolicy): RefreshDecision {
  const decision = addressDecision(node, metadata.addresses, policy, 'refresh');
  switch (decision.kind) {
    case 'noCloudAddresses':
      return { kind: 'unchanged' };
    case 'invalid':
      return { kind: 'warn', reason: EventReason.InvalidNodeIP, message: `addresses not updated: ${decision.message}` };
    case 'ok':
      return decision.changed ? { kind: 'replace', addresses: decision.addresses } : { kind: 'unchanged' };
  }
}

/** The metadata that makes a write land on one node only, or on nothing. */
export interface WriteGuard {
  /**
   * The node the write was planned for: a node created again under its name refuses it (422:
   * metadata.uid is immutable), so what was decided for one node never lands on another.
   */
  uid?: string;
  /** The node as read: any change since refuses the write (409). */
  resourceVersion?: string;
}

/**
 * JSON merge patch for node/status that replaces the whole address list, for the node `guard.uid`
 * only. With a resourceVersion the write applies only to the node as it was read (the annotation
 * it read still holds).
 */
export function addressesPatch(addresses: readonly NodeAddress[], guard: WriteGuard): { metadata?: WriteGuard; status: { addresses: NodeAddress[] } } {
  const metadata: WriteGuard = {};
  if (guard.uid !== undefined) metadata.uid = guard.uid;
  if (guard.resourceVersion !== undefined) metadata.resourceVersion = guard.resourceVersion;
  const status = { addresses: addresses.map((a) => ({ type: a.type, address: a.address })) };
  return Object.keys(metadata).length > 0 ? { metadata, status } : { status };
}

export interface MetaSpecPatch {
  metadata: { uid?: string; resourceVersion: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { taints: Taint[] | null; providerID?: string; podCIDR?: string; podCIDRs?: string[] };
}

/**
 * The single JSON merge patch of metadata and spec that finishes initialisation. It carries the
 * node's resourceVersion, so the API server refuses it (409) if the node changed since it was read:
 * the taint list is replaced as a whole, and that must never drop a taint added meanwhile. It
 * carries the node's UID too: the pod CIDRs in it were claimed for this node, and must never land
 * on another node created under its name (422).
 */
export function initializationPatch(node: NodeObject, write: InitWrite, podCIDRs?: readonly string[], pool?: string): MetaSpecPatch {
  const resourceVersion = node.metadata.resourceVersion;
  if (!resourceVersion) throw new Error(`node ${node.metadata.name}: metadata.resourceVersion is empty; cannot guard the write`);
  const patch: MetaSpecPatch = {
    metadata: node.metadata.uid !== undefined ? { uid: node.metadata.uid, resourceVersion } : { resourceVersion },
    spec: { taints: write.taints.length > 0 ? write.taints.map((t) => ({ ...t })) : null },
  };
  if (Object.keys(write.labels).length > 0) patch.metadata.labels = { ...write.labels };
  if (write.providerID) patch.spec.providerID = write.providerID;
  if (podCIDRs && podCIDRs.length > 0) {
    patch.spec.podCIDR = podCIDRs[0] as string;
    patch.spec.podCIDRs = [...podCIDRs];
    // The pool, in the same write: how `audit` tells this controller's blocks from others'.
    if (pool) patch.metadata.annotations = { [POD_CIDR_POOL_ANNOTATION]: pool };
  }
  return patch;
}
