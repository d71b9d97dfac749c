// Failover benchmark (npm run bench failover): N realistic Nodes holding pod CIDRs in the API
// server double (its own process, bench/scale-apiserver.ts), two `run` replicas with node IPAM
// only, the leader SIGKILLed, one tainted node joining right after. Measured on the standby: lease
// acquired → the new node's pod CIDR written, and what the takeover listed; the standby's RSS
// before the takeover. Each case twice: the standby catching its warm cache up to a quorum read
// (what run does from 5,000 nodes) and listing every node again (what it did before, forced with
// the test knob NODE_ADDRESS_CCM_CATCH_UP_MIN_NODES).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lines, rss, type Lines } from './child.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const imageMain = path.join(process.env.BENCH_IMAGE ?? path.join(here, '../../build/image'), 'lib/main.js');
const MAIN = existsSync(imageMain) ? imageMain : path.join(here, '../src/cli/main.js');
const SIZES = (process.env.BENCH_FAILOVER_NODES ?? '20000').split(',').map(Number);
// Short leases so that the expiry does not dominate; the figure measured starts at the acquisition.
const LEASE = ['--leader-elect-lease-duration=4s', '--leader-elect-renew-deadline=3s', '--leader-elect-retry-period=500ms'];

function replica(kubeconfig: string, catchUp: boolean): { proc: ChildProcess; log: Lines } {
  const env = { ...process.env, NODE_ADDRESS_CCM_CATCH_UP_MIN_NODES: catchUp ? '0' : '1000000000' };
  const proc = spawn(process.execPath, [MAIN, 'run', `--kubeconfig=${kubeconfig}`, '--controllers=node-ipam', '--allocate-node-cidrs',
    '--cluster-cidr=100.64.0.0/10', '--node-cidr-mask-size=27', '--secure-port=0', '--kube-api-qps=-1', ...LEASE], { stdio: ['ignore', 'pipe', 'inherit'], env });
  return { proc, log: lines(proc) };
}

async function scenario(nodes: number, catchUp: boolean): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ccm-failover-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const apiProc = spawn(process.execPath, ['--max-old-space-size=16384', path.join(here, 'scale-apiserver.js'), kubeconfig, path.join(dir, 'cloud.json'), String(nodes), '1'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const api = lines(apiProc);
  const ask = (cmd: string, match: (m: Record<string, unknown>) => boolean) => {
    const from = api.all.length;
    apiProc.stdin!.write(`${JSON.stringify({ cmd })}\n`);
    return api.next(match, 120_000, cmd, from);
  };
  const procs: ChildProcess[] = [];
  try {
    await api.next((m) => m.ready === true, 900_000, 'the double to fill');
    const a = replica(kubeconfig, catchUp);
    procs.push(a.proc);
    await a.log.next((m) => m.msg === 'allocator loaded from existing nodes', 600_000, 'the leader ready');
    const b = replica(kubeconfig, catchUp);
    procs.push(b.proc);
    await b.log.next((m) => m.msg === 'node cache synced', 600_000, 'the standby synced');
    // Idle for a few seconds: what the standby holds and asks for while it waits.
    const listsBefore = ((await ask('status', (m) => m.counts !== undefined)).counts as Record<string, number>).listNodes ?? 0;
    await new Promise((r) => setTimeout(r, 5000));
    const idleLists = (((await ask('status', (m) => m.counts !== undefined)).counts as Record<string, number>).listNodes ?? 0) - listsBefore;
    const standbyRss = rss(b.proc.pid!).rss;
    const leaderRss = rss(a.proc.pid!).rss;
    a.proc.kill('SIGKILL');
    await ask('join', (m) => m.joined !== undefined);
    const acquired = await b.log.next((m) => m.msg === 'acquired the lease', 60_000, 'the standby to take the lease');
    const assigned = await b.log.next((m) => m.msg === 'pod CIDRs assigned' || m.msg === 'pod CIDRs claimed for initialisation', 120_000, 'the new node\'s pod CIDR');
    const loaded = b.log.all.find((m) => m.msg === 'allocator loaded from existing nodes');
    const caughtUp = b.log.all.some((m) => typeof m.msg === 'string' && m.msg.startsWith('node IPAM: the node cache is current to a quorum read'));
    const ms = Number(assigned.time) - Number(acquired.time);
    const loadMs = loaded ? Number(loaded.time) - Number(acquired.time) : NaN;
    return `| ${nodes.toLocaleString('en-US')} | ${catchUp ? 'catch up to a quorum read' : 'list again'} | ${(ms / 1000).toFixed(2)} s (allocator loaded after ${(loadMs / 1000).toFixed(2)} s) | ${caughtUp ? 'no full LIST' : 'full LIST'} | standby ${standbyRss} MiB, leader ${leaderRss} MiB | ${idleLists} |`;
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    apiProc.stdin!.write(`${JSON.stringify({ cmd: 'stop' })}\n`);
    await new Promise((r) => apiProc.once('close', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function run(): Promise<void> {
  console.log('| nodes | takeover | lease acquired → first pod CIDR | what the takeover listed | RSS before the takeover | node LISTs by both replicas in 5 s idle |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const n of SIZES) for (const catchUp of [true, false]) console.log(await scenario(n, catchUp));
}
