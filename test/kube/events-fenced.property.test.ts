// The event recorder once its writes are fenced (the lease is lost), over random histories: events
// recorded before and after the fence, repeats (patches) and new Events (creates), API errors,
// one to four writes at a time. Whatever the history:
//  * nothing is sent once a write was fenced: a fenced write is final for the term;
//  * the fence is reported by at most one log line, and no event is reported as a failed write
//    because of it (a run lost its lease and logged a warning per queued event before);
//  * every recorded event is accounted for exactly once: written, failed, or dropped with a reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { pino } from 'pino';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { FencedError } from '../../src/kube/errors.js';
import { EventRecorder } from '../../src/kube/events.js';
import type { ApiServerDouble } from '../../src/double/index.js';
import { startDouble } from '../kit/double.js';
import { makeNode } from '../kit/nodes.js';

let api: ApiServerDouble;
beforeAll(async () => {
  api = await startDouble();
});
afterAll(() => api.stop());

const step = fc.oneof(
  { weight: 6, arbitrary: fc.record({ k: fc.constant('event' as const), node: fc.nat(5), reason: fc.constantFrom('Synced', 'InstanceNotFound') }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('flush' as const) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('apiErrors' as const), on: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('fence' as const) }) },
);

describe('EventRecorder after a fenced write', () => {
  it('sends nothing more, logs it once, and accounts for every event', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 4 }), async (steps, concurrency) => {
        run++;
        api.faults.clear();
        const client = new KubeClient(kubeConfigFromString(api.kubeconfig), { writeTimeoutMs: 500 });
        const lines: Array<{ msg: string; err?: { type?: string } }> = [];
        const logger = pino({ level: 'warn' }, { write: (l: string) => void lines.push(JSON.parse(l) as { msg: string }) });
        const rec = new EventRecorder({ client, host: `run-${run}`, concurrency, logger });
        let fenced = false;
        let sentAfterFence = 0;
        let recorded = 0;
        const writesBefore = api.count({ resource: 'events' });
        let writesAtFence = 0;
        try {
          for (const s of steps) {
            if (s.k === 'event') {
              recorded++;
              rec.nodeEvent(makeNode({ name: `r${run}-n${s.node}`, uid: `uid-${s.node}` }), 'Warning', s.reason, `message of ${s.reason}`);
            } else if (s.k === 'flush') {
              await rec.flush();
            } else if (s.k === 'apiErrors') {
              api.faults.clear();
              if (s.on) api.faults.inject({ resource: 'events', status: 500 });
            } else if (!fenced) {
              fenced = true;
              // Writes already on the wire finish; from here on the gate refuses every write.
              await rec.flush();
              writesAtFence = api.count({ resource: 'events' });
              client.setWriteGate(() => { throw new FencedError('not the leader of the lease'); });
            }
          }
          await rec.flush();
          if (fenced) sentAfterFence = api.count({ resource: 'events' }) - writesAtFence;
          const st = rec.stats;
          expect(sentAfterFence).toBe(0);
          expect(lines.filter((l) => l.msg.startsWith('events dropped: writes are fenced')).length).toBeLessThanOrEqual(1);
          expect(lines.filter((l) => l.err?.type === 'FencedError' && l.msg === 'cannot write event')).toEqual([]);
          expect(st.created + st.patched + st.failed + st.invalid + st.droppedSpam + st.droppedRate + st.droppedFull + st.droppedFenced).toBe(recorded);
          // Some write was attempted before the fence whenever an event was recorded and flushed before it.
          expect(api.count({ resource: 'events' })).toBeGreaterThanOrEqual(writesBefore);
        } finally {
          await rec.stop();
          client.close();
        }
      }),
      { numRuns: 60 },
    );
  }, 60_000);
});
