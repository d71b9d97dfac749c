// Longest test files first. On two workers the suite cannot end before its longest file does, so a
// long file that happens to start last adds its whole length to the run. Vitest orders by the
// durations it cached on an earlier run; a clean clone (CI) has none, and would fall back to file
// size, so the files that are long by nature (real `run` processes, leases waited out) go first.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Path fragments of files that start processes or wait out leases, longest kinds first (the
 * real-server tier's RBAC rules take each grant away in turn, one after another). The
 * image's tests build its root before their first test (an esbuild bundle per cloud and a pruned
 * production install): ranked with the rest, they started last and ran alone at the end of the
 * Node 22 pass for 20-50 s.
 */
const LONG_BY_NATURE = ['/test/chaos/chaos.', '/test/realserver/rbac-rules-', '/test/deploy/image-root.', '/test/realserver/', '.process.test.', '/test/cli/', '/test/e2e/', '/test/rbac/', '/test/kubectl/', '/test/manager/'];

function rank(spec: TestSpecification): number {
  const i = LONG_BY_NATURE.findIndex((fragment) => spec.moduleId.includes(fragment));
  return i === -1 ? LONG_BY_NATURE.length : i;
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cached = await super.sort(files);
    // With durations cached from an earlier run, vitest's own order is already longest first.
    if (files.every((f) => this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(this.ctx.config.root, f.moduleId)}`))) return cached;
    // Stable: within one rank, vitest's order (larger files first) stands.
    return cached.map((spec, i) => ({ spec, i })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i).map((x) => x.spec);
  }
}
