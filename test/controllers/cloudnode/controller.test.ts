// The cloud node controller loop over an in-memory store (integration through the API double is
// in cloudnode.integration.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { FakeProvider } from '../../../providers/fake/fake.js';
import { CloudNodeController } from '../../../src/controllers/cloudnode/controller.js';
import { hasUninitializedTaint, POD_CIDR_POOL_ANNOTATION } from '../../../src/model/node.js';
import type { PodCIDRClaims } from '../../../src/controllers/nodeipam/claims.js';
import type { NodeWriter } from '../../../src/controllers/seams.js';
import { TransportError } from '../../../src/kube/errors.js';
import { ip, KEP_DUAL_STACK, makeNode } from '../../kit/nodes.js';
import { MemoryEvents, MemoryNodes } from '../memory-nodes.js';
import { eventually } from '../../kit/wait.js';

let controllers: CloudNodeController[] = [];
afterEach(async () => {
  await Promise.all(controllers.map((c) => c.stop()));
  controllers = [];
});

const dropped = (name: string) => new TransportError({ kind: 'timeout', requestSent: true, method: 'PATCH', path: `/api/v1/nodes/${name}`, detail: 'no answer within 2000 ms' });

function setup(o: { claims?: PodCIDRClaims; allowDualStack?: boolean; workers?: number; store?: MemoryNodes; writer?: NodeWriter } = {}) {
  const store = o.store ?? new MemoryNodes();
  const events = new MemoryEvents();
  const cloud = new FakeProvider();
  const registry = new Registry();
  const controller = new CloudNodeController({
    nodes: store, writer: o.writer ?? store.writer(), provider: cloud, events, allowDualStack: o.allowDualStack ?? true,
    workers: o.workers ?? 2, statusUpdateFrequencyMs: 3_600_000, registry, ...(o.claims ? { claims: o.claims } : {}),
  });
  controllers.push(controller);
  return { store, events, cloud, controller, registry };
}

/**
 * A writer over `store` whose first initialising patch fails as a dropped connection would: after
 * it landed (`lands`) or before it reached the server. `failReads`: that many reads fail first.
 */
function losingFirstPatch(store: MemoryNodes, o: { lands: boolean; failReads?: number }): NodeWriter {
  let lose = true;
  let failReads = o.failReads ?? 0;
  return {
    get: (n) => (failReads-- > 0 ? Promise.reject(dropped(n)) : store.read(n)),
    patchStatus: (n, p) => store.patchStatus(n, p),
    patch: async (n, p) => {
      if (o.lands || !lose) await store.patch(n, p);
      if (!lose) return;
      lose = false;
      throw dropped(n);
    },
  };
}

/** The controller over a fresh store through `writer(store)`, started with the tainted n1 (cloud: 1.2.3.4) in it. */
function startWithN1(writer: (store: MemoryNodes) => NodeWriter) {
  const store = new MemoryNodes();
  const t = setup({ store, writer: writer(store) });
  t.cloud.setInstance('n1', { addresses: [ip('1.2.3.4')] });
  store.put(makeNode({ name: 'n1' }));
  t.controller.start();
  return t;
}

const initialised = (store: MemoryNodes, name: string) => () => {
  const n = store.nodes.get(name);
  return n !== undefined && !hasUninitializedTaint(n);
};

