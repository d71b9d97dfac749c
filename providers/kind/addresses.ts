// Pure mapping from a Docker Engine container inspect object to a kind node's addresses.
import { isIPv4, isIPv6 } from 'node:net';
import type { NodeAddress } from '../../src/model/node-address.js';
import { checkOverrideAddress, type KindAddressOverride, type KindOverrides } from './overrides.js';

export const KIND_CLUSTER_LABEL = 'io.x-k8s.kind.cluster';
/** The network kind creates and attaches every node to, unless KIND_EXPERIMENTAL_DOCKER_NETWORK names another. */
export const KIND_NETWORK = 'kind';
/** Docker's default network: kind does not create nodes on it, so unless it is the primary network it comes last. */
export const DOCKER_DEFAULT_NETWORK = 'bridge';

export interface DockerEndpoint {
  IPAddress?: string | null;
  GlobalIPv6Address?: string | null;
}

/** The fields of GET /containers/{id}/json this adapter reads. */
export interface DockerContainerInspect {
  Id?: string;
  Name: string;
  Config?: { Labels?: Record<string, string> | null } | null;
  State?: { Status?: string; Running?: boolean } | null;
  /** NetworkMode: the network the container was created on (kind's `--net`). */
  HostConfig?: { NetworkMode?: string | null } | null;
  NetworkSettings?: { Networks?: Record<string, DockerEndpoint> | null } | null;
}

export interface KindAddressOptions {
  /** This node's override, or the whole overrides document (looked up by container name). */
  overrides?: KindAddressOverride | KindOverrides;
}

/** Container name without Docker's leading "/". */
export function kindContainerName(container: Pick<DockerContainerInspect, 'Name'>): string {
  const name = typeof container?.Name === 'string' ? container.Name.replace(/^\//, '') : '';
  if (name === '') throw new Error(`container.Name: ${JSON.stringify(container?.Name)} is not a container name`);
  return name;
}

/**
 * The node's primary network: the one kind created the container on (`docker run --net`, which
 * Docker reports as HostConfig.NetworkMode: `kind`, or KIND_EXPERIMENTAL_DOCKER_NETWORK's), when
 * the container is on it; else `kind`, if it is on that.
 */
export function kindPrimaryNetwork(container: DockerContainerInspect, networks: Record<string, DockerEndpoint>): string | undefined {
  const mode = container.HostConfig?.NetworkMode;
  if (typeof mode === 'string' && Object.hasOwn(networks, mode)) return mode;
  return Object.hasOwn(networks, KIND_NETWORK) ? KIND_NETWORK : undefined;
}

// The primary network first, Docker's default bridge last, the rest by name between: a network
// connected later never reorders the node's primary address.
function orderedNetworks(networks: Record<string, DockerEndpoint>, primary: string | undefined): [string, DockerEndpoint][] {
  const rank = (name: string) => (name === primary ? 0 : name === DOCKER_DEFAULT_NETWORK ? 2 : 1);
  return Object.entries(networks).sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

// Docker gives a container its IPs while it runs (a paused one keeps them) and clears them on
// every network when it stops; State.Status is running or paused exactly then (moby's
// State.StateString). "restarting" is a container between two runs, without IPs.
const STATES_WITH_IPS = new Set(['running', 'paused']);

/** Docker reports a state in which the container has no IPs (stopped, created, restarting...). */
export function kindContainerStopped(container: Pick<DockerContainerInspect, 'State'>): boolean {
  const state = container.State;
  if (state === null || state === undefined) return false;
  if (typeof state.Status === 'string' && state.Status !== '') return !STATES_WITH_IPS.has(state.Status);
  return state.Running === false;
}

function overrideFor(name: string, overrides: KindAddressOptions['overrides']): KindAddressOverride | undefined {
  if (!overrides) return undefined;
  if ('nodes' in overrides) return overrides.nodes[name];
  return overrides;
}

/**
 * Hostname, then the IPv4 address of each network, then the global IPv6 address of each
 * network (all InternalIP; the primary network first, others by name, `bridge` last), then any
 * override entries; a replace override stands for the whole list.
 *
 * A stopped container (no IP on any network, as Docker reports one that does not run) gives no
 * addresses at all: the cloud node controller then leaves the node's addresses as they are, where
 * a Hostname alone (cloud-provider-kind's answer) would replace its IPs. A running container
 * without any IP is an error.
 */
export function kindNodeAddresses(container: DockerContainerInspect, options: KindAddressOptions = {}): NodeAddress[] {
  if (container === null || typeof container !== 'object') {
    throw new Error(`container: expected a Docker container inspect object, got ${container === null ? 'null' : typeof container}`);
  }
  const name = kindContainerName(container);
  const override = overrideFor(name, options.overrides);
  const overrideAddresses = (override?.addresses ?? []).map((a, i) => checkOverrideAddress(a, `overrides for ${name}: addresses[${i}]`));
  if (override?.mode === 'replace') {
    if (overrideAddresses.length === 0) throw new Error(`overrides for ${name}: mode replace needs at least one address`);
    return dedupe(overrideAddresses);
  }
  const networks = container.NetworkSettings?.Networks;
  if (networks !== undefined && networks !== null && (typeof networks !== 'object' || Array.isArray(networks))) {
    throw new Error(`container ${name}: NetworkSettings.Networks must be an object`);
  }
  const ordered = orderedNetworks(networks ?? {}, kindPrimaryNetwork(container, networks ?? {}));
  const v4: NodeAddress[] = [];
  const v6: NodeAddress[] = [];
  for (const [net, ep] of ordered) {
    if (ep?.IPAddress) {
      if (!isIPv4(ep.IPAddress)) throw new Error(`container ${name}: NetworkSettings.Networks.${net}.IPAddress: "${ep.IPAddress}" is not an IPv4 address`);
      v4.push({ type: 'InternalIP', address: ep.IPAddress });
    }
    if (ep?.GlobalIPv6Address) {
      if (!isIPv6(ep.GlobalIPv6Address)) {
        throw new Error(`container ${name}: NetworkSettings.Networks.${net}.GlobalIPv6Address: "${ep.GlobalIPv6Address}" is not an IPv6 address`);
      }
      v6.push({ type: 'InternalIP', address: ep.GlobalIPv6Address });
    }
  }
  if (v4.length + v6.length === 0) {
    // Append overrides add to what Docker reports; alone they would replace the node's IPs too.
    if (kindContainerStopped(container)) return [];
    throw new Error(`container ${name}: no IP address on any network, though Docker reports it ${container.State?.Status || 'running'}`);
  }
  return dedupe([{ type: 'Hostname', address: name }, ...v4, ...v6, ...overrideAddresses]);
}

function dedupe(list: NodeAddress[]): NodeAddress[] {
  const seen = new Set<string>();
  return list.filter((a) => {
    const key = `${a.type}\u0000${a.address}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
