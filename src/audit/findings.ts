// The IP-range audit: overlaps among node addresses, node pod CIDRs, pools (ClusterCIDRs and the
// flags pool) and Service CIDRs, pod CIDRs outside every pool, and pod CIDRs this controller did
// not hand out. Pure: the `audit` command and the node IPAM controller feed it what they listed
// or watched and print, export or record the same findings.
//
// It sees what the API shows: `spec.podCIDRs`, not what a CNI with its own IPAM hands out.
import { CIDRParseError, cidrContains, parseCIDR, type CIDR } from '../ipam/cidr.js';
import { POD_CIDR_POOL_ANNOTATION } from '../model/node.js';

export interface AuditNode {
  name: string;
  /** status.addresses (any type; Hostname entries that are not IPs are ignored). */
  addresses: { type: string; address: string }[];
  podCIDRs: string[];
  /** The POD_CIDR_POOL_ANNOTATION value, if any. */
  allocatedFrom?: string;
}

export interface AuditPool {
  name: string;
  cidrs: string[];
  terminating?: boolean;
  /** 'ClusterCIDR' for objects, 'flags' for the in-memory --cluster-cidr pool. */
  source: 'ClusterCIDR' | 'flags';
}

export interface AuditServiceRange {
  name: string;
  cidrs: string[];
  terminating?: boolean;
  /** 'ServiceCIDR' for objects, 'flags' for --service-cluster-ip-range. */
  source: 'ServiceCIDR' | 'flags';
}

export interface AuditInput {
  nodes: AuditNode[];
  pools: AuditPool[];
  serviceRanges: AuditServiceRange[];
}

export type Severity = 'conflict' | 'warning' | 'info';

export const FINDING_KINDS = {
  /** Two nodes' pod CIDRs overlap: pods of both get the same IPs. */
  PodCIDROverlap: 'conflict',
  /** A pod CIDR overlaps a Service range: pod IPs collide with ClusterIPs. */
  PodCIDRServiceOverlap: 'conflict',
  /** A node address lies inside a pod CIDR. */
  NodeAddressInPodCIDR: 'conflict',
  /** A node address lies inside a Service range. */
  NodeAddressInServiceRange: 'conflict',
  /** A node address lies inside a pool: a later block may contain it. */
  NodeAddressInPool: 'warning',
  /** A pod CIDR inside no pool (set by hand, another allocator, or its pool was removed). */
  PodCIDROutsidePools: 'warning',
  /** A pod CIDR that contains a pool (an old, wider range): nothing inside it is handed out. */
  PodCIDRContainsPool: 'warning',
  /** A pod CIDR without this controller's annotation: another writer set it. */
  PodCIDRNotAllocated: 'warning',
  /** A CIDR that does not parse. */
  InvalidCIDR: 'warning',
  /** Pools overlap: allowed by design (selectors, sizes); blocks are never handed out twice. */
  PoolOverlap: 'info',
  /** A pool overlaps a Service range: those addresses are excluded from allocation. */
  PoolServiceOverlap: 'info',
} as const satisfies Record<string, Severity>;

export type FindingKind = keyof typeof FINDING_KINDS;

export interface FindingObject {
  kind: 'Node' | 'ClusterCIDR' | 'ServiceCIDR' | 'Flag';
  name: string;
  /** The range or address of this object involved. */
  value: string;
}

export interface Finding {
  kind: FindingKind;
  severity: Severity;
  message: string;
  objects: FindingObject[];
}

export interface AuditReport {
  findings: Finding[];
  counts: Record<Severity, number>;
  /** What the audit looked at, e.g. "12 nodes (11 with pod CIDRs), 3 pools, 1 Service range". */
  scope: string;
}

/** What the audit cannot see; printed with every report. */
export const AUDIT_VISIBILITY =
  'Sees spec.podCIDRs, node status.addresses, ClusterCIDRs and Service ranges as the API server shows them; ' +
  'a CNI with its own IPAM (one that ignores spec.podCIDRs) may use other ranges, which this audit cannot see.';

type ItemKind = 'pod' | 'pool' | 'service' | 'address';

// At 100,000 nodes the audit holds 200,000 items at once: they are kept small (a number for the
// owner, no per-node sets, message text only for actual findings).
interface Item {
  kind: ItemKind;
  cidr: CIDR;
  /** The finding object this item stands for, built only when a finding names it (objOf). */
  objKind: FindingObject['kind'];
  name: string;
  value: string;
  /** Owner key: items of the same owner never conflict with each other. */
  owner: number;
  /** Pod items: inside some pool (set while scanning). */
  inPool: boolean;
}

