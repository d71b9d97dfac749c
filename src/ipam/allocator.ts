// PodCIDRAllocator: the one in-process allocator shared by the node controller and the node IPAM
// controller. Pure state, no I/O: callers feed it pools, exclusions and nodes, and write the
// results to the API server themselves.
import { CIDRParseError, cidrContains, cidrsOverlap, parseCIDR, type CIDR } from './cidr.js';
import { CIDRSet, CIDRSetError } from './cidrset.js';
import { ClusterCIDRValidationError, immutableFieldChanged, type ClusterCIDR } from './clustercidr.js';
import { ExclusionRegistry, type ExclusionChange } from './exclusions.js';
import { HeldBlocks } from './held-blocks.js';
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
      reason: 'invalid-cidr' | 'outside-every-pool' | 'contains-pool' | 'claimed-by-other-node';
      podCIDR: string;
      otherNode?: string;
      message: string;
      /**
       * The node's blocks, recorded as held all the same (every valid one, whatever the problem):
       * a block a node lists is never handed to another node while the node lives.
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
  /** The node (metadata.uid) these blocks were recorded or claimed for; undefined when not given. */
  uid: string | undefined;
  podCIDRs: string[];
  /** The pool of each pod CIDR that lies in one, in block order (blocks outside every pool have none). */
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
  /**
   * Recorded nodes with a block placed in this pool. A count, not a set of names: a set held
   * every node's name once more (some 40 B a node); the names are found by a scan of the records
   * when asked for (nodesOfPool: a pool being deleted, an error).
   */
  nodeCount: number;
  /** Smallest capacity over the families (a dual-stack pool is as big as its smaller side). */
  capacity: bigint;
  hostBits: number;
  cidrText: string;
  /** Position in the node-independent order. */
  rank: number;
  /** Shared placement lists of nodes whose every pod CIDR is in this pool, by length (see placements). */
  uniform: (readonly PoolState[])[];
}

interface RangeEntry {
  pool: PoolState;
  set: CIDRSet;
  cidr: CIDR;
  maskSize: number;
  parent: number;
}

/**
 * A recorded node. Nearly every node has one pod CIDR (two when dual-stack): the first is kept in
 * a field and a list is made only for the others, as BlockHolders keeps its first holder, so the
 * usual node costs no list of its own.
 */
class NodeRecord {
  constructor(
    /**
     * The node these blocks belong to: a Node is its UID, not its name. A name seen with another
     * UID is another node (the first was deleted), and this record is released, never handed to it.
     * Set once when a record made without it is confirmed by the node's own blocks.
     */
    public uid: string | undefined,
    readonly first: CIDR,
    readonly rest: readonly CIDR[] | undefined,
    /** Per pod CIDR: the pool it was placed in; undefined when no pool's range contains it. */
    readonly pools: readonly (PoolState | undefined)[],
  ) {}

  /** The node's pod CIDRs, in its order (their texts are its spec.podCIDRs): a new list, the caller's to keep. */
  get parsed(): CIDR[] {
    return this.rest === undefined ? [this.first] : [this.first, ...this.rest];
  }
}

/** Each pool of a placement list once. */
function distinctPools(pools: readonly (PoolState | undefined)[]): PoolState[] {
  return pools.filter((p, i): p is PoolState => p !== undefined && pools.indexOf(p) === i);
}

/**
 * A node's placement list, shared when every pod CIDR is in the same pool (nearly every node):
 * 100,000 nodes then hold a handful of frozen lists instead of one list each.
 */
function placements(pools: readonly (PoolState | undefined)[]): readonly (PoolState | undefined)[] {
  const p = pools[0];
  if (p === undefined || pools.some((x) => x !== p)) return pools;
  return (p.uniform[pools.length] ??= Object.freeze(pools.map(() => p)));
}

export interface PodCIDRAllocatorOptions {
  metrics?: IPAMMetricsSink;
}

/** A record's pod CIDRs as texts: a new list each time, the caller's to keep. */
function textsOf(rec: NodeRecord): string[] {
  return rec.parsed.map((c) => c.text);
}

/**
 * Whether a record made for `recorded` belongs to a node seen as `seen`: two known UIDs must be
 * equal. An unknown UID on either side (the offline plan, a caller that has none) matches, as
 * records did before they carried UIDs.
 */
