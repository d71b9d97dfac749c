import { describe, it, expect } from 'vitest';
import { Registry } from 'prom-client';
import { FakeClock } from '../../src/kube/clock.js';
import { ItemExponentialRateLimiter } from '../../src/kube/ratelimit.js';
import { RetryLaterError, WorkQueue, runBatchWorkers, runWorkers } from '../../src/kube/workqueue.js';
import { createLogger } from '../../src/log.js';
import { Writable } from 'node:stream';
import { eventually } from '../kit/wait.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

function makeQueue(clock = new FakeClock(), registry?: Registry) {
  return new WorkQueue<string>({ name: 'test', clock, registry, rateLimiter: new ItemExponentialRateLimiter(5, 1000) });
}

describe('WorkQueue basics', () => {
  it('hands items out in FIFO order and coalesces duplicates', async () => {
    const q = makeQueue();
    for (const i of ['a', 'b', 'a', 'c', 'b']) q.add(i);
    expect(q.len()).toBe(3);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['a', 'b', 'c']);
  });

  it('never hands an item to two workers; re-adding during processing requeues after done', async () => {
    const q = makeQueue();
    q.add('a');
    expect(await q.get()).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0); // held back while processing
    const second = q.get();
    let got: string | undefined;
    void second.then((v) => { got = v; });
    await tick();
    expect(got).toBeUndefined();
    q.done('a');
    expect(await second).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
    expect(q.processingCount()).toBe(0);
  });

  it('done on an item that was not added again does not requeue', async () => {
    const q = makeQueue();
    q.add('a');
    await q.get();
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('wakes a waiting getter on add', async () => {
    const q = makeQueue();
    const p = q.get();
    q.add('x');
    expect(await p).toBe('x');
  });

  it('keeps FIFO order over many items (head compaction)', async () => {
    const q = makeQueue();
    const items = Array.from({ length: 5000 }, (_, i) => `n${i}`);
    for (const i of items) q.add(i);
    const out: string[] = [];
    for (let i = 0; i < 2500; i++) out.push((await q.get()) as string);
    for (let i = 0; i < 10; i++) q.add(`m${i}`);
    while (q.len() > 0) out.push((await q.get()) as string);
    expect(out).toEqual([...items, ...Array.from({ length: 10 }, (_, i) => `m${i}`)]);
  });
});

describe('WorkQueue delays and rate limiting', () => {
  it('addAfter adds when the delay passes; the earlier of two delays wins', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    q.addAfter('a', 100);
    q.addAfter('a', 50);
    q.addAfter('a', 500);
    q.addAfter('b', 70);
    expect(q.delayedCount()).toBe(2);
    clock.advance(49);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    clock.advance(20);
    expect([await q.get(), await q.get()]).toEqual(['a', 'b']);
    clock.advance(1000);
    expect(q.len()).toBe(0); // superseded entries do not fire again
  });

  it('addAfter with zero or negative delay adds immediately', () => {
    const q = makeQueue();
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    expect(q.len()).toBe(2);
  });

  it('orders many delayed items by due time', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    const delays = [30, 10, 50, 20, 40, 5, 25, 15, 45, 35];
    delays.forEach((d, i) => q.addAfter(`i${i}-${d}`, d));
    clock.advance(100);
    const out: string[] = [];
    while (q.len() > 0) out.push((await q.get()) as string);
    expect(out.map((s) => Number(s.split('-')[1]))).toEqual([...delays].sort((a, b) => a - b));
  });

  it('addRateLimited backs off exponentially per item until forgotten', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    const expected = [5, 10, 20, 40];
    for (const delay of expected) {
      q.addRateLimited('a');
      clock.advance(delay - 1);
      expect(q.len()).toBe(0);
      clock.advance(1);
      expect(await q.get()).toBe('a');
      q.done('a');
    }
    expect(q.numRequeues('a')).toBe(4);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
  });
});

