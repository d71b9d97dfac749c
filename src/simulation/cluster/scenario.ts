// The embedded demo cluster of `npm start`: tainted nodes whose provided-node-ip annotations cover
// every KEP-3705 case, and a static cloud holding the KEP's example addresses (1.2.3.4, 5.6.7.8,
// abcd::1234, abcd::5678), varied per node so every node is distinct. Pure: no I/O.
import { stringify as toYAML } from 'yaml';
import { SIM_MAX_NODES } from './size.js';
export { SIM_CLUSTER_CIDR, SIM_SERVICE_CIDR, SIM_MAX_NODES } from './size.js';
import type { NodeAddress } from '../../model/node-address.js';
import { PROVIDED_NODE_IP_ANNOTATION, UNINITIALIZED_TAINT_KEY, type NodeObject } from '../../model/node.js';

export const SIM_ZONES = ['sim-zone-a', 'sim-zone-b', 'sim-zone-c'];
export const SIM_REGION = 'sim-region-1';

/** What one kind of node demonstrates. */
export interface SimCase {
  id: string;
  description: string;
  /** The cloud has this node (false: notFound, the node stays tainted). */
  inCloud: boolean;
  /** The cloud gives IPv6 addresses too. */
  dualStackCloud: boolean;
  /** Annotation value from the node's own addresses; undefined: no annotation. */
  annotation: ((a: SimAddresses) => string) | undefined;
  /** Whether the node is expected to end initialised. */
  expectInitialised: boolean;
}

export interface SimAddresses {
  v4a: string;
  v4b: string;
  v6a: string;
  v6b: string;
}

export const SIM_CASES: readonly SimCase[] = [
  { id: 'none', description: 'no annotation: the whole cloud list', inCloud: true, dualStackCloud: true, annotation: undefined, expectInitialised: true },
  { id: 'ipv4', description: 'single IPv4', inCloud: true, dualStackCloud: true, annotation: (a) => a.v4a, expectInitialised: true },
  { id: 'ipv6', description: 'single IPv6', inCloud: true, dualStackCloud: true, annotation: (a) => a.v6b, expectInitialised: true },
  { id: 'dual', description: 'dual-stack pair, IPv4 first', inCloud: true, dualStackCloud: true, annotation: (a) => `${a.v4a},${a.v6a}`, expectInitialised: true },
  { id: 'v6primary', description: 'dual-stack pair, IPv6 first', inCloud: true, dualStackCloud: true, annotation: (a) => `${a.v6a},${a.v4a}`, expectInitialised: true },
  { id: 'unknown-ip', description: 'an IP the cloud does not have', inCloud: true, dualStackCloud: true, annotation: () => '9.10.11.12', expectInitialised: false },
  { id: 'malformed', description: 'a malformed value', inCloud: true, dualStackCloud: true, annotation: (a) => `${a.v4a},${a.v4b}`, expectInitialised: false },
  { id: 'empty', description: 'an empty annotation', inCloud: true, dualStackCloud: true, annotation: () => '', expectInitialised: false },
  { id: 'v4cloud', description: 'IPv4-only cloud, no annotation', inCloud: true, dualStackCloud: false, annotation: undefined, expectInitialised: true },
  { id: 'v4cloud-dual', description: 'IPv4-only cloud, dual-stack pair', inCloud: true, dualStackCloud: false, annotation: (a) => `${a.v4a},${a.v6a}`, expectInitialised: false },
  { id: 'secondary', description: "the cloud's second IPv4", inCloud: true, dualStackCloud: true, annotation: (a) => a.v4b, expectInitialised: true },
  { id: 'not-in-cloud', description: 'an instance the cloud does not know', inCloud: false, dualStackCloud: true, annotation: undefined, expectInitialised: false },
];

/** The KEP's example addresses for node index 0, the same shape for the others. */
export function simAddresses(index: number): SimAddresses {
  if (!Number.isInteger(index) || index < 0 || index >= 250 * 250) throw new Error(`node index: must be 0..${250 * 250 - 1}, got ${index}`);
  const hi = Math.floor(index / 250);
  const lo = index % 250;
  const hex = index.toString(16);
  return {
    v4a: `1.${2 + hi}.${3 + lo}.4`,
    v4b: `5.${6 + hi}.${(7 + lo) % 256}.8`,
    v6a: index === 0 ? 'abcd::1234' : `abcd:0:0:${hex}::1234`,
    v6b: index === 0 ? 'abcd::5678' : `abcd:0:0:${hex}::5678`,
  };
}

export interface SimNode {
  name: string;
  case: SimCase;
  annotation: string | undefined;
  /** What the kubelet registers (tainted, Hostname address). */
  node: NodeObject;
  /** The cloud's record, or undefined when the cloud does not know the node. */
  cloud: { providerID: string; zone: string; region: string; instanceType: string; addresses: NodeAddress[] } | undefined;
}

/** `count` nodes cycling through SIM_CASES. */
export function buildSimCluster(count: number): SimNode[] {
  if (!Number.isInteger(count) || count < 1 || count > SIM_MAX_NODES) throw new Error(`--nodes: must be an integer from 1 to ${SIM_MAX_NODES}, got ${count}`);
  const out: SimNode[] = [];
  for (let i = 0; i < count; i++) {
    const c = SIM_CASES[i % SIM_CASES.length] as SimCase;
    const name = `sim-${String(i + 1).padStart(count >= 1000 ? 5 : 2, '0')}-${c.id}`;
    const a = simAddresses(i);
    const annotation = c.annotation?.(a);
    const node: NodeObject = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' },
        annotations: annotation === undefined ? {} : { [PROVIDED_NODE_IP_ANNOTATION]: annotation },
      },
      spec: { taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] },
      // Kubelets with --cloud-provider=external report Ready while the taint is on.
      status: {
        addresses: [{ type: 'Hostname', address: name }],
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
      },
    };
    const addresses: NodeAddress[] = [
      { type: 'InternalIP', address: a.v4a },
      { type: 'InternalIP', address: a.v4b },
      ...(c.dualStackCloud ? [{ type: 'InternalIP' as const, address: a.v6a }, { type: 'InternalIP' as const, address: a.v6b }] : []),
    ];
    out.push({
      name,
      case: c,
      annotation,
      node,
      cloud: c.inCloud
        ? { providerID: `static://${name}`, zone: SIM_ZONES[i % SIM_ZONES.length] as string, region: SIM_REGION, instanceType: 'sim.large', addresses }
        : undefined,
    });
  }
  return out;
}

/** The static provider's cloud-config for the cluster. */
export function staticCloudConfig(nodes: readonly SimNode[]): string {
  const entries: Record<string, unknown> = {};
  for (const n of nodes) if (n.cloud) entries[n.name] = n.cloud;
  return toYAML({ nodes: entries });
}