function objOf(it: Item): FindingObject {
  return { kind: it.objKind, name: it.name, value: it.value };
}

/** "X and Y", for a pair of items that is a finding. */
function describePair(a: Item, b: Item): string {
  return `${describe(objOf(a))} and ${describe(objOf(b))}`;
}

function objectKind(kind: ItemKind, source: string): FindingObject['kind'] {
  if (kind === 'pod' || kind === 'address') return 'Node';
  if (source === 'flags') return 'Flag';
  return kind === 'pool' ? 'ClusterCIDR' : 'ServiceCIDR';
}

const describe = (o: FindingObject): string => {
  if (o.kind === 'Flag') return `${o.name} ${o.value}`;
  return `${o.kind} ${o.name} (${o.value})`;
};

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Parses an IP address as a host CIDR, or undefined when it is not an IP (a Hostname entry). */
function parseAddress(address: string): CIDR | undefined {
  const bits = address.includes(':') ? 128 : 32;
  if (bits === 32 && !/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) return undefined;
  try {
    return parseCIDR(`${address}/${bits}`);
  } catch (err) {
    if (err instanceof CIDRParseError) return undefined;
    throw err;
  }
}

/**
 * The findings, sorted by severity (conflicts first), kind, then the objects. Runs in
 * O(n log n + overlapping pairs): CIDRs nest or are disjoint, so one sweep in address order with a
 * stack of enclosing ranges yields every overlapping pair.
 */
