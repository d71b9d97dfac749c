// Sums a V8 heap snapshot (.heapsnapshot: `node --heapsnapshot-signal`, v8.writeHeapSnapshot, or
// the scale bench's BENCH_SCALE_HEAPSNAPSHOT) by owner and by constructor, with retained sizes:
//
//   node dist/bench/heap-summary.js <file.heapsnapshot> [--per N] [--top N] [--owners Name=label,…]
//
// Retained sizes come from the dominator tree over the snapshot's graph (weak edges left out, as
// Chrome's DevTools does): an object belongs to the nearest object that dominates it, i.e. that
// every path from the roots to it passes through. An "owner" is one of the named constructors
// below (the node cache's Watcher, the IPAM ledger, the static inventory…): every object is
// charged to the nearest owner that dominates it, and whatever no owner dominates (code, shared
// strings, objects two owners reach) to "not owned", broken down by V8's node type. `--per N`
// prints bytes per node for N nodes. The snapshot's self sizes are V8's: the heap in use, not
// the committed heap or the RSS.
//
// The snapshot is read as bytes, not JSON.parse'd whole: a 200 MiB heap writes a file of several
// hundred MB, past what one string can hold.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** Constructor name → the owner it stands for, in the order the owner table lists them. */
const DEFAULT_OWNERS: [string, string][] = [
  ['Watcher', 'node cache (Watcher and the cached Nodes)'],
  ['PodCIDRAllocator', 'IPAM ledger (PodCIDRAllocator)'],
  ['StaticNodes', 'static inventory (StaticNodes)'],
  ['StaticProvider', 'static provider besides its entries'],
  ['AuditLoop', 'IP range audit (AuditLoop, its last report)'],
  ['RangeAllocator', 'node IPAM loop besides the ledger'],
  ['CloudNodeController', 'cloud node controller'],
  ['Registry', 'Prometheus registry'],
];

interface Snapshot {
  nodeFieldCount: number;
  nodes: Uint32Array;
  edges: Uint32Array;
  strings: string[];
  nodeTypes: string[];
  edgeTypes: string[];
  f: { type: number; name: number; selfSize: number; edgeCount: number };
  e: { type: number; nameOrIndex: number; toNode: number };
}

/** The integers of the JSON array that starts right after `from` (its '['), up to its ']'. */
function intArray(buf: Buffer, from: number, count: number): { values: Uint32Array; end: number } {
  const values = new Uint32Array(count);
  let n = 0;
  let cur = 0;
  let inNumber = false;
  let i = from;
  for (; i < buf.length; i++) {
    const ch = buf[i]!;
    if (ch >= 48 && ch <= 57) {
      cur = cur * 10 + (ch - 48);
      inNumber = true;
    } else {
      if (inNumber) {
        values[n++] = cur;
        cur = 0;
        inNumber = false;
      }
      if (ch === 93) break; // ]
    }
  }
  if (n !== count) throw new Error(`heap snapshot: expected ${count} integers, read ${n}`);
  return { values, end: i };
}

