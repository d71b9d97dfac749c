// IPAM core benchmarks: `npm run bench ipam`. Each case runs several times on a fresh structure;
// the table shows the best and the median run (the machine is shared, so the best is the
// steadiest figure) and the retained heap per block still allocated at the end.
import v8 from 'node:v8';
import vm from 'node:vm';
import os from 'node:os';
import { CIDRSet } from '../src/ipam/cidrset.js';
import { PodCIDRAllocator } from '../src/ipam/allocator.js';
import { parseClusterCIDR } from '../src/ipam/clustercidr.js';
import { planPodCIDRs } from '../src/ipam/plan.js';
import { seededRandom } from '../src/util/random.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

interface Outcome {
  /** Operations timed (allocations, releases, nodes). */
  ops: number;
  /** Blocks held at the end, for bytes per block. */
  held: number;
  /** Keeps the structure alive for the heap measurement. */
  keep: unknown;
  /** A value derived from the results so the work cannot be optimised away. */
  check: number;
}

interface Case {
  name: string;
  unit: string;
  runs: number;
  run: () => Outcome;
}


function fill(range: string, mask: number, n: number): Outcome {
  const s = new CIDRSet(range, mask);
  let check = 0;
  for (let i = 0; i < n; i++) check += s.allocateNext().length;
  return { ops: n, held: n, keep: s, check };
}

/** 999 rack pools (half also select a zone) of 32 /24s each, and one fallback pool. */
function rackPools(): object[] {
  const pools: object[] = [];
  for (let i = 0; i < 999; i++) {
    const matchExpressions = [{ key: 'rack', operator: 'In', values: [`r${i}`] }];
    if (i % 2 === 0) matchExpressions.push({ key: 'zone', operator: 'In', values: [`z${i % 3}`] });
    pools.push({
      metadata: { name: `rack-${i}` },
      spec: { perNodeHostBits: 8, ipv4: `10.${Math.floor(i / 8)}.${(i % 8) * 32}.0/19`, nodeSelector: { nodeSelectorTerms: [{ matchExpressions }] } },
    });
  }
  pools.push({ metadata: { name: 'fallback' }, spec: { perNodeHostBits: 8, ipv4: '172.16.0.0/12' } });
  return pools;
}

const cases: Case[] = [
  { name: 'allocate all 65,536 /24 in 10.0.0.0/8', unit: 'alloc', runs: 7, run: () => fill('10.0.0.0/8', 24, 65_536) },
  { name: 'allocate all 65,536 /64 in fd00:1::/48', unit: 'alloc', runs: 7, run: () => fill('fd00:1::/48', 64, 65_536) },
  {
    name: '60,000 /24, release every other, 30,000 more',
    unit: 'op',
    runs: 5,
    run: () => {
      const s = new CIDRSet('10.0.0.0/8', 24);
      const got: string[] = [];
      for (let i = 0; i < 60_000; i++) got.push(s.allocateNext());
      for (let i = 0; i < 60_000; i += 2) s.release(got[i]);
      let check = 0;
      for (let i = 0; i < 30_000; i++) check += s.allocateNext().length;
      return { ops: 120_000, held: 60_000, keep: s, check };
    },
  },
  { name: '1,000,000 /64 from fd00::/32', unit: 'alloc', runs: 3, run: () => fill('fd00::/32', 64, 1_000_000) },
  // KEP-2593's example pool: 2^58 blocks, so exact bigint offsets (HugeRange) from the start.
  { name: 'allocate 65,536 /122 in fd12:3456:789a:1::/64 (2^58 blocks)', unit: 'alloc', runs: 3, run: () => fill('fd12:3456:789a:1::/64', 122, 65_536) },
  {
    name: '20,000 /122 in fd12:3456:789a:1::/64, release every other',
    unit: 'op',
    runs: 3,
    run: () => {
      const s = new CIDRSet('fd12:3456:789a:1::/64', 122);
      const got: string[] = [];
      for (let i = 0; i < 20_000; i++) got.push(s.allocateNext());
      for (let i = 0; i < 20_000; i += 2) s.release(got[i]);
      return { ops: 30_000, held: 10_000, keep: s, check: Number(s.usedCount) };
    },
  },
  {
    name: 'mixed /23–/26 churn in 10.0.0.0/8 (200,000 ops, ≤ 20,000 held)',
    unit: 'op',
    runs: 5,
    run: () => {
      const s = new CIDRSet('10.0.0.0/8', 24);
      const next = seededRandom(42);
      const held: string[] = [];
      let check = 0;
      for (let i = 0; i < 200_000; i++) {
        if (held.length > 0 && (next() < 0.4 || held.length > 20_000)) {
          const j = Math.floor(next() * held.length);
          s.release(held[j]);
          held[j] = held[held.length - 1];
          held.pop();
        } else {
          const c = s.allocateNext(23 + Math.floor(next() * 4));
          check += c.length;
          held.push(c);
        }
      }
      return { ops: 200_000, held: held.length, keep: s, check };
    },
  },
  {
    name: 'restore 5,000 nodes over 1,000 pools (planPodCIDRs, all with podCIDRs)',
    unit: 'node',
    runs: 3,
    run: () => {
      let fallback = 0;
      const nodes = Array.from({ length: 5_000 }, (_, n) => {
        const rack = n % 1_100;
        // Rack r < 999 owns 10.(r/8).((r%8)*32).0/19; racks without a pool sit in 172.16.0.0/12.
        const cidr = rack < 999 ? `10.${Math.floor(rack / 8)}.${(rack % 8) * 32 + Math.floor(n / 1_100)}.0/24` : `172.${16 + (fallback >> 8)}.${fallback++ & 255}.0/24`;
        return { metadata: { name: `node-${n}`, labels: { rack: `r${rack}` } }, spec: { podCIDRs: [cidr] } };
      });
      const r = planPodCIDRs(rackPools(), nodes);
      const failed = Object.keys(r.failures).length;
      if (failed > 0) throw new Error(`restore: ${failed} failures, e.g. ${Object.values(r.failures)[0]}`);
      return { ops: 5_000, held: 5_000, keep: r, check: Object.keys(r.allocations).length };
    },
  },
  {
    // One ServiceCIDR object per exclusion, as the controller feeds them; each add and remove is
    // O(log n) in the outermost exclusions (it used to rebuild the whole sorted list).
    name: '65,536 exclusions added then removed (setExclusion/removeExclusion, 10.0.0.0/8 /24)',
    unit: 'op',
    runs: 3,
    run: () => {
      const a = new PodCIDRAllocator();
      a.upsertPool(parseClusterCIDR({ metadata: { name: 'p' }, spec: { perNodeHostBits: 8, ipv4: '10.0.0.0/8' } }));
      const keys: string[] = [];
      for (let i = 0; i < 65_536; i++) {
        const key = `svc-${i}`;
        // Half /24s in the upper half of the range: the lower half stays free for the node.
        a.setExclusion(key, [`10.${128 + (i >> 9)}.${(i >> 1) & 255}.${(i & 1) * 128}/25`]);
        keys.push(key);
      }
      const check = a.allocateNode({ name: 'n' }).podCIDRs[0].length;
      for (const k of keys) a.removeExclusion(k);
      return { ops: 131_072, held: 1, keep: a, check };
    },
  },
  {
    name: '5,000 nodes over 1,000 pools with selectors',
    unit: 'node',
    runs: 3,
    run: () => {
      const a = new PodCIDRAllocator();
      for (const p of rackPools()) a.upsertPool(parseClusterCIDR(p));
      let check = 0;
      for (let n = 0; n < 5_000; n++) {
        const rack = n % 1_100; // racks ≥ 999 have no pool: they use the fallback
        check += a.allocateNode({ name: `node-${n}`, labels: { rack: `r${rack}`, zone: `z${rack % 3}` } }).podCIDRs[0].length;
      }
      return { ops: 5_000, held: 5_000, keep: a, check };
    },
  },
];

