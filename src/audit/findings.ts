// The IP-range audit: overlaps among node addresses, node pod CIDRs, pools (ClusterCIDRs and the
// flags pool) and Service CIDRs, pod CIDRs outside every pool, and pod CIDRs this controller did
// not hand out. Pure: the `audit` command and the node IPAM controller feed it what they listed
// or watched and print, export or record the same findings.
//
// It sees what the API shows: `spec.podCIDRs`, not what a CNI with its own IPAM hands out.
import { CIDRParseError, parseCIDR, parseIPv4CIDRInto, parseIPv4Into, type CIDR } from '../ipam/cidr.js';
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

/**
 * The nodes audited: an array, or any list that gives each node by index when asked. The
 * controller's audit gives a view of its node cache that builds each AuditNode when read (once in
 * the sweep, again only for a finding), instead of a copy of every node held through the round:
 * 7 MiB at 130,000 nodes, on top of the rest of the round's copy, where the process's peak was.
 */
export interface AuditNodes {
  readonly length: number;
  at(index: number): AuditNode | undefined;
}

export interface AuditInput {
  nodes: AuditNodes;
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
  /** Every finding of the kinds asked for in detail (AuditOptions.detail), sorted. */
  findings: Finding[];
  /** Findings per severity, every kind counted. */
  counts: Record<Severity, number>;
  /** Findings per kind, every kind counted (those built and those only counted). */
  byKind: Record<FindingKind, number>;
  /** What the audit looked at, e.g. "12 nodes (11 with pod CIDRs), 3 pools, 1 Service range". */
  scope: string;
}

/** What the audit cannot see; printed with every report. */
export const AUDIT_VISIBILITY =
  'Sees spec.podCIDRs, node status.addresses, ClusterCIDRs and Service ranges as the API server shows them; ' +
  'a CNI with its own IPAM (one that ignores spec.podCIDRs) may use other ranges, which this audit cannot see.';

// Item kinds, in the order items of equal ranges are sorted and pairs are named.
const POD = 0;
const POOL = 1;
const SERVICE = 2;
const ADDRESS = 3;
type ItemKind = typeof POD | typeof POOL | typeof SERVICE | typeof ADDRESS;
const KIND_NAMES = ['pod', 'pool', 'service', 'address'] as const;

/**
 * Every range the audit sweeps, one row per item in typed columns: at 100,000 nodes it holds
 * 200,000 items at once, which as objects (each with its parsed CIDR, a BigInt and a text) were
 * some 400 B per node, the largest short-lived copy the controller made. A row is about 30 B. An
 * item's object name and value are looked up from its source only when a finding names it.
 */
class Items {
  count = 0;
  readonly kind: Uint8Array;
  readonly family: Uint8Array;
  readonly prefix: Uint8Array;
  /** The network address as four 32-bit words, most significant first (IPv4: the last word). */
  readonly words: Uint32Array;
  /** Items of the same owner never conflict with each other (a node's pod CIDRs, its addresses, one pool). */
  readonly owner: Int32Array;
  /** Index of the node, pool or Service range the item comes from, and of the item's text in its list. */
  readonly source: Int32Array;
  readonly index: Int32Array;
  /** Pod items: inside some pool (set while sweeping). */
  readonly inPool: Uint8Array;

  constructor(capacity: number) {
    this.kind = new Uint8Array(capacity);
    this.family = new Uint8Array(capacity);
    this.prefix = new Uint8Array(capacity);
    this.words = new Uint32Array(capacity * 4);
    this.owner = new Int32Array(capacity);
    this.source = new Int32Array(capacity);
    this.index = new Int32Array(capacity);
    this.inPool = new Uint8Array(capacity);
  }

  add(kind: ItemKind, cidr: CIDR, owner: number, source: number, index: number): number {
    const i = this.count++;
    this.kind[i] = kind;
    this.family[i] = cidr.family;
    this.prefix[i] = cidr.prefix;
    // Every word is written: a row given back by add()'s caller (a duplicate address) is reused.
    if (cidr.family === 4) this.words.fill(0, i * 4, i * 4 + 3)[i * 4 + 3] = Number(cidr.addr);
    else for (let w = 0; w < 4; w++) this.words[i * 4 + w] = Number((cidr.addr >> BigInt(96 - 32 * w)) & 0xffffffffn);
    this.owner[i] = owner;
    this.source[i] = source;
    this.index[i] = index;
    return i;
  }

