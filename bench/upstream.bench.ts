// Side by side with upstream (npm run bench upstream; issue 40): the same real kube-apiserver
// (test/controlplane's cmd/controlplane: upstream's kube-apiserver and etcd, TLS, client
// certificates), the same N realistic tainted Nodes with the same mix of provided-node-ip
// annotations (bench/upstream-cluster.ts), one controller at a time, each from a clean start:
//
//   cloud-node  upstream: k8s.io/cloud-provider's CloudNodeController over its own fake cloud,
//               answering from the same inventory (test/controlplane/cmd/upstream);
//               project:  `run --controllers=cloud-node --cloud-provider=static` on that inventory.
//               Done when every satisfiable node has lost the uninitialized taint.
//   node-ipam   upstream: kube-controller-manager's NodeIpamController with the RangeAllocator;
//               project:  `run --controllers=node-ipam --allocate-node-cidrs`; same cluster CIDR
//               and mask. Done when every node has spec.podCIDRs.
//   ... takeover  the project again, as a warm standby: a leader that does nothing holds the Lease
//               (15 s, renewed every 2 s) until the standby has loaded, then dies without
//               releasing it; timed from the lease's expiry (its last renewal + 15 s).
//
// Each run starts the control plane on a copy of one snapshot of the cluster (the Nodes created
// once per N by `benchnodes fill`), so every controller meets the same objects in the same etcd.
// The completion is seen by `benchnodes watch` (its own process, protobuf, started and synced
// before the controller). Figures per run: time from the controller's start until done (and
// until its caches synced), API requests by verb and resource from the API server's audit log
// (a Metadata-level policy for the two controllers' users only; requests received until done),
// the controller's peak RSS (VmHWM when done) and steady RSS (median over 10 s after), its CPU
// seconds until done, the API server's CPU seconds over the same span, and the 1-minute load
// average before and after.
//
// BENCH_UPSTREAM_NODES: sizes (default 1000,10000,50000). BENCH_UPSTREAM_CASES: any of
// cloud-node,node-ipam,cloud-node-takeover,node-ipam-takeover (default all). BENCH_UPSTREAM_RUNS:
// runs of each case (default 1). BENCH_UPSTREAM_QPS (default -1: no limit; both managers' default
// is 20) and BENCH_UPSTREAM_WORKERS (--concurrent-node-syncs of the cloud node controllers, default
// 1 as in both) apply to both controllers alike; BENCH_UPSTREAM_IPAM_WORKERS sets the project's
// node-ipam workers (default BENCH_UPSTREAM_WORKERS; both range allocators write 30 nodes at once whatever it says: upstream's cidrUpdateWorkers, the project's RANGE_ALLOCATOR_WRITE_WORKERS, which only a higher value raises). BENCH_UPSTREAM_SNAPSHOTS=<dir>: keep the snapshots there and reuse them.
// Needs Go (test/controlplane is built by scripts/controlplane.sh) and, at 50,000 nodes, about
// 10 GB of memory for the API server and etcd.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/util/free-port.js';
import { cpuSeconds, lines, rss, type Lines } from './child.js';
import { benchCluster } from './upstream-cluster.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.join(here, '../..');
const imageMain = path.join(process.env.BENCH_IMAGE ?? path.join(repoRoot, 'build/image'), 'lib/main.js');
const BUILD = existsSync(imageMain) ? { name: 'image', main: imageMain, node: ['--enable-source-maps'] } : { name: 'dist', main: path.join(here, '../src/cli/main.js'), node: [] };
const SIZES = (process.env.BENCH_UPSTREAM_NODES ?? '1000,10000,50000').split(',').map(Number);
const CASES = (process.env.BENCH_UPSTREAM_CASES ?? 'cloud-node,node-ipam,cloud-node-takeover,node-ipam-takeover').split(',');
const RUNS = Number(process.env.BENCH_UPSTREAM_RUNS ?? 1);
const QPS = process.env.BENCH_UPSTREAM_QPS ?? '-1';
const WORKERS = process.env.BENCH_UPSTREAM_WORKERS ?? '1';
// The project's --concurrent-node-syncs for node-ipam (its range allocator writes max(this, 30) at once); upstream's RangeAllocator always runs 30 (cidrUpdateWorkers).
const IPAM_WORKERS = process.env.BENCH_UPSTREAM_IPAM_WORKERS ?? WORKERS;
const SNAPSHOTS = process.env.BENCH_UPSTREAM_SNAPSHOTS;
// 65,536 /26s: room for the largest size; no overlap with the nodes' 10.0.0.0/8 or the Services' 10.96.0.0/16.
const CLUSTER_CIDR = '100.64.0.0/10';
const MASK = '26';
const SERVICE_CIDR = '10.96.0.0/16';
const LEASE = { namespace: 'kube-system', name: 'node-address-ccm' };
/** The project's default --leader-elect-lease-duration. */
const LEASE_SECONDS = 15;
const USERS = { upstream: 'bench-upstream', project: 'bench-project' } as const;
const STEADY_MS = 10_000;
const DONE_TIMEOUT_MS = 3 * 60 * 60_000;
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [${USERS.upstream}, ${USERS.project}]
- level: None
`;

type Controller = 'cloud-node' | 'node-ipam';
type Who = 'upstream' | 'project';

function goBinary(name: string): string {
  return execFileSync('bash', [path.join(repoRoot, 'scripts/controlplane.sh'), 'build', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

const load = (): string => loadavg()[0]!.toFixed(1);

interface Server {
  dir: string;
  proc: ChildProcess;
  admin: string;
  kubeconfig(user: string): string;
  stop(): Promise<void>;
}

async function startServer(bin: string, dir: string): Promise<Server> {
  const policy = path.join(dir, 'audit-policy.yaml');
  writeFileSync(policy, AUDIT_POLICY);
  const proc = spawn(bin, ['--dir', dir, '--client-users', Object.values(USERS).join(','), '--audit-policy', policy, '--service-cidr', SERVICE_CIDR], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stderr!.pipe(createWriteStream(path.join(dir, 'controlplane.log'), { flags: 'a' }));
  const out = lines(proc);
  const closed = new Promise<void>((resolve) => proc.once('close', () => resolve()));
  await Promise.race([
    out.next((m) => typeof m.server === 'string', 600_000, 'the control plane to be ready'),
    closed.then(() => {
      throw new Error(`control plane exited before it was ready; see ${dir}/controlplane.log`);
    }),
  ]);
  return {
    dir,
    proc,
    admin: path.join(dir, 'admin.kubeconfig'),
    kubeconfig: (user) => path.join(dir, `${user}.kubeconfig`),
    stop: async () => {
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 60_000);
      await closed;
      clearTimeout(t);
    },
  };
}

/** The snapshot of an N-node cluster: a control plane state folder whose etcd holds the Nodes. */
async function snapshot(bins: Record<string, string>, n: number, work: string): Promise<{ dir: string; inventory: string; targets: Record<Controller, string> }> {
  const base = SNAPSHOTS ?? work;
  const dir = path.join(base, `cluster-${n}`);
  const inventory = path.join(base, `cluster-${n}.cloud.json`);
  const targets = { 'cloud-node': path.join(base, `cluster-${n}.satisfiable.txt`), 'node-ipam': path.join(base, `cluster-${n}.all.txt`) };
  if (existsSync(path.join(dir, 'complete'))) return { dir, inventory, targets };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const cluster = benchCluster(n);
  writeFileSync(inventory, JSON.stringify(cluster.inventory));
  writeFileSync(targets['cloud-node'], cluster.satisfiable.join('\n') + '\n');
  writeFileSync(targets['node-ipam'], cluster.nodes.map((x) => x.metadata.name).join('\n') + '\n');
  const nodesFile = path.join(base, `cluster-${n}.nodes.jsonl`);
  // A line per node, written as it is made: 50,000 nodes are 600 MB, more than one string may hold.
  const fd = openSync(nodesFile, 'w');
  for (const x of cluster.nodes) writeSync(fd, JSON.stringify(x) + '\n');
  closeSync(fd);
  const server = await startServer(bins.controlplane!, dir);
  try {
    const out = execFileSync(bins.benchnodes!, ['fill', '--kubeconfig', server.admin, '--file', nodesFile, '--concurrency', '16'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 });
    console.error(`bench upstream: ${n} nodes created: ${out.trim()}`);
  } finally {
    await server.stop();
  }
  rmSync(nodesFile);
  rmSync(path.join(dir, 'audit.log'), { force: true });
  writeFileSync(path.join(dir, 'complete'), '');
  return { dir, inventory, targets };
}

interface AuditCount {
  /** "update nodes": 9000, … for requests received until `until` (ms). */
  until: Record<string, number>;
  total: number;
}

/**
 * Requests of `user` in the audit log of the state folder `dir`, by verb and resource, received in
 * [from, until]. Rotated files (audit-<time>.log) are read too, should the server have rotated.
 */
async function auditCounts(dir: string, user: string, from: number, until: number): Promise<AuditCount> {
  const seen = new Set<string>();
  const out: Record<string, number> = {};
  let total = 0;
  const files = readdirSync(dir).filter((f) => /^audit(-.*)?\.log$/.test(f)).map((f) => path.join(dir, f));
  for (const file of files) for await (const line of createInterface({ input: createReadStream(file) })) {
    if (!line.includes(`"${user}"`)) continue;
    const e = JSON.parse(line) as { auditID: string; stage: string; verb: string; user: { username: string }; objectRef?: { resource?: string; subresource?: string }; requestReceivedTimestamp: string };
    if (e.user.username !== user || seen.has(e.auditID)) continue;
    seen.add(e.auditID);
    const at = Date.parse(e.requestReceivedTimestamp);
    if (at < from) continue;
    total++;
    if (at > until) continue;
    const key = `${e.verb} ${e.objectRef?.resource ?? '(none)'}${e.objectRef?.subresource ? '/' + e.objectRef.subresource : ''}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return { until: out, total };
}

