// Event recording with client-go's correlation: repeats of an event bump `count` on the existing
// Event instead of creating new ones, many similar events (same object, type and reason, different
// messages) collapse into one "(combined from similar events)" Event, and a per-object token bucket
// drops floods. The correlator is pure; the recorder sends in the background and never throws.
import { realClock, type Clock } from './clock.js';
import type { KubeClient } from './client.js';
import { isAlreadyExists, isFenced, isNotFound } from './errors.js';
import { formatTime } from './time.js';
import { EVENTS, type EventObject, type KubeObject, type ObjectReference } from './types.js';
import { silentLogger, type Logger } from '../log.js';
import { TokenBucket } from './token-bucket.js';

export type EventType = 'Normal' | 'Warning';

export const DEFAULT_EVENT_COMPONENT = 'node-address-ccm';
/** Events about cluster-scoped objects (nodes) go here, as Kubernetes components do. */
export const CLUSTER_EVENTS_NAMESPACE = 'default';
export const COMBINED_PREFIX = '(combined from similar events): ';
/** The events.k8s.io limit for a note; longer core/v1 messages are cut to this. */
export const MAX_MESSAGE_LENGTH = 1024;

export interface EventInput {
  involvedObject: ObjectReference & { kind: string; name: string };
  type: EventType;
  reason: string;
  message: string;
}

export interface CorrelatorOptions {
  component?: string;
  host?: string;
  /** Spam filter: token refill rate per object (default 1 per 5 min) and bucket size (default 25). */
  spamQps?: number;
  spamBurst?: number;
  /** Distinct messages per (object, type, reason) before they are combined (default 10). */
  maxSimilarEvents?: number;
  /** Window for similar-event counting and for updating an existing Event (default 10 min). */
  windowMs?: number;
  /** Entries kept per cache (default 4096). */
  cacheSize?: number;
}

/** What to write for one recorded event. */
export type Correlation =
  | { action: 'drop'; reason: 'spam' }
  | {
      action: 'create' | 'patch';
      key: string;
      /** The full Event (for create, or to recreate when the patch target is gone). */
      event: EventObject;
      /** For patch: the merge patch bumping count and lastTimestamp. */
      patch?: { count: number; lastTimestamp: string; message: string };
    };

interface Bucket {
  tokens: number;
  last: number;
}

interface Similar {
  messages: Set<string>;
  last: number;
}

interface Observed {
  name: string;
  count: number;
  firstTimestamp: string;
  last: number;
}

