// The suite's one core/v1 Node builder: nodes as the API server would return them (makeNode), or
// as a client sends them to be created (newNode), plus the KEP-3705 address lists and metadata.
import type { InstanceMetadata } from '../../providers/types.js';
import type { NodeAddress } from '../../src/model/node-address.js';
import { PROVIDED_NODE_IP_ANNOTATION, UNINITIALIZED_TAINT_KEY, type NodeObject, type Taint } from '../../src/model/node.js';

export const UNINITIALIZED: Taint = { key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' };

export interface MakeNodeOptions {
  name?: string;
  resourceVersion?: string;
  /** The provided-node-ip annotation; `null` leaves the key out. */
  nodeIP?: string | null;
  tainted?: boolean;
  taints?: Taint[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  providerID?: string;
  podCIDRs?: string[];
  addresses?: NodeAddress[];
  /** The Ready condition's status; undefined leaves the condition out. */
  ready?: 'True' | 'False' | 'Unknown';
  uid?: string;
  /** metadata.creationTimestamp (RFC 3339); undefined leaves it out. */
  creationTimestamp?: string;
}

export function makeNode(o: MakeNodeOptions = {}): NodeObject {
  const annotations: Record<string, string> = { ...o.annotations };
  if (o.nodeIP !== undefined && o.nodeIP !== null) annotations[PROVIDED_NODE_IP_ANNOTATION] = o.nodeIP;
  const taints = [...(o.taints ?? []), ...(o.tainted === false ? [] : [UNINITIALIZED])];
  const node: NodeObject = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: o.name ?? 'node-a', resourceVersion: o.resourceVersion ?? '7', labels: { ...o.labels }, annotations },
    spec: { taints },
    status: { addresses: o.addresses ?? [{ type: 'Hostname', address: o.name ?? 'node-a' }] },
  };
  if (o.providerID !== undefined) node.spec!.providerID = o.providerID;
  if (o.uid !== undefined) node.metadata.uid = o.uid;
  if (o.creationTimestamp !== undefined) node.metadata.creationTimestamp = o.creationTimestamp;
  if (o.ready !== undefined) node.status!.conditions = [{ type: 'Ready', status: o.ready, reason: o.ready === 'True' ? 'KubeletReady' : 'NodeStatusUnknown' }];
  if (o.podCIDRs) {
    node.spec!.podCIDR = o.podCIDRs[0];
    node.spec!.podCIDRs = o.podCIDRs;
  }
  return node;
}

/** A Node as a client (kubelet) sends it to be created: no server-set resourceVersion. */
export function newNode(o: MakeNodeOptions = {}): NodeObject {
  const node = makeNode(o);
  delete node.metadata.resourceVersion;
  return node;
}

export const ip = (address: string, type: NodeAddress['type'] = 'InternalIP'): NodeAddress => ({ type, address });

/** The KEP-3705 example: the cloud assigned 1.2.3.4, 5.6.7.8, abcd::1234 and abcd::5678, in that order. */
export const KEP_DUAL_STACK: NodeAddress[] = [ip('1.2.3.4'), ip('5.6.7.8'), ip('abcd::1234'), ip('abcd::5678')];
export const KEP_IPV4_ONLY: NodeAddress[] = [ip('1.2.3.4'), ip('5.6.7.8')];

export function makeMetadata(o: Partial<InstanceMetadata> = {}): InstanceMetadata {
  return { providerID: 'static://node-a', addresses: KEP_DUAL_STACK, ...o };
}