const describe = (counts: Record<string, number>): string =>
  Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`).join(', ') || 'none';

function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

interface Figures {
  doneMs: number;
  syncedMs: number | undefined;
  peakMiB: number;
  steadyMiB: number;
  cpu: number;
  apiCpu: number;
  requests: Record<string, number>;
  unexpected: number;
  loadBefore: string;
  loadAfter: string;
  note: string;
}

function spawnController(who: Who, controller: Controller, server: Server, inventory: string, port: number, warm: boolean, bins: Record<string, string>, logFile: string): { proc: ChildProcess; log: Lines } {
  let proc: ChildProcess;
  if (who === 'upstream') {
    const args = ['--kubeconfig', server.kubeconfig(USERS.upstream), '--controller', controller, '--qps', QPS, '--burst', '30'];
    if (controller === 'cloud-node') args.push('--inventory', inventory, '--workers', WORKERS);
    else args.push('--cluster-cidr', CLUSTER_CIDR, '--node-cidr-mask-size', MASK, '--service-cidr', SERVICE_CIDR);
    proc = spawn(bins.upstream!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    proc.stderr!.pipe(createWriteStream(logFile));
  } else {
    const args = [...BUILD.node, BUILD.main, 'run', `--kubeconfig=${server.kubeconfig(USERS.project)}`, `--controllers=${controller}`, `--leader-elect=${warm}`,
      `--secure-port=${port}`, '--insecure-plain-http', `--kube-api-qps=${QPS}`, '--kube-api-burst=30', `--concurrent-node-syncs=${controller === 'node-ipam' ? IPAM_WORKERS : WORKERS}`];
    if (controller === 'cloud-node') args.push('--cloud-provider=static', `--cloud-config=${inventory}`);
    else args.push('--allocate-node-cidrs', `--cluster-cidr=${CLUSTER_CIDR}`, `--node-cidr-mask-size=${MASK}`, `--service-cluster-ip-range=${SERVICE_CIDR}`);
    if (warm) args.push(`--leader-elect-resource-namespace=${LEASE.namespace}`, `--leader-elect-resource-name=${LEASE.name}`);
    proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  }
  const log = lines(proc);
  if (who === 'project') proc.stdout!.pipe(createWriteStream(logFile));
  return { proc, log };
}

async function once(bins: Record<string, string>, snap: { dir: string; inventory: string; targets: Record<Controller, string> }, work: string, who: Who, controller: Controller, warm: boolean): Promise<Figures> {
  const dir = mkdtempSync(path.join(work, `run-${who}-${controller}-`));
  cpSync(snap.dir, dir, { recursive: true });
  rmSync(path.join(dir, 'complete'));
  const server = await startServer(bins.controlplane!, dir);
  const procs: ChildProcess[] = [];
  try {
    // The takeover: a leader that does nothing holds the Lease (15 s, renewed every 2 s) while the
    // project's replica loads as a follower, then dies without releasing it.
    let holder: { proc: ChildProcess; log: Lines } | undefined;
    if (warm) {
      const proc = spawn(bins.benchnodes!, ['lease', '--kubeconfig', server.admin, '--namespace', LEASE.namespace, '--name', LEASE.name, '--duration', `${LEASE_SECONDS}s`], { stdio: ['ignore', 'pipe', 'inherit'] });
      procs.push(proc);
      holder = { proc, log: lines(proc) };
      await holder.log.next((m) => m.renewed !== undefined, 60_000, 'the lease holder');
    }
    const watcher = spawn(bins.benchnodes!, ['watch', '--kubeconfig', server.admin, '--want', controller === 'cloud-node' ? 'initialised' : 'pod-cidrs', '--targets', snap.targets[controller]], { stdio: ['ignore', 'pipe', 'inherit'] });
    procs.push(watcher);
    const watch = lines(watcher);
    const synced = await watch.next((m) => m.msg === 'synced', 600_000, 'the watcher to list the nodes');
    if (Number(synced.done) !== 0) throw new Error(`bench upstream: ${String(synced.done)} nodes are done before the controller starts`);
    const port = await freePort();
    const loadBefore = load();
    const apiCpuBefore = cpuSeconds(server.proc.pid!);
    const t0 = Date.now();
    const { proc, log } = spawnController(who, controller, server, snap.inventory, port, warm, bins, path.join(work, `${path.basename(dir)}.log`));
    procs.push(proc);
    let from = t0;
    let note = '';
    if (warm) {
      const ready = controller === 'node-ipam' ? 'warm standby: allocator loaded from the node cache; it follows the cache until this replica leads' : 'node cache synced';
      const r = await log.next((m) => m.msg === ready, 1_800_000, 'the standby to load');
      await new Promise((res) => setTimeout(res, 2000));
      const standby = rss(proc.pid!);
      holder!.proc.kill('SIGTERM');
      await new Promise((res) => holder!.proc.once('close', res));
      const renewals = holder!.log.all.filter((m) => m.renewed !== undefined);
      // The lease expires LEASE_SECONDS after its last renewal: the takeover is timed from there.
      from = Number(renewals[renewals.length - 1]!.renewed) + LEASE_SECONDS * 1000;
      note = `standby ready ${((Number(r.time) - t0) / 1000).toFixed(1)} s after start, RSS ${standby.rss} MiB then`;
    }
    const cpuFrom = warm ? cpuSeconds(proc.pid!) : 0;
    const apiFrom = warm ? cpuSeconds(server.proc.pid!) : apiCpuBefore;
    const done = await watch.next((m) => m.msg === 'complete', DONE_TIMEOUT_MS, `${who} ${controller} to finish`);
    const doneAt = Number(done.time);
    const cpu = cpuSeconds(proc.pid!) - cpuFrom;
    const apiCpu = cpuSeconds(server.proc.pid!) - apiFrom;
    const peak = rss(proc.pid!).peak;
    const loadAfter = load();
    const syncedMsg = log.all.find((m) => m.msg === 'caches synced' || m.msg === 'node cache synced');
    if (warm) {
      const acquired = log.all.find((m) => m.msg === 'acquired the lease');
      if (acquired) note += `; lease acquired ${((Number(acquired.time) - from) / 1000).toFixed(1)} s after it expired (${String(acquired.from)}, takeover delay ${String(acquired.takeoverDelayMs)} ms), done ${((doneAt - Number(acquired.time)) / 1000).toFixed(1)} s after that`;
    }
    const samples: number[] = [];
    for (let k = 0; k < 20; k++) {
      await new Promise((res) => setTimeout(res, STEADY_MS / 20));
      samples.push(rss(proc.pid!).rss);
    }
    samples.sort((a, b) => a - b);
    const last = await watch.next((m) => m.msg === 'progress', 5_000, 'a progress line', watch.all.length);
    // Watches the API server closed on a client (the watch cache ends a watcher that does not take
    // its events in time): each one is a watch re-opened by the controller under test or the watcher.
    const terminated = JSON.parse(execFileSync(bins.benchnodes!, ['metric', '--kubeconfig', server.admin, '--name', 'apiserver_terminated_watchers_total', '--match', 'resource="nodes"'], { encoding: 'utf8' })) as { value: number };
    if (terminated.value > 0) note += `${note ? '; ' : ''}the API server ended ${terminated.value} node watches of slow clients`;
    proc.kill('SIGTERM');
    await new Promise((res) => proc.once('close', res));
    watcher.kill('SIGTERM');
    await server.stop();
    const audit = await auditCounts(dir, USERS[who], from, doneAt);
    return {
      doneMs: doneAt - from,
      syncedMs: syncedMsg ? Number(syncedMsg.time) - t0 : undefined,
      peakMiB: peak,
      steadyMiB: samples[Math.floor(samples.length / 2)]!,
      cpu,
      apiCpu,
      requests: audit.until,
      unexpected: Number(last.unexpected ?? done.unexpected),
      loadBefore,
      loadAfter,
      note,
    };
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    await server.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export default async function run(): Promise<void> {
  const bins = Object.fromEntries(['controlplane', 'upstream', 'benchnodes'].map((b) => [b, goBinary(b)]));
  const work = mkdtempSync(path.join(tmpdir(), 'ccm-upstream-'));
  console.log(`controller build: ${BUILD.name} (${BUILD.main}); --kube-api-qps ${QPS} for both; cloud-node workers ${WORKERS} for both; node-ipam writes at once: project ${Math.max(Number(IPAM_WORKERS), 30)}, upstream 30; Node ${process.version}; ${readFileSync('/proc/cpuinfo', 'utf8').split('\n').filter((l) => l.startsWith('processor')).length} cores\n`);
  console.log('| nodes | controller | run | done after | caches synced | API requests until done | RSS peak / steady | CPU s (API server CPU s) | load before → after | notes |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  try {
    for (const n of SIZES) {
      const snap = await snapshot(bins, n, work);
      const plan: { who: Who; controller: Controller; warm: boolean; label: string }[] = [];
      for (const c of CASES) {
        if (c === 'cloud-node' || c === 'node-ipam') {
          plan.push({ who: 'upstream', controller: c, warm: false, label: `upstream ${c}` });
          plan.push({ who: 'project', controller: c, warm: false, label: `project ${c}` });
        } else if (c === 'cloud-node-takeover' || c === 'node-ipam-takeover') {
          const controller = c.replace('-takeover', '') as Controller;
          plan.push({ who: 'project', controller, warm: true, label: `project ${controller}, warm takeover` });
        }
      }
      for (let r = 1; r <= RUNS; r++) {
        for (const p of plan) {
          const f = await once(bins, snap, work, p.who, p.controller, p.warm);
          const unexpected = f.unexpected > 0 ? `; ${f.unexpected} unsatisfiable nodes initialised!` : '';
          console.log(`| ${n.toLocaleString('en-US')} | ${p.label} | ${r} | ${s(f.doneMs)} | ${f.syncedMs === undefined ? '—' : s(f.syncedMs)} | ${sum(f.requests).toLocaleString('en-US')}: ${describe(f.requests)} | ${f.peakMiB} / ${f.steadyMiB} MiB | ${f.cpu.toFixed(1)} (${f.apiCpu.toFixed(1)}) | ${f.loadBefore} → ${f.loadAfter} | ${f.note}${unexpected} |`);
        }
      }
      if (!SNAPSHOTS) rmSync(snap.dir, { recursive: true, force: true });
    }
  } finally {
    if (!SNAPSHOTS) rmSync(work, { recursive: true, force: true });
  }
}
