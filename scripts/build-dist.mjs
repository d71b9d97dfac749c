// The dist/ that npm test's process tests run, transpiled file by file with esbuild (about a
// second) instead of emitted by tsc (the type-check, ~40 s of CPU): npm test type-checks with
// `tsc --noEmit` beside the tests instead of before them. The same files as tsc's emit (every .ts
// that tsconfig.json includes, one .js and source map each, same paths); no declarations, which
// no test reads. The package is still built by `npm run build` (tsc -p tsconfig.build.json).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// tsconfig.json's "include".
const ROOTS = ['src', 'providers', 'bench', 'examples', 'test'];

const entryPoints = [path.join(repo, 'vitest.config.ts')];
for (const root of ROOTS) {
  for (const f of readdirSync(path.join(repo, root), { recursive: true })) {
    if (f.endsWith('.ts') && !f.endsWith('.d.ts')) entryPoints.push(path.join(repo, root, f));
  }
}

await build({
  entryPoints,
  outdir: path.join(repo, 'dist'),
  outbase: repo,
  // tsconfig.json's module (NodeNext, "type": "module") and target.
  format: 'esm',
  platform: 'node',
  target: 'es2022',
  tsconfig: path.join(repo, 'tsconfig.json'),
  sourcemap: 'linked',
  logLevel: 'warning',
});
