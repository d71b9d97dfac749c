import { describe, it, expect, afterEach } from 'vitest';
import { startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { FencedError } from '../../src/kube/errors.js';
import { LeaderElector, type LeaderElectionOptions } from '../../src/kube/leader.js';
import { LEASES, NODES, type LeaseObject } from '../../src/kube/types.js';
import { formatMicroTime, formatTime, parseTime } from '../../src/kube/time.js';
import { captureLog } from '../kit/log.js';
import { eventually } from '../kit/wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
// Short but proportioned like 15 s / 10 s / 2 s with a 4 s write timeout.
const TIMING = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };
const WRITE_TIMEOUT = 300;

let api: ApiServerDouble;

async function server(): Promise<ApiServerDouble> {
  api = await startApiServerDouble();
  cleanups.push(() => api.stop());
  return api;
}

function candidate(identity: string, extra: Partial<LeaderElectionOptions> = {}) {
  const client = new KubeClient(kubeConfigFromString(api.kubeconfig), { writeTimeoutMs: WRITE_TIMEOUT, userAgent: `ccm/${identity}` });
  const log: string[] = [];
  let leaderSignal: AbortSignal | undefined;
  let startedAt = 0;
  const { logger, find } = captureLog();
  const elector = new LeaderElector({
    logger,
    client,
    namespace: 'kube-system',
    name: 'node-address-ccm',
    identity,
    ...TIMING,
    callbacks: {
      onStartedLeading: (signal) => { leaderSignal = signal; startedAt = Date.now(); log.push('started'); },
      onStoppedLeading: () => log.push('stopped'),
      onNewLeader: (id) => log.push(`leader ${id}`),
    },
    ...extra,
  });
  client.setWriteGate(elector.writeGate);
  const ac = new AbortController();
  const result = elector.run(ac.signal);
  cleanups.push(async () => { ac.abort(); await result; client.close(); });
  /** The takeover delay and the kind of acquisition the "acquired the lease" line gave. */
  const acquired = () => find('acquired the lease').map((l) => [l.from, l.takeoverDelayMs]);
  return { client, elector, log, ac, result, signal: () => leaderSignal, startedAt: () => startedAt, acquired, find };
}

const readLease = (client: KubeClient) => client.get<LeaseObject>(LEASES, 'node-address-ccm', { namespace: 'kube-system' });

describe('time formats', () => {
  it.each([
    [0, '1970-01-01T00:00:00.000000Z', '1970-01-01T00:00:00Z'],
    [Date.UTC(2026, 10, 22, 2, 15, 7, 123), '2026-11-22T02:15:07.123000Z', '2026-11-22T02:15:07Z'],
  ])('%i → %s / %s', (ms, micro, time) => {
    expect(formatMicroTime(ms)).toBe(micro);
    expect(formatTime(ms)).toBe(time);
    expect(parseTime(micro)).toBe(Math.floor(ms));
  });

  it('rejects non-finite times and parses garbage as undefined', () => {
    expect(() => formatMicroTime(Number.NaN)).toThrow('time');
    expect(parseTime('yesterday')).toBeUndefined();
    expect(parseTime(undefined)).toBeUndefined();
  });
});

describe('LeaderElector options', () => {
  it.each([
    [{ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }, 4000, 'must be greater than renewDeadlineMs'],
    [{ renewDeadlineMs: 2000, retryPeriodMs: 2000 }, 400, '1.2 × retryPeriodMs'],
    [{ retryPeriodMs: 0 }, 4000, 'retryPeriodMs'],
    [{}, 5000, 'write timeout (5000 ms) must be shorter than leaseDurationMs − renewDeadlineMs (5000 ms)'],
    [{ identity: '' }, 4000, 'identity'],
  ])('%o with write timeout %i → %s', (opts, writeTimeoutMs, message) => {
    const client = new KubeClient(kubeConfigFromString(
      'apiVersion: v1\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:9", insecure-skip-tls-verify: true}}]\n' +
      'users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n'), { writeTimeoutMs });
    expect(() => new LeaderElector({ client, namespace: 'ns', name: 'l', identity: 'me', callbacks: { onStartedLeading: () => {} }, ...opts }))
      .toThrow(message);
  });
});

