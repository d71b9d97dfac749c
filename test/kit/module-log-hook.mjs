// Records every module a Node process loads, for tests that check what a command imports.
// Use: MODULE_LOG=/path/file node --import <this file> … (or NODE_OPTIONS=--import=<this file>).
// One URL per line: each specifier the ESM loader resolves (a module.register() resolve hook)
// and, at exit, every CommonJS module in require.cache (what imported CommonJS packages required).
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const file = process.env.MODULE_LOG;

/** The resolve hook (runs on the loader's hooks thread). */
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (file) appendFileSync(file, `${result.url}\n`);
  return result;
}

if (isMainThread && file) {
  register(import.meta.url);
  const require = createRequire(import.meta.url);
  process.on('exit', () => {
    const cjs = Object.keys(require.cache).map((p) => pathToFileURL(p).href);
    if (cjs.length > 0) appendFileSync(file, `${cjs.join('\n')}\n`);
  });
}
