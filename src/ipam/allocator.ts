// PodCIDRAllocator: the one in-process allocator shared by the node controller and the node IPAM
// controller. Pure state, no I/O: callers feed it pools, exclusions and nodes, and write the
// results to the API server themselves.
import { CIDRParseError, cidrContains, cidrsOverlap, parseCIDR, type CIDR } from './cidr.js';
import { CIDRSet, CIDRSetError } from './cidrset.js';
import { ClusterCIDRValidationError, immutableFieldChanged, type ClusterCIDR } from './clustercidr.js';
import { ExclusionRegistry, type ExclusionChange } from './exclusions.js';
import type { IPAMMetricsSink } from './metrics.js';
import { nodeIndexKeys, type NodeView } from './selector.js';

export interface ExclusionConflict {
  node: string;
  podCIDR: string;
  exclusion: string;
}

export type OccupyResult =
  | { ok: true; pool: string; pools: string[]; conflicts: ExclusionConflict[] }
  | {
      ok: false;
      reason: 'invalid-cidr' | 'outside-every-pool' | 'claimed-by-other-node';
      podCIDR: string;
      otherNode?: string;
      message: string;
      /**
       * The node's other blocks, recorded for it all the same: a node whose IPv4 block clashes
       * still holds its IPv6 block, which must never be handed to another node.
       */
      recorded: string[];
    };

export interface AllocationResult {
  podCIDRs: string[];
  pool: string;
  /** Why this pool won, in words for events and logs. */
  reason: string;
  /** True when the node already had these blocks. */
  existing?: boolean;
}

export interface NodeAllocation {
  podCIDRs: string[];
  /** The pool each pod CIDR belongs to. */
  pools: string[];
  pool: string;
}

export interface FamilyStats {
  clusterCIDR: string;
  maskSize: number;
  used: bigint;
  free: bigint;
  excluded: bigint;
  total: bigint;
  /** used / total, 0..1. */
  usage: number;
}

export interface PoolStats {
  name: string;
  terminating: boolean;
  fromFlags: boolean;
  nodes: number;
  /** Of the limiting family: the largest used, the smallest free and total. */
  used: bigint;
  free: bigint;
  total: bigint;
  usage: number;
  families: FamilyStats[];
}

export class CIDRNotAvailableError extends Error {
  override name = 'CIDRNotAvailableError';
  constructor(
    readonly node: string,
    readonly tried: { pool: string; reason: string }[],
  ) {
    super(
      tried.length === 0
        ? `no pod CIDR available for node "${node}": no pool matches it`
        : `no pod CIDR available for node "${node}": ${tried.map((t) => `pool "${t.pool}": ${t.reason}`).join('; ')}`,
    );
  }
}

export class PoolInUseError extends Error {
  override name = 'PoolInUseError';
  constructor(
    readonly pool: string,
    readonly nodes: string[],
  ) {
    super(`pool "${pool}" is still used by ${nodes.length} node(s): ${nodes.slice(0, 5).join(', ')}${nodes.length > 5 ? ', …' : ''}`);
  }
}

interface PoolState {
  spec: ClusterCIDR;
  sets: CIDRSet[];
  nodes: Set<string>;
  /** Smallest capacity over the families (a dual-stack pool is as big as its smaller side). */
  capacity: bigint;
  hostBits: number;
  cidrText: string;
  /** Position in the node-independent order. */
  rank: number;
}

interface RangeEntry {
  pool: PoolState;
  cidr: CIDR;
  maskSize: number;
  parent: number;
}

interface NodeRecord {
  podCIDRs: string[];
  parsed: CIDR[];
  /** Per pod CIDR: the pool state it was placed in. */
  pools: PoolState[];
}

export interface PodCIDRAllocatorOptions {
  metrics?: IPAMMetricsSink;
}

function cmpBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class PodCIDRAllocator {
  private readonly pools = new Map<string, PoolState>();
  private readonly nodes = new Map<string, NodeRecord>();
  private readonly exclusions = new ExclusionRegistry();
  private readonly metrics: IPAMMetricsSink | undefined;
  private ordered: PoolState[] | null = null;
  /** Selector pre-filter, rebuilt with `ordered`: pools by index key, and pools always scored. */
  private index: { byKey: Map<string, PoolState[]>; always: PoolState[]; fallback: PoolState[] } | null = null;
  private ranges: [RangeEntry[], RangeEntry[]] | null = null;
  /** Per set: the other pools' sets whose ranges overlap it. */
  private overlaps: Map<CIDRSet, CIDRSet[]> | null = null;

  constructor(options: PodCIDRAllocatorOptions = {}) {
    this.metrics = options.metrics;
  }

  /** Adds a pool or updates its terminating flag. Throws when an immutable field changed. */
  upsertPool(spec: ClusterCIDR): 'created' | 'updated' | 'unchanged' {
    const cur = this.pools.get(spec.name);
    if (cur) {
      const field = immutableFieldChanged(cur.spec, spec);
      if (field) throw new ClusterCIDRValidationError(spec.name, field, 'is immutable');
      if (cur.spec.terminating === spec.terminating) return 'unchanged';
      cur.spec = { ...cur.spec, terminating: spec.terminating };
      return 'updated';
    }
    const sets = spec.families.map((f) => new CIDRSet(f.cidr.text, f.maskSize));
    for (const c of this.exclusions.all()) for (const s of sets) s.addExclusion(c.text);
    // Blocks already handed out through other pools are never handed out again.
    for (const rec of this.nodes.values()) {
      for (const c of rec.parsed) for (const s of sets) if (s.overlaps(c.text)) s.occupy(c.text);
    }
    const state: PoolState = {
      spec,
      sets,
      nodes: new Set(),
      capacity: sets.reduce((m, s) => (s.capacity < m ? s.capacity : m), sets[0].capacity),
      hostBits: Math.min(...spec.families.map((f) => f.cidr.bits - f.maskSize)),
      cidrText: spec.families.map((f) => f.cidr.text).join(','),
      rank: 0,
    };
    this.pools.set(spec.name, state);
    this.ordered = null;
    this.overlaps = null;
    this.ranges = null;
    this.emitUsage(state);
    return 'created';
  }

  markTerminating(name: string): boolean {
    const p = this.pools.get(name);
    if (!p) return false;
    p.spec = { ...p.spec, terminating: true };
    return true;
  }

  /** Removes an unused pool. Throws PoolInUseError while nodes hold blocks from it. */
  removePool(name: string): boolean {
    const p = this.pools.get(name);
    if (!p) return false;
    if (p.nodes.size > 0) throw new PoolInUseError(name, this.nodesOfPool(name));
    this.pools.delete(name);
    this.ordered = null;
    this.overlaps = null;
    this.ranges = null;
    return true;
  }

  hasPool(name: string): boolean {
    return this.pools.has(name);
  }

  poolNames(): string[] {
    return [...this.pools.keys()].sort();
  }

  poolInUse(name: string): boolean {
    return (this.pools.get(name)?.nodes.size ?? 0) > 0;
  }

  nodesOfPool(name: string): string[] {
    return [...(this.pools.get(name)?.nodes ?? [])].sort();
  }

  /**
   * Sets the excluded CIDRs of `key` (e.g. one ServiceCIDR object). Returns node blocks that
   * overlap a newly excluded CIDR: they are reported, never revoked.
   */
  setExclusion(key: string, cidrs: readonly string[]): ExclusionConflict[] {
    return this.applyExclusions(this.exclusions.set(key, cidrs));
  }

  removeExclusion(key: string): void {
    this.applyExclusions(this.exclusions.remove(key));
  }

  private applyExclusions(change: ExclusionChange): ExclusionConflict[] {
    for (const p of this.pools.values()) {
      for (const s of p.sets) {
        for (const c of change.added) s.addExclusion(c.text);
        for (const c of change.removed) s.removeExclusion(c.text);
      }
    }
    const conflicts: ExclusionConflict[] = [];
    for (const c of change.added) {
      for (const [node, rec] of this.nodes) {
        rec.parsed.forEach((pc, i) => {
          if (cidrsOverlap(pc, c)) conflicts.push({ node, podCIDR: rec.podCIDRs[i], exclusion: c.text });
        });
      }
    }
    for (const p of this.pools.values()) this.emitUsage(p);
    return conflicts.sort((a, b) => cmpStr(a.node, b.node) || cmpStr(a.podCIDR, b.podCIDR));
  }

  /**
   * Records a node's existing pod CIDRs (restore). Idempotent for the same list; a different list
   * replaces the node's previous blocks.
   */
  occupyNode(nodeName: string, podCIDRs: readonly string[]): OccupyResult {
    if (podCIDRs.length === 0) return { ok: false, reason: 'invalid-cidr', podCIDR: '', message: `node "${nodeName}": spec.podCIDRs is empty: nothing to restore`, recorded: [] };
    const parsed: CIDR[] = [];
    for (const t of podCIDRs) {
      try {
        parsed.push(parseCIDR(t));
      } catch (err) {
        if (err instanceof CIDRParseError) return { ok: false, reason: 'invalid-cidr', podCIDR: t, message: `node "${nodeName}": spec.podCIDRs: ${err.message}`, recorded: [] };
        throw err;
      }
    }
    const prev = this.nodes.get(nodeName);
    if (prev && prev.parsed.map((c) => c.text).join() === parsed.map((c) => c.text).join()) {
      return { ok: true, pool: poolLabel(prev.pools), pools: prev.pools.map((p) => p.spec.name), conflicts: this.conflictsOf(nodeName, prev.parsed) };
    }
    const pools = this.placeExisting(parsed);
    // Every block that lies in a pool and is nobody else's is recorded for this node, even when
    // another of its blocks is a problem: the first problem is reported, but a half-restored node
    // must never leave its good block free for the next allocation.
    let problem: Omit<Extract<OccupyResult, { ok: false }>, 'recorded'> | undefined;
    const keep: number[] = [];
    for (let i = 0; i < parsed.length; i++) {
      const p = pools[i];
      const t = parsed[i].text;
      if (p === undefined) {
        problem ??= { ok: false, reason: 'outside-every-pool', podCIDR: t, message: `node "${nodeName}": pod CIDR ${t} lies outside every pool` };
        continue;
      }
      const set = p.sets[p.spec.families.findIndex((f) => f.family === parsed[i].family)];
      // The set knows every used address in its range (other pools' blocks are mirrored into it),
      // so the linear search for the other node runs only on a real overlap.
      const other = set.overlapsAllocated(t) ? this.claimant(parsed[i], nodeName) : undefined;
      if (other !== undefined) {
        problem ??= {
          ok: false,
          reason: 'claimed-by-other-node',
          podCIDR: t,
          otherNode: other,
          message: `node "${nodeName}": pod CIDR ${t} overlaps a block of node "${other}"`,
        };
        continue;
      }
      keep.push(i);
    }
    if (prev) this.releaseNode(nodeName);
    const kept = keep.map((i) => parsed[i]);
    const keptPools = keep.map((i) => pools[i] as PoolState);
    if (kept.length > 0) this.record(nodeName, kept, keptPools);
    for (const p of new Set(keptPools)) this.emitUsage(p);
    if (problem) return { ...problem, recorded: kept.map((c) => c.text) };
    return { ok: true, pool: poolLabel(keptPools), pools: keptPools.map((p) => p.spec.name), conflicts: this.conflictsOf(nodeName, parsed) };
  }

  /**
   * Picks the pool for each existing pod CIDR: one pool holding all of them if possible.
   * `undefined` marks a CIDR outside every pool.
   */
  private placeExisting(parsed: CIDR[]): (PoolState | undefined)[] {
    // Per CIDR: the pools containing it, and whether its size is the pool's per-node size.
    const containing = parsed.map((c) => this.poolsContaining(c));
    if (containing.some((m) => m.size === 0)) {
      // Place the others on their own; the outside ones are reported by the caller.
      return containing.map((m, i) => (m.size === 0 ? undefined : this.placeExisting([parsed[i]])[0]));
    }
    // Prefer more exact mask matches, then not terminating, then the usual pool order.
    const pick = (cands: Iterable<PoolState>, key: (p: PoolState) => number): PoolState | undefined => {
      let best: PoolState | undefined;
      let bestKey = -1;
      for (const p of cands) {
        const k = key(p) * 2 + (p.spec.terminating ? 0 : 1);
        if (k > bestKey || (k === bestKey && best !== undefined && p.rank < best.rank)) {
          best = p;
          bestKey = k;
        }
      }
      return best;
    };
    const common = [...containing[0].keys()].filter((p) => containing.every((m) => m.has(p)));
    const one = pick(common, (p) => containing.reduce((n, m) => n + (m.get(p) ? 1 : 0), 0));
    if (one) return parsed.map(() => one);
    return containing.map((m) => pick(m.keys(), (p) => (m.get(p) ? 1 : 0))!);
  }

  /** Pools whose range contains `c`, each with "c has the pool's per-node size". */
  private poolsContaining(c: CIDR): Map<PoolState, boolean> {
    this.staticOrder(); // ranks
    const idx = this.rangeIndex()[c.family === 4 ? 0 : 1];
    const out = new Map<PoolState, boolean>();
    // Last range starting at or before c; every range containing c is it or one of its ancestors.
    let lo = 0;
    let hi = idx.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (idx[mid].cidr.addr <= c.addr) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo - 1; i >= 0; i = idx[i].parent) {
      const e = idx[i];
      if (cidrContains(e.cidr, c)) out.set(e.pool, e.maskSize === c.prefix || out.get(e.pool) === true);
    }
    return out;
  }

  // Pool ranges per family in address order, each with the index of its nearest enclosing range
  // (CIDRs nest or are disjoint, so enclosing ranges form a chain).
  private rangeIndex(): [RangeEntry[], RangeEntry[]] {
    if (this.ranges) return this.ranges;
    const build = (family: 4 | 6): RangeEntry[] => {
      const list: RangeEntry[] = [];
      for (const p of this.pools.values()) for (const f of p.spec.families) if (f.family === family) list.push({ pool: p, cidr: f.cidr, maskSize: f.maskSize, parent: -1 });
      list.sort((a, b) => cmpBig(a.cidr.addr, b.cidr.addr) || a.cidr.prefix - b.cidr.prefix);
      const stack: number[] = [];
      list.forEach((e, i) => {
        while (stack.length > 0 && !cidrContains(list[stack[stack.length - 1]].cidr, e.cidr)) stack.pop();
        e.parent = stack.length > 0 ? stack[stack.length - 1] : -1;
        stack.push(i);
      });
      return list;
    };
    this.ranges = [build(4), build(6)];
    return this.ranges;
  }

  /** The node (other than `self`) holding an address of `c`, if any. */
  private claimant(c: CIDR, self: string): string | undefined {
    for (const [name, rec] of this.nodes) {
      if (name === self) continue;
      if (rec.parsed.some((o) => cidrsOverlap(o, c))) return name;
    }
    return undefined;
  }

  private conflictsOf(node: string, parsed: CIDR[]): ExclusionConflict[] {
    const out: ExclusionConflict[] = [];
    for (const c of parsed) for (const e of this.exclusions.all()) if (cidrsOverlap(c, e)) out.push({ node, podCIDR: c.text, exclusion: e.text });
    return out;
  }

  /** `allocated`: the pools' own sets already hold the blocks (fresh allocation). */
  private record(nodeName: string, parsed: CIDR[], pools: PoolState[], allocated = false): void {
    const overlaps = this.overlapMap();
    parsed.forEach((c, i) => {
      const p = pools[i];
      const set = p.sets[p.spec.families.findIndex((f) => f.family === c.family)];
      if (!allocated) set.occupy(c.text);
      for (const o of overlaps.get(set) ?? []) if (o.overlaps(c.text)) o.occupy(c.text);
    });
    for (const p of pools) p.nodes.add(nodeName);
    this.nodes.set(nodeName, { podCIDRs: parsed.map((c) => c.text), parsed, pools });
  }

  /**
   * Pools a node may take blocks from, best first: matching selectors before fallback pools, then
   * more matched requirements, fewer blocks, fewer IPs per node, selector text, CIDR text, name.
   * Terminating pools are left out.
   */
  candidatePools(node: NodeView): { pool: string; score: number; fallback: boolean }[] {
    return this.candidates(node).map(({ p, score }) => ({ pool: p.spec.name, score, fallback: p.spec.selector.fallback }));
  }

  private candidates(node: NodeView): { p: PoolState; score: number }[] {
    const idx = this.selectorIndex();
    const matched: { p: PoolState; score: number }[] = [];
    const seen = new Set<PoolState>();
    const consider = (p: PoolState) => {
      if (seen.has(p) || p.spec.terminating) return;
      seen.add(p);
      const score = p.spec.selector.score(node);
      if (score >= 0) matched.push({ p, score });
    };
    for (const k of nodeIndexKeys(node)) for (const p of idx.byKey.get(k) ?? []) consider(p);
    for (const p of idx.always) consider(p);
    matched.sort((a, b) => b.score - a.score || a.p.rank - b.p.rank);
    for (const p of idx.fallback) if (!p.spec.terminating) matched.push({ p, score: 0 });
    return matched;
  }

  private selectorIndex(): { byKey: Map<string, PoolState[]>; always: PoolState[]; fallback: PoolState[] } {
    const order = this.staticOrder();
    if (this.index) return this.index;
    const byKey = new Map<string, PoolState[]>();
    const always: PoolState[] = [];
    const fallback: PoolState[] = [];
    for (const p of order) {
      const sel = p.spec.selector;
      if (sel.fallback) {
        fallback.push(p);
        continue;
      }
      const keys = sel.indexKeys();
      if (keys === undefined) always.push(p);
      else for (const k of new Set(keys)) (byKey.get(k) ?? byKey.set(k, []).get(k)!).push(p);
    }
    this.index = { byKey, always, fallback };
    return this.index;
  }

  /** Hands out blocks for a node, or returns its existing ones. Throws CIDRNotAvailableError. */
  allocateNode(node: NodeView): AllocationResult {
    const prev = this.nodes.get(node.name);
    if (prev) return { podCIDRs: prev.podCIDRs.slice(), pool: poolLabel(prev.pools), reason: 'the node already has pod CIDRs', existing: true };
    const cands = this.candidates(node);
    const tried: { pool: string; reason: string }[] = [];
    for (let ci = 0; ci < cands.length; ci++) {
      const { p, score } = cands[ci];
      const got: { cidr: string; tries: number }[] = [];
      let failure: string | undefined;
      for (let i = 0; i < p.sets.length; i++) {
        try {
          got.push(p.sets[i].allocateNextWithTries(p.spec.families[i].maskSize));
        } catch (err) {
          if (!(err instanceof CIDRSetError)) throw err;
          failure = err.message;
          break;
        }
      }
      if (failure !== undefined) {
        // Dual-stack is both or neither: give back what the first family took.
        got.forEach((g, i) => p.sets[i].release(g.cidr));
        tried.push({ pool: p.spec.name, reason: failure });
        continue;
      }
      const parsed = got.map((g) => parseCIDR(g.cidr));
      this.record(
        node.name,
        parsed,
        parsed.map(() => p),
        true,
      );
      got.forEach((g, i) => this.metrics?.allocated?.({ ...this.event(p, i), podCIDR: g.cidr, tries: g.tries }));
      this.emitUsage(p);
      if (this.metrics?.usage) for (const o of this.overlapPools(p)) this.emitUsage(o);
      const why = p.spec.selector.fallback
        ? `fallback pool "${p.spec.name}" (no node selector)${matchedSkipped(cands, ci)}`
        : `pool "${p.spec.name}": selector "${p.spec.selector.text}" matches ${score} requirement(s)`;
      const skipped = tried.length > 0 ? `; skipped full pool(s) ${tried.map((t) => `"${t.pool}"`).join(', ')}` : '';
      return { podCIDRs: got.map((g) => g.cidr), pool: p.spec.name, reason: `${why}; candidate ${ci + 1} of ${cands.length}${skipped}` };
    }
    throw new CIDRNotAvailableError(node.name, tried);
  }

  /** Gives back a node's blocks. Returns what it held, or undefined for an unknown node. */
  releaseNode(nodeName: string): NodeAllocation | undefined {
    const rec = this.nodes.get(nodeName);
    if (!rec) return undefined;
    this.nodes.delete(nodeName);
    const overlaps = this.overlapMap();
    rec.parsed.forEach((c, i) => {
      const p = rec.pools[i];
      const fi = p.spec.families.findIndex((f) => f.family === c.family);
      const set = p.sets[fi];
      set.release(c.text);
      for (const o of overlaps.get(set) ?? []) if (o.overlaps(c.text)) o.release(c.text);
      this.metrics?.released?.({ ...this.event(p, fi), podCIDR: c.text });
    });
    for (const p of new Set(rec.pools)) {
      p.nodes.delete(nodeName);
      this.emitUsage(p);
    }
    return { podCIDRs: rec.podCIDRs, pools: rec.pools.map((p) => p.spec.name), pool: poolLabel(rec.pools) };
  }

  nodeAllocation(nodeName: string): NodeAllocation | undefined {
    const rec = this.nodes.get(nodeName);
    return rec && { podCIDRs: rec.podCIDRs.slice(), pools: rec.pools.map((p) => p.spec.name), pool: poolLabel(rec.pools) };
  }

  nodeNames(): string[] {
    return [...this.nodes.keys()].sort();
  }

  stats(): PoolStats[] {
    return this.staticOrder().map((p) => {
      const families = p.sets.map((s, i): FamilyStats => {
        const used = s.usedCount;
        const total = s.capacity;
        return { clusterCIDR: s.clusterCIDR, maskSize: p.spec.families[i].maskSize, used, free: s.freeCount, excluded: s.excludedCount, total, usage: fraction(used, total) };
      });
      const used = families.reduce((m, f) => (f.used > m ? f.used : m), 0n);
      const free = families.reduce((m, f) => (f.free < m ? f.free : m), families[0].free);
      return {
        name: p.spec.name,
        terminating: p.spec.terminating,
        fromFlags: p.spec.fromFlags === true,
        nodes: p.nodes.size,
        used,
        free,
        total: p.capacity,
        usage: fraction(used, p.capacity),
        families,
      };
    });
  }

  private event(p: PoolState, i: number) {
    return { pool: p.spec.name, clusterCIDR: p.sets[i].clusterCIDR, fromFlags: p.spec.fromFlags === true };
  }

  private emitUsage(p: PoolState): void {
    const sink = this.metrics?.usage;
    if (!sink) return;
    p.sets.forEach((s, i) => {
      const used = s.usedCount;
      sink({ ...this.event(p, i), used, max: s.capacity, usage: fraction(used, s.capacity) });
    });
  }

  private staticOrder(): PoolState[] {
    if (this.ordered) return this.ordered;
    const list = [...this.pools.values()].sort(
      (a, b) =>
        cmpBig(a.capacity, b.capacity) || a.hostBits - b.hostBits || cmpStr(a.spec.selector.text, b.spec.selector.text) || cmpStr(a.cidrText, b.cidrText) || cmpStr(a.spec.name, b.spec.name),
    );
    list.forEach((p, i) => (p.rank = i));
    this.ordered = list;
    this.index = null;
    return list;
  }

  private overlapPools(p: PoolState): PoolState[] {
    const m = this.overlapMap();
    const sets = new Set(p.sets.flatMap((s) => m.get(s) ?? []));
    return [...this.pools.values()].filter((q) => q !== p && q.sets.some((s) => sets.has(s)));
  }

  // CIDRs either nest or are disjoint, so a sweep in address order with a stack of open ranges
  // finds every overlapping pair in O(n log n + pairs).
  private overlapMap(): Map<CIDRSet, CIDRSet[]> {
    if (this.overlaps) return this.overlaps;
    const m = new Map<CIDRSet, CIDRSet[]>();
    for (const fam of [4, 6] as const) {
      const sets = [...this.pools.values()].flatMap((p) => p.sets.filter((s) => s.family === fam));
      sets.sort((a, b) => cmpBig(a.cidr.addr, b.cidr.addr) || a.cidr.prefix - b.cidr.prefix);
      const stack: CIDRSet[] = [];
      for (const s of sets) {
        while (stack.length > 0 && !cidrContains(stack[stack.length - 1].cidr, s.cidr)) stack.pop();
        for (const o of stack) {
          (m.get(s) ?? m.set(s, []).get(s)!).push(o);
          (m.get(o) ?? m.set(o, []).get(o)!).push(s);
        }
        stack.push(s);
      }
    }
    this.overlaps = m;
    return m;
  }
}

function poolLabel(pools: PoolState[]): string {
  return [...new Set(pools.map((p) => p.spec.name))].join(',');
}

function fraction(a: bigint, b: bigint): number {
  if (b === 0n) return 0;
  // Scale before dividing so huge IPv6 counts keep precision.
  return Number((a * 1_000_000n) / b) / 1_000_000;
}

function matchedSkipped(cands: { p: PoolState; score: number }[], ci: number): string {
  const selectorPools = cands.slice(0, ci).filter((c) => !c.p.spec.selector.fallback).length;
  return selectorPools === 0 ? '; no pool selector matches the node' : '';
}
