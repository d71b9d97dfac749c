// kubectl as a test tool: the one real Kubernetes client here that this project did not write.
// Suites that need it use describeKubectl: where kubectl is absent (a user's laptop) they do not
// run and one line says why; in CI (CI set) a missing kubectl fails instead, since CI
// has it and must run them.
import { accessSync, constants } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe } from 'vitest';
import { runProcess, type CliResult } from '../kit/cli.js';

/** $KUBECTL, /usr/bin/kubectl, then the PATH. */
function findKubectl(): { path?: string; looked: string[] } {
  const candidates = [
    ...(process.env.KUBECTL ? [process.env.KUBECTL] : []),
    '/usr/bin/kubectl',
    ...(process.env.PATH ?? '').split(path.delimiter).filter((d) => d !== '').map((d) => path.join(d, 'kubectl')),
  ];
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return { path: c, looked: candidates };
    } catch {
      // not here
    }
  }
  return { looked: candidates };
}

const found = findKubectl();
export const KUBECTL: string | undefined = found.path;
export const KUBECTL_MISSING = KUBECTL === undefined
  ? `kubectl not found: looked for $KUBECTL, /usr/bin/kubectl and kubectl on the PATH; these tests need kubectl v1.32 (CI has it)`
  : undefined;
if (KUBECTL_MISSING !== undefined && process.env.CI) throw new Error(`${KUBECTL_MISSING}; CI must run them`);

if (KUBECTL_MISSING !== undefined) console.log(`kubectl tests not run: ${KUBECTL_MISSING}`);

/**
 * describe() that runs only where kubectl is (the reason is printed once above where it is not).
 * Each test gets `timeoutMs` (default 60 s): several kubectl processes and a controller round each.
 */
export function describeKubectl(title: string, body: () => void, timeoutMs = 60_000): void {
  describe.runIf(KUBECTL !== undefined)(title, { timeout: timeoutMs }, body);
}

export type KubectlResult = CliResult;

export interface KubectlOptions {
  stdin?: string;
  timeoutMs?: number;
  cwd?: string;
}

/** Runs kubectl with `--kubeconfig` (no other configuration leaks in: KUBECONFIG and HOME are set). */
export function kubectl(kubeconfig: string | undefined, args: string[], options: KubectlOptions = {}): Promise<KubectlResult> {
  if (KUBECTL === undefined) throw new Error(KUBECTL_MISSING);
  // A cache dir of its own per run: discovery and OpenAPI are fetched from this double.
  const env = { PATH: process.env.PATH ?? '', HOME: kubeconfig ? path.dirname(kubeconfig) : tmpdir(), KUBECONFIG: kubeconfig ?? '' };
  return runProcess(KUBECTL, [...(kubeconfig !== undefined ? [`--kubeconfig=${kubeconfig}`] : []), ...args], { ...options, env });
}

/** kubectl that must succeed: throws with the command and its stderr otherwise. */
export async function kubectlOk(kubeconfig: string | undefined, args: string[], options: KubectlOptions = {}): Promise<string> {
  const r = await kubectl(kubeconfig, args, options);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/**
 * kubectlOk bound to a kubeconfig that is known only once the suite started, whose failures also
 * show the controller manager's last output lines (what the controller did is usually the question).
 */
export function kubectlWithController(kubeconfig: () => string, controllerTail: () => string): (...args: string[]) => Promise<string> {
  return async (...args) => {
    try {
      return await kubectlOk(kubeconfig(), args);
    } catch (err) {
      throw new Error(`${(err as Error).message}\ncontroller manager output (tail):\n${controllerTail()}`, { cause: err });
    }
  };
}