describe('WorkQueue shutdown', () => {
  it('still hands out queued items, then undefined; ignores new adds', async () => {
    const q = makeQueue();
    q.add('a');
    const idle = makeQueue();
    const waiting = idle.get();
    await idle.shutDown();
    expect(await waiting).toBeUndefined();
    await q.shutDown();
    q.add('b');
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBeUndefined();
  });

  it('drops delayed items', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    q.addAfter('a', 10);
    await q.shutDown();
    clock.advance(100);
    expect(q.len()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('drain waits for items in processing', async () => {
    const q = makeQueue();
    q.add('a');
    await q.get();
    let drained = false;
    const p = q.shutDown({ drain: true }).then(() => { drained = true; });
    await tick();
    expect(drained).toBe(false);
    q.done('a');
    await p;
    expect(drained).toBe(true);
  });
});

describe('getBatch', () => {
  it('waits for one, then takes what is queued up to max', async () => {
    const q = makeQueue();
    const p = q.getBatch(3);
    q.add('a');
    expect(await p).toEqual(['a']);
    for (const i of ['b', 'c', 'd', 'e']) q.add(i);
    expect(await q.getBatch(3)).toEqual(['b', 'c', 'd']);
    expect(await q.getBatch(3)).toEqual(['e']);
  });

  it('with gatherMs, keeps taking arrivals until the window closes or the batch is full', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    let got: string[] | undefined;
    void q.getBatch(3, 100).then((b) => { got = b; });
    q.add('a');
    await tick();
    clock.advance(60);
    q.add('b');
    await tick();
    expect(got).toBeUndefined(); // still gathering
    clock.advance(40);
    await tick();
    await tick(); // one more look at I/O before the batch closes
    expect(got).toEqual(['a', 'b']);
    // A full batch closes at once, window or not.
    for (const i of ['c', 'd', 'e', 'f']) q.add(i);
    expect(await q.getBatch(3, 100)).toEqual(['c', 'd', 'e']);
  });

  it('with gatherMs, a window that ran out while the process was busy still takes what arrived meanwhile', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    let got: string[] | undefined;
    void q.getBatch(10, 100).then((b) => { got = b; });
    q.add('a');
    await tick();
    // A 300 ms pause of our own (a long garbage collection): the timer fires late, and the node
    // that came in during the pause is read in the same turn. It is no sign of a quiet stream.
    clock.advance(300);
    await tick(); // the late timer has run; the node read in this turn's I/O comes next
    q.add('b');
    await tick();
    expect(got).toEqual(['a', 'b']);
    // Without the pause, a node that comes after the window is left for the next batch.
    void q.getBatch(10, 100).then((b) => { got = b; });
    q.add('c');
    await tick();
    clock.advance(100);
    await tick();
    await tick();
    q.add('d');
    expect(got).toEqual(['c']);
  });

  it('with gatherMs, a shutdown closes the batch with what it has', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    q.add('a');
    const p = q.getBatch(10, 1000);
    await tick();
    void q.shutDown();
    expect(await p).toEqual(['a']);
    expect(await q.getBatch(10, 1000)).toEqual([]);
  });

  it.each([0, -1, 1.5])('rejects max=%s', async (max) => {
    await expect(makeQueue().getBatch(max)).rejects.toThrow('max');
  });

  it('rejects a gatherMaxMs shorter than gatherMs, naming both', async () => {
    await expect(makeQueue().getBatch(10, 250, 100)).rejects.toThrow('gatherMaxMs must be >= gatherMs (250), got 100');
  });
});