/** A timed run repeats its case until it lasts about this long (Go's -benchtime, shortened). */
const MIN_RUN_MS = 150;

/** Untimed runs per case that measure the retained heap. */
const HEAP_RUNS = 2;

function fmtNs(ns: number): string {
  return ns >= 10_000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`;
}

export default async function bench(): Promise<void> {
  const rows: string[] = [];
  // IPAM_BENCH=<substring>: run only the cases whose name contains it.
  const only = process.env.IPAM_BENCH;
  for (const c of cases.filter((k) => only === undefined || k.name.includes(only))) {
    const times: number[] = [];
    let retained = 0;
    let held = 0;
    let ops = 0;
    let check = 0;
    // Like Go's testing.B: one untimed call sizes the run, then each timed run repeats the case
    // until it lasts about MIN_RUN_MS, after a forced GC. A forced GC right before a 15 ms run
    // leaves V8 with a shrunken young generation, and such a short run mostly measures the
    // scavenges that follow (2-3x on the 65,536-block cases); a longer run amortises them, as
    // b.N does in Go.
    const t = process.hrtime.bigint();
    check += c.run().check;
    const once = Number(process.hrtime.bigint() - t) / 1e6;
    const repeat = Math.max(1, Math.ceil(MIN_RUN_MS / Math.max(once, 0.001)));
    for (let r = 0; r < c.runs; r++) {
      gc();
      let done = 0;
      const t0 = process.hrtime.bigint();
      for (let k = 0; k < repeat; k++) {
        const out = c.run();
        done += out.ops;
        check += out.check;
        held = out.held;
        ops = out.ops;
      }
      const dt = Number(process.hrtime.bigint() - t0);
      times.push(dt / done);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Then untimed runs for the heap a structure keeps, each between forced GCs.
    // Holds the last run's structure; cleared before each run so the "before" heap excludes it.
    const holder: { keep: unknown } = { keep: null };
    for (let r = 0; r < HEAP_RUNS; r++) {
      holder.keep = null;
      gc();
      const before = process.memoryUsage().heapUsed;
      const out = c.run();
      check += out.check;
      holder.keep = out.keep;
      gc();
      // The largest delta: a dead structure from the previous run may still sit in a stack slot
      // when `before` is taken, which hides the new one's size.
      retained = Math.max(retained, process.memoryUsage().heapUsed - before);
      await new Promise((resolve) => setImmediate(resolve));
    }
    holder.keep = null;
    times.sort((a, b) => a - b);
    const best = times[0];
    const median = times[Math.floor(times.length / 2)];
    rows.push(
      `| ${c.name} | ${fmtNs(best)} / ${c.unit} | ${fmtNs(median)} / ${c.unit} | ${((best * ops) / 1e6).toFixed(1)} ms | ${(retained / 1024).toFixed(1)} KiB | ${(retained / held).toFixed(2)} |`,
    );
    if (check === 0) throw new Error(`${c.name}: produced nothing`);
  }
  console.log(`node ${process.version}, ${os.cpus().length} CPU(s) ${os.cpus()[0]?.model ?? ''}, load average ${os.loadavg()[0].toFixed(1)}\n`);
  console.log('| case | best | median | best run total | retained heap | bytes per held block |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}
