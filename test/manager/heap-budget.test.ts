// --optimize-for-memory's heap budget: collects exactly when the heap has grown past the budget
// over what the last collection (or V8 on its own) left, on its timer, and stops when told.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/kube/clock.js';
import { HeapBudget, STEADY_GROWING_PERCENT } from '../../src/manager/heap-budget.js';

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
    expect(seen).toEqual([{ beforeBytes: 151, afterBytes: 120, ms: 0 }]);
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
});