describe('runWorkers', () => {
  it('processes each item once with n workers, never concurrently per item', async () => {
    const q = makeQueue();
    const active = new Set<string>();
    const seen: string[] = [];
    let overlap = false;
    let maxConcurrent = 0;
    const pool = runWorkers(q, 4, async (item) => {
      if (active.has(item)) overlap = true;
      active.add(item);
      maxConcurrent = Math.max(maxConcurrent, active.size);
      await tick();
      seen.push(item);
      active.delete(item);
    });
    // The 4 idle workers take n0..n3 at once; re-adding them while they are processed must run
    // them once more afterwards; n4..n9 are still queued, so their second add coalesces.
    for (let i = 0; i < 20; i++) q.add(`n${i % 10}`);
    await eventually(() => seen.length >= 14, { what: '14 items processed' });
    await q.shutDown({ drain: true });
    await pool.finished;
    expect(overlap).toBe(false);
    expect(maxConcurrent).toBe(4);
    const counts = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`n${i}`, i < 4 ? 2 : 1]));
    expect(Object.fromEntries([...new Set(seen)].map((s) => [s, seen.filter((x) => x === s).length]))).toEqual(counts);
    expect(pool.alive()).toBe(0);
  });

  it('requeues failures with backoff and forgets on success', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    let calls = 0;
    const pool = runWorkers(q, 1, async () => {
      calls++;
      if (calls < 3) throw new Error('boom');
    });
    q.add('a');
    await tick();
    expect(calls).toBe(1);
    expect(q.numRequeues('a')).toBe(1);
    clock.advance(5);
    await tick();
    expect(calls).toBe(2);
    clock.advance(10);
    await tick();
    expect(calls).toBe(3);
    expect(q.numRequeues('a')).toBe(0);
    await q.shutDown();
    await pool.finished;
  });

  it('logs an already-reported retry at debug without a stack, any other failure as a warning with it', async () => {
    const lines: { level: number; msg: string; err?: { stack?: string }; reason?: string }[] = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
    const logger = createLogger({ level: 'debug', destination: sink });
    const q = makeQueue(new FakeClock());
    const pool = runWorkers(q, 1, async (item) => {
      throw item === 'waiting' ? new RetryLaterError('annotation names an IP the cloud lacks') : new Error('boom');
    }, { logger });
    q.add('waiting');
    q.add('broken');
    await eventually(() => q.numRequeues('waiting') > 0 && q.numRequeues('broken') > 0, { what: 'both items requeued' });
    await q.shutDown();
    await pool.finished;
    await new Promise<void>((r) => setImmediate(r));
    const waiting = lines.find((l) => l.msg === 'requeueing with backoff');
    expect(waiting).toMatchObject({ level: 20, reason: 'annotation names an IP the cloud lacks' });
    expect(waiting?.err).toBeUndefined();
    const broken = lines.find((l) => l.msg === 'processing failed, requeueing with backoff');
    expect(broken?.level).toBe(40);
    expect(broken?.err?.stack).toContain('Error: boom');
  });

  it('honours requeueAfterMs from the handler', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    let calls = 0;
    const pool = runWorkers(q, 1, async () => {
      calls++;
      return { requeueAfterMs: 1000 };
    });
    q.add('a');
    await tick();
    clock.advance(999);
    await tick();
    expect(calls).toBe(1);
    clock.advance(1);
    await tick();
    expect(calls).toBe(2);
    expect(q.numRequeues('a')).toBe(0);
    await q.shutDown();
    await pool.finished;
  });

  it('batch workers requeue only failed items', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    const batches: string[][] = [];
    for (const i of ['a', 'b', 'c']) q.add(i);
    const pool = runBatchWorkers(q, 1, 10, async (items) => {
      batches.push(items);
      return batches.length === 1 ? { failed: new Map([['b', new Error('x')]]) } : undefined;
    });
    await tick();
    clock.advance(5);
    await tick();
    expect(batches).toEqual([['a', 'b', 'c'], ['b']]);
    await q.shutDown();
    await pool.finished;
  });

  it('pending items stay held until they settle while the worker takes the next batch; a rejection backs off', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    const batches: string[][] = [];
    let settle: { ok: () => void; fail: (e: Error) => void } | undefined;
    const pool = runBatchWorkers(q, 1, 10, async (items) => {
      batches.push(items);
      if (!items.includes('slow')) return undefined;
      const later = new Promise<void>((ok, fail) => (settle = { ok: () => ok(), fail }));
      return { pending: new Map([['slow', later]]) };
    });
    q.add('slow');
    q.add('a');
    await tick();
    // The one worker is free again while 'slow' is pending; 'slow' is not handed out twice.
    q.add('b');
    q.add('slow');
    await tick();
    expect(batches).toEqual([['slow', 'a'], ['b']]);
    expect(q.processingCount()).toBe(1);
    settle!.fail(new Error('its own call failed'));
    await tick();
    // Added while it was held: queued again once done; and it backs off as a failure.
    expect(q.numRequeues('slow')).toBe(1);
    expect(batches).toEqual([['slow', 'a'], ['b'], ['slow']]);
    settle!.ok();
    await tick();
    expect(q.numRequeues('slow')).toBe(0);
    await q.shutDown({ drain: true });
    await pool.finished;
  });
});

