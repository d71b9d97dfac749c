import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { FakeClock } from '../../src/kube/clock.js';
import { runBatchWorkers, WorkQueue } from '../../src/kube/workqueue.js';

type Op = { kind: 'add'; item: string } | { kind: 'take' } | { kind: 'done'; index: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), item: fc.constantFrom('a', 'b', 'c', 'd') }),
  fc.record({ kind: fc.constant('take' as const) }),
  fc.record({ kind: fc.constant('done' as const), index: fc.nat(5) }),
);

/**
 * What getBatch(max, quietMs, maxMs) should return for items arriving at `times` (nondecreasing),
 * with one consumer asking for the next batch as soon as it has one: a batch starts with what is
 * queued, keeps taking arrivals until it is full, none has come for quietMs, or maxMs have passed
 * since it started; an arrival at the very moment it closes belongs to the next batch. (Time here
 * moves a millisecond at a time with I/O turns between, a process never busy itself: what a batch
 * does after a pause of its own is an example test.)
 */
function gatherModel(times: number[], max: number, quietMs: number, maxMs: number): number[][] {
  const batches: number[][] = [];
  let next = 0;
  let readyAt = -Infinity;
  while (next < times.length) {
    const start = Math.max(readyAt, times[next]!);
    const batch: number[] = [];
    while (next < times.length && times[next]! <= start && batch.length < max) batch.push(next++);
    let quietUntil = start + quietMs;
    const closeBy = start + maxMs;
    let closedAt = start;
    while (batch.length < max) {
      const deadline = Math.min(quietUntil, closeBy);
      if (next >= times.length || times[next]! >= deadline) {
        closedAt = deadline;
        break;
      }
      const at = times[next]!;
      while (next < times.length && times[next] === at && batch.length < max) batch.push(next++);
      quietUntil = at + quietMs;
      closedAt = at;
    }
    batches.push(batch);
    readyAt = closedAt;
  }
  return batches;
}

describe('WorkQueue properties', () => {
  it('never hands out an item that is being processed, and processes every add after it happened', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 60 }), async (ops) => {
        const q = new WorkQueue<string>({ name: 'prop', clock: new FakeClock() });
        const active: string[] = [];
        const lastAdd = new Map<string, number>();
        const lastStart = new Map<string, number>();
        let step = 0;
        const take = async () => {
          const item = await q.get();
          if (item === undefined) throw new Error('queue returned undefined before shutdown');
          expect(active).not.toContain(item);
          active.push(item);
          lastStart.set(item, ++step);
        };
        for (const op of ops) {
          if (op.kind === 'add') {
            q.add(op.item);
            lastAdd.set(op.item, ++step);
          } else if (op.kind === 'take') {
            if (q.len() > 0) await take();
          } else if (active.length > 0) {
            const [item] = active.splice(op.index % active.length, 1);
            q.done(item as string);
          }
        }
        // Drain: finish everything, keep taking until idle.
        while (active.length > 0 || q.len() > 0) {
          if (q.len() > 0) await take();
          else q.done(active.shift() as string);
        }
        for (const [item, addedAt] of lastAdd) expect(lastStart.get(item) ?? 0).toBeGreaterThan(addedAt);
        expect(q.processingCount()).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('getBatch gathers as the model says: until full, quiet for quietMs, or maxMs after its start', async () => {
    const tick = () => new Promise<void>((r) => setImmediate(r));
    await fc.assert(
      // A gap is a number of ms, or exactly the quiet window (an arrival at the very moment it ends).
      fc.asyncProperty(fc.array(fc.oneof(fc.integer({ min: 0, max: 60 }), fc.constant('quiet' as const)), { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 120 }),
        async (gaps, max, quietMs, extraMs) => {
          const maxMs = quietMs + extraMs;
          const times: number[] = [];
          let t = 0;
          for (const g of gaps) times.push((t += g === 'quiet' ? quietMs : g));
          const clock = new FakeClock(0);
          const q = new WorkQueue<string>({ name: 'gather-model', clock });
          const got: number[][] = [];
          const consumer = (async () => {
            for (;;) {
              const b = await q.getBatch(max, quietMs, maxMs);
              if (b.length === 0) return;
              got.push(b.map((i) => Number(i)));
            }
          })();
          // A millisecond at a time; at each, the batch whose time is up closes (two I/O turns: it
          // looks once more before closing), then that millisecond's arrivals come.
          for (let i = 0; i < times.length; i++) {
            while (clock.now() < times[i]!) {
              clock.advance(1);
              await tick();
              await tick();
            }
            q.add(String(i));
            await tick();
          }
          for (let k = 0; k <= times.length && got.flat().length < times.length; k++) {
            clock.advance(maxMs + 1);
            await tick();
          }
          void q.shutDown();
          await consumer;
          expect(got).toEqual(gatherModel(times, max, quietMs, maxMs));
        }),
      { numRuns: 150 },
    );
  });

  it('gathering batch workers: batches within max, no item in two batches at once, every add processed after it', async () => {
    const tick = () => new Promise<void>((r) => setImmediate(r));
    const step = fc.oneof(
      fc.record({ add: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f') }),
      fc.record({ advance: fc.integer({ min: 0, max: 120 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 3 }),
        async (steps, workers, max, gatherMs, handlerTicks) => {
          const clock = new FakeClock();
          const q = new WorkQueue<string>({ name: 'gather', clock });
          const inFlight = new Set<string>();
          const lastAdd = new Map<string, number>();
          const lastStart = new Map<string, number>();
          let seq = 0;
          const pool = runBatchWorkers(q, workers, max, async (items) => {
            expect(items.length).toBeLessThanOrEqual(max);
            for (const i of items) {
              expect(inFlight.has(i)).toBe(false);
              inFlight.add(i);
              lastStart.set(i, ++seq);
            }
            for (let t = 0; t < handlerTicks; t++) await tick();
            for (const i of items) inFlight.delete(i);
          }, { gatherMs });
          await tick();
          for (const s of steps) {
            if ('add' in s) {
              q.add(s.add);
              lastAdd.set(s.add, ++seq);
            } else clock.advance(s.advance);
            await tick();
          }
          // Let every window close and every batch finish.
          for (let k = 0; k < 20 && (q.len() > 0 || q.processingCount() > 0); k++) {
            clock.advance(gatherMs + 1);
            for (let t = 0; t < handlerTicks + 3; t++) await tick();
          }
          for (const [item, addedAt] of lastAdd) expect(lastStart.get(item) ?? 0).toBeGreaterThan(addedAt);
          void q.shutDown();
          clock.advance(gatherMs + 1);
          await pool.finished;
        }),
      { numRuns: 200 },
    );
  });
});
