// The watch watchdog against a model over random histories of kicks and time: it calls onSilent
// exactly once, at the first moment nothing has kicked it for the timeout, and never after stop.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/kube/clock.js';
import { Watchdog } from '../../src/kube/watchdog.js';

type Step = { kind: 'advance'; ms: number } | { kind: 'kick' } | { kind: 'stop' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 120 }) }),
  fc.constant({ kind: 'kick' as const }),
  fc.constant({ kind: 'stop' as const }),
);

describe('Watchdog', () => {
  it('fires once, exactly when the silence reaches the timeout, and never after stop', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 100 }), fc.array(step, { maxLength: 60 }), (timeout, steps) => {
      const clock = new FakeClock(0);
      const fired: number[] = [];
      const dog = new Watchdog(clock, timeout, () => fired.push(clock.now()));
      // The model: when it must fire, given the last kick.
      let last = 0;
      let expected: number | undefined;
      let stopped = false;
      for (const s of steps) {
        if (s.kind === 'kick') {
          if (expected === undefined) last = clock.now();
          dog.kick();
        } else if (s.kind === 'stop') {
          stopped = true;
          dog.stop();
        } else {
          // Time moves a millisecond at a time, so the model sees every moment.
          for (let i = 0; i < s.ms; i++) {
            clock.advance(1);
            if (!stopped && expected === undefined && clock.now() - last >= timeout) expected = clock.now();
          }
        }
      }
      expect(fired).toEqual(expected === undefined ? [] : [expected]);
    }), { numRuns: 500 });
  });

  it('a kick just before the timeout moves it on by a whole timeout', () => {
    const clock = new FakeClock(0);
    let fired = 0;
    const dog = new Watchdog(clock, 100, () => fired++);
    clock.advance(99);
    dog.kick();
    clock.advance(99);
    expect(fired).toBe(0);
    clock.advance(1);
    expect(fired).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });
});
