// Failover benchmark (npm run bench failover): N realistic Nodes holding pod CIDRs in the API
// server double (its own process, bench/scale-apiserver.ts), kubelet-like status updates on N/300
// nodes a second (a real cluster's kubelets report every 5 min when nothing changes), two `run`
// replicas with node IPAM only and the default lease (15 s / 10 s / 2 s), the leader SIGKILLed and
// one node joining right after. Measured:
// - the leader's cold start: process start → its first pod CIDR (one node was waiting), and the
//   node LIST requests it made (a full LIST is one request per page, about 170 at 20,000 nodes);
// - the standby before the takeover: RSS (and the leader's), and every request it made in 10 s idle;
// - the takeover: lease acquired → the new node's pod CIDR, and the node LIST requests it made.
// Each size twice: warm standby (the default) and --leader-elect-warm-standby=false (cold).
// BENCH_FAILOVER_NODES: sizes (default 20000); BENCH_FAILOVER_MODES: warm,cold; BENCH_FAILOVER_TRACE.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { heapShare, lines, rss, type Lines } from './child.js';
import { freePort } from '../src/util/free-port.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const imageMain = path.join(process.env.BENCH_IMAGE ?? path.join(here, '../../build/image'), 'lib/main.js');
const MAIN = existsSync(imageMain) ? imageMain : path.join(here, '../src/cli/main.js');
const SIZES = (process.env.BENCH_FAILOVER_NODES ?? '20000').split(',').map(Number);
const MODES = (process.env.BENCH_FAILOVER_MODES ?? 'warm,cold').split(',') as ('warm' | 'cold')[];
const IDLE_MS = 10_000;
// BENCH_FAILOVER_TRACE=1: the standby's log lines from the lease to the first pod CIDR, with times (stderr).
const TRACE = process.env.BENCH_FAILOVER_TRACE === '1';

async function replica(kubeconfig: string, warm: boolean): Promise<{ proc: ChildProcess; log: Lines; startedAt: number; port: number }> {
  // /metrics over plain HTTP on a free port: the heap figures behind each replica's RSS.
  const port = await freePort();
  const startedAt = Date.now();
  const proc = spawn(process.execPath, [MAIN, 'run', `--kubeconfig=${kubeconfig}`, '--controllers=node-ipam', '--allocate-node-cidrs',
    '--cluster-cidr=100.64.0.0/10', '--node-cidr-mask-size=27', `--secure-port=${port}`, '--insecure-plain-http', '--kube-api-qps=-1', `--leader-elect-warm-standby=${warm}`],
  { stdio: ['ignore', 'pipe', 'inherit'] });
  return { proc, log: lines(proc), startedAt, port };
}

const assignedMsg = (m: Record<string, unknown>): boolean => m.msg === 'pod CIDRs assigned';
/** "list nodes: 3, watch nodes: 1, …" without the Lease traffic, which every replica makes. */
const describeRequests = (r: Record<string, number>): string =>
  Object.entries(r).filter(([k]) => !k.endsWith(' leases')).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none';
const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const nodeLists = (r: Record<string, number>): number => r['list nodes'] ?? 0;

