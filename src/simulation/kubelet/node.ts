// Pure part of the kubelet simulator: the Node object kubelet creates when it registers, and the
// changes it makes to an existing Node when it starts again. No I/O here.
//
// Modelled on kubelet 1.31+ (pkg/kubelet/kubelet_node_status.go initialNode and
// pkg/kubelet/nodestatus NodeAddress):
//
//  * --node-ip is read leniently (items trimmed as Go's strings.TrimSpace does, a dual-stack pair
//    allowed with an external cloud provider); items that are not IPs are logged and ignored, and
//    a list kubelet cannot use (two of one family, three IPs, an unspecified half of a pair) makes
//    it refuse to start.
//  * With --cloud-provider=external and a specific node IP (not 0.0.0.0 / ::), kubelet writes the
//    alpha.kubernetes.io/provided-node-ip annotation; otherwise it removes a stale one.
//  * status.addresses with --cloud-provider=external (kubernetes/kubernetes#121028, 1.29, and
//    #125337, 1.31):
//      --node-ip unset            → only the Hostname address; the cloud provider sets the rest.
//      --node-ip 0.0.0.0 or ::    → the host's default address of that family (then the other
//                                   family) as InternalIP, plus Hostname; no annotation.
//      a specific IP              → that IP as InternalIP, plus Hostname.
//      a dual-stack pair          → both IPs as InternalIP in flag order, plus Hostname.
//    Once the Node has addresses kubelet leaves them to the cloud provider.
//  * Without a cloud provider kubelet always owns the addresses (node IP or detected + Hostname).
//  * A specific node IP must be one of the host's interface addresses (when the simulated host
//    declares them); otherwise kubelet's address setter fails and writes neither the annotation
//    nor addresses, as kubelet does ("failed to validate nodeIP").
//
// Not modelled: DNS lookup of the node name (the simulated host's declared addresses stand in for
// every detection step), leases, heartbeats, images, volumes.
import { randomUUID } from 'node:crypto';
import { goQuote, isUnspecifiedIP, parseIPSloppy, parseKubeletNodeIPFlag, PROVIDED_NODE_IP_ANNOTATION, type ParsedIP } from '../../nodeip/index.js';
import type { NodeAddress } from '../../model/node-address.js';
import type { NodeObject, Taint } from '../../model/node.js';

