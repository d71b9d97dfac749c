// The lifecycle loop over an in-memory node store and the fake provider: provider calls per
// period (batched, 5,000 nodes), what each answer leads to, conflicts, a provider that fails, and
// when a missing instance is trusted (the start-up grace period, two answers a period apart).
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { awsInstanceKey } from '../../../providers/aws/provider-id.js';
import { FakeProvider } from '../../../providers/fake/fake.js';
import { ApiError } from '../../../src/kube/errors.js';
import { CloudNodeLifecycleController } from '../../../src/controllers/nodelifecycle/controller.js';
import { hasShutdownTaint, SHUTDOWN_TAINT } from '../../../src/controllers/nodelifecycle/decide.js';
import type { NodeDeleter } from '../../../src/controllers/seams.js';
import { FakeClock } from '../../../src/kube/clock.js';
import { makeNode, type MakeNodeOptions } from '../../kit/nodes.js';
import { MemoryEvents, MemoryNodes } from '../memory-nodes.js';

/** DELETE with preconditions.uid over the memory store, as the API server answers it. */
function memoryDeleter(store: MemoryNodes): NodeDeleter {
  return {
    delete: (name, uid) => {
      const n = store.get(name);
      if (!n) return Promise.reject(new ApiError({ code: 404, message: `nodes "${name}" not found`, method: 'DELETE', path: `/api/v1/nodes/${name}` }));
      if (n.metadata.uid !== uid) return Promise.reject(new ApiError({ code: 409, reason: 'Conflict', message: 'Precondition failed: UID', method: 'DELETE', path: `/api/v1/nodes/${name}` }));
      store.remove(name);
      return Promise.resolve();
    },
  };
}

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const PERIOD = 5000;
/** Nodes older than the start-up grace period, unless a test says otherwise. */
const AN_HOUR_AGO = new Date(NOW - 3_600_000).toISOString();

function setup(nodes: MakeNodeOptions[], cloud = new FakeProvider(), deleter?: (store: MemoryNodes) => NodeDeleter) {
  const store = new MemoryNodes();
  for (const o of nodes) store.put(makeNode({ tainted: false, uid: `uid-${o.name}`, creationTimestamp: AN_HOUR_AGO, ...o }));
  const events = new MemoryEvents();
  const registry = new Registry();
  const clock = new FakeClock(NOW);
  const controller = new CloudNodeLifecycleController({
    nodes: store, writer: store.writer(), deleter: (deleter ?? memoryDeleter)(store), provider: cloud, events, monitorPeriodMs: PERIOD, registry, clock,
  });
  /** One pass, then the clock moves a period on, as the loop's timer would. */
  const pass = async () => {
    const stats = await controller.monitorNodes();
    clock.advance(PERIOD);
    return stats;
  };
  return { store, events, controller, cloud, registry, clock, pass };
}

