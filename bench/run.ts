// `npm run bench [name…]`: runs every bench/*.bench.ts module (compiled to dist/bench), or the
// named ones. Each module's default export runs its cases and prints a Markdown table.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const modules = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();

if (modules.length === 0) {
  console.error(`no benchmark matches ${wanted.join(' ') || '(any)'}`);
  process.exitCode = 2;
}
for (const file of modules) {
  const mod = (await import(pathToFileURL(path.join(here, file)).href)) as { default: () => Promise<void> };
  console.log(`\n## ${file.replace(/\.bench\.js$/, '')}\n`);
  await mod.default();
}