export const UNINITIALIZED_TAINT: Readonly<Taint> = Object.freeze({ key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' });
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_OS = 'kubernetes.io/os';
export const LABEL_ARCH = 'kubernetes.io/arch';
export const LABEL_OS_BETA = 'beta.kubernetes.io/os';
export const LABEL_ARCH_BETA = 'beta.kubernetes.io/arch';
/** Set by kubelet when the attach/detach controller manages the node's volumes (the default). */
export const ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH = 'volumes.kubernetes.io/controller-managed-attach-detach';
/** Written by kube-controller-manager's TTL controller right after registration ("0" on small clusters). */
export const ANNOTATION_NODE_TTL = 'node.alpha.kubernetes.io/ttl';

export const DEFAULT_KUBELET_VERSION = 'v1.33.0';

/** The kubelet flags and host facts that shape the Node object. */
export interface KubeletConfig {
  /** Node name (--hostname-override or the host name, lowercased). */
  name: string;
  /** The raw --node-ip flag value; undefined or '' when unset. */
  nodeIP?: string;
  /** The host name reported as the Hostname address and the kubernetes.io/hostname label (default: name). */
  hostname?: string;
  /** --node-labels. */
  labels?: Record<string, string>;
  /** --register-with-taints (the uninitialized taint is added on top with an external cloud provider). */
  taints?: Taint[];
  /** --cloud-provider=external. false: no cloud provider at all (kubelet owns the addresses). */
  cloudProviderExternal: boolean;
  /** --provider-id. */
  providerID?: string;
  /**
   * Addresses of the simulated host's interfaces, the default-route one of each family first.
   * When given, a specific --node-ip must be one of them (kubelet's node IP validation) and
   * 0.0.0.0 / :: resolve to the first of the family. When absent, any node IP validates and an
   * unspecified --node-ip finds no address.
   */
  hostIPs?: string[];
  os?: string;
  arch?: string;
  kubeletVersion?: string;
  /** status.capacity (default: 4 CPUs, 8Gi memory, 110 pods, 100Gi ephemeral storage). */
  capacity?: Record<string, string>;
  /** Add the TTL controller's annotation at creation (default true), as real nodes carry it within a second. */
  ttlAnnotation?: boolean;
}

/** kubelet refuses to start with this configuration (an unusable --node-ip list, a bad node name). */
export class KubeletStartError extends Error {
  override name = 'KubeletStartError';
}

/** Result of kubelet's node address setter. */
export interface AddressSetterResult {
  /** The annotation to write, or undefined to remove it. */
  annotation: string | undefined;
  /** Addresses to set when the node has none yet; undefined leaves status.addresses as it is. */
  addresses: NodeAddress[] | undefined;
  /** Why the setter failed (kubelet logs it and leaves addresses and the annotation alone). */
  error?: string;
}

interface ParsedFlag {
  nodeIPs: string[];
  annotation: string | undefined;
  /** Items kubelet logs and ignores because they are not IPs. */
  ignored: string[];
}

/**
 * Reads --node-ip as kubelet does at startup: items that are not IPs are ignored, a list kubelet
 * cannot use throws KubeletStartError (kubelet exits).
 */
export function readNodeIPFlag(value: string | undefined): ParsedFlag {
  try {
    return parseKubeletNodeIPFlag(value);
  } catch (err) {
    throw new KubeletStartError(`failed to run Kubelet: bad --node-ip ${goQuote(value ?? '')}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

function parsedHostIPs(config: KubeletConfig): ParsedIP[] | undefined {
  if (config.hostIPs === undefined) return undefined;
  return config.hostIPs.map((s) => {
    const ip = parseIPSloppy(s);
    if (!ip) throw new Error(`hostIPs: ${JSON.stringify(s)} is not an IP address`);
    return ip;
  });
}

/** kubelet's validateNodeIP: a usable unicast address present on the host. */
function nodeIPProblem(ip: ParsedIP, host: ParsedIP[] | undefined): string | undefined {
  const b = ip.bytes;
  if (ip.family === 4 ? b[12] === 127 : b.every((x, i) => x === (i === 15 ? 1 : 0))) return `nodeIP can't be loopback address`;
  if (ip.family === 4 ? b[12]! >= 224 && b[12]! <= 239 : b[0] === 0xff) return `nodeIP can't be a multicast address`;
  if (ip.family === 4 ? b[12] === 169 && b[13] === 254 : b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return `nodeIP can't be a link-local unicast address`;
  if (isUnspecifiedIP(ip)) return `nodeIP can't be an all zeros address`;
  if (host && !host.some((h) => h.canonical === ip.canonical)) return `node IP: ${goQuote(ip.canonical)} not found in the host's network interfaces`;
  return undefined;
}

/**
 * kubelet's NodeAddress setter for one status sync. `currentAddresses` is what the Node has now
 * (empty on registration).
 */
export function kubeletAddressSetter(config: KubeletConfig, currentAddresses: readonly NodeAddress[]): AddressSetterResult {
  const flag = readNodeIPFlag(config.nodeIP);
  const hostname = config.hostname ?? config.name;
  const host = parsedHostIPs(config);
  const ips = flag.nodeIPs.map((s) => parseIPSloppy(s) as ParsedIP);
  const primary = ips[0];
  const secondary = ips[1];
  const specified = primary !== undefined && !isUnspecifiedIP(primary);
  for (const ip of [primary, secondary]) {
    if (ip && !isUnspecifiedIP(ip)) {
      const problem = nodeIPProblem(ip, host);
      if (problem) return { annotation: undefined, addresses: undefined, error: `failed to validate nodeIP: ${problem}` };
    }
  }
  const annotation = config.cloudProviderExternal && specified ? flag.annotation : undefined;
  if (config.cloudProviderExternal) {
    if (currentAddresses.length > 0) return { annotation, addresses: undefined };
    if (ips.length === 0) return { annotation, addresses: [{ type: 'Hostname', address: hostname }] };
  }
  if (specified && secondary !== undefined) {
    return {
      annotation,
      addresses: [
        { type: 'InternalIP', address: primary.canonical },
        { type: 'InternalIP', address: secondary.canonical },
        { type: 'Hostname', address: hostname },
      ],
    };
  }
  let chosen: string | undefined;
  if (specified) chosen = primary.canonical;
  else if (parseIPSloppy(hostname)) chosen = (parseIPSloppy(hostname) as ParsedIP).canonical;
  else if (host) {
    const preferred = primary === undefined || primary.family === 4 ? 4 : 6;
    const usable = host.filter((h) => nodeIPProblem(h, undefined) === undefined);
    chosen = (usable.find((h) => h.family === preferred) ?? usable[0])?.canonical;
  }
  if (chosen === undefined) {
    return { annotation, addresses: undefined, error: `can't get ip address of node ${config.name}: no usable address on the host` };
  }
  return { annotation, addresses: [{ type: 'InternalIP', address: chosen }, { type: 'Hostname', address: hostname }] };
}

function defaultCapacity(config: KubeletConfig): Record<string, string> {
  return config.capacity ?? { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0' };
}

/** Validates the configuration the way kubelet does before it registers (throws KubeletStartError). */
export function checkKubeletConfig(config: KubeletConfig): void {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(config.name) || config.name.length > 253) {
    throw new KubeletStartError(`node name ${goQuote(config.name)} is not a valid DNS subdomain`);
  }
  readNodeIPFlag(config.nodeIP);
}

/**
 * The Node kubelet POSTs when it registers (initialNode plus the first run of the status
 * setters). `now` stamps conditions and taints.
 */
export function registrationNode(config: KubeletConfig, now: Date = new Date()): { node: NodeObject; addressError?: string } {
  checkKubeletConfig(config);
  const hostname = config.hostname ?? config.name;
  const os = config.os ?? 'linux';
  const arch = config.arch ?? 'amd64';
  const labels: Record<string, string> = {
    [LABEL_ARCH_BETA]: arch,
    [LABEL_OS_BETA]: os,
    [LABEL_ARCH]: arch,
    [LABEL_HOSTNAME]: hostname,
    [LABEL_OS]: os,
    ...(config.labels ?? {}),
  };
  const taints: Taint[] = (config.taints ?? []).map((t) => ({ ...t }));
  if (config.cloudProviderExternal && !taints.some((t) => t.key === UNINITIALIZED_TAINT.key)) taints.push({ ...UNINITIALIZED_TAINT });
  const annotations: Record<string, string> = { [ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH]: 'true' };
  if (config.ttlAnnotation ?? true) annotations[ANNOTATION_NODE_TTL] = '0';
  const setter = kubeletAddressSetter(config, []);
  if (!setter.error && setter.annotation !== undefined) annotations[PROVIDED_NODE_IP_ANNOTATION] = setter.annotation;
  const stamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const capacity = defaultCapacity(config);
  const condition = (type: string, status: string, reason: string, message: string): Record<string, string> => ({
    type,
    status,
    lastHeartbeatTime: stamp,
    lastTransitionTime: stamp,
    reason,
    message,
  });
  const spec: NonNullable<NodeObject['spec']> = {};
  if (config.providerID) spec.providerID = config.providerID;
  if (taints.length > 0) spec.taints = taints;
  const status: NonNullable<NodeObject['status']> = {
    capacity,
    allocatable: { ...capacity },
    conditions: [
      condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: randomUUID().replace(/-/g, ''),
      systemUUID: randomUUID(),
      bootID: randomUUID(),
      kernelVersion: '6.8.0-sim',
      osImage: 'Simulated Linux',
      containerRuntimeVersion: 'containerd://2.0.0-sim',
      kubeletVersion: config.kubeletVersion ?? DEFAULT_KUBELET_VERSION,
      kubeProxyVersion: '',
      operatingSystem: os,
      architecture: arch,
    },
  };
  if (!setter.error && setter.addresses) status.addresses = setter.addresses;
  const node: NodeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: config.name, labels, annotations }, spec, status };
  return setter.error ? { node, addressError: setter.error } : { node };
}

/**
 * The nodes/status patch kubelet sends on startup for an existing Node; undefined when nothing
 * changes. kubelet sends a strategic merge patch; this is the equivalent JSON merge patch (it
 * replaces status.addresses whole, which is what kubelet's patch does for an empty list).
 */
export function restartPatch(config: KubeletConfig, existing: NodeObject): { patch: Record<string, unknown> | undefined; addressError?: string } {
  checkKubeletConfig(config);
  const setter = kubeletAddressSetter(config, existing.status?.addresses ?? []);
  if (setter.error) return { patch: undefined, addressError: setter.error };
  const current = existing.metadata.annotations?.[PROVIDED_NODE_IP_ANNOTATION];
  const patch: Record<string, unknown> = {};
  if (current !== setter.annotation) {
    // A merge patch deletes a map key with null.
    patch.metadata = { annotations: { [PROVIDED_NODE_IP_ANNOTATION]: setter.annotation ?? null } };
  }
  if (setter.addresses) patch.status = { addresses: setter.addresses };
  return { patch: Object.keys(patch).length > 0 ? patch : undefined };
}
