// A supervised list+watch (a "reflector" with its cache): lists in pages, watches from the list's
// resourceVersion with bookmarks, keeps a cache by name, re-watches when a watch ends, relists on
// 410 Gone and reports the differences as events (a name listed with a new UID as a delete and an
// add: an object is its UID), restarts with jittered backoff after errors, and restarts a watch
// that went silent (no event, not even a bookmark) for too long.
import { realClock, type Clock, type ClockTimer } from './clock.js';
import type { KubeClient } from './client.js';
import { TypedEmitter } from './emitter.js';
import { ApiError, isGone } from './errors.js';
import { Backoff, type BackoffOptions } from './ratelimit.js';
import type { KubeObject, ResourceType, Status } from './types.js';
import { silentLogger, type Logger } from '../log.js';
import { abortReason } from '../util/abort.js';
import { Watchdog } from './watchdog.js';

export interface DeleteInfo {
  /** The delete was inferred from a relist, so the object's final state is unknown. */
  finalStateUnknown: boolean;
}

export interface WatcherEvents<T> {
  add: [obj: T];
  update: [obj: T, old: T];
  delete: [obj: T, info: DeleteInfo];
  /** A list finished and the cache matches it; `initial` for the first one. */
  synced: [info: { initial: boolean; resourceVersion: string; count: number }];
  /** A list or watch failed; the watcher retries after `retryInMs`. */
  error: [err: unknown, info: { retryInMs: number }];
  /** A relist starts (watch expired, forced, …). */
  relist: [reason: string];
}

export interface WatcherOptions<T extends KubeObject = KubeObject> {
  client: KubeClient;
  resource: ResourceType;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size of lists (default 500). */
  pageSize?: number;
  /**
   * Applied to every object as it arrives (each LIST page, each watch event) before it is cached:
   * keeps only what the controllers read, so the cache holds small objects (client-go's
   * SetTransform). Must not return the input's dropped parts.
   */
  transform?: (obj: T) => T;
  /**
   * Called after each page of a LIST is cached (its whole objects are garbage then): the run
   * process checks its heap budget there, since a page parsed on a fast machine can come sooner
   * than the budget's timer can fire (docs/benchmarks.md, "Where the memory goes").
   */
  afterListPage?: () => void;
  /** Restart a watch after this long without any event or bookmark (default 90 s). */
  staleAfterMs?: number;
  /** Server-side watch timeout in seconds; default random 300–600 so watches do not all end together. */
  watchTimeoutSeconds?: number;
  /** Restart backoff (default 800 ms → 30 s, ×2, 20 % jitter). */
  backoff?: BackoffOptions;
  clock?: Clock;
  logger?: Logger;
}

export class WatcherStoppedError extends Error {
  override name = 'WatcherStoppedError';
}

/** The watch went silent for longer than staleAfterMs. */
export class StaleWatchError extends Error {
  override name = 'StaleWatchError';
}

function keyOf(obj: KubeObject): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

export class Watcher<T extends KubeObject> {
  readonly #opts: WatcherOptions<T>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #backoff: Backoff;
  readonly #events: TypedEmitter<WatcherEvents<T>>;
  readonly #cache = new Map<string, T>();
  readonly #staleAfterMs: number;
  #resourceVersion = '';
  #needList = true;
  #goneStreak = 0;
  /** The last list/watch failure, until a list succeeds or the watch delivers something again. */
  #failure: string | undefined;
  #relistReason = '';
  #synced = false;
  #stopped = false;
  #started = false;
  #watchAbort: AbortController | undefined;
  #listAbort: AbortController | undefined;
  #sleep: { timer: ClockTimer; wake: () => void } | undefined;
  #loop: Promise<void> | undefined;
  #resolveSynced!: () => void;
  #rejectSynced!: (err: Error) => void;
  #relistWaiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  #versionWaiters: Array<{ target: bigint; done: (ok: boolean) => void }> = [];
  /** Resolves after the first successful list; rejects if stopped before. */
  readonly synced: Promise<void>;

