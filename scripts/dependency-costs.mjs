#!/usr/bin/env node
// What each production dependency costs, for docs/dependencies.md:
//
//   node scripts/dependency-costs.mjs [--runs N] [PACKAGE…]
//
// Per dependency in package.json: the installed size of it and everything it pulls in (per
// package-lock.json; packages shared with other dependencies are counted in each), the wall time
// of importing it in a fresh `node` process, and that process's RSS after the import, both as
// medians over N runs, next to a bare `node` process's (only the PACKAGEs named, if any). Needs
// `npm ci` (the repository's node_modules); prints a Markdown table.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values, positionals } = parseArgs({ options: { runs: { type: 'string', default: '5' } }, allowPositionals: true });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs: "${values.runs}" is not a positive integer`);

function du(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(path.join(entry.parentPath ?? entry.path, entry.name)).size;
  }
  return total;
}

/** node_modules paths of `root` and its production dependencies, resolved as Node resolves them. */
function closure(packages, root) {
  const keep = new Set();
  const visit = (from, name) => {
    for (let base = from; ; ) {
      const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
      if (packages[candidate]) {
        if (keep.has(candidate)) return;
        keep.add(candidate);
        const meta = packages[candidate];
        for (const dep of Object.keys({ ...meta.dependencies, ...meta.optionalDependencies })) visit(candidate, dep);
        return;
      }
      if (!base) return;
      const i = base.lastIndexOf('/node_modules/');
      base = i < 0 ? '' : base.slice(0, i);
    }
  };
  visit('', root);
  return keep;
}

/** Median wall time (ms) and RSS (MiB) of a fresh process that runs `code`. */
function measure(code) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const script = `const t0 = performance.now(); ${code}; const ms = performance.now() - t0;
      console.log(JSON.stringify({ ms, rss: process.memoryUsage().rss }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repo, encoding: 'utf8' });
    samples.push(JSON.parse(out.trim().split('\n').pop()));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { ms: median(samples.map((s) => s.ms)), rss: median(samples.map((s) => s.rss)) / 2 ** 20 };
}

/** What the project imports from each package (the entry points its code uses). */
const ENTRY = {
  '@google-cloud/compute': "await import('@google-cloud/compute/build/src/v1/instances_client.js')",
};

const pkg = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(path.join(repo, 'package-lock.json'), 'utf8'));
const base = measure('');
console.log(`node ${process.version}, ${runs} runs each; a bare process: ${base.rss.toFixed(0)} MiB RSS\n`);
console.log('| dependency | installed (with its dependencies) | packages | import | RSS after import (Δ over bare node) |');
console.log('| --- | --- | --- | --- | --- |');
for (const name of Object.keys(pkg.dependencies).sort().filter((n) => positionals.length === 0 || positionals.includes(n))) {
  const paths = [...closure(lock.packages, name)].filter((p) => existsSync(path.join(repo, p)));
  // Nested node_modules are counted once, under the package that holds them.
  const bytes = paths.reduce((n, p) => n + du(path.join(repo, p)), 0) - paths.reduce((n, p) => {
    const nested = path.join(repo, p, 'node_modules');
    return n + (existsSync(nested) ? du(nested) : 0);
  }, 0);
  const m = measure(ENTRY[name] ?? `await import(${JSON.stringify(name)})`);
  console.log(`| \`${name}\` | ${(bytes / 1e6).toFixed(1)} MB | ${paths.length} | ${m.ms.toFixed(0)} ms | ${m.rss.toFixed(0)} MiB (+${(m.rss - base.rss).toFixed(0)}) |`);
}
