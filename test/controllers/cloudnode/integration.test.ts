// The cloud node controller end to end through the API server double: every KEP-3705 row, the
// gate, conflicts and API faults.
import { describe, expect, it } from 'vitest';
import { awsInstanceKey } from '../../../providers/aws/provider-id.js';
import { FakeProvider } from '../../../providers/fake/fake.js';
import { CloudNodeController } from '../../../src/controllers/cloudnode/controller.js';
import { hasUninitializedTaint } from '../../../src/model/node.js';
import { ip, KEP_DUAL_STACK, KEP_IPV4_ONLY } from '../../kit/nodes.js';
import { MemoryEvents } from '../memory-nodes.js';
import { eventually } from '../../kit/wait.js';
import { createNode, isInitialised, storedNode, useDouble } from '../../kit/double.js';

const cluster = useDouble();

function run(cloud: FakeProvider, o: { allowDualStack?: boolean; statusUpdateFrequencyMs?: number } = {}) {
  const conn = cluster.connect();
  const events = new MemoryEvents();
  const controller = new CloudNodeController({
    nodes: conn.nodes, writer: conn.writer, provider: cloud, events, allowDualStack: o.allowDualStack ?? true,
    workers: 2, statusUpdateFrequencyMs: o.statusUpdateFrequencyMs ?? 3_600_000,
  });
  conn.watcher.start();
  controller.start();
  let stopped: Promise<void> | undefined;
  // Once: a test may stop it early; the double's close stops it otherwise.
  const stop = (): Promise<void> => (stopped ??= (async () => {
    await controller.stop();
    await conn.close();
  })());
  cluster.defer(stop);
  return { events, controller, conn, stop };
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
      createNode(cluster.api, { name: row.name, nodeIP: row.annotation, addresses: [] });
    }
    const { events } = run(cloud);
    const good = ROWS.filter((r) => r.addresses);
    const bad = ROWS.filter((r) => r.error);
    await eventually(() => good.every((r) => isInitialised(cluster.api, r.name)) && bad.every((r) => events.for(r.name).length > 0), { timeoutMs: 10_000, what: 'all rows' });
    for (const row of good) {
      expect(storedNode(cluster.api, row.name).status?.addresses?.map((a) => a.address), row.name).toEqual(row.addresses);
    }
    for (const row of bad) {
      const node = storedNode(cluster.api, row.name);
      expect(hasUninitializedTaint(node), row.name).toBe(true);
      expect(node.status?.addresses ?? [], row.name).toEqual([]);
      expect(events.for(row.name)[0]!.reason).toBe('ProvidedNodeIPInvalid');
      expect(events.for(row.name)[0]!.message).toMatch(row.error!);
    }
  });

  it('gate off: a dual-stack annotation keeps the node tainted; on: the same node initialises', async () => {
    const cloud = new FakeProvider({ instances: { n1: { addresses: KEP_DUAL_STACK } } });
    createNode(cluster.api, { name: 'n1', nodeIP: '1.2.3.4,abcd::1234' });
    const off = run(cloud, { allowDualStack: false });
    await eventually(() => off.events.for('n1').length > 0);
    expect(off.events.for('n1')[0]!.message).toMatch(/dual-stack not supported/);
    await off.stop();
    expect(hasUninitializedTaint(storedNode(cluster.api, 'n1'))).toBe(true);
    run(cloud, { allowDualStack: true });
    await eventually(() => isInitialised(cluster.api, 'n1'));
    expect(storedNode(cluster.api, 'n1').status?.addresses).toEqual([ip('1.2.3.4'), ip('abcd::1234'), ip('n1', 'Hostname')]);
  });

  it('a new node costs two writes (status, patch), no PUT', async () => {
    const cloud = new FakeProvider({ instances: { n1: { addresses: KEP_IPV4_ONLY, zone: 'z' } } });
    createNode(cluster.api, { name: 'n1' });
    cluster.api.resetCounters();
    run(cloud);
    await eventually(() => isInitialised(cluster.api, 'n1'));
    expect(cluster.api.count({ verb: 'patch', resource: 'nodes', subresource: 'status' })).toBe(1);
    expect(cluster.api.count({ verb: 'patch', resource: 'nodes', subresource: '' })).toBe(1);
    expect(cluster.api.count({ verb: 'update', resource: 'nodes' })).toBe(0);
  });

  it('a concurrent change (409) during initialisation: re-read, re-plan, the other writer\'s taint survives', async () => {
    const cloud = new FakeProvider({ instances: { n1: { addresses: KEP_IPV4_ONLY } } });
    createNode(cluster.api, { name: 'n1' });
    // Hold back watch events so the controller works from a stale cache, then change the node.
    const { conn } = run(cloud);
    await conn.watcher.synced;
    cluster.api.pauseWatches();
    const n = storedNode(cluster.api, 'n1');
    n.spec!.taints = [...(n.spec!.taints ?? []), { key: 'example.com/maintenance', effect: 'NoSchedule' }];
    cluster.api.store.update('nodes', n);
    cluster.api.faults.inject({ verb: 'patch', resource: 'nodes', subresource: '', status: 409, count: 1 });
    cluster.api.resumeWatches();
    await eventually(() => isInitialised(cluster.api, 'n1'));
    expect(storedNode(cluster.api, 'n1').spec?.taints).toEqual([{ key: 'example.com/maintenance', effect: 'NoSchedule' }]);
  });

  it('API faults (429, 500, dropped responses, dropped watch, 410) still converge', async () => {
    const cloud = new FakeProvider();
    for (let i = 0; i < 12; i++) {
      cloud.setInstance(`n${i}`, { addresses: [ip(`10.0.0.${i + 1}`)] });
    }
    cluster.api.faults.inject({ verb: 'patch', resource: 'nodes', status: 429, count: 3 });
    cluster.api.faults.inject({ verb: 'patch', resource: 'nodes', subresource: '', status: 500, count: 2 });
    cluster.api.faults.inject({ verb: 'patch', resource: 'nodes', subresource: '', dropResponse: true, count: 2 });
    run(cloud);
    for (let i = 0; i < 6; i++) createNode(cluster.api, { name: `n${i}` });
    await eventually(() => cluster.api.watchCount() > 0);
    cluster.api.closeWatches();
    cluster.api.compactHistory();
    for (let i = 6; i < 12; i++) createNode(cluster.api, { name: `n${i}` });
    cluster.api.closeWatches();
    await eventually(() => Array.from({ length: 12 }, (_, i) => `n${i}`).every((n) => isInitialised(cluster.api, n)), { timeoutMs: 20_000, what: 'all nodes' });
    for (let i = 0; i < 12; i++) expect(storedNode(cluster.api, `n${i}`).status?.addresses?.[0]).toEqual(ip(`10.0.0.${i + 1}`));
  });
});

