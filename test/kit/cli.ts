// Runs the built CLI binary (dist/) to completion as a child process, as an operator would; for a
// process that keeps running (`run`, `apiserver`, `simulate --keep`) see processes.ts.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const cliPath = path.join(repoRoot, 'dist/src/cli/main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  stdin?: string;
  cwd?: string;
  /** The child's whole environment (runCli adds it to this process's). */
  env?: NodeJS.ProcessEnv;
  /** SIGKILL after this long (default 20 s); the result then has code 128. */
  timeoutMs?: number;
}

/** Runs `bin` to completion and collects its exit code and output (never rejects on a non-zero exit). */
export function runProcess(bin: string, args: string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
    // A child that exits without reading its input (kubectl kustomize, a usage error) closes the
    // pipe first: the write's EPIPE is no result of the test, whose verdict is the exit code and
    // output collected above. Unheard, it failed a CI run as an unhandled error.
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err);
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/** Throws, naming the fix, when dist/ has not been built (tests run the TypeScript, the CLI runs the build). */
export function assertBuilt(): void {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run "npm run build" first (npm test builds it)`);
}

export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  assertBuilt();
  return runProcess(process.execPath, [cliPath, ...args], { ...options, cwd: options.cwd ?? repoRoot, env: { ...process.env, ...options.env } });
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
