// API access for the e2e suite: reads of nodes, events and ClusterCIDRs, and a ledger of what the
// suite created so cleanup deletes exactly that (by name and uid) and nothing else.
import type { KubeConfig } from '@kubernetes/client-node';
import ipaddr from 'ipaddr.js';
import { KubeClient } from '../../../src/kube/client.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { CLUSTERCIDRS, NODES, SERVICECIDRS, type KubeObject, type ResourceType } from '../../../src/kube/types.js';
import type { NodeObject, Taint } from '../../../src/model/node.js';
import type { NodeAddress } from '../../../src/model/node-address.js';
import { registerNode, type KubeletConfig, type RegisterResult } from '../../../src/simulation/kubelet/index.js';

/** Label put on every object the suite creates; the value is the run prefix. */
export const RUN_LABEL = 'e2e.node-address-ccm.io/run';
/** NoSchedule taint put on every fake node the suite registers, so nothing ever runs there. */
export const FAKE_NODE_TAINT_KEY = 'e2e.node-address-ccm.io/fake-node';

export const UNINITIALIZED_TAINT_KEY = 'node.cloudprovider.kubernetes.io/uninitialized';
const EVENTS_ALL: ResourceType = { group: '', version: 'v1', plural: 'events', namespaced: false };

export type WireNode = NodeObject & KubeObject;

export interface CoreEvent extends KubeObject {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  involvedObject?: { kind?: string; name?: string; uid?: string };
  source?: { component?: string };
  reportingComponent?: string;
}

export interface ClusterCIDRObject extends KubeObject {
  spec?: { nodeSelector?: unknown; perNodeHostBits?: number; ipv4?: string; ipv6?: string };
}

interface Created {
  res: ResourceType;
  name: string;
  uid: string;
}

export interface E2EClusterOptions {
  /**
   * The kubelet's own credentials for a node (the real control plane: a client certificate for
   * system:node:<name>, judged by the Node authorizer and NodeRestriction). Absent: the simulated
   * kubelets use the suite's client.
   */
  kubeletKubeConfig?: (node: string) => KubeConfig;
}

export class E2ECluster {
  readonly client: KubeClient;
  readonly prefix: string;
  readonly #created: Created[] = [];
  readonly #kubeletKubeConfig: ((node: string) => KubeConfig) | undefined;
  readonly #kubelets = new Map<string, KubeClient>();

  constructor(kubeConfig: KubeConfig, prefix: string, options: E2EClusterOptions = {}) {
    this.client = new KubeClient(kubeConfig, { userAgent: 'e2e-suite', readTimeoutMs: 10_000, writeTimeoutMs: 10_000 });
    this.prefix = prefix;
    this.#kubeletKubeConfig = options.kubeletKubeConfig;
  }

