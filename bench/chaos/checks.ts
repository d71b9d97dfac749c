// What a chaos run checks once the faults stop, as pure functions over the stored nodes, the
// writes the double saw and the replicas' lifetimes. Expected addresses are written out from
// KEP-3705's rules for the three annotations the harness uses, not computed by the code under test.
import { cidrContains, cidrsOverlap, parseCIDR } from '../../src/ipam/cidr.js';

export const UNINITIALIZED = 'node.cloudprovider.kubernetes.io/uninitialized';
export const NODE_IP_ANNOTATION = 'alpha.kubernetes.io/provided-node-ip';

export interface Address {
  type: string;
  address: string;
}

/** One node of the chaos pool: what the cloud reports for it, and the annotations it may get. */
export interface PoolNode {
  name: string;
  /**
   * Cloud addresses, in the cloud's order: an IPv6 InternalIP listed first, an IPv4 InternalIP
   * and an ExternalIP. Listed IPv6 first, so a node without the annotation is IPv6-primary, and a
   * dual-stack annotation in either order is a reordering of the same addresses (issue 36).
   */
  cloud: Address[];
  /** The node's IPv4 and IPv6 InternalIPs. */
  v4: string;
  v6: string;
  /** A host IP the cloud does not report: the annotation that cannot be satisfied. */
  foreignIP: string;
}

export function poolNode(i: number): PoolNode {
  const name = `chaos-${String(i).padStart(3, '0')}`;
  const v4 = `10.1.${i}.1`;
  const v6 = `fd00:1::${(i + 1).toString(16)}`;
  return {
    name,
    cloud: [
      { type: 'InternalIP', address: v6 },
      { type: 'InternalIP', address: v4 },
      { type: 'ExternalIP', address: `198.51.100.${i}` },
    ],
    v4,
    v6,
    foreignIP: `10.9.${i}.9`,
  };
}

/** The provided-node-ip values the harness gives a pool node (undefined: no annotation). */
export function annotationChoices(n: PoolNode): (string | undefined)[] {
  return [undefined, n.v4, n.v6, `${n.v4},${n.v6}`, `${n.v6},${n.v4}`, n.foreignIP];
}

/**
 * status.addresses once initialised, or undefined when the annotation cannot be satisfied,
 * written out from KEP-3705's rules: no annotation keeps the cloud's list; otherwise the cloud's
 * addresses equal to each node IP come first, in the annotation's order, then the cloud's
 * addresses of every type no node IP matched (the ExternalIP); the kubelet's Hostname is added
 * last since the cloud reports none.
 */
export function expectedAddresses(n: PoolNode, annotation: string | undefined): Address[] | undefined {
  const host = { type: 'Hostname', address: n.name };
  if (annotation === undefined) return [...n.cloud, host];
  const matched: Address[] = [];
  for (const ip of annotation.split(',')) {
    const hit = n.cloud.find((a) => a.address === ip);
    if (!hit) return undefined;
    matched.push(hit);
  }
  const claimed = new Set(matched.map((a) => a.type));
  return [...matched, ...n.cloud.filter((a) => !claimed.has(a.type)), host];
}

/**
 * The node's host IPs as Kubernetes reads them from status.addresses (GetNodeHostIPs in
 * k8s.io/kubernetes pkg/util/node): the InternalIPs, then the ExternalIPs; the first of those,
 * and the first after it of the other family. What kubelet, kube-proxy and `kubectl logs/exec`
 * take as the node's IPs, so a node whose list reorders its InternalIPs changed its primary IP.
 */
export function hostIPs(addresses: readonly Address[]): string[] {
  const ips = [...addresses.filter((a) => a.type === 'InternalIP'), ...addresses.filter((a) => a.type === 'ExternalIP')].map((a) => a.address);
  if (ips.length === 0) return [];
  const v6 = (ip: string): boolean => ip.includes(':');
  const other = ips.find((ip) => v6(ip) !== v6(ips[0]));
  return other === undefined ? [ips[0]] : [ips[0], other];
}

/** The same addresses, each as often, whatever their order. */
function sameAddressSet(a: readonly Address[], b: readonly Address[]): boolean {
  const key = (l: readonly Address[]): string => l.map((x) => `${x.type} ${x.address}`).sort().join('|');
  return key(a) === key(b);
}

export interface StoredNode {
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: { podCIDR?: string; podCIDRs?: string[]; taints?: { key: string }[] };
  status?: { addresses?: Address[] };
}

export interface Ranges {
  clusterCIDRs: string[];
  maskSize: number;
  serviceCIDRs: string[];
}

