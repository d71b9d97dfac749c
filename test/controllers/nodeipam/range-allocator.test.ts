// RangeAllocator over an in-memory store: restore, claims, allocation for initialised nodes,
// CIDRNotAvailable, release on delete.
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { RangeAllocator } from '../../../src/controllers/nodeipam/range-allocator.js';
import { restoreOrder } from '../../../src/ipam/restore-order.js';
import { FlagsPoolSource } from '../../../src/controllers/nodeipam/pool-source.js';
import { nodePodCIDRs } from '../../../src/model/node.js';
import { makeNode } from '../../kit/nodes.js';
import { FakeClock } from '../../../src/kube/clock.js';
import { MemoryEvents, MemoryNodes } from '../memory-nodes.js';
import { eventually } from '../../kit/wait.js';

let controllers: RangeAllocator[] = [];
afterEach(async () => {
  await Promise.all(controllers.map((c) => c.stop()));
  controllers = [];
});

function setup(clusterCIDR: string, o: { serviceRange?: string; leaveTainted?: boolean; clock?: FakeClock } = {}) {
  const store = new MemoryNodes();
  const events = new MemoryEvents();
  let relists = 0;
  const registry = new Registry();
  const controller = new RangeAllocator({
    nodes: store, writer: store.writer(), events, registry,
    sources: [new FlagsPoolSource({ clusterCIDR, nodeCIDRMaskSizeIPv4: 24, ...(o.serviceRange ? { serviceClusterIPRange: o.serviceRange } : {}) })],
    leaveTaintedNodes: o.leaveTainted ?? true, fenceMs: 0, relist: () => { relists++; return Promise.resolve(); },
    ...(o.clock ? { clock: o.clock } : {}),
  });
  controllers.push(controller);
  return { store, events, controller, registry, relists: () => relists };
}

