// The kit's polling helpers: what every test that waits relies on.
import { describe, expect, it } from 'vitest';
import { consistently, eventually, GiveUp } from './wait.js';

describe('eventually', () => {
  it('retries while the probe throws or returns false, and returns what it returned then', async () => {
    let calls = 0;
    const value = await eventually(() => {
      calls++;
      if (calls === 1) throw new Error('not yet');
      return calls >= 3 && { calls };
    }, { intervalMs: 1 });
    expect(value).toEqual({ calls: 3 });
  });

  it('takes any other value as done, undefined and 0 included', async () => {
    expect(await eventually(() => undefined)).toBeUndefined();
    expect(await eventually(() => 0)).toBe(0);
  });

  it('rethrows the last assertion error, with describe() appended', async () => {
    let n = 0;
    const err = await eventually(() => expect(++n).toBe(-1), { timeoutMs: 30, intervalMs: 5, describe: () => 'the log tail' }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/expected \d+ to be -1/);
    expect((err as Error).message).toContain('--- while waiting (30 ms) ---\nthe log tail');
    expect(n).toBeGreaterThan(2);
  });

  it('names what it waited for when the probe only returned false', async () => {
    await expect(eventually(() => false, { timeoutMs: 20, what: 'the node initialised' })).rejects.toThrow('timed out after 20 ms waiting for the node initialised');
  });

  it('stops at once on GiveUp', async () => {
    let calls = 0;
    const started = Date.now();
    await expect(eventually(() => {
      calls++;
      throw new GiveUp('the process exited');
    }, { timeoutMs: 5_000 })).rejects.toThrow('the process exited');
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('consistently', () => {
  it('passes when the probe holds for the whole window', async () => {
    let calls = 0;
    await consistently(() => {
      calls++;
    }, 30, 5);
    expect(calls).toBeGreaterThan(1);
  });

  it('fails as soon as the probe throws or returns false', async () => {
    let n = 0;
    await expect(consistently(() => ++n < 3, 1_000, 1)).rejects.toThrow(/stopped holding after \d+ ms of 1000 ms/);
    await expect(consistently(() => expect(1).toBe(2), 1_000, 1)).rejects.toThrow(/expected 1 to be 2/);
  });
});
