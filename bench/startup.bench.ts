// Start-up and footprint (npm run bench startup), issue 17's targets: `run --help` ≤ 150 ms;
// idle RSS with --cloud-provider static ≤ 80 MiB, aws ≤ 100 MiB, gce ≤ 120 MiB (issue 29: azure
// ≤ 100 MiB); start to "caches synced" (/readyz 200: node cache listed and watch connected) ≤ 1 s
// with static. BENCH_PROVIDERS=static,azure runs only those cases (a single-cloud image variant
// has no other cloud's SDK).
//
// Each case runs the CLI as a child process, against the API server double in this process (an
// empty cluster) for the run cases. Two builds are measured: `dist` (tsc output with the repo's
// node_modules, what tests run) and `image` (the esbuild bundle and pruned node_modules that
// deploy/Dockerfile ships, from `node scripts/build-image-root.mjs`; BENCH_IMAGE=<dir> picks
// another one). The aws and gce processes point at closed local ports, and azure at the public
// cloud with a managed identity: with no nodes they make no cloud call, so the RSS is the SDK's
// resident cost, not a response's.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApiServerDouble, type ApiServerDouble } from '../src/double/server.js';
import { freePort } from '../src/util/free-port.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HELP_RUNS = 10;
const RUN_RUNS = 3;
/** How long a started process idles (synced, empty cluster) before its RSS is read. */
const IDLE_MS = 3000;
const MiB = 1024 * 1024;

interface Build {
  name: string;
  main: string;
}

function builds(): Build[] {
  const out: Build[] = [{ name: 'dist', main: path.join(repo, 'dist/src/cli/main.js') }];
  const image = process.env.BENCH_IMAGE ?? path.join(repo, 'build/image');
  if (existsSync(path.join(image, 'lib/main.js'))) out.push({ name: 'image', main: path.join(image, 'lib/main.js') });
  else console.log(`(no image build at ${image}: run "node scripts/build-image-root.mjs" to measure it too)\n`);
  return out;
}


function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Wall time of one Node process with these arguments, spawn to exit. */
async function wallMs(args: string[]): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`node ${args.join(' ')} exited ${code}`))));
  });
  return performance.now() - t0;
}

/** /proc/<pid>/status VmRSS and VmHWM in bytes (Linux). */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

interface RunCase {
  provider: 'static' | 'aws' | 'azure' | 'gce';
  flags(dir: string, closedPort: number): string[];
  env?(closedPort: number): NodeJS.ProcessEnv;
}