  constructor(options: WatcherOptions<T>) {
    this.#opts = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? silentLogger).child({ watcher: options.resource.plural });
    this.#backoff = new Backoff(options.backoff ?? { initialMs: 800, maxMs: 30_000 });
    this.#staleAfterMs = options.staleAfterMs ?? 90_000;
    if (!(this.#staleAfterMs > 0)) throw new Error(`staleAfterMs: must be > 0, got ${options.staleAfterMs}`);
    if (options.pageSize !== undefined && !(Number.isInteger(options.pageSize) && options.pageSize > 0)) {
      throw new Error(`pageSize: must be a positive integer, got ${options.pageSize}`);
    }
    this.#events = new TypedEmitter((event, err) => this.#log.error({ err, event }, 'watcher listener threw'));
    this.synced = new Promise<void>((resolve, reject) => {
      this.#resolveSynced = resolve;
      this.#rejectSynced = reject;
    });
    // Callers that never await `synced` must not see an unhandled rejection on stop().
    this.synced.catch(() => {});
  }

  on<K extends keyof WatcherEvents<T>>(event: K, listener: (...args: WatcherEvents<T>[K]) => void): () => void {
    return this.#events.on(event, listener);
  }

  /** Starts listing and watching in the background. */
  start(): this {
    if (this.#started) throw new Error(`watcher ${this.#opts.resource.plural}: already started`);
    this.#started = true;
    this.#loop = this.#run();
    return this;
  }

  /** Stops watching; the cache keeps its last contents. */
  async stop(): Promise<void> {
    if (this.#stopped) return this.#loop;
    this.#stopped = true;
    this.#watchAbort?.abort();
    this.#listAbort?.abort();
    this.#wake();
    if (!this.#synced) this.#rejectSynced(new WatcherStoppedError(`watcher ${this.#opts.resource.plural}: stopped before first sync`));
    for (const w of this.#relistWaiters.splice(0)) w.reject(new WatcherStoppedError('watcher stopped'));
    for (const w of [...this.#versionWaiters]) w.done(false);
    await this.#loop;
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  /**
   * Why the watcher is not in contact with the API server (its last list or watch failed and
   * nothing succeeded since), or undefined when it is. For readiness.
   */
  connectionProblem(): string | undefined {
    return this.#failure;
  }

  /** The cached objects (a snapshot array; objects are shared, do not mutate). */
  list(): T[] {
    return [...this.#cache.values()];
  }

  /** A cached object by name (namespaced resources: also pass the namespace). */
  get(name: string, namespace?: string): T | undefined {
    return this.#cache.get(namespace ? `${namespace}/${name}` : name);
  }

  size(): number {
    return this.#cache.size;
  }

  /** The resourceVersion the cache is current to. */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /**
   * Resolves true once the cache is current to `rv` or later (through events, bookmarks or a
   * list), false when `timeoutMs` passes first, `signal` aborts, the watcher stops, or the two
   * versions are not both integers. resourceVersions are opaque to clients; kube-apiserver's are
   * etcd revisions, and where that reading fails the caller lists instead, so a wrong reading can
   * only cost a LIST, never a stale decision.
   */
  waitForResourceVersion(rv: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const target = revision(rv);
    if (target === undefined || this.#stopped || signal?.aborted) return Promise.resolve(false);
    if (this.#currentTo(target)) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean): void => {
        timer.cancel();
        signal?.removeEventListener('abort', onAbort);
        this.#versionWaiters = this.#versionWaiters.filter((w) => w !== waiter);
        resolve(ok);
      };
      const waiter = { target, done };
      const onAbort = (): void => done(false);
      const timer = this.#clock.setTimer(() => done(false), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#versionWaiters.push(waiter);
    });
  }

  #currentTo(target: bigint): boolean {
    const now = revision(this.#resourceVersion);
    return now !== undefined && now >= target;
  }

  /** The cache's version moved: wake whoever waits for it. */
  #advanced(): void {
    if (this.#versionWaiters.length === 0) return;
    for (const w of [...this.#versionWaiters]) if (this.#currentTo(w.target)) w.done(true);
  }

  /**
   * Lists again from the API server (a consistent read) and resolves once the cache matches it.
   * A new leader uses this so decisions see every write made by the previous one. Aborting
   * `signal` gives up waiting (rejects with its reason); the watcher itself keeps running.
   */
  relist(reason = 'requested', signal?: AbortSignal): Promise<void> {
    if (this.#stopped) return Promise.reject(new WatcherStoppedError('watcher stopped'));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#relistWaiters = this.#relistWaiters.filter((w) => w !== waiter);
        reject(abortReason(signal as AbortSignal));
      };
      const waiter = {
        resolve: () => { signal?.removeEventListener('abort', onAbort); resolve(); },
        reject: (err: Error) => { signal?.removeEventListener('abort', onAbort); reject(err); },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#relistWaiters.push(waiter);
      this.#scheduleRelist(reason);
      this.#watchAbort?.abort();
      this.#wake();
    });
  }

  #scheduleRelist(reason: string): void {
    this.#needList = true;
    this.#relistReason = reason;
  }

  #wake(): void {
    const s = this.#sleep;
    this.#sleep = undefined;
    s?.timer.cancel();
    s?.wake();
  }

  #delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#clock.setTimer(() => {
        this.#sleep = undefined;
        resolve();
      }, ms);
      this.#sleep = { timer, wake: resolve };
    });
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      try {
        if (this.#needList) await this.#listAndReplace();
        // A relist may have been requested while listing.
        if (this.#stopped || this.#needList) continue;
        const quick = await this.#watchOnce();
        // A server that ends watches at once would otherwise make us spin.
        if (quick && !this.#needList && !this.#stopped) await this.#delay(this.#backoff.next());
      } catch (err) {
        if (this.#stopped) break;
        if (isGone(err)) {
          this.#scheduleRelist('watch expired (410 Gone)');
          this.#log.info({ resourceVersion: this.#resourceVersion }, 'watch expired, relisting');
          // The first expiry relists at once; expiring again right after a relist means something is
          // off (a lagging apiserver behind a load balancer), so slow down.
          if (this.#goneStreak++ > 0) await this.#delay(this.#backoff.next());
          continue;
        }
        const retryInMs = this.#backoff.next();
        this.#failure = err instanceof Error ? err.message : String(err);
        this.#log.warn({ err, retryInMs }, 'list/watch failed, retrying');
        this.#events.emit('error', err, { retryInMs });
        await this.#delay(retryInMs);
      }
    }
  }

  async #listAndReplace(): Promise<void> {
    const initial = !this.#synced;
    const waiters = this.#relistWaiters.splice(0);
    if (!initial) this.#events.emit('relist', this.#relistReason || 'relist');
    // Cleared before the request: a relist() asked for while this list is in flight sets it again,
    // because this list may predate the writes that caller wants to see.
    this.#needList = false;
    this.#relistReason = '';
    let result: { items: T[]; resourceVersion: string };
    try {
      const ac = new AbortController();
      this.#listAbort = ac;
      result = await this.#opts.client.listAll<T>(this.#opts.resource, {
        namespace: this.#opts.namespace,
        labelSelector: this.#opts.labelSelector,
        fieldSelector: this.#opts.fieldSelector,
        pageSize: this.#opts.pageSize ?? 500,
        signal: ac.signal,
        ...(this.#opts.transform ? { transform: this.#opts.transform } : {}),
        ...(this.#opts.afterListPage ? { afterPage: this.#opts.afterListPage } : {}),
      });
    } catch (err) {
      // Keep waiters for the retry.
      this.#needList = true;
      this.#relistWaiters.unshift(...waiters);
      throw err;
    }
    if (this.#stopped) {
      for (const w of waiters) w.reject(new WatcherStoppedError('watcher stopped'));
      return;
    }
    const fresh = new Map<string, T>();
    for (const obj of result.items) fresh.set(keyOf(obj), obj);
    // An object is its UID: a name listed with another UID than the cached one was deleted and
    // created again while no watch was open, so the cached object is gone (a delete) and the
    // listed one is new (an add), never an update of one into the other. Every delete goes out
    // before any add or update, so that what the gone objects held (pod CIDRs above all) is
    // given back before the listed objects' holdings are recorded.
    const removed: T[] = [];
    for (const [key, old] of this.#cache) {
      const now = fresh.get(key);
      if (!now || !sameIncarnation(old, now)) removed.push(old);
    }
    for (const old of removed) {
      this.#cache.delete(keyOf(old));
      this.#events.emit('delete', old, { finalStateUnknown: true });
    }
    for (const [key, obj] of fresh) {
      const old = this.#cache.get(key);
      this.#cache.set(key, obj);
      if (!old) this.#events.emit('add', obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.#events.emit('update', obj, old);
    }
    this.#resourceVersion = result.resourceVersion;
    this.#advanced();
    this.#failure = undefined;
    // After repeated 410s the backoff keeps growing until a watch delivers something again.
    if (this.#goneStreak === 0) this.#backoff.reset();
    this.#events.emit('synced', { initial, resourceVersion: result.resourceVersion, count: fresh.size });
    if (initial) {
      this.#synced = true;
      this.#resolveSynced();
    }
    for (const w of waiters) w.resolve();
  }

  /** One watch; returns true when it ended quickly without delivering anything. */
  async #watchOnce(): Promise<boolean> {
    const ac = new AbortController();
    this.#watchAbort = ac;
    let stale = false;
    const watchdog = new Watchdog(this.#clock, this.#staleAfterMs, () => {
      stale = true;
      ac.abort();
    });
    const started = this.#clock.now();
    let received = 0;
    try {
      const timeoutSeconds = this.#opts.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
      for await (const ev of this.#opts.client.watchResource<T>(this.#opts.resource, {
        namespace: this.#opts.namespace,
        labelSelector: this.#opts.labelSelector,
        fieldSelector: this.#opts.fieldSelector,
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
        signal: ac.signal,
      })) {
        watchdog.kick();
        if (ev.type !== 'ERROR') {
          received++;
          this.#failure = undefined;
        }
        this.#apply(ev.type, ev.object);
      }
    } finally {
      watchdog.stop();
    }
    if (stale && !this.#stopped && !this.#needList) {
      throw new StaleWatchError(`watch on ${this.#opts.resource.plural} silent for ${this.#staleAfterMs} ms, restarting`);
    }
    if (received > 0) {
      this.#backoff.reset();
      this.#goneStreak = 0;
    }
    return received === 0 && this.#clock.now() - started < 1000;
  }

  #apply(type: string, received: T): void {
    const obj = this.#opts.transform && (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') ? this.#opts.transform(received) : received;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED': {
        const key = keyOf(obj);
        let old = this.#cache.get(key);
        // A watch delivers a delete before the name's next object, so this only happens after a
        // cache replaced from elsewhere; read it as the relist does: the old object is gone.
        if (old && !sameIncarnation(old, obj)) {
          this.#cache.delete(key);
          this.#events.emit('delete', old, { finalStateUnknown: true });
          old = undefined;
        }
        this.#cache.set(key, obj);
        this.#resourceVersion = obj.metadata.resourceVersion ?? this.#resourceVersion;
        if (old) this.#events.emit('update', obj, old);
        else this.#events.emit('add', obj);
        this.#advanced();
        return;
      }
      case 'DELETED': {
        const key = keyOf(obj);
        this.#cache.delete(key);
        this.#resourceVersion = obj.metadata.resourceVersion ?? this.#resourceVersion;
        this.#events.emit('delete', obj, { finalStateUnknown: false });
        this.#advanced();
        return;
      }
      case 'BOOKMARK':
        this.#resourceVersion = obj.metadata?.resourceVersion ?? this.#resourceVersion;
        this.#advanced();
        return;
      case 'ERROR': {
        const status = obj as unknown as Status;
        throw new ApiError({
          code: status.code ?? 500,
          reason: status.reason,
          message: status.message ?? 'watch ERROR event',
          status,
          method: 'WATCH',
          path: this.#opts.resource.plural,
        });
      }
      default:
        this.#log.warn({ type }, 'ignoring unknown watch event type');
    }
  }
}

/**
 * The same object, not another one created under its name: their UIDs are equal. An object
 * without a UID (a transform that dropped it, a test's fixture) is taken for the same, as before
 * UIDs were compared; objects from an API server always carry one.
 */
function sameIncarnation(a: KubeObject, b: KubeObject): boolean {
  const x = a.metadata.uid;
  const y = b.metadata.uid;
  return x === undefined || y === undefined || x === y;
}

/** A resourceVersion read as an etcd revision; undefined when it is not a plain integer. */
function revision(rv: string): bigint | undefined {
  return /^[0-9]{1,30}$/.test(rv) ? BigInt(rv) : undefined;
}