describe('CloudNodeController', () => {
  it('initialises a tainted node with two writes (status, then one guarded patch) and one Synced event', async () => {
    const { store, events, cloud, controller, registry } = setup();
    cloud.setInstance('n1', { addresses: KEP_DUAL_STACK, zone: 'z1', region: 'r1', instanceType: 't1' });
    store.put(makeNode({ name: 'n1', nodeIP: '1.2.3.4,abcd::1234' }));
    controller.start();
    await eventually(initialised(store, 'n1'));
    const node = store.nodes.get('n1')!;
    expect(node.status?.addresses).toEqual([ip('1.2.3.4'), ip('abcd::1234'), ip('n1', 'Hostname')]);
    expect(node.spec?.providerID).toBe('fake://n1');
    expect(node.metadata.labels).toMatchObject({ 'topology.kubernetes.io/zone': 'z1', 'node.kubernetes.io/instance-type': 't1' });
    expect(store.writes.map((w) => w.kind)).toEqual(['status', 'patch']);
    expect(events.events).toEqual([{ node: 'n1', type: 'Normal', reason: 'Synced', message: 'Node synced successfully' }]);
    const metrics = await registry.getMetricsAsJSON();
    expect(metrics.map((m) => m.name)).toContain('node_controller_cloud_provider_taint_removal_delay_seconds');
  });

  it('one node whose batches fail costs only its own answer; afterwards it is asked alone and a hang of its own blocks no one', async () => {
    const { store, events, cloud, controller } = setup({ workers: 1 });
    for (let i = 0; i < 50; i++) {
      cloud.setInstance(`n${i}`, { addresses: [ip(`10.0.0.${i + 1}`)] });
      store.put(makeNode({ name: `n${i}`, uid: `uid-n${i}` }));
    }
    cloud.poisonBatches('n17', 'reject', 'the inventory chokes on n17');
    controller.start();
    await eventually(() => [...store.nodes.values()].filter((n) => !hasUninitializedTaint(n)).length === 49, { what: '49 nodes initialised' });
    // In the first round: the batch, then halves down to n17 alone.
    const firstRound = cloud.callCount();
    expect(firstRound).toBeLessThanOrEqual(1 + 2 * Math.ceil(Math.log2(50)));
    expect(hasUninitializedTaint(store.nodes.get('n17')!)).toBe(true);
    const warnings = events.events.filter((e) => e.type === 'Warning');
    expect(new Set(warnings.map((e) => e.node))).toEqual(new Set(['n17']));
    expect(warnings[0]?.message).toBe('failed to get instance metadata from cloud provider fake: the inventory chokes on n17');
    // Now its calls hang: it is asked alone, and nodes joining meanwhile go through at once, with
    // one worker, though its call never returns.
    cloud.poisonBatches('n17', 'hang');
    await eventually(() => cloud.calls.slice(firstRound).some((c) => c.nodes.join() === 'n17'), { what: 'n17 retried alone' });
    for (let i = 50; i < 60; i++) {
      cloud.setInstance(`n${i}`, { addresses: [ip(`10.0.1.${i}`)] });
      store.put(makeNode({ name: `n${i}`, uid: `uid-n${i}` }));
    }
    await eventually(() => [50, 51, 52, 53, 54, 55, 56, 57, 58, 59].every((i) => !hasUninitializedTaint(store.nodes.get(`n${i}`)!)), { what: 'the joining nodes initialised while n17 hangs' });
    expect(cloud.calls.slice(firstRound).filter((c) => c.nodes.includes('n17')).map((c) => c.nodes)).toEqual([['n17']]);
  });

  it('an answered providerID another live Node has, or another node of the batch is given, leaves the node tainted with a Warning naming both', async () => {
    const { store, events, cloud, controller } = setup({ workers: 1 });
    store.put(makeNode({ name: 'm-holder', uid: 'u-holder', providerID: 'acme://m-holder', tainted: false }));
    cloud.setInstance('m-pid-dup', { providerID: 'acme://m-holder', addresses: [ip('10.0.0.9')] });
    // Two nodes of one batch answered with one instance: the first gets it, the second waits.
    cloud.setInstance('twin-1', { providerID: 'acme://twin', addresses: [ip('10.0.0.21')] });
    cloud.setInstance('twin-2', { providerID: 'acme://twin', addresses: [ip('10.0.0.22')] });
    for (const name of ['m-pid-dup', 'twin-1', 'twin-2']) store.put(makeNode({ name, uid: `u-${name}` }));
    controller.start();
    await eventually(initialised(store, 'twin-1'));
    await eventually(() => events.for('twin-2').some((e) => e.reason === 'ProviderIDInUse') && events.for('m-pid-dup').some((e) => e.reason === 'ProviderIDInUse'));
    expect(events.for('m-pid-dup').find((e) => e.type === 'Warning')?.message).toBe('cloud provider fake answered for node "m-pid-dup" with providerID "acme://m-holder", the instance node "m-holder" already has ("acme://m-holder"); two Nodes cannot be one instance, so nothing of the answer is written');
    expect(events.for('twin-2').find((e) => e.type === 'Warning')?.message).toContain('the instance node "twin-1" already has ("acme://twin")');
    for (const name of ['m-pid-dup', 'twin-2']) {
      const n = store.nodes.get(name)!;
      expect(hasUninitializedTaint(n)).toBe(true);
      // Nothing of the answer was written: not even the addresses.
      expect(n.status?.addresses).toEqual([ip(name, 'Hostname')]);
      expect(n.spec?.providerID).toBeUndefined();
    }
    // The holder is deleted and its name re-created as a new Node (a new uid) without a providerID:
    // the instance is free, and the next retry of m-pid-dup takes it.
    store.remove('m-holder');
    store.put(makeNode({ name: 'm-holder', uid: 'u-holder-2' }));
    await eventually(initialised(store, 'm-pid-dup'), { timeoutMs: 5_000, what: 'm-pid-dup initialised once the holder is gone' });
    expect(store.nodes.get('m-pid-dup')!.spec?.providerID).toBe('acme://m-holder');
  });

  it('the address refresh never writes an answer that names another instance', async () => {
    const { store, events, cloud, controller } = setup();
    cloud.setInstance('n1', { providerID: 'fake://vm-elsewhere', addresses: [ip('10.9.9.9')] });
    store.put(makeNode({ name: 'n1', uid: 'u1', providerID: 'fake://n1', tainted: false, addresses: [ip('10.0.0.1')] }));
    const stats = await controller.resyncAddresses();
    expect(stats).toMatchObject({ updated: 0, warned: 1 });
    expect(store.nodes.get('n1')!.status?.addresses).toEqual([ip('10.0.0.1')]);
    expect(events.for('n1')).toEqual([{ node: 'n1', type: 'Warning', reason: 'ProviderIDMismatch', message: 'addresses not updated: cloud provider fake answered for node "n1" with providerID "fake://vm-elsewhere", another instance than the node\'s own "fake://n1"; nothing of that answer is written' }]);
  });

  it('batches the nodes waiting in the queue into one provider call', async () => {
    const { store, cloud, controller } = setup({ workers: 1 });
    for (let i = 0; i < 20; i++) {
      cloud.setInstance(`n${i}`, { addresses: [ip(`10.0.0.${i + 1}`)] });
      store.put(makeNode({ name: `n${i}` }));
    }
    controller.start();
    await eventually(() => [...store.nodes.values()].every((n) => !hasUninitializedTaint(n)));
    expect(cloud.callCount('instancesMetadata')).toBe(1);
    expect(cloud.nodesPerCall('instancesMetadata')).toEqual([20]);
  });

  it('leaves a node tainted with a Warning naming the reason when its IP is not in the cloud, and retries', async () => {
    const { store, events, cloud, controller } = setup();
    cloud.setInstance('n1', { addresses: [ip('1.2.3.4')] });
    store.put(makeNode({ name: 'n1', nodeIP: '9.10.11.12' }));
    controller.start();
    await eventually(() => cloud.lookupsOf('n1') >= 3, { timeoutMs: 5000, what: 'retries' });
    expect(hasUninitializedTaint(store.nodes.get('n1')!)).toBe(true);
    expect(store.writes).toEqual([]);
    expect(events.for('n1')[0]).toMatchObject({ type: 'Warning', reason: 'ProvidedNodeIPInvalid' });
    expect(events.for('n1')[0]!.message).toContain('9.10.11.12');
    // Fixing the cloud lets the retry succeed.
    cloud.updateInstance('n1', { addresses: [ip('1.2.3.4'), ip('9.10.11.12')] });
    await eventually(initialised(store, 'n1'), { timeoutMs: 5000, what: 'initialisation after the fix' });
    expect(store.nodes.get('n1')!.status?.addresses).toEqual([ip('9.10.11.12'), ip('n1', 'Hostname')]);
  });

  it('notFound and provider errors: no write, a Warning, retry later', async () => {
    const { store, events, cloud, controller } = setup();
    cloud.setInstance('err', { addresses: [ip('1.1.1.1')] }).failNode('err', 'quota exceeded', 2);
    store.put(makeNode({ name: 'gone' }));
    store.put(makeNode({ name: 'err' }));
    controller.start();
    await eventually(initialised(store, 'err'), { timeoutMs: 5000, what: 'err initialised after two failures' });
    expect(events.for('err').map((e) => e.reason)).toEqual(['CloudProviderError', 'CloudProviderError', 'Synced']);
    expect(events.for('err')[0]!.message).toContain('quota exceeded');
    await eventually(() => events.for('gone').length >= 2);
    expect(events.for('gone')[0]).toMatchObject({ type: 'Warning', reason: 'InstanceNotFound' });
    expect(store.writes.filter((w) => w.name === 'gone')).toEqual([]);
  });

  it('a concurrent change (409) during initialisation is re-read and re-planned, never lost', async () => {
    const { store, cloud, controller } = setup();
    cloud.setInstance('n1', { addresses: [ip('1.2.3.4')] });
    store.put(makeNode({ name: 'n1' }));
    let injected = false;
    store.beforeWrite = (w) => {
      if (w.kind === 'patch' && !injected) {
        injected = true;
        // Someone adds a taint between our read and our guarded write.
        const n = structuredClone(store.nodes.get('n1')!);
        n.spec!.taints = [...(n.spec!.taints ?? []), { key: 'example.com/maintenance', effect: 'NoSchedule' }];
        store.put(n);
      }
    };
    controller.start();
    await eventually(initialised(store, 'n1'));
    expect(store.nodes.get('n1')!.spec?.taints).toEqual([{ key: 'example.com/maintenance', effect: 'NoSchedule' }]);
  });

  it('a kubelet restart with a new node IP between read and write: the addresses follow the new annotation', async () => {
    const { store, cloud, controller } = setup();
    cloud.setInstance('n1', { addresses: KEP_DUAL_STACK });
    store.put(makeNode({ name: 'n1', nodeIP: '1.2.3.4' }));
    let changed = false;
    store.beforeWrite = (w) => {
      if (w.kind === 'status' && !changed) {
        changed = true;
        const n = structuredClone(store.nodes.get('n1')!);
        n.metadata.annotations!['alpha.kubernetes.io/provided-node-ip'] = 'abcd::5678';
        store.put(n);
      }
    };
    controller.start();
    await eventually(initialised(store, 'n1'));
    expect(store.nodes.get('n1')!.status?.addresses).toEqual([ip('abcd::5678'), ip('n1', 'Hostname')]);
  });

  it('puts the claimed pod CIDRs in the write that removes the taint, chosen against the new labels', async () => {
    const requests: Array<{ name: string; labels: Record<string, string> }> = [];
    const claims: PodCIDRClaims = {
      claim: (r) => {
        requests.push(r);
        return { kind: 'claimed', podCIDRs: ['10.244.1.0/24'], pool: 'flags' };
      },
    };
    const { store, cloud, controller } = setup({ claims });
    cloud.setInstance('n1', { addresses: [ip('1.2.3.4')], zone: 'z1' });
    store.put(makeNode({ name: 'n1' }));
    controller.start();
    await eventually(initialised(store, 'n1'));
    expect(store.nodes.get('n1')!.spec).toMatchObject({ podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] });
    // The pool goes in the same write (the audit's "allocated by node-address-ccm" mark).
    expect(store.nodes.get('n1')!.metadata.annotations?.[POD_CIDR_POOL_ANNOTATION]).toBe('flags');
    expect(requests[0]!.labels['topology.kubernetes.io/zone']).toBe('z1');
    expect(store.writes.filter((w) => w.kind === 'patch')).toHaveLength(1);
  });

  it('with no free block the node is still initialised, without pod CIDRs', async () => {
    const claims: PodCIDRClaims = { claim: () => ({ kind: 'unavailable', reason: 'no free /24 in 10.244.0.0/30' }) };
    const { store, cloud, controller } = setup({ claims });
    cloud.setInstance('n1', { addresses: [ip('1.2.3.4')] });
    store.put(makeNode({ name: 'n1' }));
    controller.start();
    await eventually(initialised(store, 'n1'));
    expect(store.nodes.get('n1')!.spec?.podCIDRs).toBeUndefined();
  });

  it('copies beta labels to GA on initialised nodes and does not call the cloud for them', async () => {
    const { store, cloud, controller } = setup();
    store.put(makeNode({ name: 'old', tainted: false, labels: { 'failure-domain.beta.kubernetes.io/zone': 'z9' } }));
    controller.start();
    await eventually(() => store.nodes.get('old')!.metadata.labels?.['topology.kubernetes.io/zone'] === 'z9');
    expect(cloud.callCount()).toBe(0);
  });

  it('address refresh: one batched round, replaces changed addresses, warns on an unsatisfiable annotation, never re-taints', async () => {
    const { store, events, cloud, controller } = setup();
    cloud.setInstance('a', { addresses: [ip('1.1.1.1'), ip('1.1.1.2')] });
    cloud.setInstance('b', { addresses: [ip('2.2.2.2')] });
    cloud.setInstance('c', { addresses: [ip('3.3.3.3')] });
    store.put(makeNode({ name: 'a', tainted: false, addresses: [ip('1.1.1.1')] }));
    store.put(makeNode({ name: 'b', tainted: false, nodeIP: '2.2.2.9', addresses: [ip('2.2.2.9')] }));
    store.put(makeNode({ name: 'c', tainted: false, addresses: [ip('3.3.3.3'), ip('c', 'Hostname')] }));
    const stats = await controller.resyncAddresses();
    expect(stats).toEqual({ nodes: 3, updated: 1, warned: 1, failed: 0, cloudCalls: 1 });
    expect(cloud.nodesPerCall('instancesMetadata')).toEqual([3]);
    expect(store.nodes.get('a')!.status?.addresses).toEqual([ip('1.1.1.1'), ip('1.1.1.2')]);
    expect(store.nodes.get('b')!.status?.addresses).toEqual([ip('2.2.2.9')]);
    expect(hasUninitializedTaint(store.nodes.get('b')!)).toBe(false);
    expect(events.for('b')).toMatchObject([{ type: 'Warning', reason: 'ProvidedNodeIPInvalid' }]);
    expect(store.writes.map((w) => w.name)).toEqual(['a']);
  });

  it('the initialising patch landed but its response was lost: the node is read again, one Synced event, no failure reported', async () => {
    // The initialising patch: it lands, its answer is lost once.
    const t = startWithN1((store) => losingFirstPatch(store, { lands: true }));
    const { store } = t;
    await eventually(() => t.events.for('n1').some((e) => e.reason === 'Synced'), { timeoutMs: 5000, what: 'Synced after the lost response' });
    expect(hasUninitializedTaint(store.nodes.get('n1')!)).toBe(false);
    expect(t.events.for('n1').map((e) => e.reason)).toEqual(['Synced']);
    // The write is never repeated, and the event is not emitted twice.
    expect(store.writes.filter((w) => w.kind === 'patch')).toHaveLength(1);
    await t.controller.stop();
    expect(t.events.for('n1').filter((e) => e.reason === 'Synced')).toHaveLength(1);
  });

  it('an initialising patch with an unknown outcome that did not land is retried: one Synced event', async () => {
    // The initialising patch: lost once before it reached the server.
    const t = startWithN1((store) => losingFirstPatch(store, { lands: false }));
    const { store } = t;
    await eventually(initialised(store, 'n1'));
    await t.controller.stop();
    expect(t.events.for('n1').map((e) => e.reason)).toEqual(['Synced']);
    expect(store.writes.filter((w) => w.kind === 'patch')).toHaveLength(1);
  });

  it('an unknown outcome that cannot be read back (API unreachable): NodeUpdateFailed, then one Synced event when the retry finds the node initialised', async () => {
    // The initialising patch lands and its answer is lost; the read that follows fails too.
    const t = startWithN1((store) => losingFirstPatch(store, { lands: true, failReads: 1 }));
    const { store } = t;
    await eventually(() => t.events.for('n1').some((e) => e.reason === 'Synced'), { timeoutMs: 5000, what: 'Synced on the retry' });
    await t.controller.stop();
    expect(t.events.for('n1').map((e) => e.reason)).toEqual(['NodeUpdateFailed', 'Synced']);
    expect(store.writes.filter((w) => w.kind === 'patch')).toHaveLength(1);
  });

  it('a node deleted while its initialising write is in flight (404): the blocks claimed for it are given back', async () => {
    const released: string[] = [];
    const claims: PodCIDRClaims = {
      claim: () => ({ kind: 'claimed', podCIDRs: ['10.244.1.0/24'], pool: 'flags' }),
      release: (name) => released.push(name),
    };
    const { store, cloud, controller } = setup({ claims });
    cloud.setInstance('n1', { addresses: [ip('1.2.3.4')] });
    store.put(makeNode({ name: 'n1', addresses: [ip('1.2.3.4'), ip('n1', 'Hostname')] }));
    store.beforeWrite = (w) => {
      if (w.kind === 'patch') store.remove('n1');
    };
    controller.start();
    await eventually(() => released.length > 0, { timeoutMs: 5000, what: 'release' });
    expect(released).toEqual(['n1']);
    expect(store.writes).toEqual([]);
  });
});