function readSnapshot(file: string): Snapshot {
  const buf = readFileSync(file);
  const nodesAt = buf.indexOf('"nodes":[');
  if (nodesAt < 0) throw new Error(`${file}: no "nodes" array: not a V8 heap snapshot`);
  const head = JSON.parse(`${buf.toString('utf8', 0, nodesAt).replace(/,\s*$/, '')}}`) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] }; node_count: number; edge_count: number };
  };
  const meta = head.snapshot.meta;
  const nodeFieldCount = meta.node_fields.length;
  const nodes = intArray(buf, nodesAt + '"nodes":['.length, head.snapshot.node_count * nodeFieldCount);
  const edgesAt = buf.indexOf('"edges":[', nodes.end);
  const edges = intArray(buf, edgesAt + '"edges":['.length, head.snapshot.edge_count * meta.edge_fields.length);
  const stringsAt = buf.indexOf('"strings":[', edges.end);
  const stringsEnd = buf.lastIndexOf(']');
  const strings = JSON.parse(buf.toString('utf8', stringsAt + '"strings":'.length, stringsEnd + 1)) as string[];
  return {
    nodeFieldCount, nodes: nodes.values, edges: edges.values, strings,
    nodeTypes: meta.node_types[0], edgeTypes: meta.edge_types[0],
    f: { type: meta.node_fields.indexOf('type'), name: meta.node_fields.indexOf('name'), selfSize: meta.node_fields.indexOf('self_size'), edgeCount: meta.node_fields.indexOf('edge_count') },
    e: { type: meta.edge_fields.indexOf('type'), nameOrIndex: meta.edge_fields.indexOf('name_or_index'), toNode: meta.edge_fields.indexOf('to_node') },
  };
}

interface Graph {
  count: number;
  type: Uint8Array;
  name: Uint32Array;
  self: Float64Array;
  /** Out-edges (strong only) as CSR: targets of node i are succ[first[i] .. first[i+1]). */
  first: Uint32Array;
  succ: Uint32Array;
}

function graphOf(s: Snapshot): Graph {
  const count = s.nodes.length / s.nodeFieldCount;
  const type = new Uint8Array(count);
  const name = new Uint32Array(count);
  const self = new Float64Array(count);
  const first = new Uint32Array(count + 1);
  const edgeFields = 3;
  const weak = s.edgeTypes.indexOf('weak');
  // Strong edges only: count them per node first.
  let e = 0;
  let strong = 0;
  const perNode = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    const base = i * s.nodeFieldCount;
    type[i] = s.nodes[base + s.f.type]!;
    name[i] = s.nodes[base + s.f.name]!;
    self[i] = s.nodes[base + s.f.selfSize]!;
    const edgeCount = s.nodes[base + s.f.edgeCount]!;
    for (let k = 0; k < edgeCount; k++, e++) if (s.edges[e * edgeFields + s.e.type] !== weak) perNode[i]!++;
    strong += perNode[i]!;
  }
  const succ = new Uint32Array(strong);
  e = 0;
  let at = 0;
  for (let i = 0; i < count; i++) {
    first[i] = at;
    const edgeCount = s.nodes[i * s.nodeFieldCount + s.f.edgeCount]!;
    for (let k = 0; k < edgeCount; k++, e++) {
      if (s.edges[e * edgeFields + s.e.type] === weak) continue;
      succ[at++] = s.edges[e * edgeFields + s.e.toNode]! / s.nodeFieldCount;
    }
  }
  first[count] = at;
  return { count, type, name, self, first, succ };
}

/**
 * Immediate dominators from node 0 (the snapshot's root), by Cooper, Harvey and Kennedy's
 * iterative algorithm over a depth-first postorder. Unreachable nodes get -1.
 */
