// Leader election on a coordination.k8s.io/v1 Lease with client-go's rules, plus fencing: writes are
// allowed only while the last successful renew is younger than the renew deadline, a leader that
// misses the deadline stops at once, and no controller starts while an old leader's write (bounded
// by the write timeout) could still land. A lease taken over after it expired needs no wait for
// that: the old holder's last write timed out before its lease did (write timeout < lease
// duration − renew deadline, checked below). A released, created or re-acquired lease waits one
// write timeout: a leader that released its lease aborted its calls, and an aborted request may
// still reach the server.
import { realClock, type Clock, type ClockTimer } from './clock.js';
import type { KubeClient, WriteGate } from './client.js';
import { FencedError, isAlreadyExists, isConflict, isNotFound } from './errors.js';
import { formatMicroTime } from './time.js';
import { LEASES, type LeaseObject } from './types.js';
import { silentLogger, type Logger } from '../log.js';

export interface LeaderCallbacks {
  /** Called once leading (after the takeover delay); `signal` aborts the moment leadership ends. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called once when leadership ends (lost or cancelled). A lost leader should exit non-zero. */
  onStoppedLeading?(): void;
  /** Called when a different holder is observed (including this process). */
  onNewLeader?(identity: string): void;
}

/** Told when this process starts and stops holding the lease, and each Lease it reads (leader-metrics.ts). */
export interface LeaderMetrics {
  leading(on: boolean): void;
  observedTransitions(n: number): void;
}

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  /** Unique per process (hostname plus a random suffix), so a restarted process is a new holder. */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Clear the lease on cancellation so a successor need not wait for expiry. */
  releaseOnCancel?: boolean;
  /**
   * Wait after acquiring a lease that had not expired under another holder (released, created,
   * ours already) before controllers start (default: the client's write timeout).
   */
  takeoverDelayMs?: number;
  callbacks: LeaderCallbacks;
  metrics?: LeaderMetrics;
  clock?: Clock;
  logger?: Logger;
  random?: () => number;
}

export type LeadershipEnd = 'cancelled' | 'lost';

type Attempt = 'acquired' | 'held-by-other' | 'failed';

/** How the lease came to this process: only `expired` needs no takeover delay. */
export type Acquisition = 'expired' | 'released' | 'created' | 'renewed';

// client-go's JitterFactor for the acquire loop.
const JITTER = 1.2;

export class LeaderElector {
  readonly #o: Required<Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'takeoverDelayMs'>> & LeaderElectionOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #random: () => number;
  #running = false;
  #leading = false;
  #lastRenew = 0;
  #observedKey = '';
  #observedTime = 0;
  #observedHolder = '';
  #deadlineTimer: ClockTimer | undefined;
  #leaderAbort: AbortController | undefined;
  #stoppedCalled = false;
  /** How the last 'acquired' attempt got the lease. */
  #acquisition: Acquisition = 'created';

