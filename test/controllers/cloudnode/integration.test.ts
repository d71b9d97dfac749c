// The cloud node controller end to end through the API server double: every KEP-3705 row, the
// gate, conflicts and API faults.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeProvider } from '../../../providers/fake/fake.js';
import { CloudNodeController } from '../../../src/controllers/cloudnode/controller.js';
import { startApiServerDouble, type ApiServerDouble } from '../../../src/sim/apiserver/server.js';
import { hasUninitializedTaint } from '../../../src/model/node.js';
import { ip, KEP_DUAL_STACK, KEP_IPV4_ONLY } from '../builders.js';
import { MemoryEvents, until } from '../memory-nodes.js';
import { connect, createNode, isInitialised, storedNode } from '../harness.js';

let api: ApiServerDouble;
let cleanup: Array<() => Promise<void> | void> = [];

beforeEach(async () => {
  api = await startApiServerDouble({ bookmarkIntervalMs: 200 });
});
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
  await api.stop();
});

function run(cloud: FakeProvider, o: { allowDualStack?: boolean; statusUpdateFrequencyMs?: number } = {}) {
  const conn = connect(api);
  const events = new MemoryEvents();
  const controller = new CloudNodeController({
    nodes: conn.nodes, writer: conn.writer, provider: cloud, events, allowDualStack: o.allowDualStack ?? true,
    workers: 2, statusUpdateFrequencyMs: o.statusUpdateFrequencyMs ?? 3_600_000,
  });
  conn.watcher.start();
  controller.start();
  cleanup.push(async () => {
    await controller.stop();
    await conn.watcher.stop();
    conn.client.close();
  });
  return { events, controller, conn };
}

const ROWS: Array<{ name: string; cloud: typeof KEP_DUAL_STACK; annotation: string | null; addresses?: string[]; error?: RegExp }> = [
  { name: 'ds-none', cloud: KEP_DUAL_STACK, annotation: null, addresses: ['1.2.3.4', '5.6.7.8', 'abcd::1234', 'abcd::5678'] },
  { name: 'ds-v4', cloud: KEP_DUAL_STACK, annotation: '1.2.3.4', addresses: ['1.2.3.4'] },
  { name: 'ds-missing', cloud: KEP_DUAL_STACK, annotation: '9.10.11.12', error: /9\.10\.11\.12/ },
  { name: 'ds-v6', cloud: KEP_DUAL_STACK, annotation: 'abcd::5678', addresses: ['abcd::5678'] },
  { name: 'ds-pair', cloud: KEP_DUAL_STACK, annotation: '1.2.3.4,abcd::1234', addresses: ['1.2.3.4', 'abcd::1234'] },
  { name: 'v4-none', cloud: KEP_IPV4_ONLY, annotation: null, addresses: ['1.2.3.4', '5.6.7.8'] },
  { name: 'v4-v4', cloud: KEP_IPV4_ONLY, annotation: '1.2.3.4', addresses: ['1.2.3.4'] },
  { name: 'v4-missing', cloud: KEP_IPV4_ONLY, annotation: '9.10.11.12', error: /9\.10\.11\.12/ },
  { name: 'v4-v6', cloud: KEP_IPV4_ONLY, annotation: 'abcd::5678', error: /abcd::5678/ },
  { name: 'v4-pair', cloud: KEP_IPV4_ONLY, annotation: '1.2.3.4,abcd::1234', error: /abcd::1234/ },
  { name: 'empty', cloud: KEP_DUAL_STACK, annotation: '', error: /provided node IP ""/ },
];

