// A Node shaped like a real cluster's (about 12 KB of JSON): 50 images, 5 conditions, nodeInfo,
// capacity, managedFields from three writers, daemon endpoints. Scale benchmarks and the node
// transform tests use it, because figures from tiny objects say nothing about a real cache.
import { PROVIDED_NODE_IP_ANNOTATION, UNINITIALIZED_TAINT_KEY, type NodeObject } from '../model/node.js';
import { POD_CIDR_POOL_ANNOTATION } from '../model/node.js';

export interface RealisticNodeOptions {
  nodeIP?: string;
  podCIDRs?: string[];
  tainted?: boolean;
  /** Index used to vary addresses and image digests. */
  index?: number;
  /**
   * Whether a node given podCIDRs carries the pool annotation (default true). False: blocks set
   * by another allocator, as after a migration from kube-controller-manager.
   */
  poolAnnotation?: boolean;
  /** spec.providerID (default an AWS one from the index). */
  providerID?: string;
  /** An InternalDNS address after the InternalIP and the Hostname, as EC2's private DNS name. */
  internalDNS?: string;
  /** Container images in status.images (default 50, about 9.7 KB of the JSON). */
  images?: number;
}

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0').slice(-width);

function digest(seed: number): string {
  let out = '';
  for (let i = 0; i < 8; i++) out += hex(Math.imul(seed + i * 7919, 2654435761) >>> 0, 8);
  return `sha256:${out}`;
}

export function realisticNode(name: string, o: RealisticNodeOptions = {}): NodeObject {
  const i = o.index ?? 0;
  const ts = '2026-11-01T10:00:00Z';
  const annotations: Record<string, string> = {
    'node.alpha.kubernetes.io/ttl': '0',
    'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
    'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock',
    'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'ebs.csi.aws.com': `i-${hex(i, 17)}` }),
  };
  if (o.nodeIP !== undefined) annotations[PROVIDED_NODE_IP_ANNOTATION] = o.nodeIP;
  if (o.podCIDRs && o.poolAnnotation !== false) annotations[POD_CIDR_POOL_ANNOTATION] = 'default';
  const images = Array.from({ length: o.images ?? 50 }, (_, k) => ({
    names: [`registry.example.com/team-${k % 7}/service-${k}@${digest(i * 50 + k)}`, `registry.example.com/team-${k % 7}/service-${k}:v1.${k}.${i % 10}`],
    sizeBytes: 10_000_000 + k * 1_234_567,
  }));
  const cond = (type: string, status: string, reason: string, message: string) => ({ type, status, lastHeartbeatTime: ts, lastTransitionTime: ts, reason, message });
  const managed = (manager: string, operation: string, subresource?: string) => ({
    manager, operation, apiVersion: 'v1', time: ts, fieldsType: 'FieldsV1',
    ...(subresource ? { subresource } : {}),
    fieldsV1: {
      'f:metadata': { 'f:annotations': Object.fromEntries(Object.keys(annotations).map((k) => [`f:${k}`, {}])), 'f:labels': { '.': {}, 'f:kubernetes.io/arch': {}, 'f:kubernetes.io/hostname': {}, 'f:kubernetes.io/os': {} } },
      'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { 'f:lastHeartbeatTime': {}, 'f:message': {}, 'f:reason': {}, 'f:status': {} } }, 'f:images': {}, 'f:nodeInfo': { 'f:bootID': {}, 'f:kernelVersion': {} } },
    },
  });
  const node: NodeObject = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: `${hex(i, 8)}-aaaa-4bbb-8ccc-${hex(i, 12)}`,
      resourceVersion: String(1000 + i),
      creationTimestamp: ts,
      labels: {
        'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': name,
        'node.kubernetes.io/instance-type': 'm6i.2xlarge', 'topology.kubernetes.io/zone': `zone-${i % 3}`, 'topology.kubernetes.io/region': 'region-1',
        'node-role.kubernetes.io/worker': '', 'team.example.com/pool': `pool-${i % 5}`,
      },
      annotations,
      managedFields: [managed('kubelet', 'Update'), managed('kubelet', 'Update', 'status'), managed('node-address-ccm', 'Update')],
    },
    spec: {
      providerID: o.providerID ?? `aws:///zone-${i % 3}/i-${hex(i, 17)}`,
      ...(o.podCIDRs ? { podCIDR: o.podCIDRs[0], podCIDRs: o.podCIDRs } : {}),
      taints: o.tainted ? [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] : [],
    },
    status: {
      addresses: [
        { type: 'InternalIP', address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }, { type: 'Hostname', address: name },
        ...(o.internalDNS !== undefined ? [{ type: 'InternalDNS' as const, address: o.internalDNS }] : []),
      ],
      capacity: { cpu: '8', 'ephemeral-storage': '104845292Ki', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '32386524Ki', pods: '110' },
      allocatable: { cpu: '7910m', 'ephemeral-storage': '95551679124', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '31369692Ki', pods: '110' },
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
        cond('NetworkUnavailable', 'False', 'RouteCreated', 'RouteController created a route'),
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: hex(i * 31 + 7, 32), systemUUID: `ec2${hex(i, 5)}-1111-2222-3333-${hex(i, 12)}`, bootID: `${hex(i, 8)}-0000-4000-8000-${hex(i * 3, 12)}`,
        kernelVersion: '6.1.112-124.190.amzn2023.x86_64', osImage: 'Amazon Linux 2023.6.20241121', containerRuntimeVersion: 'containerd://1.7.23',
        kubeletVersion: 'v1.32.0', kubeProxyVersion: 'v1.32.0', operatingSystem: 'linux', architecture: 'amd64',
      },
      images,
      volumesAttached: [],
      volumesInUse: [],
    },
  };
  return node;
}
