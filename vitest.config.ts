import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/kit/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start HTTP servers on loopback; keep them within two cores.
    pool: 'forks',
    maxWorkers: 2,
    // One module graph per worker, not per file: re-importing the client, SDKs and the double for
    // each of 130 files cost a minute of the run. No test replaces a module or leaves fakes behind.
    isolate: false,
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
