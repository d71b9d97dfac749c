// A rate-limited work queue with client-go's guarantees: an item is handed to at most one worker at a
// time, an item added while it is being processed is queued again once the worker calls done(), and
// adding an item that is already waiting is a no-op (items coalesce).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { realClock, type Clock, type ClockTimer } from './clock.js';
import { defaultControllerRateLimiter, type RateLimiter } from './ratelimit.js';
import { silentLogger, type Logger } from '../log.js';

export interface WorkQueueMetrics {
  depth: Gauge<'name'>;
  unfinishedWork: Gauge<'name'>;
  longestRunning: Gauge<'name'>;
  adds: Counter<'name'>;
  retries: Counter<'name'>;
  queueDuration: Histogram<'name'>;
  workDuration: Histogram<'name'>;
}

// client-go's buckets: 1 ns … 10 s, ×10.
const DURATION_BUCKETS = Array.from({ length: 10 }, (_, i) => 1e-8 * 10 ** i);

function getOrCreate<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

interface InFlight {
  readonly name: string;
  /** Seconds of work in progress: total and longest. */
  inFlightSeconds(): { total: number; longest: number };
}

// Queues per registry, read when the registry is scraped (work in progress is a now-value).
const liveQueues = new WeakMap<Registry, Set<InFlight>>();

function queuesOf(registry: Registry): Set<InFlight> {
  let set = liveQueues.get(registry);
  if (!set) liveQueues.set(registry, (set = new Set()));
  return set;
}

/** The `workqueue_*` metrics on `registry`; several queues share them through the `name` label. */
export function workQueueMetrics(registry: Registry): WorkQueueMetrics {
  const registers = [registry];
  return {
    unfinishedWork: getOrCreate(registry, 'workqueue_unfinished_work_seconds', () =>
      new Gauge({
        name: 'workqueue_unfinished_work_seconds',
        help: 'How many seconds of work has been done that is in progress and hasn\'t been observed by work_duration. Large values indicate stuck threads.',
        labelNames: ['name'], registers,
        collect() {
          for (const q of queuesOf(registry)) this.set({ name: q.name }, q.inFlightSeconds().total);
        },
      })),
    longestRunning: getOrCreate(registry, 'workqueue_longest_running_processor_seconds', () =>
      new Gauge({
        name: 'workqueue_longest_running_processor_seconds',
        help: 'How many seconds has the longest running processor for workqueue been running.',
        labelNames: ['name'], registers,
        collect() {
          for (const q of queuesOf(registry)) this.set({ name: q.name }, q.inFlightSeconds().longest);
        },
      })),
    depth: getOrCreate(registry, 'workqueue_depth', () =>
      new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers })),
    adds: getOrCreate(registry, 'workqueue_adds_total', () =>
      new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers })),
    retries: getOrCreate(registry, 'workqueue_retries_total', () =>
      new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers })),
    queueDuration: getOrCreate(registry, 'workqueue_queue_duration_seconds', () =>
      new Histogram({
        name: 'workqueue_queue_duration_seconds',
        help: 'How long in seconds an item stays in workqueue before being requested',
        labelNames: ['name'], buckets: DURATION_BUCKETS, registers,
      })),
    workDuration: getOrCreate(registry, 'workqueue_work_duration_seconds', () =>
      new Histogram({
        name: 'workqueue_work_duration_seconds',
        help: 'How long in seconds processing an item from workqueue takes',
        labelNames: ['name'], buckets: DURATION_BUCKETS, registers,
      })),
  };
}

export interface WorkQueueOptions<T> {
  /** Queue name, the `name` label of the metrics. */
  name: string;
  clock?: Clock;
  rateLimiter?: RateLimiter<T>;
  /** Registry for `workqueue_*` metrics; none → no metrics. */
  registry?: Registry;
}

interface Delayed<T> {
  item: T;
  at: number;
}

