// The Node model: the parts of a core/v1 Node that this project reads and writes, as plain JSON
// (what the API server sends), with the names and pure accessors every layer shares. It sits at
// the bottom of the import layers, so the controllers, IPAM, the audit and the CLI read nodes the
// same way without importing one another.
import type { NodeAddress } from './node-address.js';

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface NodeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  spec?: {
    providerID?: string;
    podCIDR?: string;
    podCIDRs?: string[];
    taints?: Taint[];
    [key: string]: unknown;
  };
  status?: {
    addresses?: NodeAddress[];
    [key: string]: unknown;
  };
}

/** The taint the kubelet sets with --cloud-provider=external until a cloud controller initialises the node. */
export const UNINITIALIZED_TAINT_KEY = 'node.cloudprovider.kubernetes.io/uninitialized';

/** Where the kubelet puts its --node-ip value (KEP-3705: one IP or a dual-stack pair). */
export const PROVIDED_NODE_IP_ANNOTATION = 'alpha.kubernetes.io/provided-node-ip';

/**
 * Written in the same PATCH as `spec.podCIDRs`, by the node IPAM loop or by the cloud node
 * controller's initialising write: the pool the blocks came from. A node with pod CIDRs and
 * without it got them from some other writer (`audit` reports it).
 */
export const POD_CIDR_POOL_ANNOTATION = 'ipam.node-address-ccm.io/pool';
/** The pool annotation's value for ranges the cloud provider owns (CloudAllocator). */
export const CLOUD_POOL = 'cloud';
/**
 * CloudAllocator's durable record that it asked the cloud for a node's pod ranges (AWS:
 * AssignIpv6Addresses), written with a resourceVersion-guarded PATCH before the call, so that no
 * process, this one after a restart or a new leader, ever asks twice.
 */
export const CLOUD_RANGE_REQUEST_ANNOTATION = 'ipam.node-address-ccm.io/cloud-range-request';

export const LABEL_INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
export const LABEL_INSTANCE_TYPE_BETA = 'beta.kubernetes.io/instance-type';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
export const LABEL_ZONE_BETA = 'failure-domain.beta.kubernetes.io/zone';
export const LABEL_REGION = 'topology.kubernetes.io/region';
export const LABEL_REGION_BETA = 'failure-domain.beta.kubernetes.io/region';

/** Whether the node still carries the cloud-provider "uninitialized" taint (matched by key). */
export function hasUninitializedTaint(node: NodeObject): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY);
}

/** The node's taints without the uninitialized one. */
export function taintsWithoutUninitialized(node: NodeObject): Taint[] {
  return (node.spec?.taints ?? []).filter((t) => t.key !== UNINITIALIZED_TAINT_KEY);
}

/** The provided-node-ip annotation: `undefined` when the key is absent; an empty string counts as present. */
export function providedNodeIP(node: NodeObject): string | undefined {
  const annotations = node.metadata.annotations;
  if (!annotations || !Object.prototype.hasOwnProperty.call(annotations, PROVIDED_NODE_IP_ANNOTATION)) return undefined;
  return annotations[PROVIDED_NODE_IP_ANNOTATION] ?? '';
}

/** spec.podCIDRs, falling back to the older single spec.podCIDR. */
export function nodePodCIDRs(node: { spec?: { podCIDR?: string; podCIDRs?: string[] } }): string[] {
  const list = node.spec?.podCIDRs;
  if (list && list.length > 0) return [...list];
  return node.spec?.podCIDR ? [node.spec.podCIDR] : [];
}

/** Ordered comparison: the first address of each family is the node's primary IP, so order matters. */
export function sameAddresses(a: readonly NodeAddress[] | undefined, b: readonly NodeAddress[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  return x.every((addr, i) => addr.type === y[i]?.type && addr.address === y[i]?.address);
}

/**
 * The same addresses, each as often, in any order. With the same host IPs (src/nodeip/stack.ts),
 * what the address refresh leaves unwritten: a reordering that changes neither is invisible to
 * every consumer of the list.
 */
export function sameAddressSet(a: readonly NodeAddress[] | undefined, b: readonly NodeAddress[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  // A node's list is a handful of entries: each entry of x takes an equal, not yet taken entry of
  // y, with the taken ones in a bit mask. No Map or key strings: the address refresh asks this of
  // every node of every round.
  if (x.length <= 31) {
    let taken = 0;
    for (const p of x) {
      let j = 0;
      while (j < y.length && ((taken >>> j) & 1 || y[j]!.type !== p.type || y[j]!.address !== p.address)) j++;
      if (j === y.length) return false;
      taken |= 1 << j;
    }
    return true;
  }
  const counts = new Map<string, number>();
  for (const { type, address } of x) {
    const key = `${type}\u0000${address}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  for (const { type, address } of y) {
    const key = `${type}\u0000${address}`;
    const n = counts.get(key) ?? 0;
    if (n === 0) return false;
    counts.set(key, n - 1);
  }
  return true;
}
