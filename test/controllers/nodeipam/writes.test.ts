// The allocation write: one PATCH guarded by resourceVersion, with the pool annotation; a definite
// failure gives the blocks back at once, an unknown outcome (timeout after sending) keeps them for
// the node until the outcome shows up.
import { afterEach, describe, expect, it } from 'vitest';
import { RangeAllocator } from '../../../src/controllers/nodeipam/range-allocator.js';
import { FlagsPoolSource } from '../../../src/controllers/nodeipam/pool-source.js';
import { nodePodCIDRs, POD_CIDR_POOL_ANNOTATION } from '../../../src/model/node.js';
import { ApiError, TransportError } from '../../../src/kube/errors.js';
import { makeNode } from '../../kit/nodes.js';
import { MemoryEvents, MemoryNodes } from '../memory-nodes.js';
import { eventually } from '../../kit/wait.js';

let controllers: RangeAllocator[] = [];
afterEach(async () => {
  await Promise.all(controllers.map((c) => c.stop()));
  controllers = [];
});

async function setup() {
  const store = new MemoryNodes();
  const events = new MemoryEvents();
  const source = new FlagsPoolSource({ clusterCIDR: '10.0.0.0/22', nodeCIDRMaskSizeIPv4: 24 });
  const controller = new RangeAllocator({ nodes: store, writer: store.writer(), events, sources: [source], leaveTaintedNodes: false, fenceMs: 0, relist: () => Promise.resolve(), workers: 1 });
  controllers.push(controller);
  await controller.start();
  return { store, events, controller, pool: source.poolName };
}

describe('the allocation write', () => {
  it('is one merge patch with the resourceVersion, the blocks and the pool annotation', async () => {
    const { store, pool } = await setup();
    store.put(makeNode({ name: 'a', tainted: false }));
    await eventually(() => nodePodCIDRs(store.nodes.get('a')!).length > 0);
    const writes = store.writes.filter((w) => w.name === 'a');
    expect(writes).toHaveLength(1);
    expect(writes[0]!.body).toEqual({
      metadata: { resourceVersion: expect.any(String), annotations: { [POD_CIDR_POOL_ANNOTATION]: pool } },
      spec: { podCIDR: '10.0.0.0/24', podCIDRs: ['10.0.0.0/24'] },
    });
  });

  const fail = (kind: 'definite' | 'unknown') => (kind === 'definite'
    ? new ApiError({ code: 403, message: 'forbidden', method: 'PATCH', path: '/api/v1/nodes/a' })
    : new TransportError({ kind: 'timeout', requestSent: true, method: 'PATCH', path: '/api/v1/nodes/a', detail: 'no response within 2000ms' }));

  it.each([
    { kind: 'definite' as const, keeps: false, word: 'released' },
    { kind: 'unknown' as const, keeps: true, word: 'kept until the outcome is known' },
  ])('a $kind failure: the blocks are $word', async ({ kind, keeps, word }) => {
    const { store, events, controller } = await setup();
    store.beforeWrite = (w) => {
      if (w.name === 'a') throw fail(kind);
    };
    store.put(makeNode({ name: 'a', tainted: false }));
    await eventually(() => events.for('a').some((e) => e.reason === 'CIDRAssignmentFailed'), { timeoutMs: 5000, what: 'failure event' });
    const first = events.for('a')[0]!.message;
    expect(first).toContain(`(${word})`);
    const attempted = /failed to assign pod CIDRs (\S+) /.exec(first)![1]!;
    store.put(makeNode({ name: 'b', tainted: false }));
    await eventually(() => nodePodCIDRs(store.nodes.get('b')!).length > 0);
    // With one worker, a is never mid-write while b is handled: what a holds now is what it kept.
    expect(controller.ledger.nodeAllocation('a')?.podCIDRs).toEqual(keeps ? [attempted] : undefined);
    if (keeps) expect(nodePodCIDRs(store.nodes.get('b')!)).not.toEqual([attempted]);
    // The write lands at last: a ends up with a block b does not have.
    store.beforeWrite = undefined;
    await eventually(() => nodePodCIDRs(store.nodes.get('a')!).length > 0, { timeoutMs: 10_000, what: 'a written' });
    expect(nodePodCIDRs(store.nodes.get('a')!)).not.toEqual(nodePodCIDRs(store.nodes.get('b')!));
    if (keeps) expect(nodePodCIDRs(store.nodes.get('a')!)).toEqual([attempted]);
  });
});