describe('RangeAllocator', () => {
  it('re-lists, restores existing blocks before handing out new ones, and skips excluded Service ranges', async () => {
    const { store, controller, relists } = setup('10.0.0.0/22', { serviceRange: '10.0.0.0/24' });
    store.put(makeNode({ name: 'old', tainted: false, podCIDRs: ['10.0.1.0/24'] }));
    store.put(makeNode({ name: 'new', tainted: false }));
    expect(controller.claim({ name: 'x', uid: undefined, labels: {} })).toEqual({ kind: 'notReady' });
    await controller.start();
    expect(relists()).toBe(1);
    await eventually(() => nodePodCIDRs(store.nodes.get('new')!).length > 0);
    expect(store.nodes.get('new')!.spec?.podCIDRs).toEqual(['10.0.2.0/24']);
  });

  it('restores oldest first: of two nodes claiming one block, the newcomer gets the PodCIDRConflict', async () => {
    const { store, events, controller } = setup('10.0.0.0/22');
    const older = makeNode({ name: 'z-older', tainted: false, podCIDRs: ['10.0.1.0/24'] });
    older.metadata.creationTimestamp = '2026-11-01T10:00:00Z';
    const newer = makeNode({ name: 'a-newer', tainted: false, podCIDRs: ['10.0.1.0/24'] });
    newer.metadata.creationTimestamp = '2026-11-20T10:00:00Z';
    store.put(newer);
    store.put(older);
    await controller.start();
    expect(controller.ledger.nodeAllocation('z-older')?.podCIDRs).toEqual(['10.0.1.0/24']);
    expect(events.for('z-older').filter((e) => e.reason === 'PodCIDRConflict')).toEqual([]);
    expect(events.for('a-newer').filter((e) => e.reason === 'PodCIDRConflict').map((e) => e.message)).toEqual([
      'node "a-newer": pod CIDR 10.0.1.0/24 overlaps a block of node "z-older"',
    ]);
  });

  it.each([
    [['b@2', 'a@2', 'c@1'], ['c', 'a', 'b']],
    [['b@', 'a@1'], ['b', 'a']], // no timestamp sorts first: it cannot be shown to be newer
  ])('restoreOrder(%j) is %j', (input, expected) => {
    const nodes = input.map((s) => {
      const [name, t] = s.split('@') as [string, string];
      return makeNode({ name, creationTimestamp: t ? `2026-11-0${t}T00:00:00Z` : undefined });
    });
    expect(restoreOrder(nodes).map((n) => n.metadata.name)).toEqual(expected);
  });

  it('claims are idempotent per node name and come from the same allocator', async () => {
    const { store, controller } = setup('10.0.0.0/22');
    await controller.start();
    const a = controller.claim({ name: 'a', uid: 'uid-a', labels: {} });
    expect(a).toMatchObject({ kind: 'claimed', podCIDRs: ['10.0.0.0/24'] });
    expect(controller.claim({ name: 'a', uid: 'uid-a', labels: {} })).toEqual(a);
    // The IPAM loop's own allocation for another node never reuses a claimed block.
    store.put(makeNode({ name: 'b', tainted: false }));
    await eventually(() => nodePodCIDRs(store.nodes.get('b')!).length > 0);
    expect(store.nodes.get('b')!.spec?.podCIDRs).toEqual(['10.0.1.0/24']);
  });

  it('leaves tainted nodes to the cloud node controller', async () => {
    const { store, controller } = setup('10.0.0.0/22');
    await controller.start();
    store.put(makeNode({ name: 't' }));
    store.put(makeNode({ name: 'u', tainted: false }));
    await eventually(() => nodePodCIDRs(store.nodes.get('u')!).length > 0);
    expect(nodePodCIDRs(store.nodes.get('t')!)).toEqual([]);
  });

  it('a full pool: CIDRNotAvailable Warning and retry; a delete frees a block for it', async () => {
    const { store, events, controller } = setup('10.0.0.0/23');
    await controller.start();
    for (const n of ['a', 'b', 'c']) store.put(makeNode({ name: n, tainted: false }));
    await eventually(() => events.for('c').length > 0, { timeoutMs: 5000, what: 'CIDRNotAvailable' });
    expect(events.for('c')[0]).toMatchObject({ type: 'Warning', reason: 'CIDRNotAvailable' });
    expect(events.for('c')[0]!.message).toMatch(/no pod CIDR available for node "c"/);
    const freed = store.nodes.get('a')!.spec!.podCIDRs!;
    store.remove('a');
    expect(controller.ledger.nodeAllocation('a')).toBeUndefined();
    await eventually(() => nodePodCIDRs(store.nodes.get('c')!).length > 0, { timeoutMs: 5000, what: 'c gets the freed block' });
    expect(store.nodes.get('c')!.spec?.podCIDRs).toEqual(freed);
  });

  it('a node being deleted (deletionTimestamp, a finalizer holding it) keeps its blocks until the object is gone (kubernetes#127792)', async () => {
    const { store, events, controller } = setup('10.0.0.0/23');
    await controller.start();
    for (const n of ['a', 'b']) store.put(makeNode({ name: n, tainted: false }));
    await eventually(() => ['a', 'b'].every((n) => nodePodCIDRs(store.nodes.get(n)!).length > 0));
    const blocks = store.nodes.get('a')!.spec!.podCIDRs!;
    const terminating = structuredClone(store.nodes.get('a')!);
    terminating.metadata.deletionTimestamp = new Date().toISOString();
    terminating.metadata.finalizers = ['example.com/drain'];
    store.put(terminating);
    store.put(makeNode({ name: 'c', tainted: false }));
    await eventually(() => events.for('c').some((e) => e.reason === 'CIDRNotAvailable'), { timeoutMs: 5000, what: 'c waits' });
    expect(controller.ledger.nodeAllocation('a')?.podCIDRs).toEqual(blocks);
    expect(nodePodCIDRs(store.nodes.get('c')!)).toEqual([]);
    store.remove('a');
    await eventually(() => nodePodCIDRs(store.nodes.get('c')!).length > 0, { timeoutMs: 5000, what: 'c gets the block once a is gone' });
    expect(store.nodes.get('c')!.spec?.podCIDRs).toEqual(blocks);
  });

  it('release: blocks claimed for a node that is gone go back (and to a waiting node); a node holding them keeps them', async () => {
    const { store, controller } = setup('10.0.0.0/23');
    await controller.start();
    store.put(makeNode({ name: 'a', tainted: false }));
    await eventually(() => nodePodCIDRs(store.nodes.get('a')!).length > 0);
    // The cloud node controller claimed for "ghost", whose watch delete came before the claim.
    const ghost = controller.claim({ name: 'ghost', uid: 'uid-ghost', labels: {} });
    expect(ghost).toMatchObject({ kind: 'claimed' });
    store.put(makeNode({ name: 'w', tainted: false }));
    await eventually(() => controller.waitingNodes().includes('w'), { timeoutMs: 5000, what: 'w waits' });
    controller.release('ghost', 'uid-ghost');
    expect(controller.ledger.nodeAllocation('ghost')).toBeUndefined();
    await eventually(() => nodePodCIDRs(store.nodes.get('w')!).length > 0, { timeoutMs: 5000, what: 'w gets the block at once' });
    expect(store.nodes.get('w')!.spec?.podCIDRs).toEqual(ghost.kind === 'claimed' ? ghost.podCIDRs : []);
    controller.release('a', store.nodes.get('a')!.metadata.uid);
    expect(controller.ledger.nodeAllocation('a')?.podCIDRs).toEqual(store.nodes.get('a')!.spec?.podCIDRs);
  });

  it('a deleted node wakes one waiting node that can use its pool, not every waiting node', async () => {
    // Backoff retries never come due on this clock: only the immediate retries run.
    const { store, events, controller } = setup('10.0.0.0/23', { clock: new FakeClock() });
    await controller.start();
    for (const n of ['a', 'b']) store.put(makeNode({ name: n, tainted: false }));
    await eventually(() => ['a', 'b'].every((n) => nodePodCIDRs(store.nodes.get(n)!).length > 0));
    const waiting = ['w1', 'w2', 'w3', 'w4'];
    for (const n of waiting) store.put(makeNode({ name: n, tainted: false }));
    await eventually(() => controller.waitingNodes().length === 4, { timeoutMs: 5000, what: 'four waiting' });
    const freed = store.nodes.get('a')!.spec!.podCIDRs!;
    store.remove('a');
    await eventually(() => waiting.some((n) => nodePodCIDRs(store.nodes.get(n)!).length > 0), { timeoutMs: 5000, what: 'one waiting node served' });
    const served = waiting.filter((n) => nodePodCIDRs(store.nodes.get(n)!).length > 0);
    expect(served).toEqual(['w1']);
    expect(store.nodes.get('w1')!.spec?.podCIDRs).toEqual(freed);
    // The others were not retried at once (each still has its one CIDRNotAvailable).
    expect(waiting.slice(1).map((n) => events.for(n).filter((e) => e.reason === 'CIDRNotAvailable').length)).toEqual([1, 1, 1]);
    expect(controller.waitingNodes()).toEqual(['w2', 'w3', 'w4']);
  });

  it('a bad flag is an error naming it', () => {
    expect(() => new FlagsPoolSource({ clusterCIDR: '10.0.0.0/16', serviceClusterIPRange: '10.96.0.0/33' })).toThrow(/--service-cluster-ip-range/);
    expect(() => new FlagsPoolSource({ clusterCIDR: '10.0.0.0/16', nodeCIDRMaskSizeIPv4: 8 })).toThrow(/--node-cidr-mask-size-ipv4: 8/);
  });
});