describe('LeaderElector against the API server double', () => {
  it('creates the lease with client-go fields and starts after the takeover delay', async () => {
    await server();
    const a = candidate('a');
    await eventually(() => a.log.includes('started'), { timeoutMs: 8000, what: 'leading' });
    const lease = await readLease(a.client);
    expect(lease.spec?.holderIdentity).toBe('a');
    expect(lease.spec?.leaseDurationSeconds).toBe(2);
    expect(lease.spec?.leaseTransitions).toBe(0);
    expect(lease.spec?.acquireTime).toMatch(MICRO);
    expect(lease.spec?.renewTime).toMatch(MICRO);
    expect(a.elector.isLeader()).toBe(true);
    const acquiredAt = parseTime(lease.spec?.acquireTime) ?? 0;
    expect(a.startedAt() - acquiredAt).toBeGreaterThanOrEqual(WRITE_TIMEOUT - 20);
    expect(a.acquired()).toEqual([['created', WRITE_TIMEOUT]]);
    expect(a.log.slice(0, 2)).toEqual(['leader a', 'started']);
    // Renewals move renewTime but keep acquireTime.
    const later = await eventually(async () => {
      const l = await readLease(a.client);
      expect(parseTime(l.spec?.renewTime) ?? 0).toBeGreaterThan(parseTime(lease.spec?.renewTime) ?? 0);
      return l;
    }, { timeoutMs: 8000, what: 'a renewal' });
    expect(later.spec?.acquireTime).toBe(lease.spec?.acquireTime);
    // The gate lets writes through while leading.
    expect(a.elector.writeGate()).toBeGreaterThan(0);
  });

  it('a Lease that cannot be created is a warning each try (a 403 from RBAC on a real server), then created once it can', async () => {
    await server();
    api.faults.inject({ resource: 'leases.coordination.k8s.io', verb: 'create', status: 500, count: 2 });
    const a = candidate('a');
    await eventually(() => a.log.includes('started'), { timeoutMs: 8000, what: 'leading' });
    // pino's warn is 40.
    expect(a.find('cannot create the lease').map((l) => l.level)).toEqual([40, 40]);
    expect(a.acquired()).toEqual([['created', WRITE_TIMEOUT]]);
  });

  it('only one of two candidates leads; release on cancel hands over quickly', async () => {
    await server();
    const a = candidate('a', { releaseOnCancel: true });
    await eventually(() => a.log.includes('started'), { timeoutMs: 8000, what: 'a leading' });
    const b = candidate('b');
    // Three retry periods: b has tried the held lease and must still not lead.
    await new Promise((r) => setTimeout(r, 600));
    expect(b.log).toEqual(['leader a']);
    expect(b.elector.isLeader()).toBe(false);
    expect(() => b.elector.writeGate()).toThrow(FencedError);
    const t0 = Date.now();
    a.ac.abort();
    expect(await a.result).toBe('cancelled');
    expect(a.log.at(-1)).toBe('stopped');
    expect(a.signal()?.aborted).toBe(true);
    await eventually(() => b.log.includes('started'), { timeoutMs: 8000, what: 'b leading' });
    // Released (1 s duration) instead of waiting out the 2 s lease.
    expect(Date.now() - t0).toBeLessThan(1500 + WRITE_TIMEOUT);
    const lease = await readLease(b.client);
    expect([lease.spec?.holderIdentity, lease.spec?.leaseTransitions]).toEqual(['b', 1]);
    // a aborted its calls when it released: an aborted write may still land, so b waits one write timeout.
    expect(b.startedAt() - (parseTime(lease.spec?.acquireTime) ?? 0)).toBeGreaterThanOrEqual(WRITE_TIMEOUT - 20);
    expect(b.acquired()).toEqual([['released', WRITE_TIMEOUT]]);
  });

  it('a leader that cannot renew stops writing by the renew deadline and reports lost', async () => {
    await server();
    const a = candidate('a');
    await eventually(() => a.log.includes('started'), { timeoutMs: 8000, what: 'leading' });
    const renewedAt = Date.now();
    api.faults.inject({ resource: 'leases.coordination.k8s.io', verb: ['get', 'update'], status: 500 });
    expect(await a.result).toBe('lost');
    const lostAfter = Date.now() - renewedAt;
    expect(lostAfter).toBeLessThanOrEqual(TIMING.renewDeadlineMs + 300); // timer slack on a busy machine
    expect(a.elector.isLeader()).toBe(false);
    expect(a.signal()?.aborted).toBe(true);
    expect(a.log.at(-1)).toBe('stopped');
    const err = await a.client.patch(NODES, 'n1', {}, 'merge').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FencedError);
  });

  it('tells its metrics when it starts and stops holding the lease, and the transitions of every lease read', async () => {
    await server();
    const seen = (): { leading: boolean[]; transitions: number[] } => ({ leading: [], transitions: [] });
    const am = seen();
    const bm = seen();
    const metrics = (m: ReturnType<typeof seen>) => ({ leading: (on: boolean) => m.leading.push(on), observedTransitions: (n: number) => m.transitions.push(n) });
    const a = candidate('a', { releaseOnCancel: true, metrics: metrics(am) });
    await eventually(() => a.log.includes('started'), { timeoutMs: 8000, what: 'a leading' });
    const b = candidate('b', { metrics: metrics(bm) });
    await eventually(() => bm.transitions.length > 0, { timeoutMs: 8000, what: 'b reads the lease' });
    expect(am.leading).toEqual([true]);
    expect(bm.leading).toEqual([]);
    a.ac.abort();
    expect(await a.result).toBe('cancelled');
    expect(am.leading).toEqual([true, false]);
    await eventually(() => b.log.includes('started'), { timeoutMs: 8000, what: 'b leading' });
    expect(bm.leading).toEqual([true]);
    expect(new Set(am.transitions)).toEqual(new Set([0]));
    // b read a's record (0), then wrote its own (1).
    expect(bm.transitions[0]).toBe(0);
    expect(bm.transitions.at(-1)).toBe(1);
  });

  it('a successor waits for the lease to expire when the old leader vanished, then increments transitions', async () => {
    await server();
    const a = candidate('a');
    await eventually(() => a.log.includes('started'), { timeoutMs: 8000, what: 'a leading' });
    // a can no longer reach the server at all (partition): only b's requests get through.
    api.faults.inject({ userAgent: 'ccm/a', status: 503 });
    const b = candidate('b');
    const t0 = Date.now();
    await eventually(() => b.log.includes('started'), { timeoutMs: 8000, what: 'b leading' });
    expect(await a.result).toBe('lost');
    // b observed a's record then had to wait a full lease duration.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(TIMING.leaseDurationMs - 250);
    const lease = await readLease(b.client);
    expect([lease.spec?.holderIdentity, lease.spec?.leaseTransitions]).toEqual(['b', 1]);
    // …and no takeover delay after it: a's writes stopped at its renew deadline and timed out
    // (one write timeout) before its lease expired.
    expect(b.acquired()).toEqual([['expired', 0]]);
  });
});
