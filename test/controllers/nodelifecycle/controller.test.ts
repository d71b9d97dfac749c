// The lifecycle loop over an in-memory node store and the fake provider: provider calls per
// period (batched, 5,000 nodes), what each answer leads to, conflicts, and a provider that fails.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeProvider } from '../../../providers/fake/fake.js';
import { ApiError } from '../../../src/kube/errors.js';
import { CloudNodeLifecycleController } from '../../../src/controllers/nodelifecycle/controller.js';
import { hasShutdownTaint, SHUTDOWN_TAINT } from '../../../src/controllers/nodelifecycle/decide.js';
import type { NodeDeleter } from '../../../src/controllers/seams.js';
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

function setup(nodes: MakeNodeOptions[], cloud = new FakeProvider()) {
  const store = new MemoryNodes();
  for (const o of nodes) store.put(makeNode({ tainted: false, uid: `uid-${o.name}`, ...o }));
  const events = new MemoryEvents();
  const registry = new Registry();
  const controller = new CloudNodeLifecycleController({
    nodes: store, writer: store.writer(), deleter: memoryDeleter(store), provider: cloud, events, monitorPeriodMs: 5000, registry,
  });
  return { store, events, controller, cloud, registry };
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
    const { controller, store } = setup(specs, cloud);
    const stats = await controller.monitorNodes();
    expect(cloud.callCount('instancesExist')).toBe(8);
    expect(cloud.callCount('instancesShutdown')).toBe(8);
    expect(cloud.callCount('instancesMetadata')).toBe(0);
    expect(Math.max(...cloud.nodesPerCall())).toBe(500);
    expect(cloud.nodesPerCall('instancesExist').reduce((a, b) => a + b, 0)).toBe(4000);
    expect(stats).toMatchObject({ nodes: 5000, notReady: 4000, deleted: 0, tainted: 0, providerCalls: 16 });
    expect(store.writes).toHaveLength(0);

    // Next period: 100 instances gone, 50 shut down. Gone ones are not asked about shutdown.
    cloud.resetCalls();
    for (let i = 1000; i < 1100; i++) cloud.removeInstance(`n-${i}`);
    for (let i = 2000; i < 2050; i++) cloud.setShutdown(`n-${i}`);
    const second = await controller.monitorNodes();
    expect(second).toMatchObject({ deleted: 100, tainted: 50, failed: 0 });
    expect(cloud.callCount('instancesExist')).toBe(8);
    expect(cloud.nodesPerCall('instancesShutdown').reduce((a, b) => a + b, 0)).toBe(3900);
    expect(store.nodes.size).toBe(4900);
    expect(hasShutdownTaint(store.get('n-2000')!)).toBe(true);
  });

  it('gone → deleted with a Normal DeletingNode event; shut down → tainted once; running → untouched', async () => {
    const cloud = new FakeProvider({ instances: { down: { addresses: [], shutdown: true }, up: { addresses: [] } } });
    const { controller, store, events } = setup([{ name: 'gone', ready: 'Unknown' }, { name: 'down', ready: 'False' }, { name: 'up', ready: 'False' }], cloud);
    await controller.monitorNodes();
    expect(store.get('gone')).toBeUndefined();
    expect(events.for('gone')).toEqual([{ node: 'gone', type: 'Normal', reason: 'DeletingNode', message: 'Deleting node gone: its instance no longer exists in cloud provider fake' }]);
    expect(store.get('down')!.spec!.taints).toEqual([SHUTDOWN_TAINT]);
    expect(store.get('up')!.spec!.taints).toEqual([]);
    const writes = store.writes.length;
    await controller.monitorNodes();
    expect(store.writes.length).toBe(writes);
  });

  it('Ready again: the shutdown taint is removed, other taints kept, no provider call', async () => {
    const { controller, store, cloud } = setup([{ name: 'back', ready: 'True', taints: [{ key: 'x', effect: 'NoExecute' }, { ...SHUTDOWN_TAINT }] }]);
    const stats = await controller.monitorNodes();
    expect(stats.untainted).toBe(1);
    expect(store.get('back')!.spec!.taints).toEqual([{ key: 'x', effect: 'NoExecute' }]);
    expect(cloud.callCount()).toBe(0);
  });

  it('a provider error (per node, whole call, rejected promise) leaves nodes alone until a later period', async () => {
    const cloud = new FakeProvider();
    const { controller, store, registry } = setup([{ name: 'a', ready: 'False' }, { name: 'b', ready: 'False' }], cloud);
    cloud.failNode('a', 'throttled', 1);
    let stats = await controller.monitorNodes();
    expect(stats).toMatchObject({ deleted: 1, unanswered: 1 });
    expect(store.get('a')).toBeDefined();
    cloud.rejectNext(1, 'connection reset');
    stats = await controller.monitorNodes();
    expect(stats).toMatchObject({ deleted: 0, unanswered: 1 });
    expect(store.get('a')).toBeDefined();
    stats = await controller.monitorNodes();
    expect(stats.deleted).toBe(1);
    expect(store.nodes.size).toBe(0);
    const text = await registry.metrics();
    expect(text).toMatch(/cloud_node_lifecycle_unanswered_total\{reason="providerError"\} 2/);
    expect(text).toMatch(/cloud_node_lifecycle_actions_total\{action="delete",result="success"\} 2/);
    expect(text).toMatch(/cloudprovider_requests_total\{provider="fake",operation="instancesExist",result="error"\} 1/);
  });

  it('a taint write that conflicts is re-planned on the fresh node and keeps the taint added meanwhile', async () => {
    const cloud = new FakeProvider({ instances: { s: { addresses: [], shutdown: true } } });
    const { controller, store } = setup([{ name: 's', ready: 'False' }], cloud);
    let once = true;
    store.beforeWrite = (w) => {
      if (!once) return;
      once = false;
      const n = structuredClone(store.get(w.name)!);
      n.spec!.taints = [{ key: 'other', effect: 'NoSchedule' }];
      store.put(n);
    };
    const stats = await controller.monitorNodes();
    expect(stats.tainted).toBe(1);
    expect(store.get('s')!.spec!.taints).toEqual([{ key: 'other', effect: 'NoSchedule' }, SHUTDOWN_TAINT]);
  });

  it('a DELETE that fails gets a Warning DeletingNodeFailed and is tried again next period', async () => {
    const { store, events } = setup([{ name: 'g', ready: 'False' }]);
    const real = memoryDeleter(store);
    let fail = true;
    const deleter: NodeDeleter = { delete: (n, u) => (fail ? Promise.reject(new ApiError({ code: 500, message: 'etcd timeout', method: 'DELETE', path: '/api/v1/nodes/g' })) : real.delete(n, u)) };
    const c2 = new CloudNodeLifecycleController({ nodes: store, writer: store.writer(), deleter, provider: new FakeProvider(), events, monitorPeriodMs: 1000 });
    expect((await c2.monitorNodes()).failed).toBe(1);
    expect(events.for('g').map((e) => [e.type, e.reason])).toEqual([['Warning', 'DeletingNodeFailed']]);
    fail = false;
    expect((await c2.monitorNodes()).deleted).toBe(1);
    expect(store.get('g')).toBeUndefined();
  });

  it('rejects a non-positive period and batch size with the flag name', () => {
    const store = new MemoryNodes();
    const base = { nodes: store, writer: store.writer(), deleter: memoryDeleter(store), provider: new FakeProvider(), events: new MemoryEvents() };
    expect(() => new CloudNodeLifecycleController({ ...base, monitorPeriodMs: 0 })).toThrow('--node-monitor-period: must be positive, got 0ms');
    expect(() => new CloudNodeLifecycleController({ ...base, monitorPeriodMs: 10, maxBatch: 0 })).toThrow('maxBatch: must be an integer >= 1, got 0');
  });
});
