// Scale benchmark (npm run bench scale): 100,000 realistic Node objects (about 12 KB of JSON each)
// in the API server double, in its own process, and the real `run` process (static provider,
// cloud-node + node-ipam) against it over HTTP. Measured, for each --kube-api-qps in
// BENCH_SCALE_QPS (default unlimited and 200):
// - the controller's RSS (peak and after sync) and time from start to "node cache synced";
// - 10,000 tainted nodes joining at once: time until all are initialised with pod CIDRs, API
//   writes and events per node, cloud calls;
// - address refresh rounds over all nodes (every 15 s): wall time per round, cloud calls, and the
//   RSS after each round (growth over BENCH_SCALE_ROUNDS rounds, default 10).
// BENCH_SCALE_NODES (default 100,000) and BENCH_SCALE_JOIN (10,000) set the sizes; a /27 per node
// from 100.64.0.0/10 holds 131,072 nodes, so past that (130,000 and a join) the cluster CIDR is
// 100.0.0.0/9.
//
// BENCH_SCALE_SHAPE=migrated (issue 41): a cluster taken over from kube-controller-manager, at
// rest. BENCH_SCALE_NODES (default 130,000) realistic nodes of 12.9 KB, each already holding a /26
// of 100.0.0.0/9 without the pool annotation, providerID static://<name>, a provided-node-ip
// annotation, InternalIP + Hostname + InternalDNS; the static cloud-config lists them all (zone,
// region, instance type, InternalIP, InternalDNS). `run --allocate-node-cidrs --cluster-cidr
// 100.0.0.0/9 --node-cidr-mask-size 26`, refresh every 15 s; RSS read from /proc every 250 ms
// from the start until 60 s after /readyz answers 200. Reported per run: peak RSS (VmHWM),
// settled RSS (the last 15 s of the window, one refresh period: its range and the reading at
// the end), the restore's time, the node and event writes the run made (the double's counters),
// and the heap at the end. BENCH_SCALE_CASES picks the variants (comma-separated, default full):
// full; cache-only (no IPAM, a cloud-config without entries); no-ipam (the full cloud-config);
// one-address (one address per cloud-config entry); no-refresh (no refresh round in the window);
// churn (as full, with kubelet-like status updates on N/300 nodes a second, as a cluster whose
// kubelets report every 5 minutes has).
// one-address changes the nodes (the cloud no longer lists their InternalDNS, so the refresh
// rounds remove it from status.addresses, tens of thousands of writes), so it runs after the others.
// BENCH_SCALE_RUNS (default 1) runs each case that many times against the same double.
// BENCH_SCALE_BUILDS=name=<image dir>,name=<image dir>: each run of each case once per build, in
// turn, against the same double (before and after a change, back to back on the same machine).
// BENCH_SCALE_HEAPSNAPSHOT=<dir>: at the end of each window the run process writes a heap
// snapshot there (node --heapsnapshot-signal); `node dist/bench/heap-summary.js <file>` sums it.
// It takes several minutes and several GB of memory (the double's side); it is not part of npm test.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/util/free-port.js';
import { cpuSeconds, heapShare, lines, metric, rss } from './child.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// The controller as deploy/Dockerfile ships it (the esbuild bundle, with source maps on) when an
// image build exists (`node scripts/build-image-root.mjs`; BENCH_IMAGE=<dir> picks another),
// else the tsc output the tests run, which loads every module of @kubernetes/client-node.
const imageMain = path.join(process.env.BENCH_IMAGE ?? path.join(here, '../../build/image'), 'lib/main.js');
const BUILD = existsSync(imageMain) ? { name: 'image', main: imageMain, node: ['--enable-source-maps'] } : { name: 'dist', main: path.join(here, '../src/cli/main.js'), node: [] };
const SHAPE = process.env.BENCH_SCALE_SHAPE ?? 'join';
if (SHAPE !== 'join' && SHAPE !== 'migrated') throw new Error(`BENCH_SCALE_SHAPE: join or migrated, got ${SHAPE}`);
const NODES = Number(process.env.BENCH_SCALE_NODES ?? (SHAPE === 'migrated' ? 130_000 : 100_000));
const JOIN = SHAPE === 'migrated' ? 0 : Number(process.env.BENCH_SCALE_JOIN ?? 10_000);
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 10);
const QPS = (process.env.BENCH_SCALE_QPS ?? '-1,200').split(',');
const REFRESH = '15s';
// A /27 per node: 100.64.0.0/10 holds 131,072 of them (the double's pod CIDRs are the first
// NODES); past that (130,000 nodes and a join), 100.0.0.0/9, which holds the same /27s and as many more.
// The migrated shape: a /26 per node from 100.0.0.0/9 (131,072 of them).
const CLUSTER_CIDR = SHAPE === 'migrated' || NODES + JOIN > 2 ** 17 ? '100.0.0.0/9' : '100.64.0.0/10';
// BENCH_SCALE_PROF=<dir>: V8 CPU profiles of both processes, written there when they exit.
// BENCH_SCALE_LOG=<file>: the controller's log lines, kept (one file per --kube-api-qps value).
const LOG = process.env.BENCH_SCALE_LOG;
/** Space-separated flags from an environment variable. */
const flagsFrom = (name: string): string[] => (process.env[name] ?? '').split(' ').filter(Boolean);
// BENCH_SCALE_ARGS: more flags for the run process (e.g. --log-level=debug).
const EXTRA = flagsFrom('BENCH_SCALE_ARGS');
// BENCH_SCALE_NODE_ARGS: more node flags for the run process (e.g. --heapsnapshot-signal=SIGUSR2).
const NODE_EXTRA = flagsFrom('BENCH_SCALE_NODE_ARGS');
// BENCH_SCALE_API_NODE_ARGS: more node flags for the API server double's process.
const API_NODE_EXTRA = flagsFrom('BENCH_SCALE_API_NODE_ARGS');
const PROF = process.env.BENCH_SCALE_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SCALE_PROF}`] : [];

async function scenario(qps: string): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ccm-scale-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const cloudConfig = path.join(dir, 'cloud.json');
  // The double's own full collections (marking a heap of several GB on the second core) would
  // take CPU from the controller mid-join; kube-apiserver runs on its own cores. A large initial
  // old generation puts them off until well after the run.
  const apiProc = spawn(process.execPath, [...PROF, '--max-old-space-size=16384', '--initial-old-space-size=12288', ...API_NODE_EXTRA, path.join(here, 'scale-apiserver.js'), kubeconfig, cloudConfig, String(NODES), String(JOIN)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const api = lines(apiProc);
  const ask = async (cmd: string, match: (m: Record<string, unknown>) => boolean, timeoutMs = 120_000) => {
    const from = api.all.length;
    apiProc.stdin!.write(`${JSON.stringify({ cmd })}\n`);
    return api.next(match, timeoutMs, cmd, from);
  };
  let run: ChildProcess | undefined;
  try {
    const ready = await api.next((m) => m.ready === true, 900_000, 'the double to fill');
    const port = await freePort();
    const started = Date.now();
    run = spawn(process.execPath, [...PROF, ...BUILD.node, ...NODE_EXTRA, BUILD.main, 'run', `--kubeconfig=${kubeconfig}`, '--cloud-provider=static', `--cloud-config=${cloudConfig}`,
      '--insecure-plain-http', '--allocate-node-cidrs', `--cluster-cidr=${CLUSTER_CIDR}`, '--node-cidr-mask-size=27', '--leader-elect=false', `--secure-port=${port}`,
      `--node-status-update-frequency=${REFRESH}`, `--kube-api-qps=${qps}`, '--kube-api-burst=400', '--concurrent-node-syncs=4', ...EXTRA], { stdio: ['ignore', 'pipe', 'inherit'] });
    if (LOG) run.stdout!.pipe(createWriteStream(`${LOG}.${qps === '-1' ? 'unlimited' : qps}`));
    const logs = lines(run);
    const synced = await logs.next((m) => m.msg === 'node cache synced', 900_000, 'node cache synced');
    const syncMs = Date.now() - started;
    await logs.next((m) => m.msg === 'allocator loaded from existing nodes', 900_000, 'restore');
    const afterSync = rss(run.pid!);
    const heapMiB = await metric(port, 'nodejs_heap_size_used_bytes').then((v) => (v === undefined ? '—' : String(Math.round(v / 2 ** 20))));

    // 10,000 tainted nodes join at once, right after a refresh round: the join's own cloud calls
    // are the counter's growth minus those of the refresh rounds that ran meanwhile.
    const lastRound = await logs.next((m) => m.msg === 'address refresh done', 120_000, 'a refresh round before the join', logs.all.length);
    const joinFrom = logs.all.indexOf(lastRound) + 1;
    const cloudBeforeJoin = (await metric(port, 'cloudprovider_requests_total')) ?? NaN;
    const cpuBeforeJoin = { run: cpuSeconds(run.pid!), api: cpuSeconds(apiProc.pid!) };
    const joined = await ask('join', (m) => m.joined !== undefined);
    const before = joined.counts as Record<string, number>;
    let status: Record<string, unknown>;
    for (;;) {
      status = await ask('status', (m) => m.pending !== undefined);
      if (status.pending === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const joinMs = status.sinceJoinMs as number;
    const peakAfterJoin = rss(run.pid!).peak;
    // Who was busy: the controller or the API server double (the double's CPU includes creating the 10,000 Nodes).
    const joinCpu = { run: cpuSeconds(run.pid!) - cpuBeforeJoin.run, api: cpuSeconds(apiProc.pid!) - cpuBeforeJoin.api };
    const after = status.counts as Record<string, number>;
    const per = (k: string) => ((after[k]! - before[k]!) / JOIN).toFixed(3);
    // A refresh round that began during the join ends before the counter is read.
    const roundAfterJoin = await logs.next((m) => m.msg === 'address refresh done', 120_000, 'the refresh round after the join', logs.all.length);
    const cloudAfterJoin = (await metric(port, 'cloudprovider_requests_total')) ?? NaN;
    const refreshCalls = logs.all.slice(joinFrom, logs.all.indexOf(roundAfterJoin) + 1)
      .filter((m) => m.msg === 'address refresh done').reduce((n, m) => n + Number(m.cloudCalls ?? 0), 0);
    const joinCalls = cloudAfterJoin - cloudBeforeJoin - refreshCalls;

    // Refresh rounds over every node, RSS after each.
    const samples: { ms: number; rss: number }[] = [];
    let lastCloud = cloudAfterJoin;
    const cloudPerRound: number[] = [];
    // Rounds that start after the join: the first one counted begins once every node is initialised.
    let from = logs.all.length;
    while (samples.length < ROUNDS) {
      const n = samples.length;
      const round = await logs.next((m) => m.msg === 'address refresh done' && (m.nodes as number) >= NODES + JOIN, 120_000, `refresh round ${n + 1}`, from);
      from = logs.all.indexOf(round) + 1;
      samples.push({ ms: round.ms as number, rss: rss(run.pid!).rss });
      const c = (await metric(port, 'cloudprovider_requests_total')) ?? NaN;
      cloudPerRound.push(c - lastCloud);
      lastCloud = c;
    }
    const peak = rss(run.pid!).peak;
    // The audit loop's view of the data: a bench cluster whose pod CIDRs overlap measures the wrong thing.
    const conflicts = await metric(port, 'node_ipam_controller_audit_findings', 'severity="conflict"');
    // What --optimize-for-memory cost over the whole run: full collections and their time.
    const budgetGCs = await metric(port, 'node_address_ccm_heap_budget_collections_total');
    const budgetSeconds = await metric(port, 'node_address_ccm_heap_budget_collection_seconds_total');
    const limit = qps === '-1' ? 'unlimited' : `${qps} QPS`;
    const firstRounds = samples.slice(0, 3).map((s) => s.rss);
    return [
      `| ${limit} | ${NODES.toLocaleString('en-US')} realistic nodes: cache synced | ${(syncMs / 1000).toFixed(1)} s (LIST in ${(Number(synced.ms) / 1000).toFixed(1)} s) | RSS ${afterSync.rss} MiB after sync, heap ${heapMiB} MiB; double filled in ${(Number(ready.fillMs) / 1000).toFixed(0)} s |`,
      `| ${limit} | ${JOIN.toLocaleString('en-US')} tainted nodes join | ${(joinMs / 1000).toFixed(1)} s from all being there until all initialised with pod CIDRs (the double took ${(Number(joined.createMs) / 1000).toFixed(1)} s to create them, the watch held) | per node: PATCH node ${per('patchNodes')}, PATCH status ${per('patchStatus')}, PUT ${per('updateNodes')}, POST event ${per('createEvents')}, PATCH event ${per('patchEvents')}; cloud calls for the join ${joinCalls} (${refreshCalls} more in the refresh rounds meanwhile); CPU: controller ${joinCpu.run.toFixed(1)} s, API double ${joinCpu.api.toFixed(1)} s |`,
      `| ${limit} | refresh of ${(NODES + JOIN).toLocaleString('en-US')} nodes × ${ROUNDS} | ${samples.map((s) => (s.ms / 1000).toFixed(1)).join(', ')} s | cloud calls per round ${cloudPerRound.join(', ')}; RSS after each ${samples.map((s) => s.rss).join(', ')} MiB (first three ${firstRounds.join(', ')}); peak RSS ${peak} MiB (${afterSync.peak} MiB by the end of the sync, ${peakAfterJoin} MiB by the end of the join); audit conflicts ${conflicts ?? '—'}; heap budget: ${budgetGCs ?? '—'} full collections, ${budgetSeconds === undefined ? '—' : budgetSeconds.toFixed(1)} s in all |`,
    ];
  } finally {
    run?.kill('SIGTERM');
    apiProc.stdin!.write(`${JSON.stringify({ cmd: 'stop' })}\n`);
    await new Promise((r) => apiProc.once('close', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The 1-minute load average now (/proc/loadavg). */
function load(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

const MIGRATED_CASES: Record<string, { ipam: boolean; cloud: '' | '.one' | '.empty'; refresh: string; what: string; churn?: boolean }> = {
  'full': { ipam: true, cloud: '', refresh: REFRESH, what: 'IPAM restore + inventory (two addresses per entry), refresh every 15 s' },
  'cache-only': { ipam: false, cloud: '.empty', refresh: REFRESH, what: 'cache only (no IPAM, no inventory entries)' },
  'no-ipam': { ipam: false, cloud: '', refresh: REFRESH, what: 'no IPAM, inventory (two addresses per entry), refresh every 15 s' },
  'one-address': { ipam: true, cloud: '.one', refresh: REFRESH, what: 'IPAM restore + inventory, one address per entry' },
  'no-refresh': { ipam: true, cloud: '', refresh: '10m', what: 'IPAM restore + inventory, no refresh round in the window' },
  // Kubelets post a node's status every 5 minutes when nothing changes: N/300 watch events a second.
  'churn': { ipam: true, cloud: '', refresh: REFRESH, churn: true, what: 'as full, with kubelet status updates on N/300 nodes a second' },
};
/** After /readyz first answers 200, RSS is read this long (issue 41: 60 s). */
const SETTLE_WINDOW_MS = 60_000;
/** "Settled": the last refresh period of the window. */
const SETTLED_MS = 15_000;
const SAMPLE_MS = 250;
// BENCH_SCALE_TRACE=1: the migrated shape's RSS each second with the run's milestones, on stderr.
const TRACE = process.env.BENCH_SCALE_TRACE === '1';

/** Waits until `dir` holds a .heapsnapshot file whose size has not changed for 2 s; returns its path. */
async function heapSnapshotIn(dir: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let stableSince = 0;
  for (;;) {
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
    if (file) {
      const size = statSync(path.join(dir, file)).size;
      if (size !== last) {
        last = size;
        stableSince = Date.now();
      } else if (size > 0 && Date.now() - stableSince >= 2000) return path.join(dir, file);
    }
    if (Date.now() > deadline) throw new Error(`bench: no heap snapshot in ${dir} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * One run of the migrated shape against the filled double: RSS every 250 ms from the start until
 * 60 s after /readyz, and what the run wrote meanwhile.
 */