const CASES: RunCase[] = [
  {
    provider: 'static',
    flags: (dir) => {
      writeFileSync(path.join(dir, 'static.yaml'), 'nodes: {}\n');
      return ['--cloud-config', path.join(dir, 'static.yaml')];
    },
  },
  {
    provider: 'aws',
    flags: () => [],
    env: (port) => ({ AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench', AWS_ENDPOINT_URL_EC2: `http://127.0.0.1:${port}`, AWS_EC2_METADATA_DISABLED: 'true' }),
  },
  {
    provider: 'azure',
    flags: (dir) => {
      // The credential and the ARM clients are built at start; nothing is asked of ARM or IMDS
      // until a node needs an answer.
      writeFileSync(path.join(dir, 'azure.json'), JSON.stringify({ subscriptionId: '00000000-0000-0000-0000-000000000000', resourceGroup: 'bench', useManagedIdentityExtension: true }));
      return ['--cloud-config', path.join(dir, 'azure.json')];
    },
  },
  {
    provider: 'gce',
    flags: (dir, port) => {
      writeFileSync(path.join(dir, 'gce.conf'), `[global]\nproject-id = bench\napi-endpoint = http://127.0.0.1:${port}/compute/v1/\n`);
      return ['--cloud-config', path.join(dir, 'gce.conf')];
    },
  },
];

/** Starts `run`, times spawn → /readyz 200, idles, reads RSS, stops it with SIGTERM. */
async function runOnce(build: Build, c: RunCase, api: ApiServerDouble): Promise<{ readyMs: number; rss: number; peak: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ccm-bench-startup-'));
  try {
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, api.kubeconfig);
    const closed = await freePort();
    const port = await freePort();
    const args = [build.main, 'run', `--kubeconfig=${kubeconfig}`, '--cloud-provider', c.provider, ...c.flags(dir, closed),
      // Plain HTTP so the probe needs no TLS client; the default HTTPS adds one in-memory ECDSA
      // certificate at start (under 100 ms here), which this leaves out.
      '--leader-elect=false', '--secure-port', String(port), '--insecure-plain-http', '--log-level', 'warn'];
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...c.env?.(closed) } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    let readyMs = NaN;
    try {
      for (;;) {
        if (child.exitCode !== null) throw new Error(`${c.provider}: exited ${child.exitCode}: ${stderr}`);
        const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false);
        if (ok) {
          readyMs = performance.now() - t0;
          break;
        }
        if (performance.now() - t0 > 30_000) throw new Error(`${c.provider}: not ready after 30 s: ${stderr}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      await new Promise((r) => setTimeout(r, IDLE_MS));
      return { readyMs, ...memory(child.pid as number) };
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function run(): Promise<void> {
  const list = builds();
  console.log(`| build | case | target | median | min | max | runs |`);
  console.log(`|---|---|---|---|---|---|---|`);
  // The floor under every row: this Node starting and exiting with nothing to load.
  const rows: Array<{ name: string; what: string; target: string; args: string[] }> = [
    { name: `node ${process.version}`, what: '`node -e 0` wall time (reference)', target: '', args: ['-e', '0'] },
    ...list.map((b) => ({ name: b.name, what: '`run --help` wall time', target: '≤ 150 ms', args: [b.main, 'run', '--help'] })),
  ];
  for (const row of rows) {
    const times: number[] = [];
    for (let i = 0; i < HELP_RUNS; i++) times.push(await wallMs(row.args));
    console.log(`| ${row.name} | ${row.what} | ${row.target} | ${median(times).toFixed(0)} ms | ${Math.min(...times).toFixed(0)} ms | ${Math.max(...times).toFixed(0)} ms | ${HELP_RUNS} |`);
  }
  const api = await startApiServerDouble({});
  try {
    for (const b of list) {
      const only = process.env.BENCH_PROVIDERS?.split(',');
      for (const c of CASES.filter((x) => !only || only.includes(x.provider))) {
        const rs = [];
        for (let i = 0; i < RUN_RUNS; i++) rs.push(await runOnce(b, c, api));
        const rss = rs.map((r) => r.rss / MiB);
        const peak = rs.map((r) => r.peak / MiB);
        const target = { static: 80, aws: 100, azure: 100, gce: 120 }[c.provider];
        console.log(`| ${b.name} | \`--cloud-provider ${c.provider}\` idle RSS (peak) | ≤ ${target} MiB | ${median(rss).toFixed(0)} MiB (${median(peak).toFixed(0)}) | ${Math.min(...rss).toFixed(0)} MiB | ${Math.max(...rss).toFixed(0)} MiB | ${RUN_RUNS} |`);
        const ready = rs.map((r) => r.readyMs);
        console.log(`| ${b.name} | \`--cloud-provider ${c.provider}\` start → caches synced | ${c.provider === 'static' ? '≤ 1 s' : '—'} | ${median(ready).toFixed(0)} ms | ${Math.min(...ready).toFixed(0)} ms | ${Math.max(...ready).toFixed(0)} ms | ${RUN_RUNS} |`);
      }
    }
  } finally {
    await api.stop();
  }
  const report = process.env.BENCH_IMAGE ?? path.join(repo, 'build/image');
  if (existsSync(path.join(report, 'report.json'))) {
    const r = JSON.parse(readFileSync(path.join(report, 'report.json'), 'utf8')) as { cloud: string; appBytes: number; nodeModulesBytes: number; totalBytes: number; sourceMapBytes: number };
    console.log(`\nimage install (${r.cloud}): app ${(r.appBytes / 1e6).toFixed(1)} MB (source maps ${(r.sourceMapBytes / 1e6).toFixed(1)} MB) + node_modules ${(r.nodeModulesBytes / 1e6).toFixed(1)} MB = ${(r.totalBytes / 1e6).toFixed(1)} MB (target ≤ 120 MB all providers, ≤ 80 MB per variant)`);
  }
}
