import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/kube/clock.js';
import { TtlCache } from '../../src/serving/ttl-cache.js';

describe('TtlCache', () => {
  it('keeps an entry for the TTL only', () => {
    const clock = new FakeClock(0);
    const c = new TtlCache<string>(10_000, 10, clock);
    c.set('a', 'A');
    clock.advance(9_999);
    expect(c.get('a')).toBe('A');
    clock.advance(1);
    expect(c.get('a')).toBeUndefined();
    expect(c.size).toBe(0);
  });

  it('evicts the oldest entry beyond its size; a re-set entry counts as new', () => {
    const clock = new FakeClock(0);
    const c = new TtlCache<number>(60_000, 2, clock);
    c.set('a', 1);
    c.set('b', 2);
    c.set('a', 3);
    c.set('c', 4);
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual([3, undefined, 4]);
  });

  it('TTL 0 caches nothing; bad sizes are refused', () => {
    const c = new TtlCache<number>(0);
    c.set('a', 1);
    expect(c.get('a')).toBeUndefined();
    expect(() => new TtlCache(-1)).toThrow('cache TTL: must be a finite number of ms >= 0, got -1');
    expect(() => new TtlCache(1, 0)).toThrow('cache size: must be an integer >= 1, got 0');
  });
});