function dominators(g: Graph): { idom: Int32Array; post: Uint32Array; order: Int32Array } {
  const n = g.count;
  const post = new Uint32Array(n); // postorder number of each node
  const order = new Int32Array(n).fill(-1); // node at each postorder number
  const visited = new Uint8Array(n);
  const stackNode = new Uint32Array(n);
  const stackEdge = new Uint32Array(n);
  let counter = 0;
  stackNode[0] = 0;
  stackEdge[0] = g.first[0]!;
  visited[0] = 1;
  let sp = 1;
  while (sp > 0) {
    const v = stackNode[sp - 1]!;
    const ei = stackEdge[sp - 1]!;
    if (ei < g.first[v + 1]!) {
      stackEdge[sp - 1] = ei + 1;
      const w = g.succ[ei]!;
      if (!visited[w]) {
        visited[w] = 1;
        stackNode[sp] = w;
        stackEdge[sp] = g.first[w]!;
        sp++;
      }
    } else {
      post[v] = counter;
      order[counter++] = v;
      sp--;
    }
  }
  // Predecessors (reachable only), CSR.
  const predCount = new Uint32Array(n + 1);
  for (let v = 0; v < n; v++) {
    if (!visited[v]) continue;
    for (let k = g.first[v]!; k < g.first[v + 1]!; k++) predCount[g.succ[k]!]!++;
  }
  const predFirst = new Uint32Array(n + 1);
  for (let v = 0; v < n; v++) predFirst[v + 1] = predFirst[v]! + predCount[v]!;
  const pred = new Uint32Array(predFirst[n]!);
  const fill = predFirst.slice(0, n);
  for (let v = 0; v < n; v++) {
    if (!visited[v]) continue;
    for (let k = g.first[v]!; k < g.first[v + 1]!; k++) {
      const w = g.succ[k]!;
      pred[fill[w]!++] = v;
    }
  }
  // idom by postorder number; the root is the highest.
  const root = post[0]!;
  const idom = new Int32Array(counter).fill(-1);
  idom[root] = root;
  for (let changed = true; changed;) {
    changed = false;
    for (let b = counter - 2; b >= 0; b--) {
      const v = order[b]!;
      let best = -1;
      for (let k = predFirst[v]!; k < predFirst[v + 1]!; k++) {
        const p = post[pred[k]!]!;
        if (idom[p] === -1) continue;
        if (best === -1) {
          best = p;
          continue;
        }
        let x = p;
        let y = best;
        while (x !== y) {
          while (x < y) x = idom[x]!;
          while (y < x) y = idom[y]!;
        }
        best = x;
      }
      if (best !== -1 && idom[b] !== best) {
        idom[b] = best;
        changed = true;
      }
    }
  }
  // Back to node indices.
  const byNode = new Int32Array(n).fill(-1);
  for (let b = 0; b < counter; b++) byNode[order[b]!] = order[idom[b]!]!;
  return { idom: byNode, post, order: order.subarray(0, counter) };
}

