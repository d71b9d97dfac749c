// The `run` replicas of a chaos run: real processes of the built binary, one slot per replica
// (each slot with its own API user, so the double attributes every request to a slot), with the
// leadership lines of their logs parsed as they arrive.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from bench/chaos (vitest) or dist/bench/chaos (npm run soak). */
export function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('chaos: cannot find the repository root (package.json)');
    dir = up;
  }
  return dir;
}

export interface Replica {
  readonly slot: number;
  readonly pid: number;
  readonly startedAt: number;
  /** Leader-election identity, once logged. */
  identity?: string;
  acquiredAt?: number;
  /** When "starting controllers" arrived (after the takeover delay). */
  controllersStartingAt?: number;
  /** When "stopped leading" arrived (the process must exit within 2 s of it). */
  stoppedLeadingAt?: number;
  stoppedReason?: string;
  exitedAt?: number;
  exitCode?: number | null;
  signal?: NodeJS.Signals | null;
  /** SIGSTOPped right now. */
  frozen: boolean;
  /** Killed or stopped by the harness (not an exit of its own). */
  killedByHarness: boolean;
  readonly exited: Promise<void>;
  tail(lines?: number): string;
  signalProcess(sig: NodeJS.Signals): void;
}

const MAX_OUTPUT = 400_000;
/** Read by the manager (src/manager/manager.ts): the node count from which a takeover catches up instead of listing. */
const CATCH_UP_ENV = 'NODE_ADDRESS_CCM_CATCH_UP_MIN_NODES';

/**
 * How a slot takes over, so that every way runs in each chaos run: slot 0 keeps node IPAM warm
 * (warm standby, the default) and catches its node cache up to a quorum read (what run does from
 * 5,000 nodes; the chaos cluster is far smaller); slot 1 runs with the warm standby off and lists
 * the nodes again; slot 2 keeps node IPAM warm and lists the nodes again (what run does below
 * 5,000 nodes).
 */
export function slotMode(slot: number): { name: string; env: Record<string, string>; args: string[] } {
  switch (slot % 3) {
    case 0: return { name: 'warm, catch-up', env: { [CATCH_UP_ENV]: '0' }, args: [] };
    case 1: return { name: 'cold, relist', env: {}, args: ['--leader-elect-warm-standby=false'] };
    default: return { name: 'warm, relist', env: {}, args: [] };
  }
}

export function startReplica(slot: number, args: string[], onLine?: (r: Replica, line: Record<string, unknown>) => void): Replica {
  const cli = path.join(repoRoot(), 'dist/src/cli/main.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run "npm run build" first`);
  const { env: slotEnv, args: slotArgs } = slotMode(slot);
  const env: NodeJS.ProcessEnv = { ...process.env, ...slotEnv };
  // Node 22 writes NODE_COMPILE_CACHE (set by CI's Node 22 pass) when a process exits, and a
  // process that compiled modules the cache lacked took 0.3 s to exit on a quiet machine, 2.5 s
  // under CI's load: past the 2 s a deposed replica is given (CI, 2026-11-27 10:27, seed 1302).
  // The image sets no compile cache, so the replicas run without one.
  delete env.NODE_COMPILE_CACHE;
  const child: ChildProcess = spawn(process.execPath, [cli, 'run', ...args, ...slotArgs], { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let partial = '';
  let resolveExit!: () => void;
  const exited = new Promise<void>((r) => (resolveExit = r));
  const r: Replica = {
    slot,
    pid: child.pid ?? -1,
    startedAt: Date.now(),
    frozen: false,
    killedByHarness: false,
    exited,
    tail: (lines = 30) => out.split('\n').slice(-lines).join('\n'),
    signalProcess: (sig) => {
      if (r.exitedAt === undefined) child.kill(sig);
    },
  };
  const onData = (d: Buffer): void => {
    const text = d.toString();
    out += text;
    if (out.length > MAX_OUTPUT) out = out.slice(out.length - MAX_OUTPUT);
    partial += text;
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) {
      if (!l.startsWith('{')) continue;
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(l) as Record<string, unknown>;
      } catch {
        continue;
      }
      const msg = String(rec.msg ?? '');
      if (typeof rec.identity === 'string' && !r.identity) r.identity = rec.identity;
      if (msg === 'acquired the lease') r.acquiredAt = Date.now();
      if (msg === 'starting controllers') r.controllersStartingAt = Date.now();
      if (msg === 'stopped leading' && r.stoppedLeadingAt === undefined) {
        r.stoppedLeadingAt = Date.now();
        r.stoppedReason = String(rec.reason ?? '');
      }
      onLine?.(r, rec);
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  child.on('exit', (code, signal) => {
    r.exitedAt = Date.now();
    r.exitCode = code;
    r.signal = signal;
    resolveExit();
  });
  child.on('error', (err) => {
    out += `spawn error: ${err.message}\n`;
    r.exitedAt ??= Date.now();
    r.exitCode ??= 1;
    resolveExit();
  });
  return r;
}
