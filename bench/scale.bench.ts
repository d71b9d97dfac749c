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
// It takes several minutes and several GB of memory (the double's side); it is not part of npm test.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/util/free-port.js';
import { cpuSeconds, lines, metric, rss } from './child.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// The controller as deploy/Dockerfile ships it (the esbuild bundle, with source maps on) when an
// image build exists (`node scripts/build-image-root.mjs`; BENCH_IMAGE=<dir> picks another),
// else the tsc output the tests run, which loads every module of @kubernetes/client-node.
const imageMain = path.join(process.env.BENCH_IMAGE ?? path.join(here, '../../build/image'), 'lib/main.js');
const BUILD = existsSync(imageMain) ? { name: 'image', main: imageMain, node: ['--enable-source-maps'] } : { name: 'dist', main: path.join(here, '../src/cli/main.js'), node: [] };
const NODES = Number(process.env.BENCH_SCALE_NODES ?? 100_000);
const JOIN = Number(process.env.BENCH_SCALE_JOIN ?? 10_000);
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 10);
const QPS = (process.env.BENCH_SCALE_QPS ?? '-1,200').split(',');
const REFRESH = '15s';
// A /27 per node: 100.64.0.0/10 holds 131,072 of them (the double's pod CIDRs are the first
// NODES); past that (130,000 nodes and a join), 100.0.0.0/9, which holds the same /27s and as many more.
const CLUSTER_CIDR = NODES + JOIN <= 2 ** 17 ? '100.64.0.0/10' : '100.0.0.0/9';
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

export default async function run(): Promise<void> {
  console.log(`controller build: ${BUILD.name} (${BUILD.main})\n`);
  console.log('| --kube-api-qps | case | time | figures |');
  console.log('| --- | --- | --- | --- |');
  for (const qps of QPS) for (const row of await scenario(qps)) console.log(row);
}