function mib(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { per: { type: 'string' }, top: { type: 'string', default: '12' }, owners: { type: 'string' } } });
  const file = positionals[0];
  if (!file) {
    console.error('usage: node dist/bench/heap-summary.js <file.heapsnapshot> [--per N] [--top N] [--owners Name=label,…]');
    process.exitCode = 2;
    return;
  }
  const per = values.per === undefined ? undefined : Number(values.per);
  const top = Number(values.top);
  const owners = values.owners ? values.owners.split(',').map((o) => o.split('=') as [string, string]).map(([k, v]) => [k, v ?? k] as [string, string]) : DEFAULT_OWNERS;
  const s = readSnapshot(file);
  const g = graphOf(s);
  const { idom, order } = dominators(g);
  const objectType = s.nodeTypes.indexOf('object');
  const ownerIndex = new Map(owners.map(([ctor], i) => [ctor, i]));
  // Owner of every node: itself if it is one, else its immediate dominator's (parents come later
  // in postorder, so walk the reverse postorder: each dominator is resolved before what it dominates).
  const owner = new Int32Array(g.count).fill(-1);
  const ownerInstances = owners.map(() => 0);
  for (let b = order.length - 1; b >= 0; b--) {
    const v = order[b]!;
    const own = g.type[v] === objectType ? ownerIndex.get(s.strings[g.name[v]!]!) : undefined;
    if (own !== undefined && (idom[v] === -1 || owner[idom[v]!] !== own)) ownerInstances[own]!++;
    owner[v] = own ?? (idom[v] === -1 || idom[v] === v ? -1 : owner[idom[v]!]!);
  }
  const retained = new Float64Array(g.count);
  for (let b = 0; b < order.length; b++) {
    const v = order[b]!;
    retained[v]! += g.self[v]!;
    const d = idom[v]!;
    if (d !== v && d !== -1) retained[d]! += retained[v]!;
  }
  let total = 0;
  const byOwner = owners.map(() => 0);
  const notOwned = new Map<string, number>();
  // Per owner (and not owned), by constructor or node type: count and self bytes.
  const byCtor = owners.map(() => new Map<string, { count: number; bytes: number }>());
  const notOwnedCtor = new Map<string, { count: number; bytes: number }>();
  for (let b = 0; b < order.length; b++) {
    const v = order[b]!;
    const bytes = g.self[v]!;
    total += bytes;
    const t = s.nodeTypes[g.type[v]!]!;
    const ctor = t === 'object' || t === 'closure' || t === 'native' || t === 'hidden' ? `${s.strings[g.name[v]!]} (${t})` : `(${t})`;
    const o = owner[v]!;
    const table = o === -1 ? notOwnedCtor : byCtor[o]!;
    const row = table.get(ctor) ?? { count: 0, bytes: 0 };
    row.count++;
    row.bytes += bytes;
    table.set(ctor, row);
    if (o === -1) notOwned.set(t, (notOwned.get(t) ?? 0) + bytes);
    else byOwner[o]! += bytes;
  }
  const perNode = (bytes: number): string => (per ? ` | ${(bytes / per).toFixed(0)}` : '');
  const perHead = per ? ` | B per node (${per.toLocaleString('en-US')})` : '';
  const perSep = per ? ' | ---' : '';
  console.log(`${file}: ${order.length.toLocaleString('en-US')} reachable objects, ${mib(total)} MiB (self sizes; weak edges left out)\n`);
  console.log(`| owner | instances | retained MiB${perHead} |`);
  console.log(`| --- | --- | ---${perSep} |`);
  owners.forEach(([, label], i) => console.log(`| ${label} | ${ownerInstances[i]} | ${mib(byOwner[i]!)}${perNode(byOwner[i]!)} |`));
  const rest = [...notOwned].sort((a, b) => b[1] - a[1]);
  for (const [t, bytes] of rest) console.log(`| not owned: (${t}) | — | ${mib(bytes)}${perNode(bytes)} |`);
  console.log(`| total | — | ${mib(total)}${perNode(total)} |`);
  const show = (label: string, table: Map<string, { count: number; bytes: number }>): void => {
    const rows = [...table].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top);
    if (rows.length === 0) return;
    console.log(`\n${label}, by constructor (self sizes, top ${top}):\n`);
    console.log(`| constructor (node type) | count | MiB${perHead} |`);
    console.log(`| --- | --- | ---${perSep} |`);
    for (const [ctor, r] of rows) console.log(`| ${ctor.replaceAll('|', '\\|').slice(0, 80)} | ${r.count.toLocaleString('en-US')} | ${mib(r.bytes)}${perNode(r.bytes)} |`);
  };
  owners.forEach(([, label], i) => show(label, byCtor[i]!));
  show('not owned', notOwnedCtor);
  // The largest objects no owner took whose dominator is a root (the root or one of V8's
  // synthetic root groups): where the rest of the heap hangs.
  const synthetic = s.nodeTypes.indexOf('synthetic');
  const label = (x: number): string => `${s.strings[g.name[x]!]!.slice(0, 60).replaceAll('|', '\\|').replaceAll('\n', ' ')} (${s.nodeTypes[g.type[x]!]})`;
  const largest = order.filter((v) => owner[v] === -1 && idom[v] !== v && idom[v] !== -1 && g.type[idom[v]!] === synthetic).sort((a, b) => retained[b]! - retained[a]!).slice(0, top);
  console.log(`\nlargest objects no owner dominates, held from a root (top ${top}, retained sizes):\n`);
  console.log('| object (node type) | retained MiB | root |');
  console.log('| --- | --- | --- |');
  for (const v of largest) console.log(`| ${label(v)} | ${mib(retained[v]!)} | ${label(idom[v]!)} |`);
}

main();
