// The cluster of `npm run bench upstream`: N realistic tainted Nodes (src/simulation's realisticNode,
// about 12 KB of JSON each) as kubelets register them with --cloud-provider=external, and the cloud
// inventory both controllers answer from (the static provider's config; the Go harness's fake
// cloud reads the same file). Deterministic: node i is the same in every run and for both
// controllers.
//
// The cloud reports every instance dual-stack, IPv4 first as cloud-provider-aws does with
// NodeIPFamilies ipv4,ipv6: InternalIP, an ExternalIP on every other node, InternalDNS and
// Hostname (the private DNS name), then the IPv6 InternalIP. The kubelets' --node-ip (the
// alpha.kubernetes.io/provided-node-ip annotation) is, by i mod 10:
//   0-3 the IPv4 InternalIP; 4-5 none; 6 the IPv6 InternalIP; 7 "IPv4,IPv6"; 8 "IPv6,IPv4";
//   9 an IPv4 the cloud does not report (192.0.2.x): such a node can never be initialised and
//   stays tainted under either controller, so 90% of the nodes are satisfiable.
import type { NodeAddress } from '../src/model/node-address.js';
import { PROVIDED_NODE_IP_ANNOTATION, type NodeObject } from '../src/model/node.js';
import { realisticNode } from '../src/simulation/realistic-node.js';

export interface InventoryEntry {
  providerID: string;
  instanceType: string;
  zone: string;
  region: string;
  addresses: NodeAddress[];
}

export interface BenchCluster {
  /** Node objects to create, in order. */
  nodes: NodeObject[];
  /** The static provider's config: `{ nodes: { <name>: entry } }`. */
  inventory: { nodes: Record<string, InventoryEntry> };
  /** Names of the nodes a cloud node controller can initialise. */
  satisfiable: string[];
}

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

export function nodeName(i: number): string {
  return `node-${String(i).padStart(6, '0')}`;
}

/** The annotation of node i, given its cloud IPv4 and IPv6; undefined: none. */
export function annotationOf(i: number, v4: string, v6: string): string | undefined {
  switch (i % 10) {
    case 4:
    case 5:
      return undefined;
    case 6:
      return v6;
    case 7:
      return `${v4},${v6}`;
    case 8:
      return `${v6},${v4}`;
    case 9:
      return `192.0.2.${i % 250 + 1}`;
    default:
      return v4;
  }
}

export function benchCluster(count: number): BenchCluster {
  if (count > 2 ** 16) throw new Error(`bench cluster: at most 65,536 nodes (one /26 each in 100.64.0.0/10), got ${count}`);
  const nodes: NodeObject[] = [];
  const inventory: BenchCluster['inventory'] = { nodes: {} };
  const satisfiable: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = nodeName(i);
    const v4 = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const v6 = `fd00:10::${hex(i, 1)}`;
    const dns = `ip-${v4.replaceAll('.', '-')}.eu-west-1.compute.internal`;
    const addresses: NodeAddress[] = [{ type: 'InternalIP', address: v4 }];
    if (i % 2 === 0) addresses.push({ type: 'ExternalIP', address: `198.18.${(i >> 8) & 255}.${i & 255}` });
    addresses.push({ type: 'InternalDNS', address: dns }, { type: 'Hostname', address: dns }, { type: 'InternalIP', address: v6 });
    inventory.nodes[name] = { providerID: `aws:///eu-west-1${'abc'[i % 3]}/i-${hex(i, 17)}`, instanceType: 'm6i.2xlarge', zone: `eu-west-1${'abc'[i % 3]}`, region: 'eu-west-1', addresses };

    const annotation = annotationOf(i, v4, v6);
    const n = realisticNode(name, { index: i, tainted: true });
    // As a kubelet registers it: no providerID (the cloud's comes at initialisation), no
    // topology labels, its hostname as its only address, and the server's own metadata.
    delete n.metadata.resourceVersion;
    delete n.metadata.uid;
    delete n.metadata.creationTimestamp;
    delete n.metadata.managedFields;
    delete n.spec!.providerID;
    const labels = n.metadata.labels!;
    for (const k of ['node.kubernetes.io/instance-type', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/region']) delete labels[k];
    const annotations = n.metadata.annotations!;
    if (annotation === undefined) delete annotations[PROVIDED_NODE_IP_ANNOTATION];
    else annotations[PROVIDED_NODE_IP_ANNOTATION] = annotation;
    n.status!.addresses = [{ type: 'Hostname', address: name }];
    nodes.push(n);
    if (i % 10 !== 9) satisfiable.push(name);
  }
  return { nodes, inventory, satisfiable };
}