  constructor(options: LeaderElectionOptions) {
    const leaseDurationMs = options.leaseDurationMs ?? 15_000;
    const renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    const retryPeriodMs = options.retryPeriodMs ?? 2_000;
    const takeoverDelayMs = options.takeoverDelayMs ?? options.client.writeTimeoutMs;
    for (const [f, v] of [['leaseDurationMs', leaseDurationMs], ['renewDeadlineMs', renewDeadlineMs], ['retryPeriodMs', retryPeriodMs]] as const) {
      if (!Number.isFinite(v) || v <= 0) throw new Error(`leader election ${f}: must be > 0, got ${v}`);
    }
    if (!(takeoverDelayMs >= 0)) throw new Error(`leader election takeoverDelayMs: must be >= 0, got ${takeoverDelayMs}`);
    if (leaseDurationMs <= renewDeadlineMs) {
      throw new Error(`leader election: leaseDurationMs (${leaseDurationMs}) must be greater than renewDeadlineMs (${renewDeadlineMs})`);
    }
    if (renewDeadlineMs <= JITTER * retryPeriodMs) {
      throw new Error(`leader election: renewDeadlineMs (${renewDeadlineMs}) must be greater than ${JITTER} × retryPeriodMs (${retryPeriodMs})`);
    }
    if (options.client.writeTimeoutMs >= leaseDurationMs - renewDeadlineMs) {
      throw new Error(
        `leader election: the write timeout (${options.client.writeTimeoutMs} ms) must be shorter than leaseDurationMs − renewDeadlineMs ` +
        `(${leaseDurationMs - renewDeadlineMs} ms), or an old leader's write could land after a new leader took over`,
      );
    }
    if (!options.identity) throw new Error('leader election identity: must be a non-empty string');
    if (!options.name) throw new Error('leader election lease name: must be a non-empty string');
    if (!options.namespace) throw new Error('leader election lease namespace: must be a non-empty string');
    this.#o = { ...options, leaseDurationMs, renewDeadlineMs, retryPeriodMs, takeoverDelayMs };
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? silentLogger).child({ lease: `${options.namespace}/${options.name}`, identity: options.identity });
    this.#random = options.random ?? Math.random;
  }

  /** Whether this process holds the lease and the renew deadline has not passed. */
  isLeader(): boolean {
    return this.#leading && this.#clock.now() < this.#lastRenew + this.#o.renewDeadlineMs;
  }

  /** The last observed holder ('' if none). */
  leader(): string {
    return this.#observedHolder;
  }

  /** Epoch ms after which this process must not start a write; undefined when not leading. */
  writeDeadline(): number | undefined {
    return this.#leading ? this.#lastRenew + this.#o.renewDeadlineMs : undefined;
  }

  /** The fencing check to install with KubeClient.setWriteGate: throws unless leading, returns ms left. */
  readonly writeGate: WriteGate = () => {
    const deadline = this.writeDeadline();
    const left = deadline === undefined ? 0 : deadline - this.#clock.now();
    if (left <= 0) throw new FencedError(`not the leader of lease ${this.#o.namespace}/${this.#o.name}: writes are fenced`);
    return left;
  };

  /**
   * Campaigns until leading, runs the callbacks and keeps renewing. Resolves with 'lost' when a renew
   * missed the deadline or another holder took over, 'cancelled' when `signal` aborted.
   */
  async run(signal: AbortSignal = new AbortController().signal): Promise<LeadershipEnd> {
    if (this.#running) throw new Error('leader election: run() is already active');
    this.#running = true;
    this.#stoppedCalled = false;
    try {
      this.#log.info('waiting to acquire the lease');
      while (!signal.aborted) {
        const r = await this.#tryAcquireOrRenew(signal, this.#o.renewDeadlineMs);
        if (r === 'acquired') break;
        await this.#sleep(this.#o.retryPeriodMs * (1 + JITTER * this.#random()), signal);
      }
      if (signal.aborted) return 'cancelled';
      return await this.#lead(signal);
    } finally {
      this.#running = false;
    }
  }

  async #lead(signal: AbortSignal): Promise<LeadershipEnd> {
    this.#leading = true;
    this.#o.metrics?.leading(true);
    const leaderAbort = new AbortController();
    this.#leaderAbort = leaderAbort;
    this.#armDeadline();
    const delayMs = this.#acquisition === 'expired' ? 0 : this.#o.takeoverDelayMs;
    this.#log.info({ takeoverDelayMs: delayMs, from: this.#acquisition }, 'acquired the lease');
    let lost = false;
    void (async () => {
      // Let any write a previous leader had in flight finish (or time out) first.
      await this.#sleep(delayMs, leaderAbort.signal);
      if (leaderAbort.signal.aborted) return;
      try {
        await this.#o.callbacks.onStartedLeading(leaderAbort.signal);
      } catch (err) {
        this.#log.error({ err }, 'onStartedLeading failed');
      }
    })();
    const both = AbortSignal.any([signal, leaderAbort.signal]);
    while (!both.aborted) {
      await this.#sleep(this.#o.retryPeriodMs, both);
      if (both.aborted) break;
      const left = this.#lastRenew + this.#o.renewDeadlineMs - this.#clock.now();
      const r = await this.#tryAcquireOrRenew(both, Math.max(1, left));
      if (r === 'held-by-other') {
        this.#log.error({ holder: this.#observedHolder }, 'the lease is held by another process');
        lost = true;
        break;
      }
    }
    lost ||= !signal.aborted;
    this.#stepDown();
    if (!lost && this.#o.releaseOnCancel) await this.#release();
    this.#log.info({ reason: lost ? 'lost' : 'cancelled' }, 'stopped leading');
    return lost ? 'lost' : 'cancelled';
  }

  #armDeadline(): void {
    this.#deadlineTimer?.cancel();
    const at = this.#lastRenew + this.#o.renewDeadlineMs;
    this.#deadlineTimer = this.#clock.setTimer(() => {
      if (!this.#leading) return;
      this.#log.error({ renewDeadlineMs: this.#o.renewDeadlineMs }, 'failed to renew the lease before the renew deadline; stopping all writes');
      this.#stepDown();
    }, at - this.#clock.now());
  }

  /** Closes the write gate and stops the controllers, once. */
  #stepDown(): void {
    this.#leading = false;
    this.#o.metrics?.leading(false);
    this.#deadlineTimer?.cancel();
    this.#leaderAbort?.abort();
    if (!this.#stoppedCalled) {
      this.#stoppedCalled = true;
      try {
        this.#o.callbacks.onStoppedLeading?.();
      } catch (err) {
        this.#log.error({ err }, 'onStoppedLeading failed');
      }
    }
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        timer.cancel();
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.#clock.setTimer(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  #observe(lease: LeaseObject): void {
    const spec = lease.spec ?? {};
    const key = JSON.stringify([spec.holderIdentity ?? '', spec.leaseDurationSeconds, spec.acquireTime, spec.renewTime, spec.leaseTransitions]);
    this.#o.metrics?.observedTransitions(spec.leaseTransitions ?? 0);
    // Expiry is judged by when *we* saw the record change, not by its renewTime: clocks differ.
    if (key !== this.#observedKey) {
      this.#observedKey = key;
      this.#observedTime = this.#clock.now();
    }
    const holder = spec.holderIdentity ?? '';
    if (holder !== this.#observedHolder) {
      this.#observedHolder = holder;
      if (holder) {
        this.#log.info({ holder }, 'new leader observed');
        try {
          this.#o.callbacks.onNewLeader?.(holder);
        } catch (err) {
          this.#log.error({ err }, 'onNewLeader failed');
        }
      }
    }
  }

  async #tryAcquireOrRenew(signal: AbortSignal, timeoutMs: number): Promise<Attempt> {
    const { client, namespace, name, identity } = this.#o;
    const sentAt = this.#clock.now();
    const now = formatMicroTime(sentAt);
    const leaseDurationSeconds = Math.ceil(this.#o.leaseDurationMs / 1000);
    const call = { namespace, signal, timeoutMs, ungated: true };
    let lease: LeaseObject;
    try {
      lease = await client.get<LeaseObject>(LEASES, name, call);
    } catch (err) {
      if (!isNotFound(err)) {
        this.#log.warn({ err }, 'cannot read the lease');
        return 'failed';
      }
      try {
        const created = await client.create<LeaseObject>(LEASES, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
        }, call);
        this.#observe(created);
        this.#renewed(sentAt);
        this.#acquisition = 'created';
        return 'acquired';
      } catch (err2) {
        // Losing the create to another replica that started at the same time is no trouble: the
        // next try reads its Lease. Anything else is, and is said as a warning, as client-go logs
        // it as an error: a 403 here is the RBAC Role without `create leases`, and no replica
        // will ever lead (test/realserver/rbac-rules.test.ts).
        if (isAlreadyExists(err2)) this.#log.info({ err: err2 }, 'the lease was created meanwhile by another replica');
        else this.#log.warn({ err: err2 }, 'cannot create the lease');
        return 'failed';
      }
    }
    this.#observe(lease);
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const mine = holder === identity;
    const durationMs = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    if (!mine && holder !== '' && this.#observedTime + durationMs > this.#clock.now()) {
      return 'held-by-other';
    }
    try {
      const updated = await client.update<LeaseObject>(LEASES, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { ...lease.metadata, name, namespace },
        spec: {
          ...spec,
          holderIdentity: identity,
          leaseDurationSeconds,
          acquireTime: mine && spec.acquireTime ? spec.acquireTime : now,
          renewTime: now,
          leaseTransitions: mine ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
        },
      }, call);
      this.#observe(updated);
      this.#renewed(sentAt);
      // Expired: another holder's record went unchanged for its whole duration, as we saw it. Its
      // last renew was sent before we saw that record, so its writes stopped a renew deadline
      // after, and the last of them timed out a write timeout later, before the lease expired.
      this.#acquisition = mine ? 'renewed' : holder === '' ? 'released' : 'expired';
      return 'acquired';
    } catch (err) {
      if (isConflict(err)) this.#log.debug('lease changed meanwhile (conflict)');
      else this.#log.warn({ err }, 'cannot update the lease');
      return 'failed';
    }
  }

  #renewed(sentAt: number): void {
    // Counted from before the request went out: observers may see it any time after.
    this.#lastRenew = sentAt;
    if (this.#leading) this.#armDeadline();
  }

  async #release(): Promise<void> {
    const { client, namespace, name, identity } = this.#o;
    try {
      const lease = await client.get<LeaseObject>(LEASES, name, { namespace, ungated: true, timeoutMs: this.#o.renewDeadlineMs });
      if (lease.spec?.holderIdentity !== identity) return;
      const now = formatMicroTime(this.#clock.now());
      await client.update<LeaseObject>(LEASES, {
        ...lease,
        // client-go's release: no holder, 1 s duration, so a successor takes over almost at once.
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now },
      }, { namespace, ungated: true, timeoutMs: this.#o.renewDeadlineMs });
      this.#log.info('released the lease');
    } catch (err) {
      this.#log.warn({ err }, 'cannot release the lease');
    }
  }
}