/** The builds BENCH_SCALE_BUILDS names (name=image dir, comma-separated); by default the one build. */
function builds(): { label: string; node: string[]; main: string }[] {
  const list = process.env.BENCH_SCALE_BUILDS;
  if (!list) return [{ label: BUILD.name, node: BUILD.node, main: BUILD.main }];
  return list.split(',').map((entry) => {
    const [label, dir] = entry.split('=');
    const main = path.join(dir ?? '', 'lib/main.js');
    if (!label || !dir || !existsSync(main)) throw new Error(`BENCH_SCALE_BUILDS: ${entry}: expected name=<image dir> holding lib/main.js`);
    return { label, node: ['--enable-source-maps'], main };
  });
}

type Ask = (cmd: string | Record<string, unknown>, match: (m: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>;

async function migratedRun(build: { label: string; node: string[]; main: string }, caseName: string, kubeconfig: string, cloudConfig: string, ask: Ask): Promise<string> {
  const c = MIGRATED_CASES[caseName];
  if (!c) throw new Error(`BENCH_SCALE_CASES: unknown case ${caseName} (${Object.keys(MIGRATED_CASES).join(', ')})`);
  const port = await freePort();
  const before = (await ask('status', (m) => m.counts !== undefined)).counts as Record<string, number>;
  const snapshotDir = process.env.BENCH_SCALE_HEAPSNAPSHOT ? mkdtempSync(path.join(process.env.BENCH_SCALE_HEAPSNAPSHOT, `${caseName}-`)) : undefined;
  const snapshotArgs = snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : [];
  if (c.churn) await ask({ cmd: 'churn', perSecond: Math.round(NODES / 300) }, (m) => m.churn !== undefined);
  const loads = [load()];
  const started = Date.now();
  const ipamArgs = c.ipam ? ['--allocate-node-cidrs', `--cluster-cidr=${CLUSTER_CIDR}`, '--node-cidr-mask-size=26'] : [];
  const run = spawn(process.execPath, [...PROF, ...build.node, ...NODE_EXTRA, ...snapshotArgs, build.main, 'run', `--kubeconfig=${kubeconfig}`, '--cloud-provider=static', `--cloud-config=${cloudConfig}${c.cloud}`,
    '--insecure-plain-http', ...ipamArgs, '--leader-elect=false', `--secure-port=${port}`,
    `--node-status-update-frequency=${c.refresh}`, '--kube-api-qps=-1', '--kube-api-burst=400', '--concurrent-node-syncs=4', ...EXTRA], { stdio: ['ignore', 'pipe', 'inherit'] });
  if (LOG) run.stdout!.pipe(createWriteStream(`${LOG}.${caseName}.${started}`));
  const logs = lines(run);
  const exited = new Promise<void>((resolve) => run.once('exit', () => resolve()));
  try {
    const samples: { at: number; rss: number }[] = [];
    let readyAt: number | undefined;
    let polling = false;
    const sampler = setInterval(() => {
      try {
        samples.push({ at: Date.now(), rss: rss(run.pid!).rss });
      } catch {
        return; // exited
      }
      if (readyAt !== undefined || polling) return;
      polling = true;
      fetch(`http://127.0.0.1:${port}/readyz`).then((r) => {
        if (r.status === 200 && readyAt === undefined) readyAt = Date.now();
      }, () => undefined).finally(() => (polling = false));
    }, SAMPLE_MS);
    const synced = await logs.next((m) => m.msg === 'node cache synced', 900_000, 'node cache synced');
    const loaded = c.ipam ? await logs.next((m) => m.msg === 'allocator loaded from existing nodes', 900_000, 'the restore') : undefined;
    while (readyAt === undefined) await new Promise((r) => setTimeout(r, SAMPLE_MS));
    loads.push(load());
    await new Promise((r) => setTimeout(r, readyAt! + SETTLE_WINDOW_MS - Date.now()));
    clearInterval(sampler);
    loads.push(load());
    const { peak: hwm, anon, file } = rss(run.pid!);
    const end = samples[samples.length - 1]!;
    const settled = samples.filter((x) => x.at >= end.at - SETTLED_MS).map((x) => x.rss);
    const at = (t: number): number => samples.find((x) => x.at >= t)?.rss ?? NaN;
    const heap = `${await heapShare(port, end.rss)} (RSS anonymous ${anon}, files ${file})`;
    const budgetGCs = await metric(port, 'node_address_ccm_heap_budget_collections_total');
    const quietGCs = await metric(port, 'node_address_ccm_heap_budget_collections_total', 'reason="quiet"');
    const notAllocated = await metric(port, 'node_ipam_controller_audit_findings', 'kind="PodCIDRNotAllocated"');
    const rounds = logs.all.filter((m) => m.msg === 'address refresh done');
    const after = (await ask('status', (m) => m.counts !== undefined)).counts as Record<string, number>;
    const wrote = (k: string) => after[k]! - before[k]!;
    let snapshot = '';
    if (snapshotDir) snapshot = `; heap snapshot ${path.basename(await (process.kill(run.pid!, 'SIGUSR2'), heapSnapshotIn(snapshotDir, 600_000)))} in ${snapshotDir}`;
    const syncedAt = Number(synced.time);
    if (TRACE) {
      // The highest RSS read in each second, with what the run logged in that second (stderr, beside the table).
      const highest = (t: number): number => Math.max(...samples.filter((x) => x.at >= t && x.at < t + 1000).map((x) => x.rss));
      const marks = logs.all.filter((m) => ['node cache synced', 'allocator loaded from existing nodes', 'address refresh done'].includes(String(m.msg)));
      for (let t = started; t <= end.at; t += 1000) {
        const here = marks.filter((m) => Number(m.time) >= t && Number(m.time) < t + 1000).map((m) => String(m.msg));
        if (readyAt >= t && readyAt < t + 1000) here.push('/readyz 200');
        console.error(`  ${build.label} ${caseName} +${((t - started) / 1000).toFixed(0)} s: ${highest(t)} MiB${here.length ? ` (${here.join('; ')})` : ''}`);
      }
    }
    const restoreMs = loaded ? Number(loaded.time) - syncedAt : undefined;
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    return `| ${build.label} | ${c.what} | ${NODES.toLocaleString('en-US')} | ${s(syncedAt - started)} (LIST ${s(Number(synced.ms))}) | ${restoreMs === undefined ? '—' : `${restoreMs} ms`} | **${hwm} MiB** (${at(syncedAt)} at the sync${loaded ? `, ${at(Number(loaded.time))} after the restore` : ''}) | **${Math.min(...settled)}–${Math.max(...settled)} MiB**, ${end.rss} at the end | ${rounds.length} (${rounds.map((m) => Number(m.ms)).join(', ')} ms) | ${heap}; heap budget ${budgetGCs ?? '—'} collections (${quietGCs ?? 0} in quiet spells); PodCIDRNotAllocated ${notAllocated ?? '—'} | PATCH node ${wrote('patchNodes')}, PATCH status ${wrote('patchStatus')}, PUT ${wrote('updateNodes')}, events ${wrote('createEvents') + wrote('patchEvents')} | ${loads.map((l) => l.toFixed(1)).join(' / ')}${snapshot} |`;
  } finally {
    run.kill('SIGTERM');
    await exited;
    if (c.churn) await ask({ cmd: 'churn', perSecond: 0 }, (m) => m.churn !== undefined);
  }
}

async function migrated(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ccm-scale-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const cloudConfig = path.join(dir, 'cloud.json');
  const apiProc = spawn(process.execPath, ['--max-old-space-size=16384', '--initial-old-space-size=12288', ...API_NODE_EXTRA, path.join(here, 'scale-apiserver.js'), kubeconfig, cloudConfig, String(NODES), '0', 'migrated'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const api = lines(apiProc);
  const ask: Ask = async (cmd, match) => {
    const from = api.all.length;
    const msg = typeof cmd === 'string' ? { cmd } : cmd;
    apiProc.stdin!.write(`${JSON.stringify(msg)}\n`);
    return api.next(match, 120_000, String(msg.cmd), from);
  };
  try {
    const ready = await api.next((m) => m.ready === true, 900_000, 'the double to fill');
    console.log(`double: ${NODES.toLocaleString('en-US')} nodes of ${(Number(ready.nodeBytes) / 1000).toFixed(1)} KB of JSON each, filled in ${(Number(ready.fillMs) / 1000).toFixed(0)} s\n`);
    console.log('| build | case | nodes | cache synced from start (LIST) | restore (synced → allocator loaded) | peak RSS (VmHWM) | settled RSS (last 15 s) | refresh rounds in the window | at the end (MiB) | writes by the run | load average (start / ready / end) |');
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    const runs = Number(process.env.BENCH_SCALE_RUNS ?? 1);
    const cases = (process.env.BENCH_SCALE_CASES ?? 'full').split(',');
    // The one case that writes to the nodes goes last: the others measure the nodes as filled.
    cases.sort((a, b) => Number(a === 'one-address') - Number(b === 'one-address'));
    for (const caseName of cases) {
      for (let r = 0; r < runs; r++) for (const build of builds()) console.log(await migratedRun(build, caseName, kubeconfig, cloudConfig, ask));
    }
  } finally {
    apiProc.stdin!.write(`${JSON.stringify({ cmd: 'stop' })}\n`);
    await new Promise((r) => apiProc.once('close', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function run(): Promise<void> {
  if (SHAPE === 'migrated') {
    console.log(`controller builds: ${builds().map((b) => `${b.label} (${b.main})`).join(', ')}\n`);
    return migrated();
  }
  console.log(`controller build: ${BUILD.name} (${BUILD.main})\n`);
  console.log('| --kube-api-qps | case | time | figures |');
  console.log('| --- | --- | --- | --- |');
  for (const qps of QPS) for (const row of await scenario(qps)) console.log(row);
}