  /**
   * A row straight from IPv4 text (CIDR text, or an address for an ADDRESS row), with no CIDR
   * object made (parseIPv4CIDRInto says why); false, and no row, when the text needs parseCIDR.
   */
  addIPv4(kind: ItemKind, text: string, owner: number, source: number, index: number): boolean {
    const i = this.count;
    const w = i * 4;
    const prefix = kind === ADDRESS ? (parseIPv4Into(text, this.words, w + 3) ? 32 : -1) : parseIPv4CIDRInto(text, this.words, w + 3);
    if (prefix < 0) return false;
    this.count++;
    this.words[w] = 0;
    this.words[w + 1] = 0;
    this.words[w + 2] = 0;
    this.kind[i] = kind;
    this.family[i] = 4;
    this.prefix[i] = prefix;
    this.owner[i] = owner;
    this.source[i] = source;
    this.index[i] = index;
    return true;
  }

  /** Address order, then shorter prefix first, then kind, then the order items were added. */
  compare(a: number, b: number): number {
    for (let w = 0; w < 4; w++) {
      const d = this.words[a * 4 + w]! - this.words[b * 4 + w]!;
      if (d !== 0) return d;
    }
    return this.prefix[a]! - this.prefix[b]! || this.kind[a]! - this.kind[b]! || a - b;
  }

  /** Same range: same family, address and prefix. */
  same(a: number, b: number): boolean {
    if (this.family[a] !== this.family[b] || this.prefix[a] !== this.prefix[b]) return false;
    for (let w = 0; w < 4; w++) if (this.words[a * 4 + w] !== this.words[b * 4 + w]) return false;
    return true;
  }

  /** Item `outer`'s range contains item `inner`'s (both of one family). */
  contains(outer: number, inner: number): boolean {
    const prefix = this.prefix[outer]!;
    if (this.prefix[inner]! < prefix) return false;
    // Family-relative bit count: IPv4 lives in the last word.
    let left = this.family[outer] === 4 ? prefix + 96 : prefix;
    for (let w = 0; w < 4 && left > 0; w++, left -= 32) {
      const mask = left >= 32 ? 0xffffffff : ~(0xffffffff >>> left) >>> 0;
      if (((this.words[outer * 4 + w]! ^ this.words[inner * 4 + w]!) & mask) !== 0) return false;
    }
    return true;
  }
}

function objectKind(kind: ItemKind, source: string): FindingObject['kind'] {
  if (kind === POD || kind === ADDRESS) return 'Node';
  if (source === 'flags') return 'Flag';
  return kind === POOL ? 'ClusterCIDR' : 'ServiceCIDR';
}

const describe = (o: FindingObject): string => {
  if (o.kind === 'Flag') return `${o.name} ${o.value}`;
  return `${o.kind} ${o.name} (${o.value})`;
};

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const DOTTED_QUAD = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Whether an address's text can be an IP at all: only those are parsed (and given a row). */
function mayBeIP(address: string): boolean {
  return address.includes(':') || DOTTED_QUAD.test(address);
}

/** Parses an IP address as a host CIDR, or undefined when it is not an IP (a Hostname entry). */
function parseAddress(address: string): CIDR | undefined {
  if (!mayBeIP(address)) return undefined;
  const bits = address.includes(':') ? 128 : 32;
  try {
    return parseCIDR(`${address}/${bits}`);
  } catch (err) {
    if (err instanceof CIDRParseError) return undefined;
    throw err;
  }
}

export interface AuditOptions {
  /**
   * Whether findings of a kind are built (message and objects) or only counted (byKind, counts).
   * Default: every kind is built. The controller's loop builds the conflicts alone: a cluster taken
   * over from another allocator has one PodCIDRNotAllocated per node, and at 130,000 nodes their
   * messages and objects were 50 MiB, held from one round to the next.
   */
  detail?: (kind: FindingKind) => boolean;
}

/**
 * The findings, sorted by severity (conflicts first), kind, then the objects. Runs in
 * O(n log n + overlapping pairs): CIDRs nest or are disjoint, so one sweep in address order with a
 * stack of enclosing ranges yields every overlapping pair.
 */
