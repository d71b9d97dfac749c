// When cloud-node-lifecycle deletes a Node, over random histories of one Node: the cloud's answers
// (gone, exists, an error), the Node's readiness, time between passes (a pass every period or
// later), the Node re-created under the same name. The loop deletes the Node at a pass exactly
// when, for the Node as it is then (its uid):
//  * it is not Ready and older than the start-up grace period, and the cloud says it is gone now;
//  * and an earlier pass, at least one monitor period before, already heard it was gone, with no
//    pass in between that heard it exists or saw it Ready.
// A provider error is never "gone", and deletes nothing.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FakeProvider } from '../../../providers/fake/fake.js';
import { CloudNodeLifecycleController } from '../../../src/controllers/nodelifecycle/controller.js';
import type { NodeDeleter } from '../../../src/controllers/seams.js';
import { FakeClock } from '../../../src/kube/clock.js';
import { makeNode } from '../../kit/nodes.js';
import { MemoryEvents, MemoryNodes } from '../memory-nodes.js';

const PERIOD = 5000;
const GRACE = 60_000;
const T0 = Date.UTC(2026, 10, 26, 12, 0, 0);

const step = fc.record({
  answer: fc.constantFrom('gone' as const, 'gone' as const, 'exists' as const, 'error' as const),
  ready: fc.boolean(),
  // A pass every period, sometimes later (a slow pass, a leader change).
  wait: fc.constantFrom(PERIOD, PERIOD, PERIOD * 2, PERIOD * 5),
  recreate: fc.nat(9).map((n) => n === 0),
});

describe('cloud-node-lifecycle deletes a Node exactly when the deletion guard allows', () => {
  it('over random histories of answers, readiness, timing and re-creation', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3 * GRACE }), fc.array(step, { minLength: 1, maxLength: 40 }), async (ageAtStart, steps) => {
        const clock = new FakeClock(T0);
        const store = new MemoryNodes();
        const cloud = new FakeProvider();
        let uid = 1;
        const put = (ready: boolean, created: number) =>
          store.put(makeNode({ name: 'n', tainted: false, uid: `uid-${uid}`, creationTimestamp: new Date(created).toISOString(), ready: ready ? 'True' : 'False' }));
        let created = T0 - ageAtStart;
        put(false, created);
        const deleter: NodeDeleter = {
          delete: (name, u) => {
            if (store.get(name)?.metadata.uid !== u) return Promise.reject(new Error('uid mismatch'));
            store.remove(name);
            return Promise.resolve();
          },
        };
        const controller = new CloudNodeLifecycleController({
          nodes: store, writer: store.writer(), deleter, provider: cloud, events: new MemoryEvents(), monitorPeriodMs: PERIOD, startupGraceMs: GRACE, clock,
        });
        // The model: when the current Node (this uid) was first heard gone, with no reset since.
        let goneSince: number | undefined;
        for (const s of steps) {
          if (!store.get('n')) break;
          if (s.recreate) {
            uid++;
            created = clock.now();
            store.remove('n');
            put(s.ready, created);
            goneSince = undefined;
          } else put(s.ready, created);
          if (s.answer === 'exists') cloud.setInstance('n', { addresses: [] });
          else cloud.removeInstance('n');
          if (s.answer === 'error') cloud.failNode('n', 'throttled', 1);

          const now = clock.now();
          let expectDelete = false;
          if (s.ready) goneSince = undefined;
          else if (s.answer === 'exists') goneSince = undefined;
          else if (s.answer === 'gone') {
            goneSince ??= now;
            expectDelete = now - created >= GRACE && now - goneSince >= PERIOD;
          }
          const stats = await controller.monitorNodes();
          cloud.clearFailures();
          expect({ deleted: stats.deleted, at: now - T0 }).toEqual({ deleted: expectDelete ? 1 : 0, at: now - T0 });
          expect(store.get('n') === undefined).toBe(expectDelete);
          clock.advance(s.wait);
        }
      }),
      { numRuns: 300 },
    );
  });
});
