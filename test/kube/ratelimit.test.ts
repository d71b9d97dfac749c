import { describe, it, expect } from 'vitest';
import { FakeClock } from '../../src/kube/clock.js';
import {
  Backoff,
  BucketRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from '../../src/kube/ratelimit.js';

describe('ItemExponentialRateLimiter', () => {
  it.each([
    [1, 5],
    [2, 10],
    [3, 20],
    [10, 2560],
    [28, 1_000_000], // 5 ms × 2^27 ≈ 671 000 s is far past the 1000 s cap
    [2000, 1_000_000], // 2^1999 is Infinity; still capped
  ])('failure #%i waits %i ms', (failures, expected) => {
    const l = new ItemExponentialRateLimiter<string>(5, 1_000_000);
    let last = 0;
    for (let i = 0; i < failures; i++) last = l.when('a');
    expect(last).toBe(expected);
    expect(l.numRequeues('a')).toBe(failures);
  });

  it('tracks items separately and forgets', () => {
    const l = new ItemExponentialRateLimiter<string>(5, 1000);
    l.when('a');
    l.when('a');
    expect(l.when('b')).toBe(5);
    l.forget('a');
    expect(l.numRequeues('a')).toBe(0);
    expect(l.when('a')).toBe(5);
  });

  it.each([
    [0, 10, 'baseMs'],
    [-1, 10, 'baseMs'],
    [5, Number.NaN, 'maxMs'],
    [10, 5, 'maxMs'],
  ])('rejects base=%s max=%s naming %s', (base, max, field) => {
    expect(() => new ItemExponentialRateLimiter(base, max)).toThrow(field);
  });

  it('with jitter, adds up to that fraction of the delay (the cap included) at random', () => {
    const draws = [0, 0.999, 0.5, 0.5];
    const l = new ItemExponentialRateLimiter<string>(100, 400, { jitter: 0.5, random: () => draws.shift() ?? 0 });
    expect([l.when('a'), l.when('a'), l.when('a'), l.when('a')]).toEqual([100, 300, 500, 500]);
    expect(() => new ItemExponentialRateLimiter(5, 10, { jitter: 1.5 })).toThrow('jitter: must be within 0..1, got 1.5');
  });

  it('items that failed together come back at different times', () => {
    const l = new ItemExponentialRateLimiter<string>(5, 1_000_000, { jitter: 0.5 });
    const nodes = Array.from({ length: 500 }, (_, i) => `n${i}`);
    let delays: number[] = [];
    for (let round = 0; round < 12; round++) delays = nodes.map((n) => l.when(n));
    // 5 ms × 2^11 = 10.24 s, plus up to 5.12 s: spread over seconds, not one instant.
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(10_240);
    expect(Math.max(...delays)).toBeLessThanOrEqual(15_360);
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(2_500);
  });
});

describe('BucketRateLimiter', () => {
  it('lets the burst through, then spaces calls at qps', () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter<string>(10, 100, clock);
    const delays = Array.from({ length: 103 }, (_, i) => l.when(`n${i}`));
    expect(delays.slice(0, 100).every((d) => d === 0)).toBe(true);
    expect(delays.slice(100)).toEqual([100, 200, 300]);
  });

  it('refills with time, never above burst', () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter<string>(10, 2, clock);
    expect([l.when('a'), l.when('a'), l.when('a')]).toEqual([0, 0, 100]);
    clock.advance(60_000);
    expect([l.when('a'), l.when('a'), l.when('a')]).toEqual([0, 0, 100]);
  });
});

describe('MaxOfRateLimiter / default controller limiter', () => {
  it('takes the larger delay of per-item backoff and the bucket', () => {
    const clock = new FakeClock();
    const l = new MaxOfRateLimiter<string>(new ItemExponentialRateLimiter(5, 1_000_000), new BucketRateLimiter(10, 1, clock));
    expect(l.when('a')).toBe(5); // bucket has its one token
    expect(l.when('b')).toBe(100); // bucket empty: 1/qps
    expect(l.numRequeues('a')).toBe(1);
    l.forget('a');
    expect(l.numRequeues('a')).toBe(0);
  });

  it('default: 100 distinct failing items pass the bucket with per-item delay only', () => {
    const l = defaultControllerRateLimiter<string>(new FakeClock(), () => 0);
    const delays = Array.from({ length: 100 }, (_, i) => l.when(`n${i}`));
    expect(new Set(delays)).toEqual(new Set([5]));
    expect(l.when('n100')).toBe(100);
  });

  it('default: the per-item delay has jitter of up to half again', () => {
    const l = defaultControllerRateLimiter<string>(new FakeClock(), () => 0.999);
    expect([l.when('a'), l.when('a'), l.when('a')]).toEqual([7, 15, 30]);
  });
});

describe('Backoff', () => {
  it.each([
    // initial, max, factor, jitter, random, expected sequence
    [100, 1000, 2, 0, 0.5, [100, 200, 400, 800, 1000, 1000]],
    [100, 1000, 2, 0.5, 1, [150, 300, 600, 1200, 1500]],
    [1000, 30_000, 1.5, 0.2, 0, [1000, 1500, 2250, 3375]],
  ])('initial %i max %i factor %d jitter %d random %d', (initialMs, maxMs, factor, jitter, r, expected) => {
    const b = new Backoff({ initialMs, maxMs, factor, jitter, random: () => r });
    expect(expected.map(() => b.next())).toEqual(expected);
  });

  it('reset starts over', () => {
    const b = new Backoff({ initialMs: 10, maxMs: 100, jitter: 0 });
    b.next();
    b.next();
    expect(b.attempts).toBe(2);
    b.reset();
    expect(b.next()).toBe(10);
  });

  it.each([
    [{ initialMs: 0, maxMs: 1 }, 'initialMs'],
    [{ initialMs: 1, maxMs: -1 }, 'maxMs'],
    [{ initialMs: 1, maxMs: 2, factor: 0.5 }, 'factor'],
    [{ initialMs: 1, maxMs: 2, jitter: 2 }, 'jitter'],
  ])('rejects %o naming %s', (opts, field) => {
    expect(() => new Backoff(opts)).toThrow(field);
  });
});
