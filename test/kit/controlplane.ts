// The real control plane (upstream's kube-apiserver and etcd, test/controlplane) for the tests of
// the real-server tier: built once per go.sum by scripts/controlplane.sh, started per suite in a
// fresh state folder, stopped with SIGTERM. Without Go on PATH the tier is skipped, and
// `controlPlaneUnavailable()` says so in one line (with CI set, a missing Go fails instead).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from './cli.js';

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  server: string;
  /** The embedded etcd's client URL (http://127.0.0.1:<port>, no TLS): for compaction by tests. */
  etcd: string;
  /** An admin kubeconfig (client certificate in system:masters). */
  kubeconfig: string;
  /** The state folder: pki/, etcd/, audit.log when an audit policy was given. */
  dir: string;
  /** The CA that signed the serving certificate and the client certificates. */
  caFile: string;
  /** What the control plane wrote to stderr so far (the end of it). */
  log(): string;
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  /** An audit policy file: every request is then logged to `${dir}/audit.log` as JSON lines. */
  auditPolicy?: string;
  /** Extra kube-apiserver flags. */
  apiserverFlags?: string[];
  serviceCIDR?: string;
}

const built = new Map<string, string>();
let unavailable: string | undefined;

function hasGo(): boolean {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Why the tier cannot run here, or undefined when it can. Without Go: the one line `npm test`
 * prints; with CI set, a missing Go is a failure, not a skip (CI machines have it).
 */
export function controlPlaneUnavailable(): string | undefined {
  if (built.size > 0) return undefined;
  if (unavailable !== undefined) return unavailable;
  if (!hasGo()) {
    unavailable = 'real kube-apiserver tier skipped: Go is not on PATH (install Go 1.25+; then `npm run test:kube`)';
    if (process.env.CI) throw new Error(`${unavailable}; CI must have Go`);
  }
  return unavailable;
}

/**
 * Builds (or finds in the cache) a command of test/controlplane: `controlplane` (the server),
 * `oracle` (upstream's node-address functions), `awsoracle` (cloud-provider-aws's), `upstream` and
 * `benchnodes` (the side-by-side benchmark); its path. Minutes the first time.
 */
export function buildControlPlane(command: 'controlplane' | 'oracle' | 'awsoracle' | 'upstream' | 'benchnodes' = 'controlplane'): string {
  const known = built.get(command);
  if (known) return known;
  const why = controlPlaneUnavailable();
  if (why) throw new Error(why);
  const bin = execFileSync('bash', [path.join(repoRoot, 'scripts/controlplane.sh'), 'build', command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 20 * 60_000 }).trim();
  built.set(command, bin);
  return bin;
}

/** Starts a control plane in a fresh state folder; resolves once /readyz answered 200. */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const bin = buildControlPlane();
  const dir = mkdtempSync(path.join(tmpdir(), 'controlplane-'));
  const args = ['--dir', dir];
  if (options.auditPolicy) args.push('--audit-policy', options.auditPolicy);
  if (options.serviceCIDR) args.push('--service-cidr', options.serviceCIDR);
  args.push('--', ...(options.apiserverFlags ?? []));
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-200_000);
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const ready = await new Promise<{ server: string; kubeconfig: string; etcd: string }>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`control plane not ready within 120 s:\n${stderr.slice(-4000)}`)), 120_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.slice(0, nl)) as { server: string; kubeconfig: string; etcd: string });
      } catch (err) {
        reject(new Error(`control plane printed ${JSON.stringify(out.slice(0, nl))}: ${(err as Error).message}`));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`control plane exited (${code}) before it was ready:\n${stderr.slice(-4000)}`));
    });
  });
  let stopped: Promise<void> | undefined;
  return {
    server: ready.server,
    etcd: ready.etcd,
    kubeconfig: ready.kubeconfig,
    dir,
    caFile: path.join(dir, 'pki', 'ca.crt'),
    log: () => stderr,
    stop: () =>
      (stopped ??= (async () => {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
        rmSync(dir, { recursive: true, force: true });
      })()),
  };
}
