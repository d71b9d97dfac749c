// The node lifecycle part of `npm start`: two initialised nodes whose kubelets stopped reporting
// (Ready Unknown). Once the KEP-3705 nodes have converged, the static cloud-config is edited as an
// operator would: one machine's entry removed (its Node is deleted), the other marked
// `shutdown: true` (its Node gets the shutdown taint).
import { writeFile } from 'node:fs/promises';
import { nodePodCIDRs, type NodeObject } from '../../model/node.js';
import { hasShutdownTaint } from '../../controllers/nodelifecycle/decide.js';
import type { ApiServerDouble } from '../../double/server.js';
import { staticCloudConfig, type SimCase, type SimNode } from './scenario.js';

const DEMO_CASE: SimCase = {
  id: 'lifecycle', description: 'a node whose kubelet stopped reporting (cloud-node-lifecycle)', inCloud: true, dualStackCloud: false,
  annotation: undefined, expectInitialised: true,
};

export const LIFECYCLE_GONE = 'sim-lc-decommissioned';
export const LIFECYCLE_STOPPED = 'sim-lc-powered-off';

/** The two demo nodes: initialised (providerID, addresses, no taint), Ready Unknown, in the cloud. */
export function lifecycleDemoNodes(): SimNode[] {
  return [[LIFECYCLE_GONE, '192.0.2.10'], [LIFECYCLE_STOPPED, '192.0.2.11']].map(([name, address]) => {
    const node: NodeObject = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: name as string, labels: { 'kubernetes.io/hostname': name as string, 'kubernetes.io/os': 'linux' } },
      spec: { providerID: `static://${name}` },
      status: {
        addresses: [{ type: 'InternalIP', address: address as string }, { type: 'Hostname', address: name as string }],
        conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' }],
      },
    };
    return {
      name: name as string, case: DEMO_CASE, annotation: undefined, node,
      cloud: { providerID: `static://${name}`, zone: 'sim-zone-a', region: 'sim-region-1', instanceType: 'sim.large', addresses: [{ type: 'InternalIP', address: address as string }] },
    };
  });
}

/** The demo nodes as the cloud-config lists them after the operator's edit: one gone, one shut down. */
export function lifecycleDemoAfterEdit(demo: readonly SimNode[]): SimNode[] {
  return demo.filter((n) => n.name !== LIFECYCLE_GONE).map((n) => (n.name === LIFECYCLE_STOPPED && n.cloud
    ? { ...n, cloud: { ...n.cloud, shutdown: true } as SimNode['cloud'] }
    : n));
}

export interface LifecycleDemoInput {
  api: ApiServerDouble;
  /** Has the provider read the edited file now (the static provider; a webhook reads it per request). */
  reload?: () => Promise<void>;
  cloudConfig: string;
  /** Every other entry of the cloud-config, kept as it is. */
  others: readonly SimNode[];
  demo: readonly SimNode[];
  /** Nodes holding blocks in the node-IPAM allocator (undefined when it does not run). */
  allocatedNodes: () => number | undefined;
  timeoutMs?: number;
}

/**
 * Edits the cloud-config (one entry removed, one shut down), has the provider read it, and waits
 * for the Node to go (and its blocks with it) and the other to be tainted.
 */
export async function runLifecycleDemo(o: LifecycleDemoInput): Promise<{ deletedAfterMs?: number; taintedAfterMs?: number; podCIDRsReleased: boolean }> {
  const timeoutMs = o.timeoutMs ?? 10_000;
  const node = (name: string): NodeObject | undefined => o.api.store.peek('nodes', name) as unknown as NodeObject | undefined;
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  // node-IPAM gives the demo nodes their blocks first, so the release can be seen.
  for (const started = Date.now(); Date.now() - started < timeoutMs && o.allocatedNodes() !== undefined; await sleep(50)) {
    if (o.demo.every((d) => nodePodCIDRs(node(d.name) ?? { metadata: { name: d.name } }).length > 0)) break;
  }
  const before = o.allocatedNodes();
  await writeFile(o.cloudConfig, staticCloudConfig([...o.others, ...lifecycleDemoAfterEdit(o.demo)]));
  await o.reload?.();
  const edited = Date.now();
  let deletedAfterMs: number | undefined;
  let taintedAfterMs: number | undefined;
  while (Date.now() - edited < timeoutMs && (deletedAfterMs === undefined || taintedAfterMs === undefined)) {
    if (deletedAfterMs === undefined && !node(LIFECYCLE_GONE)) deletedAfterMs = Date.now() - edited;
    const stopped = node(LIFECYCLE_STOPPED);
    if (taintedAfterMs === undefined && stopped && hasShutdownTaint(stopped)) taintedAfterMs = Date.now() - edited;
    await sleep(50);
  }
  // The allocator lets go of the deleted node's blocks when its watch sees the Node go.
  let podCIDRsReleased = false;
  for (const started = Date.now(); before !== undefined && deletedAfterMs !== undefined && Date.now() - started < 2000; await sleep(50)) {
    if ((o.allocatedNodes() ?? before) < before) {
      podCIDRsReleased = true;
      break;
    }
  }
  return { ...(deletedAfterMs !== undefined ? { deletedAfterMs } : {}), ...(taintedAfterMs !== undefined ? { taintedAfterMs } : {}), podCIDRsReleased };
}
