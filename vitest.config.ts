import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/kit/sequencer.js';

export default defineConfig({
  // The examples import the package by name, as an adapter outside this repository does.
  resolve: {
    alias: [
      { find: /^node-address-ccm\/provider$/, replacement: fileURLToPath(new URL('./providers/module/index.ts', import.meta.url)) },
      { find: /^node-address-ccm\/providers\/([a-z]+)$/, replacement: `${fileURLToPath(new URL('./providers/', import.meta.url))}$1/index.ts` },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    pool: 'forks',
    // Four files at once on the two-core machines here: the process tests spend most of their
    // time waiting out leases and timers (the CPUs were idle half of a two-worker run), and the
    // timings they assert are taken from the processes' own log lines, not the runner's clock.
    maxWorkers: 4,
    // One module graph per worker, not per file: re-importing the client, SDKs and the double for
    // each of 130 files cost a minute of the run. No test replaces a module or leaves fakes behind.
    isolate: false,
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