describe('runBatchWorkers with gatherMs', () => {
  it('nodes arriving one by one within the window share one batch, however many workers are idle', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    const batches: string[][] = [];
    const pool = runBatchWorkers(q, 4, 500, async (items) => { batches.push(items); }, { gatherMs: 250 });
    await tick();
    for (let i = 0; i < 20; i++) {
      q.add(`n${i}`);
      clock.advance(10);
      await tick();
    }
    clock.advance(250);
    for (let i = 0; i < 5; i++) await tick();
    expect(batches).toEqual([Array.from({ length: 20 }, (_, i) => `n${i}`)]);
    void q.shutDown();
    clock.advance(1000);
    await pool.finished;
  });

  it('with gatherMaxMs, a steady stream keeps one batch open until the cap, not just the first window', async () => {
    const clock = new FakeClock();
    const q = makeQueue(clock);
    const batches: string[][] = [];
    const pool = runBatchWorkers(q, 4, 500, async (items) => { batches.push(items); }, { gatherMs: 250, gatherMaxMs: 2000 });
    await tick();
    // One node every 90 ms for 2.7 s: the first batch takes those of its first 2 s (0 … 1980 ms).
    for (let i = 0; i < 30; i++) {
      q.add(`n${i}`);
      await tick();
      clock.advance(90);
      await tick();
      await tick();
    }
    clock.advance(250);
    for (let i = 0; i < 5; i++) await tick();
    expect(batches.map((b) => b.length)).toEqual([23, 7]);
    void q.shutDown();
    clock.advance(1000);
    await pool.finished;
  });
});

describe('metrics', () => {
  it('exports client-go workqueue metrics with the name label on the given registry', async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const q = makeQueue(clock, registry);
    const other = new WorkQueue<string>({ name: 'other', clock, registry });
    q.add('a');
    q.add('b');
    other.add('z');
    clock.advance(2000);
    await q.get();
    clock.advance(500);
    q.done('a');
    q.addRateLimited('a');
    const text = await registry.metrics();
    expect(text).toContain('workqueue_depth{name="test"} 1');
    expect(text).toContain('workqueue_depth{name="other"} 1');
    expect(text).toContain('workqueue_adds_total{name="test"} 2');
    expect(text).toContain('workqueue_retries_total{name="test"} 1');
    expect(text).toContain('workqueue_queue_duration_seconds_sum{name="test"} 2');
    expect(text).toContain('workqueue_work_duration_seconds_sum{name="test"} 0.5');
    // b has been processing for 3 s: in-progress work is reported at scrape time.
    await q.get();
    clock.advance(3000);
    const later = await registry.metrics();
    expect(later).toContain('workqueue_unfinished_work_seconds{name="test"} 3');
    expect(later).toContain('workqueue_longest_running_processor_seconds{name="test"} 3');
    expect(later).toContain('workqueue_unfinished_work_seconds{name="other"} 0');
  });
});
