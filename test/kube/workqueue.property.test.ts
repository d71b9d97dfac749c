import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { FakeClock } from '../../src/kube/clock.js';
import { WorkQueue } from '../../src/kube/workqueue.js';

type Op = { kind: 'add'; item: string } | { kind: 'take' } | { kind: 'done'; index: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), item: fc.constantFrom('a', 'b', 'c', 'd') }),
  fc.record({ kind: fc.constant('take' as const) }),
  fc.record({ kind: fc.constant('done' as const), index: fc.nat(5) }),
);

describe('WorkQueue properties', () => {
  it('never hands out an item that is being processed, and processes every add after it happened', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 60 }), async (ops) => {
        const q = new WorkQueue<string>({ name: 'prop', clock: new FakeClock() });
        const active: string[] = [];
        const lastAdd = new Map<string, number>();
        const lastStart = new Map<string, number>();
        let step = 0;
        const take = async () => {
          const item = await q.get();
          if (item === undefined) throw new Error('queue returned undefined before shutdown');
          expect(active).not.toContain(item);
          active.push(item);
          lastStart.set(item, ++step);
        };
        for (const op of ops) {
          if (op.kind === 'add') {
            q.add(op.item);
            lastAdd.set(op.item, ++step);
          } else if (op.kind === 'take') {
            if (q.len() > 0) await take();
          } else if (active.length > 0) {
            const [item] = active.splice(op.index % active.length, 1);
            q.done(item as string);
          }
        }
        // Drain: finish everything, keep taking until idle.
        while (active.length > 0 || q.len() > 0) {
          if (q.len() > 0) await take();
          else q.done(active.shift() as string);
        }
        for (const [item, addedAt] of lastAdd) expect(lastStart.get(item) ?? 0).toBeGreaterThan(addedAt);
        expect(q.processingCount()).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
