// The built CLI as child processes (the API server double, `run` replicas), with their JSON log
// lines as they arrive and when they exited: for tests that freeze, kill and signal real processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cliPath, repoRoot } from './cli.js';

/** A JSON log line; `seenAt` is when this process read it (comparable with Proc.exitedAt). */
export interface LogLine { msg: string; time: number; seenAt: number; [k: string]: unknown }

/** A child process of the built CLI, its JSON log lines as they arrive, and its exit. */
export class Proc {
  readonly child: ChildProcess;
  readonly lines: LogLine[] = [];
  stdout = '';
  stderr = '';
  exitedAt: number | undefined;
  readonly exited: Promise<number | null>;
  #waiters: Array<() => void> = [];

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let partial = '';
    this.child.stdout?.on('data', (d: Buffer) => {
      this.stdout += d.toString();
      partial += d.toString();
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        const line = partial.slice(0, nl);
        partial = partial.slice(nl + 1);
        try {
          this.lines.push({ ...(JSON.parse(line) as LogLine), seenAt: Date.now() });
        } catch { /* the apiserver prints its URL as plain text */ }
      }
      for (const w of this.#waiters.splice(0)) w();
    });
    this.child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => {
      this.exitedAt = Date.now();
      resolve(code);
      for (const w of this.#waiters.splice(0)) w();
    }));
  }

  /** The first log line matching, waiting up to `ms` for it. */
  async waitFor(match: (l: LogLine) => boolean, ms: number, what: string): Promise<LogLine> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.lines.find(match);
      if (hit) return hit;
      if (this.exitedAt !== undefined) throw new Error(`${what}: the process exited first\n${this.stdout}\n${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what}: not logged within ${ms} ms\n${this.stdout}\n${this.stderr}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.#waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  /** The exit code, or 'running' if the process has not exited within `ms`. */
  async exitWithin(ms: number): Promise<number | null | 'running'> {
    let t: NodeJS.Timeout | undefined;
    const r = await Promise.race([this.exited, new Promise<'running'>((resolve) => (t = setTimeout(() => resolve('running'), ms)))]);
    clearTimeout(t);
    return r;
  }

  kill(sig: NodeJS.Signals): void {
    if (this.exitedAt === undefined) this.child.kill(sig);
  }
}

/** Processes a test started, stopped (even frozen ones) and cleaned up by cleanup() in afterEach. */
export class Processes {
  readonly #procs: Proc[] = [];
  readonly #dirs: string[] = [];

  start(args: string[]): Proc {
    const p = new Proc(args);
    this.#procs.push(p);
    return p;
  }

  /** The API server double in its own process, with an admin kubeconfig written for `run`. */
  async apiserver(): Promise<{ proc: Proc; kubeconfig: string }> {
    const dir = await mkdtemp(path.join(tmpdir(), 'ccm-procs-'));
    this.#dirs.push(dir);
    const kubeconfig = path.join(dir, 'kubeconfig');
    const proc = this.start(['apiserver', '--write-kubeconfig', kubeconfig, '--log-level', 'warn']);
    const deadline = Date.now() + 15_000;
    while (!/^http/m.test(proc.stdout)) {
      if (Date.now() > deadline || proc.exitedAt !== undefined) throw new Error(`apiserver did not start: ${proc.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return { proc, kubeconfig };
  }

  async cleanup(): Promise<void> {
    for (const p of this.#procs.splice(0)) {
      p.kill('SIGCONT');
      p.kill('SIGKILL');
      await p.exited;
    }
    for (const d of this.#dirs.splice(0)) await rm(d, { recursive: true, force: true });
  }
}
