// --optimize-for-memory's heap budget: collects exactly when the heap has grown past the budget
// over what the last collection (or V8 on its own) left, on its timer, and stops when told.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/kube/clock.js';
import { BUSY_FRACTION, BUSY_MS, HeapBudget, QUIET_BYTES_PER_SECOND, QUIET_MS, QUIET_RETRY_MS, STEADY_GROWING_PERCENT, YOUNG_FLOOR_BYTES, type CollectionReason } from '../../src/manager/heap-budget.js';

/** A heap whose use the test sets; a collection leaves `live` in use. */
function fakeHeap(initial: number) {
  const heap = { used: initial, live: initial, collections: 0 };
  return { heap, heapUsed: () => heap.used, collect: () => { heap.collections++; heap.used = heap.live; } };
}

describe('HeapBudget', () => {
  it('collects when the heap outgrows the budget, then measures from what is live', () => {
    const { heap, heapUsed, collect } = fakeHeap(100);
    const seen: unknown[] = [];
    const b = new HeapBudget({ budgetBytes: 50, intervalMs: 10, heapUsed, collect, clock: new FakeClock(), onCollect: (c) => seen.push(c) });
    heap.used = 150;
    expect(b.check()).toBe(false); // exactly the budget: not yet
    heap.used = 151;
    heap.live = 120;
    expect(b.check()).toBe(true);
    expect(seen).toEqual([{ beforeBytes: 151, afterBytes: 120, ms: 0, reason: 'budget' }]);
    heap.used = 170;
    expect(b.check()).toBe(false); // 120 + 50
    heap.used = 171;
    expect(b.check()).toBe(true);
    expect(heap.collections).toBe(2);
  });

  it('settle collects before a large allocation once the heap holds more than the margin past what is live', () => {
    const { heap, heapUsed, collect } = fakeHeap(100);
    const b = new HeapBudget({ budgetBytes: 50, intervalMs: 10, heapUsed, collect, clock: new FakeClock() });
    heap.used = 104;
    expect(b.settle(4)).toBe(false);
    heap.used = 105;
    expect(b.settle(4)).toBe(true); // well inside the budget, but past the margin
    expect(heap.used).toBe(100);
    expect(b.check()).toBe(false);
  });

  it('steady hands ordinary collections to V8 once, and the budget still collects as the backstop', () => {
    const { heap, heapUsed, collect } = fakeHeap(100);
    const asked: number[] = [];
    const b = new HeapBudget({ budgetBytes: 50, steadyBudgetBytes: 80, intervalMs: 10, heapUsed, collect, clock: new FakeClock(), setGrowingPercent: (p) => asked.push(p) });
    expect(asked).toEqual([]); // not while the caches fill
    expect(b.steady()).toBe(true);
    expect(b.steady()).toBe(false);
    expect(asked).toEqual([STEADY_GROWING_PERCENT]);
    heap.used = 180; // past the first budget, not the steady one
    expect(b.check()).toBe(false);
    heap.used = 181;
    expect(b.check()).toBe(true);
    expect(heap.collections).toBe(1);
    // Without a way to tell V8, there is nothing to hand over.
    expect(new HeapBudget({ budgetBytes: 50, intervalMs: 10, heapUsed, collect, clock: new FakeClock() }).steady()).toBe(false);
  });

  it('listPage scavenges (the page is garbage), then checks the budget with what the scavenge left', () => {
    const { heap, heapUsed, collect } = fakeHeap(100);
    const calls: string[] = [];
    // A scavenge frees the young garbage: `young` of what is in use.
    let young = 0;
    const b = new HeapBudget({
      budgetBytes: 50, intervalMs: 10, heapUsed, clock: new FakeClock(),
      collect: () => { calls.push('full'); collect(); },
      collectYoung: () => { calls.push('young'); heap.used -= young; young = 0; },
    });
    heap.used = 160;
    young = 20; // 140 after the scavenge: inside the budget
    expect(b.listPage()).toBe(false);
    expect(calls).toEqual(['young']);
    expect(heap.used).toBe(140);
    heap.used = 170;
    young = 10; // 160 after it: past the budget
    expect(b.listPage()).toBe(true);
    expect(calls).toEqual(['young', 'young', 'full']);
    // Without a young collection, listPage is check().
    const bare = fakeHeap(100);
    const plain = new HeapBudget({ budgetBytes: 50, intervalMs: 10, heapUsed: bare.heapUsed, collect: bare.collect, clock: new FakeClock() });
    bare.heap.used = 151;
    expect(plain.listPage()).toBe(true);
  });

  it('a heap V8 shrank on its own lowers the baseline', () => {
    const { heap, heapUsed, collect } = fakeHeap(300);
    const b = new HeapBudget({ budgetBytes: 50, intervalMs: 10, heapUsed, collect, clock: new FakeClock() });
    heap.used = 100;
    expect(b.check()).toBe(false);
    heap.used = 151;
    expect(b.check()).toBe(true);
  });

  it('checks on its timer until stopped', () => {
    const clock = new FakeClock();
    const { heap, heapUsed, collect } = fakeHeap(0);
    const b = new HeapBudget({ budgetBytes: 10, intervalMs: 250, heapUsed, collect, clock });
    b.start();
    heap.used = 11;
    clock.advance(249);
    expect(heap.collections).toBe(0);
    clock.advance(1);
    expect(heap.collections).toBe(1);
    heap.used = 11;
    b.stop();
    clock.advance(1000);
    expect(heap.collections).toBe(1);
  });

  it.each([[0, 10], [-1, 10], [10, 0], [Number.NaN, 10]])('refuses budget %s / interval %s', (budgetBytes, intervalMs) => {
    expect(() => new HeapBudget({ budgetBytes, intervalMs, heapUsed: () => 0, collect: () => {}, clock: new FakeClock() })).toThrow(/heap budget/);
  });

  it.each([0, -1, Number.NaN])('refuses steady budget %s, naming it', (steadyBudgetBytes) => {
    expect(() => new HeapBudget({ budgetBytes: 10, steadyBudgetBytes, intervalMs: 10, heapUsed: () => 0, collect: () => {}, clock: new FakeClock() })).toThrow(`heap budget: steadyBudgetBytes must be positive, got ${steadyBudgetBytes}`);
  });

  it('over any history of allocations, the heap never stays more than one budget past live after a check', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: -200, max: 300 }), fc.integer({ min: 0, max: 1000 })), { maxLength: 50 }), fc.integer({ min: 1, max: 200 }), (steps, budget) => {
      const { heap, heapUsed, collect } = fakeHeap(0);
      const b = new HeapBudget({ budgetBytes: budget, intervalMs: 1, heapUsed, collect, clock: new FakeClock() });
      let lowest = 0; // the least the heap has been since the last collection
      for (const [delta, live] of steps) {
        heap.used = Math.max(0, heap.used + delta);
        heap.live = Math.min(live, heap.used);
        lowest = Math.min(lowest, heap.used);
        const collected = b.check();
        if (collected) {
          expect(heap.used).toBe(heap.live); // a collection leaves only what is live
          lowest = heap.used;
        } else expect(heap.used).toBeLessThanOrEqual(lowest + budget);
      }
    }));
  });

  describe('quiet spells', () => {
    const MiB = 2 ** 20;
    /** A steady budget on a fake heap and clock, with a young generation the test sizes; checks every 250 ms. */
    function quietSetup(options: { young?: number; steady?: boolean; withYoung?: boolean } = {}) {
      const clock = new FakeClock();
      const { heap, heapUsed, collect } = fakeHeap(200 * MiB);
      // The young generation after each collection: the next of `then` if any, else afterCollect.
      const young = { bytes: options.young ?? 32 * MiB, afterCollect: 1 * MiB, then: [] as number[] };
      const reasons: CollectionReason[] = [];
      const times: number[] = [];
      const b = new HeapBudget({
        budgetBytes: 40 * MiB, steadyBudgetBytes: 48 * MiB, intervalMs: 250, clock, heapUsed,
        collect: () => {
          collect();
          young.bytes = young.then.shift() ?? young.afterCollect;
        },
        setGrowingPercent: () => {},
        ...(options.withYoung === false ? {} : { youngBytes: () => young.bytes }),
        onCollect: (c) => {
          reasons.push(c.reason);
          times.push(clock.now());
        },
      });
      if (options.steady !== false) b.steady();
      b.start();
      return { clock, heap, young, reasons, times, b };
    }

    it('collects once when the heap has been quiet for QUIET_MS with a large young generation', () => {
      const { clock, reasons } = quietSetup();
      clock.advance(QUIET_MS);
      expect(reasons).toEqual([]); // the spell starts at the first check
      clock.advance(250);
      expect(reasons).toEqual(['quiet']);
      clock.advance(10 * QUIET_MS);
      expect(reasons).toEqual(['quiet']); // V8 shrank it: nothing more to give back
    });

    it('a young generation that grows back is collected in a later spell; one V8 did not shrink is tried again QUIET_RETRY_MS later, not before', () => {
      const { clock, young, reasons, times } = quietSetup();
      clock.advance(QUIET_MS + 250);
      expect(reasons).toEqual(['quiet']);
      young.bytes = 32 * MiB; // a refresh round grew it back
      clock.advance(QUIET_MS + 250);
      expect(reasons).toEqual(['quiet', 'quiet']);
      young.afterCollect = 32 * MiB; // V8 keeps it this time, after a second collection too
      young.bytes = 32 * MiB;
      clock.advance(QUIET_MS + 250);
      expect(reasons).toEqual(['quiet', 'quiet', 'quiet', 'quiet']);
      const failedAt = times[2]!;
      for (let waited = 0; reasons.length === 4 && waited <= QUIET_RETRY_MS + QUIET_MS; waited += 250) clock.advance(250);
      // The next check once QUIET_RETRY_MS have passed (the spell is long over by then).
      expect(times[4]! - failedAt).toBeGreaterThanOrEqual(QUIET_RETRY_MS);
      expect(times[4]! - failedAt).toBeLessThan(QUIET_RETRY_MS + 250);
      expect(reasons).toEqual(['quiet', 'quiet', 'quiet', 'quiet', 'quiet', 'quiet']);
      // V8 shrinks it at the next try (QUIET_RETRY_MS on, one collection): nothing more until it grows again.
      young.afterCollect = 1 * MiB;
      for (let waited = 0; reasons.length === 6 && waited <= QUIET_RETRY_MS + QUIET_MS; waited += 250) clock.advance(250);
      expect(reasons).toHaveLength(7);
      expect(times[6]! - times[4]!).toBeGreaterThanOrEqual(QUIET_RETRY_MS);
      expect(young.bytes).toBe(1 * MiB);
      clock.advance(2 * QUIET_RETRY_MS);
      expect(reasons).toHaveLength(7);
    });

    it('collects a second time in the spell when V8 kept the young generation after the first', () => {
      const { clock, young, reasons } = quietSetup();
      young.then = [32 * MiB]; // kept at the first collection, shrunk at the second
      clock.advance(QUIET_MS + 250);
      expect(reasons).toEqual(['quiet', 'quiet']);
      expect(young.bytes).toBe(1 * MiB);
      clock.advance(10 * QUIET_MS);
      expect(reasons).toEqual(['quiet', 'quiet']);
    });

    it('allocation faster than a quiet process, or a collection, starts the spell over', () => {
      const { clock, heap, reasons } = quietSetup();
      // Allocating at twice the quiet rate: never quiet.
      for (let t = 0; t < 4 * QUIET_MS; t += 250) {
        heap.used += (2 * QUIET_BYTES_PER_SECOND) / 4;
        clock.advance(250);
      }
      expect(reasons).toEqual([]);
      // Quiet from here, but V8 collects (the heap shrinks) one second before the spell would end.
      clock.advance(QUIET_MS - 1000);
      heap.used -= 8 * MiB;
      clock.advance(1000);
      expect(reasons).toEqual([]);
      // The spell began at the first check after the drop.
      clock.advance(QUIET_MS - 1000);
      expect(reasons).toEqual([]);
      clock.advance(250);
      expect(reasons).toEqual(['quiet']);
    });

    it('a little allocation (timers, a bookmark) keeps the spell quiet', () => {
      const { clock, heap, reasons } = quietSetup();
      for (let t = 0; t <= QUIET_MS; t += 250) {
        heap.used += QUIET_BYTES_PER_SECOND / 8;
        clock.advance(250);
      }
      expect(reasons).toEqual(['quiet']);
    });

    it('nothing before the caches are filled, without a young generation reading, or with a small young generation', () => {
      for (const setup of [quietSetup({ steady: false }), quietSetup({ withYoung: false }), quietSetup({ young: YOUNG_FLOOR_BYTES })]) {
        setup.clock.advance(10 * QUIET_MS);
        expect(setup.reasons).toEqual([]);
      }
    });

    it('over any history, a quiet collection follows QUIET_MS without a collection or fast allocation, and the young generation grew since the last one', () => {
      // Mostly quiet steps, so that spells of QUIET_MS are common; now and then a collection by
      // V8, a burst of allocation, a young generation grown back.
      const step = fc.record({
        grow: fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: QUIET_BYTES_PER_SECOND / 2 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 4 * QUIET_BYTES_PER_SECOND }) }),
        drop: fc.integer({ min: 0, max: 40 }).map((n) => n === 0),
        regrow: fc.integer({ min: 0, max: 30 }).map((n) => n === 0),
        keep: fc.boolean(),
      });
      let quietCollections = 0;
      fc.assert(fc.property(fc.array(step, { minLength: 40, maxLength: 400, size: 'max' }), (steps) => {
        const { clock, heap, young, reasons } = quietSetup();
        // Checks since the last collection or V8 collection, and their heap readings.
        let readings: { at: number; used: number }[] = [];
        let youngAfterQuiet = 0;
        let lastQuietAt = 0;
        let seen = 0;
        for (const s of steps) {
          if (s.drop) heap.used = Math.max(0, heap.used - 4 * MiB);
          heap.used += s.grow / 4;
          if (s.regrow) young.bytes = 32 * MiB;
          young.afterCollect = s.keep ? young.bytes : 1 * MiB;
          const youngBefore = young.bytes;
          clock.advance(250);
          const at = clock.now();
          if (reasons.length > seen) {
            seen = reasons.length;
            expect(reasons.at(-1)).toBe('quiet');
            // The spell: QUIET_MS of readings, none lower than the one before, growing slowly.
            const spell = readings.filter((r) => r.at >= at - QUIET_MS - 250);
            expect(spell.length).toBeGreaterThanOrEqual(QUIET_MS / 250);
            for (let i = 1; i < spell.length; i++) expect(spell[i]!.used).toBeGreaterThanOrEqual(spell[i - 1]!.used);
            // Past the floor, and grown since the last quiet collection or QUIET_RETRY_MS after it.
            expect(youngBefore).toBeGreaterThan(YOUNG_FLOOR_BYTES);
            if (youngBefore <= youngAfterQuiet) expect(at - lastQuietAt).toBeGreaterThanOrEqual(QUIET_RETRY_MS);
            youngAfterQuiet = young.bytes;
            lastQuietAt = at;
            quietCollections++;
            readings = [];
          } else if (readings.length > 0 && heap.used < readings.at(-1)!.used) readings = [{ at, used: heap.used }];
          else readings.push({ at, used: heap.used });
        }
      }), { numRuns: 500 });
      // The histories did reach quiet collections (the property is not empty).
      expect(quietCollections).toBeGreaterThan(100);
    });
  });

  describe('young generation growth', () => {
    /** A steady-capable budget whose event loop is as busy as the test says; records what V8 is told. */
    function growthSetup() {
      const clock = new FakeClock();
      const { heapUsed, collect } = fakeHeap(0);
      const loop = { busy: 0 };
      const told: boolean[] = [];
      const b = new HeapBudget({
        budgetBytes: 40, intervalMs: 250, clock, heapUsed, collect, setGrowingPercent: () => {},
        setYoungGrowth: (grow) => told.push(grow), busyFraction: () => loop.busy,
      });
      b.start();
      return { clock, loop, told, b };
    }

    it('V8 is told nothing while the caches fill; once steady it stops growing the young generation', () => {
      const { clock, told, b } = growthSetup();
      clock.advance(10_000);
      expect(told).toEqual([]);
      b.steady();
      expect(told).toEqual([false]);
      clock.advance(10_000);
      expect(told).toEqual([false]);
    });

    it('lets it grow after BUSY_MS of a busy event loop (a join), and stops it when the loop is no longer busy', () => {
      const { clock, loop, told, b } = growthSetup();
      b.steady();
      loop.busy = BUSY_FRACTION;
      clock.advance(BUSY_MS);
      expect(told).toEqual([false]); // busy since the first check after it began: not yet BUSY_MS
      clock.advance(250);
      expect(told).toEqual([false, true]);
      clock.advance(60_000);
      expect(told).toEqual([false, true]);
      loop.busy = 0.5;
      clock.advance(250);
      expect(told).toEqual([false, true, false]);
    });

    it('a refresh round (busy for a second or two) never lets it grow; a break in the busy time starts the count over', () => {
      const { clock, loop, told, b } = growthSetup();
      b.steady();
      for (let round = 0; round < 5; round++) {
        loop.busy = 1;
        clock.advance(2000);
        loop.busy = 0.1;
        clock.advance(13_000);
      }
      loop.busy = 1;
      clock.advance(BUSY_MS - 500);
      loop.busy = 0.2;
      clock.advance(250);
      loop.busy = 1;
      clock.advance(BUSY_MS);
      expect(told).toEqual([false]);
      clock.advance(250);
      expect(told).toEqual([false, true]);
    });

    it('stop() hands the growth back to V8', () => {
      const { told, b } = growthSetup();
      b.steady();
      b.stop();
      expect(told).toEqual([false, true]);
      const other = growthSetup();
      other.b.stop();
      expect(other.told).toEqual([]);
    });
  });
});