describe('cloud node controller through the API double', () => {
  it('every KEP-3705 row: addresses written and taint removed, or tainted with the reason', async () => {
    const cloud = new FakeProvider();
    for (const row of ROWS) {
      cloud.setInstance(row.name, { addresses: row.cloud });
      createNode(api, { name: row.name, nodeIP: row.annotation, addresses: [] });
    }
    const { events } = run(cloud);
    const good = ROWS.filter((r) => r.addresses);
    const bad = ROWS.filter((r) => r.error);
    await until(() => good.every((r) => isInitialised(api, r.name)) && bad.every((r) => events.for(r.name).length > 0), 10_000, 'all rows');
    for (const row of good) {
      expect(storedNode(api, row.name).status?.addresses?.map((a) => a.address), row.name).toEqual(row.addresses);
    }
    for (const row of bad) {
      const node = storedNode(api, row.name);
      expect(hasUninitializedTaint(node), row.name).toBe(true);
      expect(node.status?.addresses ?? [], row.name).toEqual([]);
      expect(events.for(row.name)[0]!.reason).toBe('ProvidedNodeIPInvalid');
      expect(events.for(row.name)[0]!.message).toMatch(row.error!);
    }
  });

  it('gate off: a dual-stack annotation keeps the node tainted; on: the same node initialises', async () => {
    const cloud = new FakeProvider({ instances: { n1: { addresses: KEP_DUAL_STACK } } });
    createNode(api, { name: 'n1', nodeIP: '1.2.3.4,abcd::1234' });
    const off = run(cloud, { allowDualStack: false });
    await until(() => off.events.for('n1').length > 0);
    expect(off.events.for('n1')[0]!.message).toMatch(/dual-stack not supported/);
    await cleanup.pop()!();
    expect(hasUninitializedTaint(storedNode(api, 'n1'))).toBe(true);
    run(cloud, { allowDualStack: true });
    await until(() => isInitialised(api, 'n1'));
    expect(storedNode(api, 'n1').status?.addresses).toEqual([ip('1.2.3.4'), ip('abcd::1234'), ip('n1', 'Hostname')]);
  });

  it('a new node costs two writes (status, patch), no PUT', async () => {
    const cloud = new FakeProvider({ instances: { n1: { addresses: KEP_IPV4_ONLY, zone: 'z' } } });
    createNode(api, { name: 'n1' });
    api.resetCounters();
    run(cloud);
    await until(() => isInitialised(api, 'n1'));
    expect(api.count({ verb: 'patch', resource: 'nodes', subresource: 'status' })).toBe(1);
    expect(api.count({ verb: 'patch', resource: 'nodes', subresource: '' })).toBe(1);
    expect(api.count({ verb: 'update', resource: 'nodes' })).toBe(0);
  });

  it('a concurrent change (409) during initialisation: re-read, re-plan, the other writer\'s taint survives', async () => {
    const cloud = new FakeProvider({ instances: { n1: { addresses: KEP_IPV4_ONLY } } });
    createNode(api, { name: 'n1' });
    // Hold back watch events so the controller works from a stale cache, then change the node.
    const { conn } = run(cloud);
    await conn.watcher.synced;
    api.pauseWatches();
    const n = storedNode(api, 'n1');
    n.spec!.taints = [...(n.spec!.taints ?? []), { key: 'example.com/maintenance', effect: 'NoSchedule' }];
    api.store.update('nodes', n);
    api.faults.inject({ verb: 'patch', resource: 'nodes', subresource: '', status: 409, count: 1 });
    api.resumeWatches();
    await until(() => isInitialised(api, 'n1'));
    expect(storedNode(api, 'n1').spec?.taints).toEqual([{ key: 'example.com/maintenance', effect: 'NoSchedule' }]);
  });

  it('API faults (429, 500, dropped responses, dropped watch, 410) still converge', async () => {
    const cloud = new FakeProvider();
    for (let i = 0; i < 12; i++) {
      cloud.setInstance(`n${i}`, { addresses: [ip(`10.0.0.${i + 1}`)] });
    }
    api.faults.inject({ verb: 'patch', resource: 'nodes', status: 429, count: 3 });
    api.faults.inject({ verb: 'patch', resource: 'nodes', subresource: '', status: 500, count: 2 });
    api.faults.inject({ verb: 'patch', resource: 'nodes', subresource: '', dropResponse: true, count: 2 });
    run(cloud);
    for (let i = 0; i < 6; i++) createNode(api, { name: `n${i}` });
    await until(() => api.watchCount() > 0);
    api.closeWatches();
    api.compactHistory();
    for (let i = 6; i < 12; i++) createNode(api, { name: `n${i}` });
    api.closeWatches();
    await until(() => Array.from({ length: 12 }, (_, i) => `n${i}`).every((n) => isInitialised(api, n)), 20_000, 'all nodes');
    for (let i = 0; i < 12; i++) expect(storedNode(api, `n${i}`).status?.addresses?.[0]).toEqual(ip(`10.0.0.${i + 1}`));
  });
});