/** Problems with the nodes as stored: pod CIDRs, addresses, taints. Empty when converged. */
export function nodeProblems(nodes: StoredNode[], pool: Map<string, PoolNode>, ranges: Ranges): string[] {
  const out: string[] = [];
  const held: { node: string; cidr: ReturnType<typeof parseCIDR> }[] = [];
  const clusters = ranges.clusterCIDRs.map(parseCIDR);
  const services = ranges.serviceCIDRs.map(parseCIDR);
  for (const n of nodes) {
    const name = n.metadata.name;
    const p = pool.get(name);
    if (!p) {
      out.push(`${name}: not a node of the chaos pool`);
      continue;
    }
    const annotation = n.metadata.annotations?.[NODE_IP_ANNOTATION];
    const want = expectedAddresses(p, annotation);
    const tainted = (n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED);
    const cidrs = n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []);
    if (want === undefined) {
      if (!tainted) out.push(`${name}: untainted although its annotation ${annotation} is not an address of the cloud`);
    } else {
      if (tainted) out.push(`${name}: still tainted (annotation ${annotation ?? 'none'})`);
      // Issue 36's invariant: exactly the decided addresses, and the same host IPs as the decided
      // list; a reordering that changes neither may be left unwritten.
      const got = n.status?.addresses ?? [];
      if (!tainted && !(sameAddressSet(got, want) && JSON.stringify(hostIPs(got)) === JSON.stringify(hostIPs(want)))) {
        out.push(`${name}: addresses ${JSON.stringify(got)} (host IPs ${hostIPs(got).join(',')}), want ${JSON.stringify(want)} (host IPs ${hostIPs(want).join(',')}) (annotation ${annotation ?? 'none'})`);
      }
      if (!tainted && cidrs.length !== 1) out.push(`${name}: initialised with pod CIDRs ${JSON.stringify(cidrs)}, want one`);
    }
    for (const text of cidrs) {
      let c;
      try {
        c = parseCIDR(text);
      } catch {
        out.push(`${name}: pod CIDR ${text} does not parse`);
        continue;
      }
      if (c.prefix !== ranges.maskSize) out.push(`${name}: pod CIDR ${text} is not a /${ranges.maskSize}`);
      if (!clusters.some((k) => cidrContains(k, c))) out.push(`${name}: pod CIDR ${text} outside the pools ${ranges.clusterCIDRs.join(',')}`);
      for (const s of services) if (cidrsOverlap(s, c)) out.push(`${name}: pod CIDR ${text} overlaps the Service range ${s.text}`);
      for (const h of held) if (cidrsOverlap(h.cidr, c)) out.push(`${name}: pod CIDR ${text} overlaps ${h.node}'s ${h.cidr.text}`);
      held.push({ node: name, cidr: c });
    }
  }
  return out;
}

/** A non-lease write a replica sent, with the Lease as stored when it arrived. */
export interface WriteRecord {
  at: number;
  user: string;
  verb: string;
  what: string;
  holder: string;
  /** Epoch ms of the Lease's renewTime, and its duration. */
  renewMs: number;
  leaseMs: number;
}

/**
 * Writes sent by a replica that did not hold a valid Lease when the write arrived: the Lease named
 * another identity, or it had expired. `identities` maps each user to the identities its processes used.
 */
export function unfencedWrites(writes: WriteRecord[], identities: Map<string, Set<string>>): string[] {
  const out: string[] = [];
  for (const w of writes) {
    const mine = identities.get(w.user) ?? new Set<string>();
    if (!mine.has(w.holder)) out.push(`${new Date(w.at).toISOString()} ${w.user} ${w.verb} ${w.what} while the Lease named ${JSON.stringify(w.holder)} (renewed ${new Date(w.renewMs).toISOString()})`);
    else if (w.at > w.renewMs + w.leaseMs) out.push(`${new Date(w.at).toISOString()} ${w.user} ${w.verb} ${w.what} ${w.at - w.renewMs - w.leaseMs} ms after its Lease expired`);
  }
  return out;
}

export interface Lifetime {
  slot: number;
  pid: number;
  stoppedLeadingAt?: number;
  stoppedReason?: string;
  exitedAt?: number;
  exitCode?: number | null;
}

/** Replicas that logged "stopped leading" and did not exit 1 within `limitMs` (as of `now`). */
export function slowExits(lives: Lifetime[], limitMs: number, now: number): string[] {
  const out: string[] = [];
  for (const l of lives) {
    if (l.stoppedLeadingAt === undefined) continue;
    const end = l.exitedAt ?? now;
    const took = end - l.stoppedLeadingAt;
    if (l.exitedAt === undefined && took > limitMs) out.push(`replica ${l.slot} (pid ${l.pid}) stopped leading (${l.stoppedReason}) ${took} ms ago and is still running`);
    else if (l.exitedAt !== undefined && took > limitMs) out.push(`replica ${l.slot} (pid ${l.pid}) exited ${took} ms after it stopped leading (${l.stoppedReason}); limit ${limitMs} ms`);
    else if (l.exitedAt !== undefined && l.exitCode !== 1) out.push(`replica ${l.slot} (pid ${l.pid}) stopped leading (${l.stoppedReason}) and exited ${l.exitCode}, want 1`);
  }
  return out;
}