export class WorkQueue<T = string> {
  readonly name: string;
  readonly #clock: Clock;
  readonly #limiter: RateLimiter<T>;
  readonly #metrics: WorkQueueMetrics | undefined;
  readonly #registry: Registry | undefined;

  // FIFO as array + head index so shift is O(1); compacted when the dead prefix grows.
  #queue: T[] = [];
  #head = 0;
  readonly #dirty = new Set<T>();
  readonly #processing = new Set<T>();
  readonly #addedAt = new Map<T, number>();
  readonly #startedAt = new Map<T, number>();
  #waiters: Array<(item: T | undefined) => void> = [];
  /** Batches still gathering (getBatch with gatherMs), woken when an item is queued. */
  #arrivals: Array<() => void> = [];
  #shuttingDown = false;
  #drainWaiters: Array<() => void> = [];

  // Delayed items: earliest due time per item, a min-heap of (item, at) with lazy deletion, one timer.
  readonly #delayedAt = new Map<T, number>();
  #heap: Delayed<T>[] = [];
  #timer: ClockTimer | undefined;
  #timerAt = Infinity;

  constructor(options: WorkQueueOptions<T>) {
    if (!options.name) throw new Error('WorkQueue: name must be a non-empty string');
    this.name = options.name;
    this.#clock = options.clock ?? realClock;
    this.#limiter = options.rateLimiter ?? defaultControllerRateLimiter<T>(this.#clock);
    this.#metrics = options.registry ? workQueueMetrics(options.registry) : undefined;
    this.#registry = options.registry;
    this.#metrics?.depth.set({ name: this.name }, 0);
    if (this.#registry) queuesOf(this.#registry).add(this);
  }

  /** Seconds spent so far on items being processed: their sum and the longest. */
  inFlightSeconds(): { total: number; longest: number } {
    const now = this.#clock.now();
    let total = 0;
    let longest = 0;
    for (const started of this.#startedAt.values()) {
      const s = Math.max(0, now - started) / 1000;
      total += s;
      longest = Math.max(longest, s);
    }
    return { total, longest };
  }

  /** Items waiting to be handed out (not counting processing or delayed ones). */
  len(): number {
    return this.#queue.length - this.#head;
  }

  /** Items currently held by workers. */
  processingCount(): number {
    return this.#processing.size;
  }

  /** Items waiting for their delay to pass. */
  delayedCount(): number {
    return this.#delayedAt.size;
  }

  isShuttingDown(): boolean {
    return this.#shuttingDown;
  }

  add(item: T): void {
    if (this.#shuttingDown || this.#dirty.has(item)) return;
    this.#metrics?.adds.inc({ name: this.name });
    this.#dirty.add(item);
    // An item being processed stays out of the queue; done() puts it back.
    if (this.#processing.has(item)) return;
    this.#enqueue(item);
  }

  /** Adds `item` after `delayMs`. An item already waiting keeps the earlier of both times. */
  addAfter(item: T, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (!(delayMs > 0)) {
      this.add(item);
      return;
    }
    const at = this.#clock.now() + delayMs;
    const existing = this.#delayedAt.get(item);
    if (existing !== undefined && existing <= at) return;
    this.#delayedAt.set(item, at);
    this.#heapPush({ item, at });
    this.#armTimer();
  }

  /** Adds `item` after the rate limiter's delay (per-item backoff, overall bucket). */
  addRateLimited(item: T): void {
    if (this.#shuttingDown) return;
    this.#metrics?.retries.inc({ name: this.name });
    this.addAfter(item, this.#limiter.when(item));
  }

  /** Clears the backoff history of `item`; call after it was processed successfully. */
  forget(item: T): void {
    this.#limiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.#limiter.numRequeues(item);
  }

  /** The next item, waiting if none is queued; `undefined` once the queue is shut down and empty. */
  get(): Promise<T | undefined> {
    if (this.len() > 0) return Promise.resolve(this.#take());
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /**
   * Waits for one item, then also takes up to `max - 1` more that are already queued, so a worker
   * can serve several nodes with one provider call. With `gatherMs`, a batch that is not full yet
   * keeps taking items as they arrive until none has arrived for `gatherMs`, or `gatherMaxMs`
   * (default `gatherMs`) after its first one: nodes that join in a stream then share a call
   * whatever their rate, and a lone node waits only `gatherMs`. Empty array once shut down and empty.
   */
  async getBatch(max: number, gatherMs = 0, gatherMaxMs = gatherMs): Promise<T[]> {
    if (!Number.isInteger(max) || max < 1) throw new Error(`getBatch: max must be an integer >= 1, got ${max}`);
    if (gatherMaxMs < gatherMs) throw new Error(`getBatch: gatherMaxMs must be >= gatherMs (${gatherMs}), got ${gatherMaxMs}`);
    const first = await this.get();
    if (first === undefined) return [];
    const batch: T[] = [first as T];
    const closeBy = this.#clock.now() + gatherMaxMs;
    let quietUntil = this.#clock.now() + gatherMs;
    let looked = false;
    for (;;) {
      if (batch.length < max && this.len() > 0) {
        while (batch.length < max && this.len() > 0) batch.push(this.#take());
        quietUntil = this.#clock.now() + gatherMs;
      }
      if (batch.length >= max || this.#shuttingDown) return batch;
      const left = Math.min(quietUntil, closeBy) - this.#clock.now();
      if (left > 0) {
        looked = false;
        await this.#nextArrival(left);
      } else if (gatherMs > 0 && !looked) {
        // Time is up, but the process may itself have been busy (a long garbage collection, a
        // large page): items may sit unread in a socket. One turn of I/O before closing, so a
        // pause of our own does not pass for a quiet stream.
        looked = true;
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else return batch;
    }
  }

  /** Resolves when an item is queued, the queue shuts down, or after `ms`. */
  #nextArrival(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        timer.cancel();
        const i = this.#arrivals.indexOf(wake);
        if (i >= 0) this.#arrivals.splice(i, 1);
        resolve();
      };
      const timer = this.#clock.setTimer(wake, ms);
      this.#arrivals.push(wake);
    });
  }

  #wakeArrivals(): void {
    if (this.#arrivals.length === 0) return;
    const arrivals = this.#arrivals;
    this.#arrivals = [];
    for (const wake of arrivals) wake();
  }

  /** Marks `item` as finished; if it was added again meanwhile, it is queued now. */
  done(item: T): void {
    if (!this.#processing.delete(item)) return;
    const started = this.#startedAt.get(item);
    this.#startedAt.delete(item);
    if (started !== undefined) this.#metrics?.workDuration.observe({ name: this.name }, (this.#clock.now() - started) / 1000);
    if (this.#dirty.has(item)) this.#enqueue(item);
    this.#checkDrained();
  }

  /**
   * Stops accepting items and drops delayed ones. Items already queued are still handed out;
   * `get()` returns undefined once the queue is empty. With `drain`, the promise resolves when
   * every handed-out item is done.
   */
  shutDown(options: { drain?: boolean } = {}): Promise<void> {
    this.#shuttingDown = true;
    if (this.#registry) queuesOf(this.#registry).delete(this);
    this.#metrics?.unfinishedWork.set({ name: this.name }, 0);
    this.#metrics?.longestRunning.set({ name: this.name }, 0);
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Infinity;
    this.#heap = [];
    this.#delayedAt.clear();
    if (this.len() === 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const w of waiters) w(undefined);
    }
    this.#wakeArrivals();
    if (!options.drain) return Promise.resolve();
    return new Promise((resolve) => {
      this.#drainWaiters.push(resolve);
      this.#checkDrained();
    });
  }

  #checkDrained(): void {
    if (!this.#shuttingDown || this.#processing.size > 0 || this.len() > 0) return;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const w of waiters) w();
  }

  #enqueue(item: T): void {
    this.#addedAt.set(item, this.#clock.now());
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#queue.push(item);
      waiter(this.#take());
      return;
    }
    this.#queue.push(item);
    this.#metrics?.depth.set({ name: this.name }, this.len());
    this.#wakeArrivals();
  }

  #take(): T {
    const item = this.#queue[this.#head] as T;
    this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#dirty.delete(item);
    this.#processing.add(item);
    const now = this.#clock.now();
    const added = this.#addedAt.get(item);
    this.#addedAt.delete(item);
    if (added !== undefined) this.#metrics?.queueDuration.observe({ name: this.name }, (now - added) / 1000);
    this.#startedAt.set(item, now);
    this.#metrics?.depth.set({ name: this.name }, this.len());
    if (this.#shuttingDown && this.len() === 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const w of waiters) w(undefined);
    }
    return item;
  }

  #armTimer(): void {
    const top = this.#heap[0];
    if (!top || top.at >= this.#timerAt) return;
    this.#timer?.cancel();
    this.#timerAt = top.at;
    this.#timer = this.#clock.setTimer(() => this.#fireDue(), top.at - this.#clock.now());
  }

  #fireDue(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.#clock.now();
    while (this.#heap.length > 0 && (this.#heap[0] as Delayed<T>).at <= now) {
      const { item, at } = this.#heapPop();
      // Stale heap entries (superseded by an earlier addAfter) are skipped.
      if (this.#delayedAt.get(item) !== at) continue;
      this.#delayedAt.delete(item);
      this.add(item);
    }
    this.#armTimer();
  }

  #heapPush(entry: Delayed<T>): void {
    const h = this.#heap;
    h.push(entry);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((h[p] as Delayed<T>).at <= entry.at) break;
      h[i] = h[p] as Delayed<T>;
      i = p;
    }
    h[i] = entry;
  }

  #heapPop(): Delayed<T> {
    const h = this.#heap;
    const top = h[0] as Delayed<T>;
    const last = h.pop() as Delayed<T>;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        const mAt = () => (m === i ? last.at : (h[m] as Delayed<T>).at);
        if (l < h.length && (h[l] as Delayed<T>).at < mAt()) m = l;
        if (r < h.length && (h[r] as Delayed<T>).at < mAt()) m = r;
        if (m === i) break;
        h[i] = h[m] as Delayed<T>;
        i = m;
      }
      h[i] = last;
    }
    return top;
  }
}

/**
 * A failure the handler has already reported (an event, a log line with the reason): the item is
 * re-queued with backoff like any failure, but logged at debug level without a stack, so an
 * expected wait (a node whose annotation the cloud cannot satisfy) does not flood the logs.
 */
export class RetryLaterError extends Error {
  override name = 'RetryLaterError';
}

/** What a handler may ask for besides success/failure. */
export interface HandlerResult {
  /** Process the item again after this many ms (periodic resync), without counting a failure. */
  requeueAfterMs?: number;
}

export interface RunWorkersOptions {
  logger?: Logger;
  /**
   * How long a batch that is not full waits for the next item (default 0: it takes what is
   * queued); see WorkQueue.getBatch. One worker gathers at a time, so items arriving together
   * share one batch rather than being split across every idle worker.
   */
  gatherMs?: number;
  /** With gatherMs: the longest a batch gathers after its first item, however steady the arrivals (default gatherMs). */
  gatherMaxMs?: number;
}

/** Live worker counts, for the liveness check. */
export interface WorkerPool {
  /** Resolves once every worker has exited (after shutDown and the queue ran empty). */
  readonly finished: Promise<void>;
  /** Workers still running their loop. */
  alive(): number;
}

/**
 * Runs `n` workers that take items one at a time. A handler that throws gets the item re-queued
 * with rate limiting; one that returns normally gets its backoff history forgotten.
 */
export function runWorkers<T>(
  queue: WorkQueue<T>,
  n: number,
  handler: (item: T) => Promise<HandlerResult | void>,
  options: RunWorkersOptions = {},
): WorkerPool {
  return runBatchWorkers(queue, n, 1, async (items) => {
    const item = items[0] as T;
    try {
      const r = await handler(item);
      return { results: new Map([[item, r ?? {}]]) };
    } catch (error) {
      return { failed: new Map([[item, error]]) };
    }
  }, options);
}

export interface BatchResult<T> {
  /** Items whose processing failed; re-queued with rate limiting. Others count as done. */
  failed?: Map<T, unknown>;
  /** Per-item extras for successful items (e.g. requeueAfterMs). */
  results?: Map<T, HandlerResult>;
  /**
   * Items still being processed when the handler returned (a node asked about in a provider call
   * of its own): each stays with its worker's batch, handed to no other worker, until its promise
   * settles (a rejection is a failure); the worker itself goes on to the next batch.
   */
  pending?: Map<T, Promise<HandlerResult | void>>;
}

/**
 * Runs `n` workers that each take up to `maxBatch` queued items at once. A thrown error fails the
 * whole batch.
 */
export function runBatchWorkers<T>(
  queue: WorkQueue<T>,
  n: number,
  maxBatch: number,
  handler: (items: T[]) => Promise<BatchResult<T> | void>,
  options: RunWorkersOptions = {},
): WorkerPool {
  if (!Number.isInteger(n) || n < 1) throw new Error(`workers: must be an integer >= 1, got ${n}`);
  const logger = options.logger ?? silentLogger;
  const gatherMs = options.gatherMs ?? 0;
  const gatherMaxMs = Math.max(gatherMs, options.gatherMaxMs ?? gatherMs);
  let alive = 0;
  const finish = (item: T, failed: boolean, err: unknown, r: HandlerResult | undefined): void => {
    if (failed) {
      if (err instanceof RetryLaterError) {
        logger.debug({ queue: queue.name, item: String(item), reason: err.message, retries: queue.numRequeues(item) }, 'requeueing with backoff');
      } else {
        logger.warn({ queue: queue.name, item: String(item), err, retries: queue.numRequeues(item) }, 'processing failed, requeueing with backoff');
      }
      queue.addRateLimited(item);
    } else {
      queue.forget(item);
      const after = r?.requeueAfterMs;
      if (after !== undefined) queue.addAfter(item, after);
    }
    queue.done(item);
  };
  // Workers take turns at gathering: the next one starts its batch once the previous has closed.
  let gathering: Promise<unknown> = Promise.resolve();
  const nextBatch = (): Promise<T[]> => {
    if (gatherMs <= 0) return queue.getBatch(maxBatch);
    const batch = gathering.then(() => queue.getBatch(maxBatch, gatherMs, gatherMaxMs));
    gathering = batch.catch(() => undefined);
    return batch;
  };
  const worker = async (): Promise<void> => {
    alive++;
    try {
      for (;;) {
        const items = await nextBatch();
        if (items.length === 0) return;
        let result: BatchResult<T> | void;
        try {
          result = await handler(items);
        } catch (error) {
          result = { failed: new Map(items.map((i) => [i, error])) };
        }
        for (const item of items) {
          const later = result?.pending?.get(item);
          if (later) {
            later.then(
              (r) => finish(item, false, undefined, r ?? undefined),
              (err: unknown) => finish(item, true, err, undefined),
            );
            continue;
          }
          finish(item, result?.failed?.has(item) === true, result?.failed?.get(item), result?.results?.get(item));
        }
      }
    } finally {
      alive--;
    }
  };
  const finished = Promise.all(Array.from({ length: n }, worker)).then(() => undefined);
  return { finished, alive: () => alive };
}