describe('reference node controller scenarios (external provider)', () => {
  it('keeps an existing providerID, writes instance type, zone, region (GA and beta) and the provider\'s extra labels', async () => {
    // The answer spells the node's instance another way, which the provider says is the same one.
    const cloud = Object.assign(new FakeProvider({ instances: {
      n1: { providerID: 'aws:////i-123', addresses: KEP_IPV4_ONLY, instanceType: 'm5.large', zone: 'z1', region: 'r1', labels: { 'example.com/pool': 'blue', 'kubernetes.io/arch': 'evil', team: 'x' } },
    } }), { instanceKey: awsInstanceKey });
    createNode(cluster.api, { name: 'n1', providerID: 'aws:///z1/i-123', labels: { team: 'kubelet' } });
    run(cloud);
    await eventually(() => isInitialised(cluster.api, 'n1'));
    const n = storedNode(cluster.api, 'n1');
    expect(n.spec?.providerID).toBe('aws:///z1/i-123');
    expect(n.metadata.labels).toEqual({
      team: 'kubelet',
      'example.com/pool': 'blue',
      'node.kubernetes.io/instance-type': 'm5.large', 'beta.kubernetes.io/instance-type': 'm5.large',
      'topology.kubernetes.io/zone': 'z1', 'failure-domain.beta.kubernetes.io/zone': 'z1',
      'topology.kubernetes.io/region': 'r1', 'failure-domain.beta.kubernetes.io/region': 'r1',
    });
  });

  it('an answer whose providerID names another instance than the node\'s own leaves it tainted with a Warning naming both (a deliberate deviation)', async () => {
    const cloud = new FakeProvider({ instances: { n1: { providerID: 'fake://vm-elsewhere', addresses: [ip('10.9.9.9')] } } });
    createNode(cluster.api, { name: 'n1', providerID: 'fake://n1', nodeIP: null });
    const { events } = run(cloud);
    await eventually(() => events.events.some((e) => e.reason === 'ProviderIDMismatch'));
    expect(events.events.find((e) => e.reason === 'ProviderIDMismatch')).toEqual({
      node: 'n1', type: 'Warning', reason: 'ProviderIDMismatch',
      message: 'cloud provider fake answered for node "n1" with providerID "fake://vm-elsewhere", another instance than the node\'s own "fake://n1"; nothing of that answer is written',
    });
    const n = storedNode(cluster.api, 'n1');
    expect(hasUninitializedTaint(n)).toBe(true);
    expect(n.status?.addresses).toEqual([ip('n1', 'Hostname')]);
  });

  it('an initialised node gets its beta topology labels copied to GA, without a cloud call', async () => {
    const cloud = new FakeProvider();
    createNode(cluster.api, { name: 'old', tainted: false, labels: { 'failure-domain.beta.kubernetes.io/region': 'r9', 'topology.kubernetes.io/region': 'stale' } });
    run(cloud);
    await eventually(() => storedNode(cluster.api, 'old').metadata.labels?.['topology.kubernetes.io/region'] === 'r9');
    expect(cloud.callCount()).toBe(0);
  });

  it('a node deleted while tainted is dropped without retries piling up', async () => {
    const cloud = new FakeProvider({ instances: { n1: { addresses: KEP_IPV4_ONLY } } });
    cloud.latencyMs = 100;
    createNode(cluster.api, { name: 'n1' });
    const { controller } = run(cloud);
    await eventually(() => cloud.callCount() > 0);
    cluster.api.store.delete('nodes', 'n1');
    await eventually(() => controller.queue.len() === 0 && controller.queue.processingCount() === 0 && controller.queue.delayedCount() === 0, { timeoutMs: 5000, what: 'queue drained' });
    expect(cluster.api.store.list('nodes')).toEqual([]);
  });

  it('periodic refresh: addresses follow the cloud, an unsatisfiable annotation warns, the node is never re-tainted', async () => {
    const cloud = new FakeProvider({ instances: { a: { addresses: [ip('10.0.0.1')] }, b: { addresses: [ip('10.0.0.2')] } } });
    createNode(cluster.api, { name: 'a' });
    createNode(cluster.api, { name: 'b', nodeIP: '10.0.0.2' });
    const { events } = run(cloud, { statusUpdateFrequencyMs: 150 });
    await eventually(() => isInitialised(cluster.api, 'a') && isInitialised(cluster.api, 'b'));
    cloud.updateInstance('a', { addresses: [ip('10.0.0.1'), ip('10.0.0.11')] });
    cloud.updateInstance('b', { addresses: [ip('10.0.0.3')] });
    await eventually(() => storedNode(cluster.api, 'a').status?.addresses?.length === 3, { timeoutMs: 5000, what: 'a refreshed' });
    expect(storedNode(cluster.api, 'a').status?.addresses).toEqual([ip('10.0.0.1'), ip('10.0.0.11'), ip('a', 'Hostname')]);
    await eventually(() => events.for('b').some((e) => e.type === 'Warning'), { timeoutMs: 5000, what: 'b warned' });
    expect(events.for('b').find((e) => e.type === 'Warning')!.message).toMatch(/^addresses not updated: .*10\.0\.0\.2/);
    expect(storedNode(cluster.api, 'b').status?.addresses).toEqual([ip('10.0.0.2'), ip('b', 'Hostname')]);
    expect(hasUninitializedTaint(storedNode(cluster.api, 'b'))).toBe(false);
  });
});
