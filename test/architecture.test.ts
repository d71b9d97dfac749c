// The import layers of docs/architecture.md, held against the code: a module imports only from its
// own layer or the layers beneath it, and no files import each other in a circle. Type-only
// imports count too: a type from an upper layer is a dependency on that layer's design.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Path prefixes (from the repository root) by layer, bottom first, as docs/architecture.md lists them. */
const LAYERS: readonly (readonly string[])[] = [
  ['src/util/', 'src/log.ts', 'src/featuregates/'],
  ['src/model/', 'src/kube/'],
  ['src/nodeip/', 'src/serving/'],
  ['src/ipam/', 'providers/'],
  ['src/audit/'],
  ['src/controllers/'],
  ['src/manager/'],
  ['src/double/', 'src/simulation/'],
  ['src/cli/', 'src/index.ts', 'bench/'],
];

function layerOf(file: string): number {
  const i = LAYERS.findIndex((prefixes) => prefixes.some((p) => file === p || file.startsWith(p)));
  if (i < 0) throw new Error(`${file} is on no layer: add its folder to LAYERS and to docs/architecture.md`);
  return i + 1;
}

function sources(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.relative(repoRoot, path.join(e.parentPath, e.name)));
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*'(\.{1,2}\/[^']+)'|\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

/** file → the files of this repository it imports (static, re-exports and literal dynamic imports). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of [...sources('src'), ...sources('providers'), ...sources('bench')]) {
    const text = readFileSync(path.join(repoRoot, file), 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((m) => path.normalize(path.join(path.dirname(file), (m[1] ?? m[2]) as string)).replace(/\.js$/, '.ts'));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

describe('the import layers', () => {
  const graph = importGraph();

  it('reads the imports of every module', () => {
    expect(graph.size).toBeGreaterThan(150);
    expect(graph.get('src/controllers/nodeipam/range-allocator.ts')).toContain('src/controllers/nodeipam/cidr-allocator.ts');
  });

  it('no import runs up a layer', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      for (const t of targets) if (layerOf(t) > layerOf(file)) upward.push(`${file} (layer ${layerOf(file)}) imports ${t} (layer ${layerOf(t)})`);
    }
    expect(upward).toEqual([]);
  });

  it('no files import each other in a circle', () => {
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...trail.slice(trail.indexOf(file)), file].join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const t of graph.get(file) ?? []) visit(t, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });
});
