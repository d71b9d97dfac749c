// Pure mapping from a Docker Engine container inspect object to a kind node's addresses.
import { isIPv4, isIPv6 } from 'node:net';
import type { NodeAddress } from '../../src/model/node-address.js';
import { checkOverrideAddress, type KindAddressOverride, type KindOverrides } from './overrides.js';

export const KIND_CLUSTER_LABEL = 'io.x-k8s.kind.cluster';
/** The network kind creates and attaches every node to. */
export const KIND_NETWORK = 'kind';

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

// kind first, then the rest by name, so extra networks never reorder the primary address.
function orderedNetworks(networks: Record<string, DockerEndpoint>): [string, DockerEndpoint][] {
  return Object.entries(networks).sort(([a], [b]) => {
    if (a === b) return 0;
    if (a === KIND_NETWORK) return -1;
    if (b === KIND_NETWORK) return 1;
    return a < b ? -1 : 1;
  });
}

function overrideFor(name: string, overrides: KindAddressOptions['overrides']): KindAddressOverride | undefined {
  if (!overrides) return undefined;
  if ('nodes' in overrides) return overrides.nodes[name];
  return overrides;
}

/**
 * Hostname, then the IPv4 address of each network, then the global IPv6 address of each
 * network (all InternalIP; kind network first, others by name), then any override entries;
 * a replace override stands for the whole list.
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
  const ordered = orderedNetworks(networks ?? {});
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
  // A stopped or restarting container has no IPs; reporting only a hostname would strip the node.
  if (v4.length + v6.length === 0) throw new Error(`container ${name}: no IP address on any network`);
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