export function auditFindings(input: AuditInput): AuditReport {
  const findings: Finding[] = [];
  const add = (kind: FindingKind, message: string, objects: FindingObject[]): void => {
    findings.push({ kind, severity: FINDING_KINDS[kind], message, objects });
  };
  const items: Item[] = [];
  const parse = (kind: ItemKind, name: string, value: string, source: string): CIDR | undefined => {
    try {
      return parseCIDR(value);
    } catch (err) {
      if (!(err instanceof CIDRParseError)) throw err;
      const obj: FindingObject = { kind: objectKind(kind, source), name, value };
      add('InvalidCIDR', `${describe(obj)}: ${err.message}`, [obj]);
      return undefined;
    }
  };
  let withPodCIDRs = 0;
  // A node's pod CIDRs are one owner, its addresses another; each pool and Service range one.
  let owners = 0;
  for (const n of input.nodes) {
    const owner = owners++;
    if (n.podCIDRs.length > 0) withPodCIDRs++;
    const annotated = n.allocatedFrom !== undefined && n.allocatedFrom !== '';
    for (const text of n.podCIDRs) {
      const cidr = parse('pod', n.name, text, 'node');
      if (cidr) items.push({ kind: 'pod', cidr, owner, inPool: false, objKind: 'Node', name: n.name, value: cidr.text });
    }
    if (n.podCIDRs.length > 0 && !annotated) {
      const obj: FindingObject = { kind: 'Node', name: n.name, value: n.podCIDRs.join(',') };
      add('PodCIDRNotAllocated', `${describe(obj)}: pod CIDRs without the ${POD_CIDR_POOL_ANNOTATION} annotation: not allocated by node-address-ccm (another allocator, a CNI, or set by hand)`, [obj]);
    }
    const addressOwner = owners++;
    // A node has a handful of addresses: a list, not a Set per node.
    const seen: string[] = [];
    for (const a of n.addresses) {
      const cidr = parseAddress(a.address);
      if (!cidr || seen.includes(cidr.text)) continue;
      seen.push(cidr.text);
      items.push({ kind: 'address', cidr, owner: addressOwner, inPool: false, objKind: 'Node', name: n.name, value: a.address });
    }
  }
  for (const p of input.pools) {
    const owner = owners++;
    for (const text of p.cidrs) {
      const cidr = parse('pool', p.name, text, p.source);
      const kind = objectKind('pool', p.source);
      if (cidr) items.push({ kind: 'pool', cidr, owner, inPool: false, objKind: kind, name: kind === 'Flag' ? '--cluster-cidr' : p.name, value: cidr.text });
    }
  }
  for (const s of input.serviceRanges) {
    const owner = owners++;
    for (const text of s.cidrs) {
      const cidr = parse('service', s.name, text, s.source);
      const kind = objectKind('service', s.source);
      if (cidr) items.push({ kind: 'service', cidr, owner, inPool: false, objKind: kind, name: kind === 'Flag' ? '--service-cluster-ip-range' : s.name, value: cidr.text });
    }
  }

  // Service ranges repeated by several sources (a ServiceCIDR and the flag naming the same range)
  // count once per pair of objects, which the owner check already gives.
  const pair = (outer: Item, inner: Item): void => {
    if (outer.owner === inner.owner) return;
    // The pair in kind order, then by name (the order findings name them in).
    const [a, b] = (ORDER[outer.kind] - ORDER[inner.kind] || cmp(outer.name, inner.name)) > 0 ? [inner, outer] : [outer, inner];
    switch (`${a.kind}-${b.kind}`) {
      case 'pod-pod':
        return add('PodCIDROverlap', `pod CIDRs overlap: ${describePair(a, b)}`, [objOf(a), objOf(b)]);
      case 'pod-service':
        return add('PodCIDRServiceOverlap', `pod CIDR overlaps a Service range: ${describePair(a, b)}`, [objOf(a), objOf(b)]);
      case 'pod-pool':
        // CIDRs nest: the pod CIDR lies inside the pool (every allocated node), or holds the whole pool.
        if (inner.kind === 'pod') inner.inPool = true;
        else add('PodCIDRContainsPool', `pod CIDR contains a pool (nothing inside it is handed out while the node holds it): ${describe(objOf(outer))} holds ${describe(objOf(inner))}`, [objOf(outer), objOf(inner)]);
        return;
      case 'pod-address':
        return add('NodeAddressInPodCIDR', `node address inside a pod CIDR: ${describe(objOf(b))} in ${describe(objOf(a))}`, [objOf(b), objOf(a)]);
      case 'pool-pool':
        return add('PoolOverlap', `pools overlap (allowed: each block goes to one node): ${describePair(a, b)}`, [objOf(a), objOf(b)]);
      case 'pool-service':
        return add('PoolServiceOverlap', `pool overlaps a Service range (those addresses are never handed out): ${describePair(a, b)}`, [objOf(a), objOf(b)]);
      case 'pool-address':
        return add('NodeAddressInPool', `node address inside a pool (a block holding it may be handed out): ${describe(objOf(b))} in ${describe(objOf(a))}`, [objOf(b), objOf(a)]);
      case 'service-address':
        return add('NodeAddressInServiceRange', `node address inside a Service range: ${describe(objOf(b))} in ${describe(objOf(a))}`, [objOf(b), objOf(a)]);
      default:
        // service-service (two ServiceCIDRs may overlap by design) and address-address (two nodes
        // reporting one address is the node controller's business) are not this audit's concern.
        return;
    }
  };
  for (const family of [4, 6] as const) {
    const list = items.filter((i) => i.cidr.family === family);
    list.sort((x, y) => (x.cidr.addr < y.cidr.addr ? -1 : x.cidr.addr > y.cidr.addr ? 1 : x.cidr.prefix - y.cidr.prefix || ORDER[x.kind] - ORDER[y.kind]));
    const stack: Item[] = [];
    for (const it of list) {
      while (stack.length > 0 && !cidrContains(stack[stack.length - 1]!.cidr, it.cidr)) stack.pop();
      for (const outer of stack) pair(outer, it);
      stack.push(it);
    }
  }
  if (input.pools.length > 0) {
    for (const it of items) {
      if (it.kind !== 'pod' || it.inPool) continue;
      add('PodCIDROutsidePools', `${describe(objOf(it))}: pod CIDR inside no pool`, [objOf(it)]);
    }
  }
  const sevOrder: Record<Severity, number> = { conflict: 0, warning: 1, info: 2 };
  findings.sort((a, b) => sevOrder[a.severity] - sevOrder[b.severity] || cmp(a.kind, b.kind) || cmp(a.message, b.message));
  const counts: Record<Severity, number> = { conflict: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  const scope =
    `${input.nodes.length} node(s) (${withPodCIDRs} with pod CIDRs), ${input.pools.length} pool(s), ` +
    `${input.serviceRanges.length} Service range object(s)`;
  return { findings, counts, scope };
}

const ORDER: Record<ItemKind, number> = { pod: 0, pool: 1, service: 2, address: 3 };

/** A stable key per finding (kind plus objects), for "new since last time" event de-duplication. */
export function findingKey(f: Finding): string {
  return `${f.kind}|${f.objects.map((o) => `${o.kind}/${o.name}=${o.value}`).join('|')}`;
}

/** The report as text lines: a summary, the visibility note, then one line per finding. */
export function formatAuditReport(report: AuditReport): string {
  const lines = [
    `audit: ${report.scope}`,
    `findings: ${report.counts.conflict} conflict(s), ${report.counts.warning} warning(s), ${report.counts.info} info`,
    `note: ${AUDIT_VISIBILITY}`,
  ];
  for (const f of report.findings) lines.push(`${f.severity.toUpperCase().padEnd(8)} ${f.kind}: ${f.message}`);
  return `${lines.join('\n')}\n`;
}
