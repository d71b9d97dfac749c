// The built CLI as a long-running child process (`run`, `apiserver`, `simulate --keep`): its output
// and JSON log lines as they arrive, waits on them, signals (tests freeze, kill and stop real
// processes), and its exit. Processes is a test's set of them, stopped after the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertBuilt, cliPath, repoRoot } from './cli.js';
import { eventually, GiveUp } from './wait.js';

/** A JSON log line; `seenAt` is when this process read it (comparable with CliProcess.exitedAt). */
export interface LogLine { msg: string; time: number; seenAt: number; [k: string]: unknown }

export interface StartOptions {
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** The script node runs instead of the built CLI (e.g. the image's bundle). */
  script?: string;
  /** Node's own flags, before the script. */
  nodeArgs?: string[];
  cwd?: string;
}

/** Each text kept is cut to its last 2 MB: a chatty process left running must not fill the runner's memory. */
const MAX_TEXT = 2_000_000;
const capped = (text: string): string => (text.length > MAX_TEXT ? text.slice(text.length - MAX_TEXT) : text);

/** A child process of the built CLI, its output and JSON log lines as they arrive, and its exit. */
export class CliProcess {
  readonly child: ChildProcess;
  readonly lines: LogLine[] = [];
  stdout = '';
  stderr = '';
  /** When the process exited, as this process saw it (its output may still be draining). */
  exitedAt: number | undefined;
  /** The exit code (null: ended by a signal), once the process exited and its output is read. */
  readonly exited: Promise<number | null>;
  #output = '';
  #code: number | null | undefined;
  #closed = false;

  constructor(args: string[], options: StartOptions = {}) {
    if (options.script === undefined) assertBuilt();
    this.child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script ?? cliPath, ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let partial = '';
    this.child.stdout?.on('data', (d: Buffer) => {
      const text = d.toString();
      this.stdout = capped(this.stdout + text);
      this.#output = capped(this.#output + text);
      partial += text;
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        const line = partial.slice(0, nl);
        partial = partial.slice(nl + 1);
        try {
          this.lines.push({ ...(JSON.parse(line) as LogLine), seenAt: Date.now() });
        } catch { /* plain text: the apiserver's URL, the sandbox's guide */ }
      }
    });
    this.child.stderr?.on('data', (d: Buffer) => {
      this.stderr = capped(this.stderr + d.toString());
      this.#output = capped(this.#output + d.toString());
    });
    this.child.on('exit', () => (this.exitedAt = Date.now()));
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code) => {
        this.#code = code;
        this.#closed = true;
        resolve(code);
      });
      this.child.on('error', (err) => {
        this.#output += `spawn error: ${err.message}\n`;
        this.exitedAt ??= Date.now();
        this.#code = 1;
        this.#closed = true;
        resolve(1);
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Everything the process wrote so far, stdout and stderr interleaved. */
  output(): string {
    return this.#output;
  }

  /** The last `lines` lines of output, for failure messages. */
  tail(lines = 40): string {
    return this.#output.split('\n').slice(-lines).join('\n');
  }

  /** The exit code once the process exited (null: by a signal), else undefined. */
  exitCode(): number | null | undefined {
    return this.#code;
  }

  /** The first log line matching, waiting up to `ms` for it; fails at once if the process exits first. */
  waitFor(match: (l: LogLine) => boolean, ms: number, what: string): Promise<LogLine> {
    return this.#waitUntil(() => this.lines.find(match) ?? false, ms, what);
  }

  /** The first match of `pattern` in the output (stdout and stderr), waiting up to `ms` for it. */
  waitForOutput(pattern: RegExp, ms: number, what: string): Promise<RegExpExecArray> {
    return this.#waitUntil(() => pattern.exec(this.#output) ?? false, ms, what);
  }

  #waitUntil<T>(probe: () => T | false, ms: number, what: string): Promise<T> {
    return eventually(() => {
      const hit = probe();
      if (hit !== false) return hit;
      if (this.#closed) throw new GiveUp(`${what}: the process exited (code ${this.#code}) first\n${this.tail()}`);
      return false;
    }, { timeoutMs: ms, intervalMs: 20, what, describe: () => `process output (tail):\n${this.tail()}` }) as Promise<T>;
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

  /**
   * Stops the process as an operator does: SIGTERM, then SIGKILL after `graceMs` (0: SIGKILL at
   * once). A frozen (SIGSTOPped) process is resumed first, or it could not act on either.
   * Resolves with the exit code.
   */
  async stop(graceMs = 5_000): Promise<number | null> {
    if (this.exitedAt !== undefined) return this.exited;
    this.kill('SIGCONT');
    this.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    const timer = graceMs > 0 ? setTimeout(() => this.kill('SIGKILL'), graceMs) : undefined;
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

export interface ApiserverProcess {
  proc: CliProcess;
  /** What it printed first: http(s)://127.0.0.1:<port>. */
  url: string;
  /** An admin kubeconfig it wrote for `run`. */
  kubeconfig: string;
}

/** The processes a test started, all stopped by cleanup() (in afterEach), frozen ones too. */
export class Processes {
  readonly #procs: CliProcess[] = [];
  readonly #dirs: string[] = [];

  start(args: string[], options: StartOptions = {}): CliProcess {
    const p = new CliProcess(args, options);
    this.#procs.push(p);
    return p;
  }

  /** A temporary folder, removed by cleanup(). */
  async tempDir(prefix = 'ccm-procs-'): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), prefix));
    this.#dirs.push(dir);
    return dir;
  }

  /**
   * The API server double in its own process, once it printed its URL, with an admin kubeconfig
   * written for `run` (in a folder of its own unless `args` names one). `args` come after the
   * defaults and override them (commander: the last occurrence of a flag wins).
   */
  async apiserver(args: string[] = []): Promise<ApiserverProcess> {
    const given = args.indexOf('--write-kubeconfig');
    const kubeconfig = given >= 0 ? (args[given + 1] as string) : path.join(await this.tempDir(), 'kubeconfig');
    const proc = this.start(['apiserver', ...(given >= 0 ? [] : ['--write-kubeconfig', kubeconfig]), '--log-level', 'warn', ...args]);
    const url = (await proc.waitForOutput(/^https?:\/\/\S+$/m, 15_000, 'the apiserver printed its URL'))[0];
    return { proc, url, kubeconfig };
  }

  /** Stops every process (SIGKILL at once unless `graceMs` is given; see CliProcess.stop), then removes the folders. */
  async cleanup(graceMs = 0): Promise<void> {
    await Promise.all(this.#procs.splice(0).map((p) => p.stop(graceMs)));
    for (const d of this.#dirs.splice(0)) await rm(d, { recursive: true, force: true });
  }
}
