import { describe, it, expect, afterEach } from 'vitest';
import { pino } from 'pino';
import { startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { COMBINED_PREFIX, EventCorrelator, EventRecorder, nodeReference, type Correlation, type EventInput } from '../../src/kube/events.js';
import { FencedError } from '../../src/kube/errors.js';
import { FakeClock } from '../../src/kube/clock.js';
import { EVENTS, type EventObject } from '../../src/kube/types.js';
import type { KubeClient as KubeClientType } from '../../src/kube/client.js';
import { makeNode } from '../kit/nodes.js';

const T0 = Date.UTC(2026, 10, 22, 2, 0, 0);
const node = (name: string) => makeNode({ name, uid: `uid-${name}` });
const ev = (name: string, reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal'): EventInput =>
  ({ involvedObject: nodeReference(node(name)), type, reason, message });

type Written = Extract<Correlation, { action: 'create' | 'patch' }>;
const written = (c: Correlation): Written => {
  if (c.action === 'drop') throw new Error('dropped');
  return c;
};

describe('EventCorrelator', () => {
  it('creates a complete core/v1 Event for a node, in the given namespace', () => {
    const c = written(new EventCorrelator({ host: 'ccm-0' }).correlate(ev('n1', 'Synced', 'Node synced successfully'), T0 + 1234, 'default'));
    expect(c.action).toBe('create');
    expect(c.event).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `n1.${(BigInt(T0 + 1234) * 1_000_000n).toString(16)}`, namespace: 'default' },
      involvedObject: { kind: 'Node', apiVersion: 'v1', name: 'n1', uid: 'uid-n1' },
      reason: 'Synced',
      message: 'Node synced successfully',
      type: 'Normal',
      source: { component: 'node-address-ccm', host: 'ccm-0' },
      firstTimestamp: '2026-11-22T02:00:01Z',
      lastTimestamp: '2026-11-22T02:00:01Z',
      count: 1,
      reportingComponent: 'node-address-ccm',
      reportingInstance: 'ccm-0',
    });
  });

  it('repeats within the window bump count on the same Event; after the window a new Event starts', () => {
    const c = new EventCorrelator();
    const first = written(c.correlate(ev('n1', 'Synced', 'ok'), T0, 'default'));
    const second = written(c.correlate(ev('n1', 'Synced', 'ok'), T0 + 60_000, 'default'));
    const third = written(c.correlate(ev('n1', 'Synced', 'ok'), T0 + 120_000, 'default'));
    expect([second.action, second.event.metadata.name, second.patch]).toEqual([
      'patch', first.event.metadata.name, { count: 2, lastTimestamp: '2026-11-22T02:01:00Z', message: 'ok' },
    ]);
    expect([third.patch?.count, third.event.firstTimestamp]).toEqual([3, '2026-11-22T02:00:00Z']);
    const later = written(c.correlate(ev('n1', 'Synced', 'ok'), T0 + 120_000 + 600_001, 'default'));
    expect(later.action).toBe('create');
    expect(later.event.metadata.name).not.toBe(first.event.metadata.name);
  });

  it.each([
    ['another object', ev('n2', 'Synced', 'ok')],
    ['another reason', ev('n1', 'Other', 'ok')],
    ['another type', ev('n1', 'Synced', 'ok', 'Warning')],
    ['another message', ev('n1', 'Synced', 'different')],
  ])('%s is a separate Event', (_name, other) => {
    const c = new EventCorrelator();
    const a = written(c.correlate(ev('n1', 'Synced', 'ok'), T0, 'default'));
    const b = written(c.correlate(other, T0 + 1, 'default'));
    expect(b.action).toBe('create');
    expect(b.event.metadata.name).not.toBe(a.event.metadata.name);
  });

  it('combines similar events once maxSimilarEvents distinct messages were seen', () => {
    const c = new EventCorrelator({ maxSimilarEvents: 3 });
    const r = ['m1', 'm2', 'm3', 'm4', 'm1', 'm5'].map((m, i) => written(c.correlate(ev('n1', 'AddressesInvalid', m, 'Warning'), T0 + i, 'default')));
    expect(r.map((x) => [x.action, x.event.message])).toEqual([
      ['create', 'm1'],
      ['create', 'm2'],
      ['create', `${COMBINED_PREFIX}m3`],
      ['patch', `${COMBINED_PREFIX}m4`],
      ['patch', 'm1'], // a message that already has its own Event keeps it
      ['patch', `${COMBINED_PREFIX}m5`],
    ]);
    expect(r[5]?.event.metadata.name).toBe(r[2]?.event.metadata.name);
    expect(r[5]?.patch?.count).toBe(3);
  });

  it('spam filter: burst per object, then one per refill interval; other objects unaffected', () => {
    const c = new EventCorrelator({ spamBurst: 3, spamQps: 1 / 300 });
    const actions = Array.from({ length: 5 }, (_, i) => c.correlate(ev('n1', 'R', `m${i}`), T0, 'default').action);
    expect(actions).toEqual(['create', 'create', 'create', 'drop', 'drop']);
    expect(c.correlate(ev('n2', 'R', 'm'), T0, 'default').action).toBe('create');
    expect(c.correlate(ev('n1', 'R', 'x'), T0 + 299_000, 'default').action).toBe('drop');
    expect(c.correlate(ev('n1', 'R', 'x'), T0 + 300_000, 'default').action).toBe('create');
  });

  it('truncates long messages', () => {
    const c = written(new EventCorrelator().correlate(ev('n1', 'R', 'x'.repeat(5000)), T0, 'default'));
    expect(c.event.message?.length).toBe(1024);
    expect(c.event.message?.endsWith('...')).toBe(true);
  });

  it('gives unique names to events in the same millisecond', () => {
    const c = new EventCorrelator();
    const names = new Set(['a', 'b', 'c'].map((m) => written(c.correlate(ev('n1', 'R', m), T0, 'default')).event.metadata.name));
    expect(names.size).toBe(3);
  });

  it.each([
    [{ ...ev('n1', 'synced', 'm') }, 'reason'],
    [{ ...ev('n1', 'Synced', 'm'), type: 'Error' as 'Normal' }, 'type'],
    [{ ...ev('', 'Synced', 'm') }, 'involvedObject.name'],
  ])('rejects bad input %#, naming %s', (input, field) => {
    expect(() => new EventCorrelator().correlate(input, T0, 'default')).toThrow(field);
  });

  it.each([[{ spamQps: 0 }, 'spamQps'], [{ maxSimilarEvents: -1 }, 'maxSimilarEvents'], [{ windowMs: Number.NaN }, 'windowMs']])(
    'rejects options %o', (opts, field) => {
      expect(() => new EventCorrelator(opts)).toThrow(field);
    });
});

