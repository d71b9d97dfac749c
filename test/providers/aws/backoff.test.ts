import { describe, it, expect } from 'vitest';
import { BackoffGate } from '../../../providers/aws/backoff.js';

function clockGate(options: { baseMs: number; maxMs: number; jitter?: number; random?: number }) {
  let now = 1_000;
  const gate = new BackoffGate({ ...options, random: () => options.random ?? 0.5, now: () => now });
  return { gate, advance: (ms: number) => (now += ms) };
}

describe('BackoffGate', () => {
  it('doubles the delay per throttle up to the cap and halves it per success', () => {
    const { gate } = clockGate({ baseMs: 100, maxMs: 700, jitter: 0 });
    const delays: number[] = [];
    for (let k = 0; k < 5; k++) {
      gate.throttled();
      delays.push(gate.currentDelayMs);
    }
    expect(delays).toEqual([100, 200, 400, 700, 700]);
    const recovery: number[] = [];
    for (let k = 0; k < 4; k++) {
      gate.succeeded();
      recovery.push(gate.currentDelayMs);
    }
    expect(recovery).toEqual([350, 175, 87, 0]);
    expect(gate.throttles).toBe(5);
  });

  it('closes the gate for the delay, with jitter, and never shortens a longer wait', () => {
    const { gate, advance } = clockGate({ baseMs: 100, maxMs: 1000, jitter: 0.2, random: 1 });
    expect(gate.waitMs()).toBe(0);
    gate.throttled();
    expect(gate.waitMs()).toBe(120);
    advance(50);
    expect(gate.waitMs()).toBe(70);
    const low = clockGate({ baseMs: 100, maxMs: 1000, jitter: 0.2, random: 0 });
    low.gate.throttled();
    expect(low.gate.waitMs()).toBe(80);
    advance(100);
    expect(gate.waitMs()).toBe(0);
  });

  it('wait() resolves after the delay and rejects when aborted', async () => {
    const gate = new BackoffGate({ baseMs: 10, maxMs: 10, jitter: 0 });
    await gate.wait();
    gate.throttled();
    expect(gate.waitMs()).toBeGreaterThan(0);
    await gate.wait();
    expect(gate.waitMs()).toBe(0);
    gate.throttled();
    const ac = new AbortController();
    const waiting = gate.wait(ac.signal);
    ac.abort(new Error('shutdown'));
    await expect(waiting).rejects.toThrow('shutdown');
  });

  it('rejects inconsistent settings', () => {
    expect(() => new BackoffGate({ baseMs: 100, maxMs: 10 })).toThrow(/baseMs=100, maxMs=10/);
    expect(() => new BackoffGate({ baseMs: -1 })).toThrow(/baseMs=-1/);
  });
});