async function scenario(nodes: number, warm: boolean): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ccm-failover-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const apiProc = spawn(process.execPath, ['--max-old-space-size=16384', '--initial-old-space-size=12288', path.join(here, 'scale-apiserver.js'), kubeconfig, path.join(dir, 'cloud.json'), String(nodes), '2'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const api = lines(apiProc);
  const ask = (cmd: Record<string, unknown>, match: (m: Record<string, unknown>) => boolean) => {
    const from = api.all.length;
    apiProc.stdin!.write(`${JSON.stringify(cmd)}\n`);
    return api.next(match, 120_000, String(cmd.cmd), from);
  };
  const requests = async (user: string) => (await ask({ cmd: 'requests', user }, (m) => m.requests !== undefined)).requests as Record<string, number>;
  const procs: ChildProcess[] = [];
  try {
    await api.next((m) => m.ready === true, 900_000, 'the double to fill');
    // The kubelets' status updates run from before either replica starts, as in a cluster: both
    // replicas then have the same history when their RSS is compared. (Started only once the
    // standby was ready, the leader alone had a quiet spell in which V8 could shrink its young
    // generation, 32 → 1 MiB: that, not the role, moved its RSS by 30 MiB from run to run.)
    await ask({ cmd: 'churn', perSecond: Math.round(nodes / 300) }, (m) => m.churn !== undefined);
    // Cold start: one node waits for its pod CIDR when the first replica starts.
    await ask({ cmd: 'join', count: 1 }, (m) => m.joined !== undefined);
    const a = await replica(`${kubeconfig}.replica-a`, warm);
    procs.push(a.proc);
    const aFirst = await a.log.next(assignedMsg, 600_000, 'the leader\'s first pod CIDR');
    const coldStartMs = Number(aFirst.time) - a.startedAt;
    const aSynced = a.log.all.find((m) => m.msg === 'node cache synced');
    const aLists = nodeLists(await requests('replica-a'));
    const b = await replica(`${kubeconfig}.replica-b`, warm);
    procs.push(b.proc);
    await b.log.next((m) => m.msg === (warm ? 'warm standby: allocator loaded from the node cache; it follows the cache until this replica leads' : 'node cache synced'), 600_000, 'the standby ready');
    // Idle: what the standby holds and asks for while it waits.
    await new Promise((r) => setTimeout(r, 2000));
    const before = await requests('replica-b');
    // RSS sampled through the idle window, not read once: one reading lands anywhere in a
    // collection cycle (runs of the same code differed by 30 MiB), the median of 20 does not.
    const samples: { standby: number; leader: number }[] = [];
    const sampler = setInterval(() => samples.push({ standby: rss(b.proc.pid!).rss, leader: rss(a.proc.pid!).rss }), IDLE_MS / 20);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    clearInterval(sampler);
    const heaps = { standby: await heapShare(b.port, rss(b.proc.pid!).rss), leader: await heapShare(a.port, rss(a.proc.pid!).rss) };
    const after = await requests('replica-b');
    const idle = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => (v as number) > 0));
    const spread = (xs: number[]): string => `${median(xs)} MiB (${Math.min(...xs)}–${Math.max(...xs)})`;
    const standbyRss = spread(samples.map((s) => s.standby));
    const leaderRss = spread(samples.map((s) => s.leader));
    a.proc.kill('SIGKILL');
    await ask({ cmd: 'join', count: 1 }, (m) => m.joined !== undefined);
    const acquired = await b.log.next((m) => m.msg === 'acquired the lease', 60_000, 'the standby to take the lease');
    const assigned = await b.log.next(assignedMsg, 120_000, 'the new node\'s pod CIDR');
    // The standby lists nothing while idle: what it listed since is the takeover's.
    const takeoverLists = nodeLists(await requests('replica-b')) - nodeLists(after);
    const ms = Number(assigned.time) - Number(acquired.time);
    // When the write reached the double: the controller's part ends there, the rest is the API
    // server's (the double on one core, with the status updates, answers a PATCH in 10 ms idle
    // and in seconds at 100,000 nodes on a loaded machine).
    const writes = (await ask({ cmd: 'writes', user: 'replica-b' }, (m) => m.writes !== undefined)).writes as { verb: string; name: string; at: number }[];
    const sentMs = (writes[0]?.at ?? NaN) - Number(acquired.time);
    if (TRACE) {
      for (const m of b.log.all.slice(b.log.all.indexOf(acquired), b.log.all.indexOf(assigned) + 1)) console.error(`  +${Number(m.time) - Number(acquired.time)} ms ${String(m.msg)}`);
      for (const w of writes) console.error(`  +${w.at - Number(acquired.time)} ms the double received ${w.verb} ${w.name}`);
    }
    const mode = warm ? 'warm standby' : 'cold (`--leader-elect-warm-standby=false`)';
    const n = nodes.toLocaleString('en-US');
    return [
      `| ${n} | ${mode} | ${(sentMs / 1000).toFixed(2)} s; answered after ${(ms / 1000).toFixed(2)} s (delay ${String(acquired.takeoverDelayMs)} ms, lease ${String(acquired.from)}) | ${takeoverLists} | standby ${standbyRss}, leader ${leaderRss}; at the end: standby ${heaps.standby}; leader ${heaps.leader} | ${describeRequests(idle)} | ${(coldStartMs / 1000).toFixed(1)} s (cache synced ${aSynced ? (Number(aSynced.time) - a.startedAt) / 1000 : '?'} s); ${aLists} node LIST requests |`,
    ];
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    apiProc.stdin!.write(`${JSON.stringify({ cmd: 'stop' })}\n`);
    await new Promise((r) => apiProc.once('close', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function run(): Promise<void> {
  console.log(`| nodes | standby | lease acquired → first pod CIDR write at the API server | node LIST requests in the takeover | RSS in the idle window before the takeover: median (range) | standby's requests in ${IDLE_MS / 1000} s idle (leases aside) | leader's cold start → first pod CIDR; its node LIST requests |`);
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const n of SIZES) for (const m of MODES) for (const row of await scenario(n, m === 'warm')) console.log(row);
}
