// Long synchronous loops (restoring tens of thousands of nodes) must not starve the event loop:
// the Lease renewal, watches and health probes run between chunks.
import { performance } from 'node:perf_hooks';

/** Longest stretch of synchronous work between two yields, in milliseconds. */
export const CHUNK_MS = 20;

/** Runs `step` over `items`, handing the event loop back every `chunkMs` of work. */
export async function forEachChunked<T>(items: Iterable<T>, step: (item: T) => void, chunkMs = CHUNK_MS): Promise<void> {
  let started = performance.now();
  for (const item of items) {
    step(item);
    if (performance.now() - started >= chunkMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      started = performance.now();
    }
  }
}
