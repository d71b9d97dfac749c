// Records every module a Node process loads, for tests that check what a command imports.
// Use: MODULE_LOG=/path/file node --import <this file> … (or NODE_OPTIONS=--import=<this file>).
// One URL per line: each specifier the module loader resolves (a resolve hook: module.registerHooks
// where Node has it, 22.15+, else module.register()) and, at exit, every CommonJS module in
// require.cache (what imported CommonJS packages required).
import { appendFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const file = process.env.MODULE_LOG;

/** module.register()'s resolve hook (runs on the loader's hooks thread). */
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (file) appendFileSync(file, `${result.url}\n`);
  return result;
}

if (isMainThread && file) {
  if (typeof nodeModule.registerHooks === 'function') {
    // Node 22.15+: the same hook, synchronous, in this thread. register()'s hooks thread costs a
    // round trip per module: over a second more for a process that loads a cloud SDK.
    nodeModule.registerHooks({
      resolve(specifier, context, nextResolve) {
        const result = nextResolve(specifier, context);
        appendFileSync(file, `${result.url}\n`);
        return result;
      },
    });
  } else {
    nodeModule.register(import.meta.url);
  }
  const require = nodeModule.createRequire(import.meta.url);
  process.on('exit', () => {
    const cjs = Object.keys(require.cache).map((p) => pathToFileURL(p).href);
    if (cjs.length > 0) appendFileSync(file, `${cjs.join('\n')}\n`);
  });
}
