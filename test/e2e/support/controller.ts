// The controller manager under test, run from the built binary as a child process, the way an
// operator runs it: `node dist/src/cli/main.js run …`.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cliPath, repoRoot, runCli } from '../../helpers/cli.js';

export interface ControllerProcess {
  readonly pid: number;
  /** Everything the process wrote so far (stdout and stderr interleaved). */
  output(): string;
  /** The last `lines` lines of output, for failure messages. */
  tail(lines?: number): string;
  /** Exit code once it exited, else undefined. */
  exitCode(): number | null | undefined;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

const MAX_OUTPUT = 2_000_000;

export function startControllerManager(args: string[], options: { env?: NodeJS.ProcessEnv } = {}): ControllerProcess {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run "npm run build" first (npm test builds it)`);
  const child: ChildProcess = spawn(process.execPath, [cliPath, 'run', ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let code: number | null | undefined;
  const append = (d: Buffer): void => {
    out += d.toString();
    if (out.length > MAX_OUTPUT) out = out.slice(out.length - MAX_OUTPUT);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (c, signal) => {
      code = c ?? (signal ? null : 1);
      resolve(code);
    });
    child.on('error', (err) => {
      append(Buffer.from(`spawn error: ${err.message}\n`));
      code = 1;
      resolve(1);
    });
  });
  return {
    pid: child.pid ?? -1,
    output: () => out,
    tail: (lines = 40) => out.split('\n').slice(-lines).join('\n'),
    exitCode: () => code,
    async stop(graceMs = 5_000) {
      if (code !== undefined) return code;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export interface RunCapabilities {
  /** `run --help` text. */
  help: string;
  /** `--cidr-allocator-type` is a flag of `run`. */
  cidrAllocatorTypeFlag: boolean;
  /** `run --help` names MultiCIDRRangeAllocator (ClusterCIDR pools; issue #6). */
  multiCIDRRangeAllocator: boolean;
}

/** What the built `run` command supports, read from its --help. */
export async function runCapabilities(): Promise<RunCapabilities> {
  const r = await runCli(['run', '--help']);
  if (r.code !== 0) throw new Error(`node-address-ccm run --help exited ${r.code}: ${r.stderr || r.stdout}`);
  const help = r.stdout;
  const cidrAllocatorTypeFlag = help.includes('--cidr-allocator-type');
  return { help, cidrAllocatorTypeFlag, multiCIDRRangeAllocator: cidrAllocatorTypeFlag && help.includes('MultiCIDRRangeAllocator') };
}
