// The client-side QPS limiter: burst at once, then qps per second, in arrival order, under any
// burst of callers; an aborted wait gives its turn back.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FakeClock } from '../../src/kube/clock.js';
import { TokenBucket } from '../../src/kube/token-bucket.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('TokenBucket', () => {
  it('refuses bad settings with the field and value', () => {
    expect(() => new TokenBucket(0, 1)).toThrow('qps: must be a positive number, got 0');
    expect(() => new TokenBucket(5, 0.5)).toThrow('burst: must be an integer >= 1, got 0.5');
  });

  it('holds its rate under any burst: after t ms at most burst + qps·t/1000 callers got through, in arrival order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 120 }), fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 15 }), async (qps, burst, callers, steps) => {
        const clock = new FakeClock();
        const bucket = new TokenBucket(qps, burst, clock);
        const order: number[] = [];
        for (let i = 0; i < callers; i++) void bucket.take().then(() => order.push(i));
        await flush();
        let elapsed = 0;
        expect(order.length).toBe(Math.min(callers, burst));
        for (const step of steps) {
          clock.advance(step);
          elapsed += step;
          await flush();
          expect(order.length).toBeLessThanOrEqual(Math.min(callers, burst + Math.floor((qps * elapsed) / 1000) + 1));
          // Never idle while tokens are due: at least what the rate allows has gone through.
          expect(order.length).toBeGreaterThanOrEqual(Math.min(callers, burst + Math.floor((qps * elapsed) / 1000) - 1));
        }
        expect(order).toEqual([...order].sort((a, b) => a - b));
      }),
      { numRuns: 150 },
    );
  });

  it('loses no token to timer rounding while callers wait (qps 45, burst 1: 34 callers served by 756 ms)', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(45, 1, clock);
    let served = 0;
    for (let i = 0; i < 34; i++) void bucket.take().then(() => served++);
    await flush();
    for (const step of [305, 284, 69, 97, 1]) {
      clock.advance(step);
      await flush();
    }
    // 1 at once + 45/s × 0.756 s = 35.02 due; the 34 callers have all gone through.
    expect(served).toBe(34);
  });

  it('an aborted wait rejects with its reason and the next waiter takes the token', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(1, 1, clock);
    expect(await bucket.take()).toBe(0);
    const ac = new AbortController();
    const first = bucket.take(ac.signal);
    const second = bucket.take();
    ac.abort(new Error('leadership lost'));
    await expect(first).rejects.toThrow('leadership lost');
    clock.advance(1000);
    expect(await second).toBe(1000);
  });
});
