// Records every module a Node process loads, for tests that check what a command imports.
// Use: MODULE_LOG=/path/file node --import <this file> … (or NODE_OPTIONS=--import=<this file>).
// One URL per line. Where Node has module.registerHooks (22.15+), a resolve hook in this thread
// records each specifier the module loader resolves. Older Node (20) would need module.register(),
// whose hooks thread costs a round trip per module (1.2-1.5 s of CPU more for a process that loads
// the Kubernetes client); there, at exit, the process lists the scripts V8 compiled from files
// (every ES module and CommonJS file it loaded) through an inspector session instead: the same
// file URLs, about 0.3 s. Either way, at exit, every CommonJS module in require.cache is added
// (JSON files among them).
import { appendFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const file = process.env.MODULE_LOG;

if (isMainThread && file) {
  const inThread = typeof nodeModule.registerHooks === 'function';
  if (inThread) {
    nodeModule.registerHooks({
      resolve(specifier, context, nextResolve) {
        const result = nextResolve(specifier, context);
        appendFileSync(file, `${result.url}\n`);
        return result;
      },
    });
  }
  // Loaded before the command's own modules, so that the session can be opened at exit.
  const { Session } = inThread ? { Session: undefined } : await import('node:inspector');
  const require = nodeModule.createRequire(import.meta.url);
  process.on('exit', () => {
    const urls = new Set();
    if (Session) {
      // Enabling the debugger reports every script V8 holds (scriptParsed, synchronously in this
      // thread): file: URLs for ES modules, paths for CommonJS files; node: built-ins aside.
      const session = new Session();
      session.connect();
      session.on('Debugger.scriptParsed', ({ params: { url } }) => {
        if (url.startsWith('file:')) urls.add(url);
        else if (url.startsWith('/')) urls.add(pathToFileURL(url).href);
      });
      session.post('Debugger.enable');
      session.post('Debugger.disable');
      session.disconnect();
    }
    for (const p of Object.keys(require.cache)) urls.add(pathToFileURL(p).href);
    if (urls.size > 0) appendFileSync(file, `${[...urls].join('\n')}\n`);
  });
}