/** A Map used as an LRU: reads move entries to the end, the oldest is evicted past `max`. */
class Lru<V> {
  readonly #m = new Map<string, V>();
  constructor(readonly max: number) {}
  get(k: string): V | undefined {
    const v = this.#m.get(k);
    if (v !== undefined) {
      this.#m.delete(k);
      this.#m.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.#m.delete(k);
    this.#m.set(k, v);
    if (this.#m.size > this.max) this.#m.delete(this.#m.keys().next().value as string);
  }
  delete(k: string): void {
    this.#m.delete(k);
  }
  get size(): number {
    return this.#m.size;
  }
}

function positive(field: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${field}: must be a positive number, got ${v}`);
  return v;
}

/** Pure event correlation: no I/O, time passed in. */
export class EventCorrelator {
  readonly component: string;
  readonly host: string | undefined;
  readonly #spamQps: number;
  readonly #spamBurst: number;
  readonly #maxSimilar: number;
  readonly #windowMs: number;
  readonly #buckets: Lru<Bucket>;
  readonly #similar: Lru<Similar>;
  readonly #observed: Lru<Observed>;
  #lastNameNs = 0n;

  constructor(options: CorrelatorOptions = {}) {
    this.component = options.component ?? DEFAULT_EVENT_COMPONENT;
    this.host = options.host;
    this.#spamQps = positive('spamQps', options.spamQps ?? 1 / 300);
    this.#spamBurst = positive('spamBurst', options.spamBurst ?? 25);
    this.#maxSimilar = positive('maxSimilarEvents', options.maxSimilarEvents ?? 10);
    this.#windowMs = positive('windowMs', options.windowMs ?? 600_000);
    const size = positive('cacheSize', options.cacheSize ?? 4096);
    this.#buckets = new Lru(size);
    this.#similar = new Lru(size);
    this.#observed = new Lru(size);
  }

  correlate(input: EventInput, now: number, namespace: string): Correlation {
    validateInput(input);
    const o = input.involvedObject;
    const objectKey = [this.component, this.host ?? '', o.apiVersion ?? '', o.kind, o.namespace ?? '', o.name, o.uid ?? ''].join('\u0000');
    const aggregateKey = [objectKey, input.type, input.reason].join('\u0000');
    let message = input.message.length > MAX_MESSAGE_LENGTH ? input.message.slice(0, MAX_MESSAGE_LENGTH - 3) + '...' : input.message;

    // Similar events (same object, type, reason): the first maxSimilar − 1 distinct messages keep
    // their own Events; any further new message lands on one combined Event keyed without the
    // message, so a reason with ever-changing messages cannot create unbounded Events.
    let similar = this.#similar.get(aggregateKey);
    if (!similar || now - similar.last > this.#windowMs) similar = { messages: new Set(), last: now };
    similar.last = now;
    similar.messages.add(message);
    this.#similar.set(aggregateKey, similar);
    let key = `${aggregateKey}\u0000${message}`;
    if (similar.messages.size >= this.#maxSimilar) {
      similar.messages.delete(message);
      key = aggregateKey;
      message = (COMBINED_PREFIX + message).slice(0, MAX_MESSAGE_LENGTH);
    }

    // Spam filter per object (all reasons), consumed by every write including count bumps.
    let bucket = this.#buckets.get(objectKey);
    if (!bucket) bucket = { tokens: this.#spamBurst, last: now };
    bucket.tokens = Math.min(this.#spamBurst, bucket.tokens + (Math.max(0, now - bucket.last) / 1000) * this.#spamQps);
    bucket.last = now;
    this.#buckets.set(objectKey, bucket);
    if (bucket.tokens < 1) return { action: 'drop', reason: 'spam' };
    bucket.tokens -= 1;

    const ts = formatTime(now);
    const prev = this.#observed.get(key);
    const fresh = !prev || now - prev.last > this.#windowMs;
    const observed: Observed = fresh
      ? { name: this.#eventName(o.name, now), count: 1, firstTimestamp: ts, last: now }
      : { ...prev, count: prev.count + 1, last: now };
    this.#observed.set(key, observed);
    const event: EventObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: observed.name, namespace },
      involvedObject: { ...o },
      reason: input.reason,
      message,
      type: input.type,
      source: this.host ? { component: this.component, host: this.host } : { component: this.component },
      firstTimestamp: observed.firstTimestamp,
      lastTimestamp: ts,
      count: observed.count,
      reportingComponent: this.component,
      reportingInstance: this.host ?? this.component,
    };
    if (fresh) return { action: 'create', key, event };
    return { action: 'patch', key, event, patch: { count: observed.count, lastTimestamp: ts, message } };
  }

  /** Drops what is known about an Event (its write failed for good, or it was deleted). */
  forget(key: string): void {
    this.#observed.delete(key);
  }

  // `<object>.<hex time>` like Kubernetes, kept strictly increasing so two events in one
  // millisecond never collide.
  #eventName(objectName: string, now: number): string {
    // BigInt: epoch nanoseconds exceed 2^53, where +1 would be lost.
    let ns = BigInt(Math.floor(now)) * 1_000_000n;
    if (ns <= this.#lastNameNs) ns = this.#lastNameNs + 1n;
    this.#lastNameNs = ns;
    return `${objectName}.${ns.toString(16)}`;
  }
}

function validateInput(input: EventInput): void {
  if (!input.involvedObject?.name) throw new Error('event involvedObject.name: must be set');
  if (!input.involvedObject.kind) throw new Error(`event involvedObject.kind: must be set (object ${input.involvedObject.name})`);
  if (input.type !== 'Normal' && input.type !== 'Warning') throw new Error(`event type: must be Normal or Warning, got ${JSON.stringify(input.type)}`);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(input.reason)) throw new Error(`event reason: must be UpperCamelCase, got ${JSON.stringify(input.reason)}`);
}

/** The involvedObject reference of a Node. */
export function nodeReference(node: KubeObject): EventInput['involvedObject'] {
  return { kind: 'Node', apiVersion: 'v1', name: node.metadata.name, uid: node.metadata.uid ?? node.metadata.name };
}

export interface EventRecorderOptions extends CorrelatorOptions {
  client: KubeClient;
  /** Namespace for events about cluster-scoped objects (default `default`). */
  clusterNamespace?: string;
  /** Events waiting to be written; more are dropped with a log line (default 1000). */
  maxPending?: number;
  /**
   * Event writes in flight at once (default 4): a burst of new nodes (one Synced each) keeps up
   * with the controllers. Writes of one Event (a create and its count bumps) stay in order.
   */
  concurrency?: number;
  /**
   * Process-wide limit on event writes across all objects (as the kubelet's --event-qps and
   * --event-burst): the per-object spam filter alone lets a round over 100,000 failing nodes post
   * 100,000 events. Beyond it events are dropped, counted and summed up in one log line a minute.
   * None: no limit.
   */
  rate?: { qps: number; burst: number };
  clock?: Clock;
  logger?: Logger;
  /** Called for every event dropped (a metric), with why. */
  onDropped?: (reason: EventDropReason) => void;
}

/** Why an event was not written: the spam filter, the rate limit, a full queue, or a fenced write (the lease is lost). */
export type EventDropReason = 'spam' | 'rate' | 'full' | 'fenced';

/** Interval of the log line that sums up events dropped by the rate limit. */
const RATE_SUMMARY_MS = 60_000;

export interface EventRecorderStats {
  created: number;
  patched: number;
  droppedSpam: number;
  /** Dropped by the process-wide rate limit. */
  droppedRate: number;
  droppedFull: number;
  /** Dropped because a write was fenced: this process no longer holds the lease. */
  droppedFenced: number;
  failed: number;
  invalid: number;
}

/**
 * Records events without blocking: `event()` returns at once; background senders write them in
 * order, a few at a time, never two writes of the same Event at once (so a count bump never
 * overtakes the create it refers to). Failures are logged.
 */
export class EventRecorder {
  readonly #client: KubeClient;
  readonly #correlator: EventCorrelator;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #clusterNamespace: string;
  readonly #maxPending: number;
  readonly #concurrency: number;
  /** Waiting writes: `#pending[#head]` is the oldest (no O(n) shift per write). */
  #pending: Array<Extract<Correlation, { action: 'create' | 'patch' }>> = [];
  #head = 0;
  /** Correlation keys with a write in flight. */
  readonly #inFlight = new Set<string>();
  #sending: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #stopped = false;
  readonly stats: EventRecorderStats = { created: 0, patched: 0, droppedSpam: 0, droppedRate: 0, droppedFull: 0, droppedFenced: 0, failed: 0, invalid: 0 };
  readonly #onDropped: ((reason: EventDropReason) => void) | undefined;
  /** A write was fenced: the term is over, and nothing recorded for it is written any more. */
  #fenced = false;
  readonly #rate: TokenBucket | undefined;
  /** Rate-limited drops since the last summary line, and when that line was written. */
  #rateDropped = 0;
  #rateSummaryAt = 0;

  constructor(options: EventRecorderOptions) {
    this.#client = options.client;
    this.#correlator = new EventCorrelator(options);
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? silentLogger).child({ component: 'events' });
    this.#clusterNamespace = options.clusterNamespace ?? CLUSTER_EVENTS_NAMESPACE;
    this.#maxPending = options.maxPending ?? 1000;
    const concurrency = options.concurrency ?? 4;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`concurrency: must be an integer >= 1, got ${concurrency}`);
    this.#concurrency = concurrency;
    this.#rate = options.rate && new TokenBucket(options.rate.qps, options.rate.burst, this.#clock);
    this.#onDropped = options.onDropped;
  }