function otherIncarnation(recorded: string | undefined, seen: string | undefined): boolean {
  return recorded !== undefined && seen !== undefined && recorded !== seen;
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
  /**
   * Every block any recorded node lists, with its holders. Invariant: each pool's set marks as
   * used exactly the addresses of its range that some held block covers (plus nothing else), so a
   * pool can never hand out an address a live node holds, whichever pool the holder came from.
   */
  private readonly held = new HeldBlocks();
  private readonly exclusions = new ExclusionRegistry();
  private readonly metrics: IPAMMetricsSink | undefined;
  private ordered: PoolState[] | null = null;
  /** Selector pre-filter, rebuilt with `ordered`: pools by index key, and pools always scored. */
  private index: { byKey: Map<string, PoolState[]>; always: PoolState[]; fallback: PoolState[] } | null = null;
  private ranges: [RangeEntry[], RangeEntry[]] | null = null;

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
      cur.spec = Object.assign({}, cur.spec, { terminating: spec.terminating });
      return 'updated';
    }
    const sets = spec.families.map((f) => new CIDRSet(f.cidr.text, f.maskSize));
    for (const c of this.exclusions.all()) for (const s of sets) s.addExclusion(c.text);
    // A pool added over held space starts with that space used, whoever holds it and wherever
    // it came from (another pool, an old --cluster-cidr, another allocator).
    for (const s of sets) for (const b of this.held.overlapping(s.cidr)) s.occupy(b.cidr.text);
    const state: PoolState = {
      spec,
      sets,
      nodeCount: 0,
      capacity: sets.reduce((m, s) => (s.capacity < m ? s.capacity : m), sets[0].capacity),
      hostBits: Math.min(...spec.families.map((f) => f.cidr.bits - f.maskSize)),
      cidrText: spec.families.map((f) => f.cidr.text).join(','),
      rank: 0,
      uniform: [],
    };
    this.pools.set(spec.name, state);
    this.ordered = null;
    this.ranges = null;
    this.emitUsage(state);
    return 'created';
  }

  markTerminating(name: string): boolean {
    const p = this.pools.get(name);
    if (!p) return false;
    p.spec = Object.assign({}, p.spec, { terminating: true });
    return true;
  }

  /** Removes an unused pool. Throws PoolInUseError while nodes hold blocks from it. */
  removePool(name: string): boolean {
    const p = this.pools.get(name);
    if (!p) return false;
    if (p.nodeCount > 0) throw new PoolInUseError(name, this.nodesOfPool(name));
    this.pools.delete(name);
    this.ordered = null;
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
    return (this.pools.get(name)?.nodeCount ?? 0) > 0;
  }

  nodesOfPool(name: string): string[] {
    const p = this.pools.get(name);
    if (!p || p.nodeCount === 0) return [];
    const out: string[] = [];
    for (const [node, rec] of this.nodes) if (rec.pools.includes(p)) out.push(node);
    return out.sort();
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
      for (const b of this.held.overlapping(c)) for (const node of b.holders.keys()) conflicts.push({ node, podCIDR: b.cidr.text, exclusion: c.text });
    }
    for (const p of this.pools.values()) this.emitUsage(p);
    return conflicts.sort((a, b) => cmpStr(a.node, b.node) || cmpStr(a.podCIDR, b.podCIDR));
  }

  /**
   * Records a node's existing pod CIDRs (restore). Idempotent for the same list and UID; a
   * different list replaces the node's previous blocks, and a record of another node of that name
   * (another UID) is released first.
   */
  occupyNode(nodeName: string, podCIDRs: readonly string[], uid?: string): OccupyResult {
    if (podCIDRs.length === 0) return { ok: false, reason: 'invalid-cidr', podCIDR: '', message: `node "${nodeName}": spec.podCIDRs is empty: nothing to restore`, recorded: [] };
    // Sized up front: a list grown by push keeps room for 17, and every recorded node keeps its list.
    const parsed = new Array<CIDR>(podCIDRs.length);
    for (const [i, t] of podCIDRs.entries()) {
      try {
        parsed[i] = parseCIDR(t);
      } catch (err) {
        if (err instanceof CIDRParseError) return { ok: false, reason: 'invalid-cidr', podCIDR: t, message: `node "${nodeName}": spec.podCIDRs: ${err.message}`, recorded: [] };
        throw err;
      }
    }
    const prev = this.nodes.get(nodeName);
    const same = prev !== undefined && !otherIncarnation(prev.uid, uid) && prev.parsed.map((c) => c.text).join() === parsed.map((c) => c.text).join();
    // The same blocks, first recorded without the node's UID: the record is the node's.
    if (same && prev.uid === undefined) prev.uid = uid;
    // Every valid block is recorded as held, whatever is wrong with it: a block a live node lists
    // is never handed out again, and is free only once no live node holds any part of it.
    if (!same) {
      if (prev) this.releaseNode(nodeName);
      for (const p of this.record(nodeName, uid, parsed, this.placeExisting(parsed))) this.emitUsage(p);
    }
    const rec = this.nodes.get(nodeName)!;
    const problem = this.problemOf(nodeName, rec);
    const placed = placedIn(rec.pools);
    if (problem) return problem;
    return { ok: true, pool: poolLabel(placed), pools: placed.map((p) => p.spec.name), conflicts: this.conflictsOf(nodeName, parsed) };
  }

  /**
   * The first thing wrong with a recorded node's blocks, in list order: a block that overlaps one
   * an earlier-recorded node holds (the newcomer is told, the first holder is not), or a block no
   * pool's range contains (it contains a pool, or lies outside every pool).
   */
  private problemOf(nodeName: string, rec: NodeRecord): Extract<OccupyResult, { ok: false }> | undefined {
    const parsed = rec.parsed;
    for (let i = 0; i < parsed.length; i++) {
      const c = parsed[i];
      const t = c.text;
      const other = this.held.earlierHolder(c, nodeName, this.held.seqOf(c, nodeName));
      if (other !== undefined) {
        return {
          ok: false,
          reason: 'claimed-by-other-node',
          podCIDR: t,
          otherNode: other.node,
          message: `node "${nodeName}": pod CIDR ${t} overlaps a block of node "${other.node}"${other.block.text === t ? '' : ` (${other.block.text})`}`,
          recorded: textsOf(rec),
        };
      }
      if (rec.pools[i] !== undefined) continue;
      const inside = this.rangesInside(c);
      if (inside.length > 0) {
        const list = inside.map((e) => `"${e.pool.spec.name}" (${e.cidr.text})`).join(', ');
        return {
          ok: false,
          reason: 'contains-pool',
          podCIDR: t,
          message: `node "${nodeName}": pod CIDR ${t} contains pool ${list}: nothing inside it is handed out while the node holds it`,
          recorded: textsOf(rec),
        };
      }
      return { ok: false, reason: 'outside-every-pool', podCIDR: t, message: `node "${nodeName}": pod CIDR ${t} lies outside every pool`, recorded: textsOf(rec) };
    }
    return undefined;
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
    const out = new Map<PoolState, boolean>();
    for (const e of this.rangesContaining(c)) out.set(e.pool, e.maskSize === c.prefix || out.get(e.pool) === true);
    return out;
  }

  // Pool ranges per family in address order, each with the index of its nearest enclosing range
  // (CIDRs nest or are disjoint, so enclosing ranges form a chain).
  private rangeIndex(): [RangeEntry[], RangeEntry[]] {
    if (this.ranges) return this.ranges;
    const build = (family: 4 | 6): RangeEntry[] => {
      const list: RangeEntry[] = [];
      for (const p of this.pools.values()) p.spec.families.forEach((f, i) => f.family === family && list.push({ pool: p, set: p.sets[i], cidr: f.cidr, maskSize: f.maskSize, parent: -1 }));
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

  /** Every pool set whose range shares an address with `c`: ranges containing it, then inside it. */
  private setsOverlapping(c: CIDR): CIDRSet[] {
    const out: CIDRSet[] = [];
    for (const e of this.rangesContaining(c)) out.push(e.set);
    for (const e of this.rangesInside(c)) out.push(e.set);
    return out;
  }

  /** Pool ranges containing `c` (c itself included), innermost first. */
  private rangesContaining(c: CIDR): RangeEntry[] {
    const idx = this.rangeIndex()[c.family === 4 ? 0 : 1];
    // Last range starting at or before c; every range containing c is it or one of its ancestors.
    let lo = 0;
    let hi = idx.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (idx[mid].cidr.addr <= c.addr) lo = mid + 1;
      else hi = mid;
    }
    const out: RangeEntry[] = [];
    for (let i = lo - 1; i >= 0; i = idx[i].parent) if (cidrContains(idx[i].cidr, c)) out.push(idx[i]);
    return out;
  }

  /** Pool ranges strictly inside `c` (a contiguous run of the address-ordered index). */
  private rangesInside(c: CIDR): RangeEntry[] {
    const idx = this.rangeIndex()[c.family === 4 ? 0 : 1];
    let lo = 0;
    let hi = idx.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const e = idx[mid].cidr;
      if (e.addr < c.addr || (e.addr === c.addr && e.prefix <= c.prefix)) lo = mid + 1;
      else hi = mid;
    }
    const out: RangeEntry[] = [];
    for (let i = lo; i < idx.length && cidrContains(c, idx[i].cidr); i++) out.push(idx[i]);
    return out;
  }

  private conflictsOf(node: string, parsed: CIDR[]): ExclusionConflict[] {
    const out: ExclusionConflict[] = [];
    for (const c of parsed) for (const e of this.exclusions.all()) if (cidrsOverlap(c, e)) out.push({ node, podCIDR: c.text, exclusion: e.text });
    return out;
  }

  /**
   * Records a node's blocks as held and marks them used in every pool set they overlap.
   * `allocated`: the placing pools' own sets already hold the blocks (fresh allocation).
   */
  private record(nodeName: string, uid: string | undefined, parsed: readonly CIDR[], pools: (PoolState | undefined)[], allocated = false): Set<PoolState> {
    const touched = new Set<PoolState>();
    parsed.forEach((c, i) => {
      this.held.add(c, nodeName);
      const own = pools[i]?.sets[pools[i]!.spec.families.findIndex((f) => f.family === c.family)];
      for (const s of this.setsOverlapping(c)) if (!(allocated && s === own)) s.occupy(c.text);
      for (const e of [...this.rangesContaining(c), ...this.rangesInside(c)]) touched.add(e.pool);
    });
    // Recorded once: a node recorded before is released first (occupyNode), or not placed again (allocateNode).
    for (const p of distinctPools(pools)) p.nodeCount++;
    this.nodes.set(nodeName, new NodeRecord(uid, parsed[0]!, parsed.length > 1 ? parsed.slice(1) : undefined, placements(pools)));
    return touched;
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

  /**
   * Hands out blocks for a node (`uid`: its metadata.uid), or returns the ones already recorded or
   * claimed for it. Throws CIDRNotAvailableError. Blocks recorded under its name for another UID
   * belonged to a node that is gone: they are released, never returned. Blocks claimed for it that
   * another node is now recorded holding are not returned either: the claim is dropped and the
   * node gets free blocks, so a block two nodes hold is never written again to either (callers
   * ask this only for nodes whose spec has no pod CIDRs, so such blocks are a claim, not yet the
   * node's own; a guarded write of the new blocks cannot land if a write of the old ones did).
   */
  allocateNode(node: NodeView & { uid?: string }): AllocationResult {
    const prev = this.nodes.get(node.name);
    if (prev && otherIncarnation(prev.uid, node.uid)) this.releaseNode(node.name);
    else if (prev && this.heldByAnother(node.name, prev)) this.releaseNode(node.name);
    else if (prev) return { podCIDRs: textsOf(prev), pool: poolLabel(prev.pools), reason: 'the node already has pod CIDRs', existing: true };
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
      const touched = this.record(
        node.name,
        node.uid,
        parsed,
        parsed.map(() => p),
        true,
      );
      // The events' fields are written out, not spread from a shared object: on Node 20 each such
      // object got a hidden class of its own (see addressDecision in src/controllers/cloudnode/decide.ts).
      got.forEach((g, i) => this.metrics?.allocated?.({ pool: p.spec.name, clusterCIDR: p.sets[i].clusterCIDR, fromFlags: p.spec.fromFlags === true, podCIDR: g.cidr, tries: g.tries }));
      for (const t of touched) this.emitUsage(t);
      const why = p.spec.selector.fallback
        ? `fallback pool "${p.spec.name}" (no node selector)${matchedSkipped(cands, ci)}`
        : `pool "${p.spec.name}": selector "${p.spec.selector.text}" matches ${score} requirement(s)`;
      const skipped = tried.length > 0 ? `; skipped full pool(s) ${tried.map((t) => `"${t.pool}"`).join(', ')}` : '';
      return { podCIDRs: got.map((g) => g.cidr), pool: p.spec.name, reason: `${why}; candidate ${ci + 1} of ${cands.length}${skipped}` };
    }
    throw new CIDRNotAvailableError(node.name, tried);
  }

  /** Whether some block of the record is also held by another node. */
  private heldByAnother(nodeName: string, rec: NodeRecord): boolean {
    return rec.parsed.some((c) => this.held.earlierHolder(c, nodeName) !== undefined);
  }

  /**
   * Gives back a node's blocks. An address is free again only when no other recorded node holds
   * any block covering it. Returns what the node held, or undefined for an unknown node. With
   * `uid`, only a record of that node is released: the blocks of a newer node of the same name
   * stay (a late delete of the old one must not free them).
   */
  releaseNode(nodeName: string, uid?: string): NodeAllocation | undefined {
    const rec = this.nodes.get(nodeName);
    if (!rec) return undefined;
    if (otherIncarnation(rec.uid, uid)) return undefined;
    this.nodes.delete(nodeName);
    const parsed = rec.parsed;
    for (const c of parsed) this.held.remove(c, nodeName);
    const touched = new Set<PoolState>();
    parsed.forEach((c, i) => {
      const p = rec.pools[i];
      if (p) {
        const set = p.sets[p.spec.families.findIndex((f) => f.family === c.family)];
        this.metrics?.released?.({ pool: p.spec.name, clusterCIDR: set.clusterCIDR, fromFlags: p.spec.fromFlags === true, podCIDR: c.text });
      }
      // Still entirely held (by another node's equal or larger block): nothing becomes free.
      if (this.held.covers(c)) return;
      const inner = this.held.inside(c);
      for (const e of [...this.rangesContaining(c), ...this.rangesInside(c)]) {
        touched.add(e.pool);
        e.set.release(c.text);
        // Smaller blocks inside it that other nodes hold stay used.
        for (const b of inner) if (e.set.overlaps(b.cidr.text)) e.set.occupy(b.cidr.text);
      }
    });
    for (const p of distinctPools(rec.pools)) p.nodeCount--;
    for (const p of touched) this.emitUsage(p);
    return { uid: rec.uid, podCIDRs: textsOf(rec), pools: placedIn(rec.pools).map((p) => p.spec.name), pool: poolLabel(rec.pools) };
  }

  nodeAllocation(nodeName: string): NodeAllocation | undefined {
    const rec = this.nodes.get(nodeName);
    return rec && { uid: rec.uid, podCIDRs: textsOf(rec), pools: placedIn(rec.pools).map((p) => p.spec.name), pool: poolLabel(rec.pools) };
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
        nodes: p.nodeCount,
        used,
        free,
        total: p.capacity,
        usage: fraction(used, p.capacity),
        families,
      };
    });
  }

  private emitUsage(p: PoolState): void {
    const sink = this.metrics?.usage;
    if (!sink) return;
    p.sets.forEach((s) => {
      const used = s.usedCount;
      sink({ pool: p.spec.name, clusterCIDR: s.clusterCIDR, fromFlags: p.spec.fromFlags === true, used, max: s.capacity, usage: fraction(used, s.capacity) });
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
}

function placedIn(pools: readonly (PoolState | undefined)[]): PoolState[] {
  return pools.filter((p): p is PoolState => p !== undefined);
}

/** The pools' names, each once, in block order (blocks outside every pool have none). */
function poolLabel(pools: readonly (PoolState | undefined)[]): string {
  return [...new Set(placedIn(pools).map((p) => p.spec.name))].join(',');
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
