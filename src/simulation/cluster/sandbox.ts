// What `simulate --keep` (the sandbox) offers to try with kubectl once the cluster has converged:
// two spare instances the static cloud knows but the cluster does not have yet, the YAML to
// register them (one in a ClusterCIDR's pool), and the guide printed with the export line. Pure:
// the caller writes the files and prints the text.
import { stringify as toYAML } from 'yaml';
import { PROVIDED_NODE_IP_ANNOTATION, UNINITIALIZED_TAINT_KEY, type NodeObject } from '../../model/node.js';
import { SIM_CASES, SIM_REGION, SIM_ZONES, simAddresses, type SimNode } from './scenario.js';

/** Spare instances: in the cloud from the start, registered by the user with kubectl apply. */
export const SANDBOX_NEW_NODE = 'new-node-1';
export const SANDBOX_POOL_NODE = 'blue-node-1';
export const SANDBOX_POOL_LABEL = { key: 'pool', value: 'blue' } as const;
export const SANDBOX_CLUSTER_CIDR = { name: 'blue', ipv4: '10.200.0.0/16', ipv6: 'fd00:10:200::/112', perNodeHostBits: 8 } as const;
/** The address refresh period of the sandbox, so an annotation change shows within seconds. */
export const SANDBOX_REFRESH = '5s';

/** The two spare nodes, numbered after the cluster's so their addresses are distinct. */
export function sandboxSpareNodes(clusterSize: number): SimNode[] {
  const spare = (name: string, index: number, labels: Record<string, string>): SimNode => {
    const a = simAddresses(index);
    const node: NodeObject = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', ...labels } },
      spec: { taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] },
    };
    return {
      name,
      case: SIM_CASES[0] as SimNode['case'],
      annotation: undefined,
      node,
      cloud: {
        providerID: `static://${name}`, zone: SIM_ZONES[index % SIM_ZONES.length] as string, region: SIM_REGION, instanceType: 'sim.large',
        addresses: [a.v4a, a.v4b, a.v6a, a.v6b].map((address) => ({ type: 'InternalIP' as const, address })),
      },
    };
  };
  return [
    spare(SANDBOX_NEW_NODE, clusterSize, {}),
    spare(SANDBOX_POOL_NODE, clusterSize + 1, { [SANDBOX_POOL_LABEL.key]: SANDBOX_POOL_LABEL.value }),
  ];
}

/** The node whose annotation the guide changes, and the other cloud IPv4 it moves to. */
export function annotationTarget(cluster: readonly SimNode[]): { node: string; ip: string } {
  // A node with a single-IPv4 annotation shows the change best; node 1 (no annotation) otherwise.
  const pick = cluster.find((n) => n.case.id === 'ipv4') ?? cluster.find((n) => n.cloud !== undefined);
  if (!pick?.cloud) throw new Error('sandbox: the cluster has no node the cloud knows');
  const v4 = pick.cloud.addresses.filter((a) => !a.address.includes(':')).map((a) => a.address);
  const ip = v4.find((x) => x !== pick.annotation) ?? (v4[0] as string);
  return { node: pick.name, ip };
}

export interface SandboxGuide {
  /** File name (in the sandbox folder) → content. */
  files: Record<string, string>;
  /** What is printed after the summary. */
  text: string;
}

/** The files and the guide; `dir` is where the files go, `kubeconfig` where the kubeconfig went. */
export function sandboxGuide(cluster: readonly SimNode[], spare: readonly SimNode[], dir: string, kubeconfig: string, cloudConfig: string): SandboxGuide {
  const [newNode, poolNode] = spare as [SimNode, SimNode];
  const clusterCidr = {
    apiVersion: 'networking.x-k8s.io/v1',
    kind: 'ClusterCIDR',
    metadata: { name: SANDBOX_CLUSTER_CIDR.name },
    spec: {
      perNodeHostBits: SANDBOX_CLUSTER_CIDR.perNodeHostBits,
      ipv4: SANDBOX_CLUSTER_CIDR.ipv4,
      ipv6: SANDBOX_CLUSTER_CIDR.ipv6,
      nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: SANDBOX_POOL_LABEL.key, operator: 'In', values: [SANDBOX_POOL_LABEL.value] }] }] },
    },
  };
  const files = {
    [`${newNode.name}.yaml`]: toYAML(newNode.node),
    [`clustercidr-${SANDBOX_CLUSTER_CIDR.name}.yaml`]: toYAML(clusterCidr),
    [`${poolNode.name}.yaml`]: toYAML(poolNode.node),
  };
  const f = (name: string): string => `${dir}/${name}`;
  const target = annotationTarget(cluster);
  const cols = (extra: string): string => `-o custom-columns=NAME:.metadata.name,${extra}`;
  const text = [
    'The simulated cluster and the controller manager keep running; press Ctrl-C to stop them.',
    `The static cloud reads ${cloudConfig} (edits take effect within seconds); addresses are refreshed every ${SANDBOX_REFRESH}.`,
    '',
    `  export KUBECONFIG=${kubeconfig}`,
    '',
    `1. Give ${target.node} another of its cloud IPs and watch its addresses change:`,
    `     kubectl annotate node ${target.node} --overwrite ${PROVIDED_NODE_IP_ANNOTATION}=${target.ip}`,
    `     kubectl get node ${target.node} --watch ${cols('ADDRESSES:.status.addresses[*].address')}`,
    `2. Register a new tainted node and watch it initialise:`,
    `     kubectl apply -f ${f(`${newNode.name}.yaml`)}`,
    `     kubectl get node ${newNode.name} --watch ${cols('TAINTS:.spec.taints[*].key,ADDRESSES:.status.addresses[*].address,PROVIDER-ID:.spec.providerID,POD-CIDRS:.spec.podCIDRs')}`,
    `3. Create a ClusterCIDR for nodes labelled ${SANDBOX_POOL_LABEL.key}=${SANDBOX_POOL_LABEL.value}, then such a node; it gets its pod CIDRs from that range:`,
    `     kubectl apply -f ${f(`clustercidr-${SANDBOX_CLUSTER_CIDR.name}.yaml`)} -f ${f(`${poolNode.name}.yaml`)}`,
    `     kubectl wait node/${poolNode.name} --for=jsonpath='{.spec.podCIDRs}' && kubectl get node ${poolNode.name} -o jsonpath='{.spec.podCIDRs}{"\\n"}'`,
    '',
  ].join('\n');
  return { files, text };
}