  /** Events recorded and not yet written. */
  get pending(): number {
    return this.#pending.length - this.#head + this.#inFlight.size;
  }

  /**
   * Records an event and returns at once. Never throws: API failures are logged later, and an
   * invalid event (bad reason or type, a programming error) is logged at error level and dropped,
   * since failing the caller's sync over an event would only make it retry forever.
   */
  event(involvedObject: EventInput['involvedObject'], type: EventType, reason: string, message: string): void {
    if (this.#stopped) return;
    if (this.#fenced) {
      this.#dropped('fenced');
      return;
    }
    const namespace = involvedObject?.namespace || this.#clusterNamespace;
    let c: Correlation;
    try {
      c = this.#correlator.correlate({ involvedObject, type, reason, message }, this.#clock.now(), namespace);
    } catch (err) {
      this.stats.invalid++;
      this.#log.error({ err, object: involvedObject?.name, reason }, 'invalid event dropped');
      return;
    }
    if (c.action === 'drop') {
      this.#dropped('spam');
      this.#log.debug({ object: involvedObject.name, reason }, 'event dropped by spam filter');
      return;
    }
    if (this.#rate && !this.#rate.tryTake()) {
      this.#dropped('rate');
      this.#rateDropped++;
      const now = this.#clock.now();
      if (now - this.#rateSummaryAt >= RATE_SUMMARY_MS) {
        this.#log.warn({ dropped: this.#rateDropped, qps: this.#rate.qps, burst: this.#rate.burst, lastObject: involvedObject.name, lastReason: reason }, 'events dropped by the process-wide event rate limit (the controller log has every warning)');
        this.#rateDropped = 0;
        this.#rateSummaryAt = now;
      }
      return;
    }
    if (this.#pending.length - this.#head >= this.#maxPending) {
      this.#dropped('full');
      this.#log.warn({ object: involvedObject.name, reason }, 'event queue full, dropping event');
      return;
    }
    this.#pending.push(c);
    this.#sending ??= this.#drain();
    this.#wake?.();
  }

  #dropped(reason: EventDropReason, n = 1): void {
    const key = ({ spam: 'droppedSpam', rate: 'droppedRate', full: 'droppedFull', fenced: 'droppedFenced' } as const)[reason];
    this.stats[key] += n;
    for (let i = 0; i < n; i++) this.#onDropped?.(reason);
  }