describe('EventRecorder against the API server double', () => {
  let api: ApiServerDouble;
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(clock = new FakeClock(T0)) {
    api = await startApiServerDouble();
    const client = new KubeClient(kubeConfigFromString(api.kubeconfig), { writeTimeoutMs: 500 });
    const rec = new EventRecorder({ client, clock, host: 'ccm-0' });
    cleanups.push(() => api.stop(), () => client.close(), () => rec.stop());
    const listEvents = async () => (await client.list<EventObject>(EVENTS, { namespace: 'default' })).items;
    return { client, rec, clock, listEvents };
  }

  it('creates once, then patches count and lastTimestamp', async () => {
    const { rec, clock, listEvents } = await setup();
    rec.nodeEvent(node('n1'), 'Normal', 'Synced', 'Node synced successfully');
    clock.advance(30_000);
    rec.nodeEvent(node('n1'), 'Normal', 'Synced', 'Node synced successfully');
    clock.advance(30_000);
    rec.nodeEvent(node('n1'), 'Normal', 'Synced', 'Node synced successfully');
    await rec.flush();
    const events = await listEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      involvedObject: { kind: 'Node', name: 'n1', uid: 'uid-n1' },
      reason: 'Synced', type: 'Normal', count: 3,
      firstTimestamp: '2026-11-22T02:00:00Z', lastTimestamp: '2026-11-22T02:01:00Z',
      source: { component: 'node-address-ccm' },
    });
    expect(api.count({ verb: 'create', resource: 'events' })).toBe(1);
    expect(api.count({ verb: 'patch', resource: 'events' })).toBe(2);
    expect(rec.stats).toMatchObject({ created: 1, patched: 2, failed: 0 });
  });

  it('a process-wide rate bounds the events of a round over 1,000 failing nodes; the rest are counted, not posted', async () => {
    api = await startApiServerDouble();
    const clock = new FakeClock(T0);
    const client = new KubeClient(kubeConfigFromString(api.kubeconfig), { writeTimeoutMs: 500 });
    const rec = new EventRecorder({ client, clock, host: 'ccm-0', rate: { qps: 2, burst: 10 } });
    cleanups.push(() => api.stop(), () => client.close(), () => rec.stop());
    for (let i = 0; i < 1000; i++) rec.nodeEvent(node(`n${i}`), 'Warning', 'ProvidedNodeIPInvalid', 'failed to get node address from cloud provider that matches ip: 10.0.0.1');
    await rec.flush();
    expect(api.count({ verb: 'create', resource: 'events' })).toBe(10);
    expect(rec.stats).toMatchObject({ created: 10, droppedRate: 990 });
    // Five seconds later the next round gets 2 × 5 more.
    clock.advance(5000);
    for (let i = 0; i < 1000; i++) rec.nodeEvent(node(`m${i}`), 'Warning', 'ProvidedNodeIPInvalid', 'failed to get node address from cloud provider that matches ip: 10.0.0.1');
    await rec.flush();
    expect(api.count({ verb: 'create', resource: 'events' })).toBe(20);
  });

  it('does not block the caller and recreates an Event that disappeared', async () => {
    const { client, rec, listEvents } = await setup();
    rec.nodeEvent(node('n1'), 'Warning', 'AddressesInvalid', 'no usable address');
    await rec.flush();
    const [first] = await listEvents();
    await client.delete(EVENTS, first?.metadata.name ?? '', { namespace: 'default' });
    rec.nodeEvent(node('n1'), 'Warning', 'AddressesInvalid', 'no usable address');
    await rec.flush();
    const events = await listEvents();
    expect(events.map((e) => e.count)).toEqual([2]);
  });

  it('drops an invalid event with a count instead of throwing into the caller', async () => {
    const { rec } = await setup();
    expect(() => rec.nodeEvent(node('n1'), 'Normal', 'not camel', 'x')).not.toThrow();
    await rec.flush();
    expect(rec.stats).toMatchObject({ invalid: 1, created: 0 });
    expect(api.count({ resource: 'events' })).toBe(0);
  });

  it('logs and counts failures instead of throwing', async () => {
    const { rec } = await setup();
    api.faults.inject({ resource: 'events', status: 500 });
    expect(() => rec.nodeEvent(node('n1'), 'Normal', 'Synced', 'ok')).not.toThrow();
    await rec.flush();
    expect(rec.stats.failed).toBe(1);
    rec.nodeEvent(node('n1'), 'Normal', 'Synced', 'ok');
    await rec.flush();
    // The failed create was forgotten, so the repeat tried a fresh create (which the fault failed).
    expect(api.count({ verb: 'create', resource: 'events' })).toBe(2);
    expect(rec.stats.failed).toBe(2);
  });

  it('a fenced write ends the term for events: what is queued and what comes later is dropped, counted, with one log line', async () => {
    api = await startApiServerDouble();
    const client = new KubeClient(kubeConfigFromString(api.kubeconfig), { writeTimeoutMs: 500 });
    const lines: Array<{ msg: string; dropped?: number }> = [];
    const logger = pino({ level: 'warn' }, { write: (l: string) => void lines.push(JSON.parse(l) as { msg: string; dropped?: number }) });
    const dropped: string[] = [];
    const rec = new EventRecorder({ client, host: 'ccm-0', concurrency: 1, logger, onDropped: (reason) => dropped.push(reason) });
    cleanups.push(() => api.stop(), () => client.close(), () => rec.stop());
    rec.nodeEvent(node('n0'), 'Normal', 'Synced', 'ok');
    await rec.flush();
    client.setWriteGate(() => { throw new FencedError('not the leader'); });
    for (let i = 1; i <= 30; i++) rec.nodeEvent(node(`n${i}`), 'Warning', 'InstanceNotFound', 'gone');
    await rec.flush();
    for (let i = 31; i <= 40; i++) rec.nodeEvent(node(`n${i}`), 'Warning', 'InstanceNotFound', 'gone');
    await rec.flush();
    expect(rec.stats).toMatchObject({ created: 1, failed: 0, droppedFenced: 40 });
    expect(dropped).toEqual(Array(40).fill('fenced'));
    expect(lines.map((l) => l.msg)).toEqual(['events dropped: writes are fenced (this process no longer holds the lease); events recorded from now on are dropped too']);
    expect(api.count({ verb: 'create', resource: 'events' })).toBe(1);
  });
});

