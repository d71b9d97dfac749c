import { afterEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { realClock } from '../../src/kube/clock.js';

afterEach(() => vi.restoreAllMocks());

describe('realClock', () => {
  it('reads whole epoch milliseconds, close to the wall clock at start', () => {
    expect(Math.abs(realClock.now() - Date.now())).toBeLessThan(1000);
    for (let i = 0; i < 100; i++) expect(Number.isInteger(realClock.now())).toBe(true);
  });

  it('never goes back, whatever the wall clock does (an NTP step, a hand-set date)', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: -86_400_000, max: 86_400_000 }), { minLength: 1, maxLength: 20 }), (steps) => {
      const real = Date.now;
      let last = realClock.now();
      for (const step of steps) {
        const wall = real() + step;
        vi.spyOn(Date, 'now').mockReturnValue(wall);
        const now = realClock.now();
        // The lease and the write gate measure elapsed time with it: a step back of the wall
        // clock must not reopen a closed write gate, nor a step forward expire a lease early.
        expect(now).toBeGreaterThanOrEqual(last);
        expect(now - last).toBeLessThan(1000);
        last = now;
      }
      vi.restoreAllMocks();
    }), { numRuns: 50 });
  });
});