  /**
   * A write was fenced: the lease is lost, and every later write of this term would be refused
   * the same way. What is queued is dropped now, and so is what is recorded from here on, with
   * one log line instead of a warning per event.
   */
  #fence(err: unknown, c: Extract<Correlation, { action: 'create' | 'patch' }>): void {
    if (this.#fenced) {
      this.#dropped('fenced');
      return;
    }
    this.#fenced = true;
    const queued = this.#pending.length - this.#head;
    this.#pending = [];
    this.#head = 0;
    this.#dropped('fenced', queued + 1);
    this.#log.warn({ err, dropped: queued + 1, object: c.event.involvedObject.name, reason: c.event.reason }, 'events dropped: writes are fenced (this process no longer holds the lease); events recorded from now on are dropped too');
  }

  /** Shorthand for events about a node. */
  nodeEvent(node: KubeObject, type: EventType, reason: string, message: string): void {
    this.event(nodeReference(node), type, reason, message);
  }

  /** Resolves when every event recorded so far was written (or failed). */
  async flush(): Promise<void> {
    while (this.#sending) await this.#sending;
  }

  /** Stops accepting events and waits for pending ones. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.flush();
  }

  async #drain(): Promise<void> {
    const running = new Set<Promise<void>>();
    try {
      for (;;) {
        // Start writes in order while there is room; the oldest waits (and with it the ones
        // behind it) while a write of the same Event is in flight.
        while (running.size < this.#concurrency && this.#head < this.#pending.length) {
          const c = this.#pending[this.#head] as Extract<Correlation, { action: 'create' | 'patch' }>;
          if (this.#inFlight.has(c.key)) break;
          this.#pending[this.#head] = undefined as never;
          this.#head++;
          this.#inFlight.add(c.key);
          const p: Promise<void> = this.#write(c).finally(() => {
            this.#inFlight.delete(c.key);
            running.delete(p);
            this.#wake?.();
          });
          running.add(p);
        }
        if (this.#head === this.#pending.length) {
          this.#pending = [];
          this.#head = 0;
        } else if (this.#head > 1024 && this.#head * 2 > this.#pending.length) {
          this.#pending = this.#pending.slice(this.#head);
          this.#head = 0;
        }
        if (running.size === 0) break;
        // Wait for a write to finish or a new event to arrive.
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
      }
    } finally {
      this.#sending = undefined;
    }
  }

  async #write(c: Extract<Correlation, { action: 'create' | 'patch' }>): Promise<void> {
    const namespace = c.event.metadata.namespace as string;
    try {
      if (c.action === 'patch') {
        try {
          await this.#client.patch(EVENTS, c.event.metadata.name, c.patch, 'merge', { namespace });
          this.stats.patched++;
          return;
        } catch (err) {
          // Expired (events have a TTL) or never created: write it anew.
          if (!isNotFound(err)) throw err;
        }
      }
      try {
        await this.#client.create(EVENTS, c.event, { namespace });
        this.stats.created++;
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    } catch (err) {
      // A failed create must not leave later repeats patching an Event that does not exist.
      if (c.action === 'create') this.#correlator.forget(c.key);
      if (isFenced(err)) {
        this.#fence(err, c);
        return;
      }
      this.stats.failed++;
      this.#log.warn({ err, object: c.event.involvedObject.name, reason: c.event.reason }, 'cannot write event');
    }
  }
}