describe('EventRecorder write concurrency', () => {
  /** A client whose event writes stay open until the test releases them. */
  function heldClient() {
    const calls: Array<{ verb: 'create' | 'patch'; name: string; release: () => void }> = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const hold = (verb: 'create' | 'patch', name: string) => new Promise<unknown>((resolve) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      calls.push({ verb, name, release: () => { inFlight--; resolve({}); } });
    });
    const client = {
      create: (_r: unknown, obj: EventObject) => hold('create', obj.involvedObject.name ?? ''),
      patch: (_r: unknown, name: string) => hold('patch', name.split('.')[0] ?? ''),
    } as unknown as KubeClientType;
    return { client, calls, maxInFlight: () => maxInFlight, inFlight: () => inFlight };
  }
  const settle = () => new Promise((r) => setImmediate(r));

  it('writes a burst of events for different nodes a few at a time, bounded by the concurrency', async () => {
    const h = heldClient();
    const rec = new EventRecorder({ client: h.client, concurrency: 3, clock: new FakeClock(T0) });
    for (let i = 0; i < 10; i++) rec.nodeEvent(node(`n${i}`), 'Normal', 'Synced', 'Node synced successfully');
    await settle();
    expect(h.inFlight()).toBe(3);
    while (h.calls.some((c) => c.release !== noop)) {
      for (const c of h.calls) {
        const r = c.release;
        c.release = noop;
        r();
      }
      await settle();
    }
    await rec.flush();
    expect(h.calls.map((c) => c.name)).toEqual(Array.from({ length: 10 }, (_, i) => `n${i}`));
    expect(h.maxInFlight()).toBe(3);
    expect(rec.stats.created).toBe(10);
  });

  it('never sends a count bump before the create of the same Event has finished', async () => {
    const h = heldClient();
    const clock = new FakeClock(T0);
    const rec = new EventRecorder({ client: h.client, concurrency: 4, clock });
    rec.nodeEvent(node('n1'), 'Normal', 'Synced', 'ok');
    clock.advance(1000);
    rec.nodeEvent(node('n1'), 'Normal', 'Synced', 'ok');
    rec.nodeEvent(node('n2'), 'Normal', 'Synced', 'ok');
    await settle();
    // The repeat of n1 waits for its create (and, in order, n2 waits behind it).
    expect(h.calls.map((c) => `${c.verb}:${c.name}`)).toEqual(['create:n1']);
    h.calls[0]!.release();
    await settle();
    expect(h.calls.map((c) => `${c.verb}:${c.name}`)).toEqual(['create:n1', 'patch:n1', 'create:n2']);
    for (const c of h.calls.slice(1)) c.release();
    await rec.flush();
    expect(rec.stats).toMatchObject({ created: 2, patched: 1, failed: 0 });
  });

  it('refuses a concurrency below one', () => {
    expect(() => new EventRecorder({ client: heldClient().client, concurrency: 0 })).toThrow(/concurrency/);
  });
});

const noop = (): void => undefined;