export function auditFindings(input: AuditInput, options: AuditOptions = {}): AuditReport {
  const findings: Finding[] = [];
  const byKind = Object.fromEntries(Object.keys(FINDING_KINDS).map((k) => [k, 0])) as Record<FindingKind, number>;
  const counts: Record<Severity, number> = { conflict: 0, warning: 0, info: 0 };
  const detail = options.detail;
  /** Counts a finding; builds its message and objects only when its kind is asked for in detail. */
  const add = (kind: FindingKind, message: () => string, objects: () => FindingObject[]): void => {
    byKind[kind]++;
    counts[FINDING_KINDS[kind]]++;
    if (detail && !detail(kind)) return;
    findings.push({ kind, severity: FINDING_KINDS[kind], message: message(), objects: objects() });
  };
  const parse = (kind: ItemKind, name: string, value: string, source: string): CIDR | undefined => {
    try {
      return parseCIDR(value);
    } catch (err) {
      if (!(err instanceof CIDRParseError)) throw err;
      const obj: FindingObject = { kind: objectKind(kind, source), name, value };
      add('InvalidCIDR', () => `${describe(obj)}: ${err.message}`, () => [obj]);
      return undefined;
    }
  };
  let capacity = 0;
  // A row for each address that can be an IP, not for every entry: Hostname and InternalDNS
  // entries are half a realistic node's addresses, and rows for them were 8 MiB of typed columns
  // at 130,000 nodes, held through the whole round.
  for (let i = 0; i < input.nodes.length; i++) {
    const n = input.nodes.at(i)!;
    capacity += n.podCIDRs.length;
    for (const a of n.addresses) if (mayBeIP(a.address)) capacity++;
  }
  for (const p of input.pools) capacity += p.cidrs.length;
  for (const s of input.serviceRanges) capacity += s.cidrs.length;
  const items = new Items(capacity);
  /** The finding object an item stands for; its value is the canonical range (an address as given). */
  const objOf = (i: number): FindingObject => {
    const source = items.source[i]!;
    const index = items.index[i]!;
    switch (items.kind[i] as ItemKind) {
      case POD: {
        const n = input.nodes.at(source)!;
        return { kind: 'Node', name: n.name, value: parseCIDR(n.podCIDRs[index]!).text };
      }
      case ADDRESS: {
        const n = input.nodes.at(source)!;
        return { kind: 'Node', name: n.name, value: n.addresses[index]!.address };
      }
      case POOL: {
        const p = input.pools[source]!;
        const kind = objectKind(POOL, p.source);
        return { kind, name: kind === 'Flag' ? '--cluster-cidr' : p.name, value: parseCIDR(p.cidrs[index]!).text };
      }
      case SERVICE: {
        const s = input.serviceRanges[source]!;
        const kind = objectKind(SERVICE, s.source);
        return { kind, name: kind === 'Flag' ? '--service-cluster-ip-range' : s.name, value: parseCIDR(s.cidrs[index]!).text };
      }
    }
  };
  /** The name findings sort pairs by (objOf(i).name, without building the object). */
  const nameOf = (i: number): string => {
    const source = items.source[i]!;
    switch (items.kind[i] as ItemKind) {
      case POD:
      case ADDRESS:
        return input.nodes.at(source)!.name;
      case POOL: {
        const p = input.pools[source]!;
        return p.source === 'flags' ? '--cluster-cidr' : p.name;
      }
      case SERVICE: {
        const s = input.serviceRanges[source]!;
        return s.source === 'flags' ? '--service-cluster-ip-range' : s.name;
      }
    }
  };
  /** "X and Y", for a pair of items that is a finding. */
  const describePair = (a: number, b: number): string => `${describe(objOf(a))} and ${describe(objOf(b))}`;

  let withPodCIDRs = 0;
  // A node's pod CIDRs are one owner, its addresses another; each pool and Service range one.
  let owners = 0;
  for (let source = 0; source < input.nodes.length; source++) {
    const n = input.nodes.at(source)!;
    const owner = owners++;
    if (n.podCIDRs.length > 0) withPodCIDRs++;
    const annotated = n.allocatedFrom !== undefined && n.allocatedFrom !== '';
    n.podCIDRs.forEach((text, index) => {
      if (items.addIPv4(POD, text, owner, source, index)) return;
      const cidr = parse(POD, n.name, text, 'node');
      if (cidr) items.add(POD, cidr, owner, source, index);
    });
    if (n.podCIDRs.length > 0 && !annotated) {
      const obj = (): FindingObject => ({ kind: 'Node', name: n.name, value: n.podCIDRs.join(',') });
      add('PodCIDRNotAllocated', () => `${describe(obj())}: pod CIDRs without the ${POD_CIDR_POOL_ANNOTATION} annotation: not allocated by node-address-ccm (another allocator, a CNI, or set by hand)`, () => [obj()]);
    }
    const addressOwner = owners++;
    // A node's addresses, each range once: compared with the node's earlier address items.
    const first = items.count;
    n.addresses.forEach((a, index) => {
      if (!mayBeIP(a.address)) return;
      let i = items.count;
      if (!items.addIPv4(ADDRESS, a.address, addressOwner, source, index)) {
        const cidr = parseAddress(a.address);
        if (!cidr) return;
        i = items.add(ADDRESS, cidr, addressOwner, source, index);
      }
      for (let j = first; j < i; j++) {
        if (items.same(i, j)) {
          items.count--;
          return;
        }
      }
    });
  }
  input.pools.forEach((p, source) => {
    const owner = owners++;
    p.cidrs.forEach((text, index) => {
      const cidr = parse(POOL, p.name, text, p.source);
      if (cidr) items.add(POOL, cidr, owner, source, index);
    });
  });
  input.serviceRanges.forEach((s, source) => {
    const owner = owners++;
    s.cidrs.forEach((text, index) => {
      const cidr = parse(SERVICE, s.name, text, s.source);
      if (cidr) items.add(SERVICE, cidr, owner, source, index);
    });
  });

  // Service ranges repeated by several sources (a ServiceCIDR and the flag naming the same range)
  // count once per pair of objects, which the owner check already gives.
  const pair = (outer: number, inner: number): void => {
    if (items.owner[outer] === items.owner[inner]) return;
    // The pair in kind order, then by name (the order findings name them in).
    const [a, b] = (items.kind[outer]! - items.kind[inner]! || cmp(nameOf(outer), nameOf(inner))) > 0 ? [inner, outer] : [outer, inner];
    switch (`${KIND_NAMES[items.kind[a] as ItemKind]}-${KIND_NAMES[items.kind[b] as ItemKind]}`) {
      case 'pod-pod':
        return add('PodCIDROverlap', () => `pod CIDRs overlap: ${describePair(a, b)}`, () => [objOf(a), objOf(b)]);
      case 'pod-service':
        return add('PodCIDRServiceOverlap', () => `pod CIDR overlaps a Service range: ${describePair(a, b)}`, () => [objOf(a), objOf(b)]);
      case 'pod-pool':
        // CIDRs nest: the pod CIDR lies inside the pool (every allocated node), or holds the whole pool.
        if (items.kind[inner] === POD) items.inPool[inner] = 1;
        else add('PodCIDRContainsPool', () => `pod CIDR contains a pool (nothing inside it is handed out while the node holds it): ${describe(objOf(outer))} holds ${describe(objOf(inner))}`, () => [objOf(outer), objOf(inner)]);
        return;
      case 'pod-address':
        return add('NodeAddressInPodCIDR', () => `node address inside a pod CIDR: ${describe(objOf(b))} in ${describe(objOf(a))}`, () => [objOf(b), objOf(a)]);
      case 'pool-pool':
        return add('PoolOverlap', () => `pools overlap (allowed: each block goes to one node): ${describePair(a, b)}`, () => [objOf(a), objOf(b)]);
      case 'pool-service':
        return add('PoolServiceOverlap', () => `pool overlaps a Service range (those addresses are never handed out): ${describePair(a, b)}`, () => [objOf(a), objOf(b)]);
      case 'pool-address':
        return add('NodeAddressInPool', () => `node address inside a pool (a block holding it may be handed out): ${describe(objOf(b))} in ${describe(objOf(a))}`, () => [objOf(b), objOf(a)]);
      case 'service-address':
        return add('NodeAddressInServiceRange', () => `node address inside a Service range: ${describe(objOf(b))} in ${describe(objOf(a))}`, () => [objOf(b), objOf(a)]);
      default:
        // service-service (two ServiceCIDRs may overlap by design) and address-address (two nodes
        // reporting one address is the node controller's business) are not this audit's concern.
        return;
    }
  };
  for (const family of [4, 6] as const) {
    let size = 0;
    for (let i = 0; i < items.count; i++) if (items.family[i] === family) size++;
    const order = new Uint32Array(size);
    for (let i = 0, k = 0; i < items.count; i++) if (items.family[i] === family) order[k++] = i;
    order.sort((x, y) => items.compare(x, y));
    const stack: number[] = [];
    for (const it of order) {
      while (stack.length > 0 && !items.contains(stack[stack.length - 1]!, it)) stack.pop();
      for (const outer of stack) pair(outer, it);
      stack.push(it);
    }
  }
  if (input.pools.length > 0) {
    for (let i = 0; i < items.count; i++) {
      if (items.kind[i] !== POD || items.inPool[i] === 1) continue;
      add('PodCIDROutsidePools', () => `${describe(objOf(i))}: pod CIDR inside no pool`, () => [objOf(i)]);
    }
  }
  const sevOrder: Record<Severity, number> = { conflict: 0, warning: 1, info: 2 };
  findings.sort((a, b) => sevOrder[a.severity] - sevOrder[b.severity] || cmp(a.kind, b.kind) || cmp(a.message, b.message));
  const scope =
    `${input.nodes.length} node(s) (${withPodCIDRs} with pod CIDRs), ${input.pools.length} pool(s), ` +
    `${input.serviceRanges.length} Service range object(s)`;
  return { findings, counts, byKind, scope };
}

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