describe('cloud node lifecycle loop', () => {
  it('5,000 nodes: Ready ones cost no call; 4,000 not Ready cost 8 existence calls and 8 shutdown calls of at most 500', async () => {
    const cloud = new FakeProvider();
    const specs: MakeNodeOptions[] = [];
    for (let i = 0; i < 5000; i++) {
      const name = `n-${i}`;
      // 1,000 Ready; 4,000 not Ready (False, Unknown, no condition), all with a running instance.
      specs.push({ name, ...(i < 1000 ? { ready: 'True' as const } : i % 3 === 0 ? { ready: 'False' as const } : i % 3 === 1 ? { ready: 'Unknown' as const } : {}) });
      cloud.setInstance(name, { addresses: [] });
    }
    const { pass, store } = setup(specs, cloud);
    const stats = await pass();
    expect(cloud.callCount('instancesExist')).toBe(8);
    expect(cloud.callCount('instancesShutdown')).toBe(8);
    expect(cloud.callCount('instancesMetadata')).toBe(0);
    expect(Math.max(...cloud.nodesPerCall())).toBe(500);
    expect(cloud.nodesPerCall('instancesExist').reduce((a, b) => a + b, 0)).toBe(4000);
    expect(stats).toMatchObject({ nodes: 5000, notReady: 4000, deleted: 0, tainted: 0, providerCalls: 16 });
    expect(store.writes).toHaveLength(0);

    // Next period: 100 instances gone, 50 shut down. Gone ones are not asked about shutdown, and
    // are deleted once a second answer a period later says they are still gone.
    cloud.resetCalls();
    for (let i = 1000; i < 1100; i++) cloud.removeInstance(`n-${i}`);
    for (let i = 2000; i < 2050; i++) cloud.setShutdown(`n-${i}`);
    const second = await pass();
    expect(second).toMatchObject({ deleted: 0, deferred: 100, tainted: 50, failed: 0 });
    expect(cloud.callCount('instancesExist')).toBe(8);
    expect(cloud.nodesPerCall('instancesShutdown').reduce((a, b) => a + b, 0)).toBe(3900);
    expect(hasShutdownTaint(store.get('n-2000')!)).toBe(true);
    const third = await pass();
    expect(third).toMatchObject({ deleted: 100, deferred: 0, failed: 0 });
    expect(store.nodes.size).toBe(4900);
  });

  it('gone → deleted with a Normal DeletingNode event; shut down → tainted once; running → untouched', async () => {
    const cloud = new FakeProvider({ instances: { down: { addresses: [], shutdown: true }, up: { addresses: [] } } });
    const { pass, store, events } = setup([{ name: 'gone', ready: 'Unknown' }, { name: 'down', ready: 'False' }, { name: 'up', ready: 'False' }], cloud);
    await pass();
    expect(store.get('gone')).toBeDefined();
    expect(store.get('down')!.spec!.taints).toEqual([SHUTDOWN_TAINT]);
    expect(store.get('up')!.spec!.taints).toEqual([]);
    await pass();
    expect(store.get('gone')).toBeUndefined();
    expect(events.for('gone')).toEqual([
      { node: 'gone', type: 'Warning', reason: 'DeletingNodeDeferred', message: 'instance not found by cloud provider fake: the Node is deleted if the instance is still missing 5s after the first such answer (--node-monitor-period)' },
      { node: 'gone', type: 'Normal', reason: 'DeletingNode', message: 'Deleting node gone: its instance no longer exists in cloud provider fake' },
    ]);
    const writes = store.writes.length;
    await pass();
    expect(store.writes.length).toBe(writes);
  });

  it('Ready again: the shutdown taint is removed, other taints kept, no provider call', async () => {
    const { pass, store, cloud } = setup([{ name: 'back', ready: 'True', taints: [{ key: 'x', effect: 'NoExecute' }, { ...SHUTDOWN_TAINT }] }]);
    const stats = await pass();
    expect(stats.untainted).toBe(1);
    expect(store.get('back')!.spec!.taints).toEqual([{ key: 'x', effect: 'NoExecute' }]);
    expect(cloud.callCount()).toBe(0);
  });

  it('a provider error (per node, whole call, rejected promise) leaves nodes alone until a later period', async () => {
    const cloud = new FakeProvider();
    const { pass, store, registry } = setup([{ name: 'a', ready: 'False' }, { name: 'b', ready: 'False' }], cloud);
    cloud.failNode('a', 'throttled', 1);
    let stats = await pass();
    expect(stats).toMatchObject({ deleted: 0, deferred: 1, unanswered: 1 });
    // An error is no news: b's first missing answer still counts, a has none yet. (A call that
    // fails for its batch is asked again in halves: the batch and both halves fail here.)
    cloud.rejectNext(3, 'connection reset');
    stats = await pass();
    expect(stats).toMatchObject({ deleted: 0, deferred: 0, unanswered: 2 });
    stats = await pass();
    expect(stats).toMatchObject({ deleted: 1, deferred: 1 });
    expect(store.get('b')).toBeUndefined();
    expect(store.get('a')).toBeDefined();
    stats = await pass();
    expect(stats.deleted).toBe(1);
    expect(store.nodes.size).toBe(0);
    const text = await registry.metrics();
    expect(text).toMatch(/cloud_node_lifecycle_unanswered_total\{reason="providerError"\} 3/);
    expect(text).toMatch(/cloud_node_lifecycle_actions_total\{action="delete",result="success"\} 2/);
    expect(text).toMatch(/cloudprovider_requests_total\{provider="fake",operation="instancesExist",result="error"\} 3/);
  });

  it('a not-Ready Node whose instance another Node also has is neither deleted nor tainted, nor asked about; a Warning names both', async () => {
    const cloud = Object.assign(new FakeProvider(), { instanceKey: awsInstanceKey });
    cloud.setInstance('off', { providerID: 'aws:///z1/i-0bbb', addresses: [], shutdown: true });
    const { pass, store, events, registry } = setup([
      // i-0aaa is gone from the cloud; two Nodes claim it (the zone spelt or not), one of them Ready.
      { name: 'stale', ready: 'False', providerID: 'aws:///z1/i-0aaa' },
      { name: 'live', ready: 'True', providerID: 'aws:////i-0aaa' },
      // i-0bbb is shut down; two not-Ready Nodes claim it.
      { name: 'off', ready: 'False', providerID: 'aws:///z1/i-0bbb' },
      { name: 'off-twin', ready: 'Unknown', providerID: 'i-0bbb' },
    ], cloud);
    for (let i = 0; i < 3; i++) {
      const stats = await pass();
      expect(stats).toMatchObject({ deleted: 0, tainted: 0, deferred: 0, unanswered: 3, providerCalls: 0 });
    }
    expect(cloud.callCount()).toBe(0);
    expect([...store.nodes.keys()].sort()).toEqual(['live', 'off', 'off-twin', 'stale']);
    for (const n of store.nodes.values()) expect(n.spec?.taints ?? []).toEqual([]);
    expect(events.for('stale')[0]).toEqual({
      node: 'stale', type: 'Warning', reason: 'ProviderIDInUse',
      message: 'node "stale" has providerID "aws:///z1/i-0aaa", the instance node "live" also has ("aws:////i-0aaa"); a Node whose instance another Node claims is neither deleted nor tainted',
    });
    expect(await registry.metrics()).toMatch(/cloud_node_lifecycle_unanswered_total\{reason="sharedInstance"\} 9/);
    // Once the other Node is gone, the stale one is judged on the cloud's answers again.
    store.remove('live');
    await pass();
    const stats = await pass();
    expect(stats.deleted).toBe(1);
    expect(store.nodes.has('stale')).toBe(false);
  });

  it('one node whose batches fail costs the others nothing: its batch is split, the rest are answered in the same pass', async () => {
    const cloud = new FakeProvider();
    const { pass, store } = setup([{ name: 'a', ready: 'False' }, { name: 'b', ready: 'False' }, { name: 'c', ready: 'False' }], cloud);
    cloud.setInstance('a', { addresses: [], shutdown: true }).setInstance('c', { addresses: [], shutdown: true });
    cloud.poisonBatches('b', 'reject', 'the inventory chokes on b');
    const stats = await pass();
    expect(stats).toMatchObject({ tainted: 2, unanswered: 1, deleted: 0, deferred: 0 });
    expect(store.get('a')!.spec!.taints).toEqual([SHUTDOWN_TAINT]);
    expect(store.get('b')!.spec!.taints ?? []).toEqual([]);
  });

  it('a taint write that conflicts is re-planned on the fresh node and keeps the taint added meanwhile', async () => {
    const cloud = new FakeProvider({ instances: { s: { addresses: [], shutdown: true } } });
    const { pass, store } = setup([{ name: 's', ready: 'False' }], cloud);
    let once = true;
    store.beforeWrite = (w) => {
      if (!once) return;
      once = false;
      const n = structuredClone(store.get(w.name)!);
      n.spec!.taints = [{ key: 'other', effect: 'NoSchedule' }];
      store.put(n);
    };
    const stats = await pass();
    expect(stats.tainted).toBe(1);
    expect(store.get('s')!.spec!.taints).toEqual([{ key: 'other', effect: 'NoSchedule' }, SHUTDOWN_TAINT]);
  });

  it('a DELETE that fails gets a Warning DeletingNodeFailed and is tried again next period', async () => {
    let fail = true;
    const { pass, store, events } = setup([{ name: 'g', ready: 'False' }], new FakeProvider(), (s) => {
      const real = memoryDeleter(s);
      return { delete: (n, u) => (fail ? Promise.reject(new ApiError({ code: 500, message: 'etcd timeout', method: 'DELETE', path: '/api/v1/nodes/g' })) : real.delete(n, u)) };
    });
    expect((await pass()).deferred).toBe(1);
    expect((await pass()).failed).toBe(1);
    expect(events.for('g').map((e) => [e.type, e.reason])).toEqual([['Warning', 'DeletingNodeDeferred'], ['Warning', 'DeletingNodeFailed']]);
    fail = false;
    expect((await pass()).deleted).toBe(1);
    expect(store.get('g')).toBeUndefined();
  });

  it('a young Node is never deleted, however often its instance is missing; past the grace period it is, on a confirmed answer', async () => {
    const created = new Date(NOW - 10_000).toISOString();
    const { pass, store, events, clock } = setup([{ name: 'young', ready: 'False', creationTimestamp: created }]);
    let deferred = 0;
    // Every period for the first five minutes of the Node's life: missing, and kept.
    while (clock.now() - Date.parse(created) < 5 * 60_000) {
      deferred += (await pass()).deferred;
      expect(store.get('young')).toBeDefined();
    }
    expect(deferred).toBe(58);
    expect(events.for('young')[0]).toMatchObject({ type: 'Warning', reason: 'DeletingNodeDeferred', message: 'instance not found by cloud provider fake, but the Node is 10s old: it is not deleted before it is 5m0s old (--node-startup-grace-period)' });
    // Old enough, and missing for minutes already: deleted.
    expect((await pass()).deleted).toBe(1);
  });

  it('an answer that the instance exists, a recovery to Ready or a re-created Node start the count over', async () => {
    const cloud = new FakeProvider();
    const { pass, store } = setup([{ name: 'flaky', ready: 'False' }], cloud);
    expect((await pass()).deferred).toBe(1);
    cloud.setInstance('flaky', { addresses: [] });
    expect(await pass()).toMatchObject({ deferred: 0, deleted: 0 });
    cloud.removeInstance('flaky');
    expect((await pass()).deferred).toBe(1);
    // Ready for a period: what was missing before counts no more.
    store.put({ ...makeNode({ name: 'flaky', tainted: false, uid: 'uid-flaky', creationTimestamp: AN_HOUR_AGO, ready: 'True' }) });
    await pass();
    store.put({ ...makeNode({ name: 'flaky', tainted: false, uid: 'uid-flaky', creationTimestamp: AN_HOUR_AGO, ready: 'False' }) });
    expect((await pass()).deferred).toBe(1);
    // The same name, a new Node: its own first answer.
    store.put(makeNode({ name: 'flaky', tainted: false, uid: 'uid-flaky-2', creationTimestamp: AN_HOUR_AGO, ready: 'False' }));
    expect((await pass()).deferred).toBe(1);
    expect((await pass()).deleted).toBe(1);
  });

  it('rejects a non-positive period and batch size with the flag name', () => {
    const store = new MemoryNodes();
    const base = { nodes: store, writer: store.writer(), deleter: memoryDeleter(store), provider: new FakeProvider(), events: new MemoryEvents() };
    expect(() => new CloudNodeLifecycleController({ ...base, monitorPeriodMs: 0 })).toThrow('--node-monitor-period: must be positive, got 0ms');
    expect(() => new CloudNodeLifecycleController({ ...base, monitorPeriodMs: 10, maxBatch: 0 })).toThrow('maxBatch: must be an integer >= 1, got 0');
  });
});