describe('reference node controller scenarios (external provider)', () => {
  it('keeps an existing providerID, writes instance type, zone, region (GA and beta) and the provider\'s extra labels', async () => {
    const cloud = new FakeProvider({ instances: {
      n1: { providerID: 'fake://other', addresses: KEP_IPV4_ONLY, instanceType: 'm5.large', zone: 'z1', region: 'r1', labels: { 'example.com/pool': 'blue', 'kubernetes.io/arch': 'evil', team: 'x' } },
    } });
    createNode(api, { name: 'n1', providerID: 'aws:///z1/i-123', labels: { team: 'kubelet' } });
    run(cloud);
    await until(() => isInitialised(api, 'n1'));
    const n = storedNode(api, 'n1');
    expect(n.spec?.providerID).toBe('aws:///z1/i-123');
    expect(n.metadata.labels).toEqual({
      team: 'kubelet',
      'example.com/pool': 'blue',
      'node.kubernetes.io/instance-type': 'm5.large', 'beta.kubernetes.io/instance-type': 'm5.large',
      'topology.kubernetes.io/zone': 'z1', 'failure-domain.beta.kubernetes.io/zone': 'z1',
      'topology.kubernetes.io/region': 'r1', 'failure-domain.beta.kubernetes.io/region': 'r1',
    });
  });

  it('an initialised node gets its beta topology labels copied to GA, without a cloud call', async () => {
    const cloud = new FakeProvider();
    createNode(api, { name: 'old', tainted: false, labels: { 'failure-domain.beta.kubernetes.io/region': 'r9', 'topology.kubernetes.io/region': 'stale' } });
    run(cloud);
    await until(() => storedNode(api, 'old').metadata.labels?.['topology.kubernetes.io/region'] === 'r9');
    expect(cloud.callCount()).toBe(0);
  });

  it('a node deleted while tainted is dropped without retries piling up', async () => {
    const cloud = new FakeProvider({ instances: { n1: { addresses: KEP_IPV4_ONLY } } });
    cloud.latencyMs = 100;
    createNode(api, { name: 'n1' });
    const { controller } = run(cloud);
    await until(() => cloud.callCount() > 0);
    api.store.delete('nodes', 'n1');
    await until(() => controller.queue.len() === 0 && controller.queue.processingCount() === 0 && controller.queue.delayedCount() === 0, 5000, 'queue drained');
    expect(api.store.list('nodes')).toEqual([]);
  });

  it('periodic refresh: addresses follow the cloud, an unsatisfiable annotation warns, the node is never re-tainted', async () => {
    const cloud = new FakeProvider({ instances: { a: { addresses: [ip('10.0.0.1')] }, b: { addresses: [ip('10.0.0.2')] } } });
    createNode(api, { name: 'a' });
    createNode(api, { name: 'b', nodeIP: '10.0.0.2' });
    const { events } = run(cloud, { statusUpdateFrequencyMs: 150 });
    await until(() => isInitialised(api, 'a') && isInitialised(api, 'b'));
    cloud.updateInstance('a', { addresses: [ip('10.0.0.1'), ip('10.0.0.11')] });
    cloud.updateInstance('b', { addresses: [ip('10.0.0.3')] });
    await until(() => storedNode(api, 'a').status?.addresses?.length === 3, 5000, 'a refreshed');
    expect(storedNode(api, 'a').status?.addresses).toEqual([ip('10.0.0.1'), ip('10.0.0.11'), ip('a', 'Hostname')]);
    await until(() => events.for('b').some((e) => e.type === 'Warning'), 5000, 'b warned');
    expect(events.for('b').find((e) => e.type === 'Warning')!.message).toMatch(/^addresses not updated: .*10\.0\.0\.2/);
    expect(storedNode(api, 'b').status?.addresses).toEqual([ip('10.0.0.2'), ip('b', 'Hostname')]);
    expect(hasUninitializedTaint(storedNode(api, 'b'))).toBe(false);
  });
});