  /** The client a simulated kubelet of `node` talks through: its own identity where the target gives one. */
  kubelet(node: string): KubeClient {
    if (!this.#kubeletKubeConfig) return this.client;
    let c = this.#kubelets.get(node);
    if (!c) {
      c = new KubeClient(this.#kubeletKubeConfig(node), { userAgent: 'kubelet-simulator', fieldManager: 'kubelet', readTimeoutMs: 10_000, writeTimeoutMs: 10_000 });
      this.#kubelets.set(node, c);
    }
    return c;
  }

  /** `<prefix>-<suffix>`: every name the suite creates. */
  name(suffix: string): string {
    return `${this.prefix}-${suffix}`;
  }

  #record(res: ResourceType, obj: KubeObject): void {
    this.#created.push({ res, name: obj.metadata.name, uid: obj.metadata.uid ?? '' });
  }

  /**
   * Registers a fake node through the kubelet simulator (as the node, where the target has node
   * credentials) with the run label and the fake-node NoSchedule taint (on top of the
   * uninitialized taint kubelet adds), and records it.
   */
  async registerFakeNode(config: KubeletConfig): Promise<RegisterResult> {
    if (!config.name.startsWith(`${this.prefix}-`)) throw new Error(`fake node ${config.name} must carry the run prefix ${this.prefix}-`);
    const taint: Taint = { key: FAKE_NODE_TAINT_KEY, value: this.prefix, effect: 'NoSchedule' };
    const result = await registerNode(this.kubelet(config.name), {
      ...config,
      labels: { ...(config.labels ?? {}), [RUN_LABEL]: this.prefix },
      taints: [...(config.taints ?? []), taint],
    });
    this.#record(NODES, result.node as WireNode);
    return result;
  }

  /** Creates a Node object directly (not through the kubelet simulator), recorded for cleanup. */
  async createNodeObject(node: WireNode): Promise<WireNode> {
    if (!node.metadata.name.startsWith(`${this.prefix}-`)) throw new Error(`node ${node.metadata.name} must carry the run prefix`);
    const taints = [...(node.spec?.taints ?? []), { key: FAKE_NODE_TAINT_KEY, value: this.prefix, effect: 'NoSchedule' }];
    const body: WireNode = {
      ...node,
      metadata: { ...node.metadata, labels: { ...(node.metadata.labels ?? {}), [RUN_LABEL]: this.prefix } },
      spec: { ...(node.spec ?? {}), taints },
    };
    const created = await this.client.create<WireNode>(NODES, body);
    this.#record(NODES, created);
    return created;
  }

  async createClusterCIDR(suffix: string, spec: NonNullable<ClusterCIDRObject['spec']>): Promise<ClusterCIDRObject> {
    const obj: ClusterCIDRObject = {
      apiVersion: 'networking.x-k8s.io/v1',
      kind: 'ClusterCIDR',
      metadata: { name: this.name(suffix), labels: { [RUN_LABEL]: this.prefix } },
      spec,
    };
    const created = await this.client.create<ClusterCIDRObject>(CLUSTERCIDRS, obj);
    this.#record(CLUSTERCIDRS, created);
    return created;
  }

  /** Creates a networking.k8s.io/v1 ServiceCIDR (a Service range added to the cluster), recorded for cleanup. */
  async createServiceCIDR(suffix: string, cidrs: string[]): Promise<KubeObject> {
    const created = await this.client.create<KubeObject>(SERVICECIDRS, {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'ServiceCIDR',
      metadata: { name: this.name(suffix), labels: { [RUN_LABEL]: this.prefix } },
      spec: { cidrs },
    } as KubeObject);
    this.#record(SERVICECIDRS, created);
    return created;
  }

  /** Deletes one object the suite created (uid precondition: never a same-named replacement). */
  async deleteCreated(res: ResourceType, name: string): Promise<void> {
    const entry = this.#created.find((c) => c.res === res && c.name === name);
    if (!entry) throw new Error(`${res.plural}/${name} was not created by this run; refusing to delete it`);
    try {
      await this.client.delete(res, name, { preconditions: entry.uid ? { uid: entry.uid } : undefined });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** Deletes everything this run created, newest first. Returns the failures (never throws). */
  async cleanup(): Promise<string[]> {
    const failures: string[] = [];
    for (const c of [...this.#created].reverse()) {
      try {
        await this.client.delete(c.res, c.name, { preconditions: c.uid ? { uid: c.uid } : undefined });
      } catch (err) {
        if (!isNotFound(err)) failures.push(`${c.res.plural}/${c.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    this.#created.length = 0;
    this.client.close();
    for (const c of this.#kubelets.values()) c.close();
    this.#kubelets.clear();
    return failures;
  }

  getNode(name: string): Promise<WireNode> {
    return this.client.get<WireNode>(NODES, name);
  }

  async nodeExists(name: string): Promise<boolean> {
    try {
      await this.getNode(name);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async getClusterCIDR(name: string): Promise<ClusterCIDRObject | undefined> {
    try {
      return await this.client.get<ClusterCIDRObject>(CLUSTERCIDRS, name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** core/v1 Events about a node, in every namespace. */
  async nodeEvents(name: string): Promise<CoreEvent[]> {
    const list = await this.client.list<CoreEvent>(EVENTS_ALL, { fieldSelector: `involvedObject.kind=Node,involvedObject.name=${name}` });
    return list.items ?? [];
  }
}

export function hasTaint(node: NodeObject, key: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === key);
}

export function addressesOf(node: NodeObject): NodeAddress[] {
  return (node.status?.addresses ?? []).map((a) => ({ type: a.type, address: a.address }));
}

export function internalIPs(node: NodeObject): string[] {
  return addressesOf(node)
    .filter((a) => a.type === 'InternalIP')
    .map((a) => a.address);
}

export function podCIDRsOf(node: NodeObject): string[] {
  return node.spec?.podCIDRs ?? (node.spec?.podCIDR ? [node.spec.podCIDR] : []);
}

/** Whether `cidr` is a subnet of `range` (same family, prefix at least as long). */
export function cidrWithin(cidr: string, range: string): boolean {
  const [addr, bits] = ipaddr.parseCIDR(cidr);
  const [raddr, rbits] = ipaddr.parseCIDR(range);
  return addr.kind() === raddr.kind() && bits >= rbits && addr.match(raddr, rbits);
}

export function cidrFamily(cidr: string): 'ipv4' | 'ipv6' {
  return ipaddr.parseCIDR(cidr)[0].kind();
}

/** Whether two CIDRs share any address. */
export function cidrsOverlap(a: string, b: string): boolean {
  if (cidrFamily(a) !== cidrFamily(b)) return false;
  const bitsA = ipaddr.parseCIDR(a)[1];
  const bitsB = ipaddr.parseCIDR(b)[1];
  return bitsA <= bitsB ? cidrWithin(b, a) : cidrWithin(a, b);
}
