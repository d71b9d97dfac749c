// The range-request decision: when CloudAllocator may ask the cloud for a node's ranges, from the
// record on the Node and what this process did; then a model of processes that race, restart and
// lose answers, in which the cloud never receives two calls it could have acted on for one node.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decideRangeRequest, formatRangeRequest, parseRangeRequest, type OwnRequest, type RangeRequestRecord, type RangeRequestState } from '../../../src/controllers/nodeipam/range-request.js';

const request = { target: 'eni-0a', what: 'one IPv6 /80 prefix' };
const rec = (o: Partial<RangeRequestRecord> = {}): RangeRequestRecord => ({ target: 'eni-0a', what: 'one IPv6 /80 prefix', id: 'r1', by: 'ccm-a', at: '2025-01-02T03:04:05Z', state: 'asking', attempt: 1, ...o });
const own = (written: string[], called: string[] = []): OwnRequest => ({ written: new Set(written), called: new Set(called) });

describe('decideRangeRequest', () => {
  const cases: { name: string; annotation?: string; own?: OwnRequest; want: string | RegExp }[] = [
    { name: 'no record: write one, then call', want: 'record 1' },
    { name: 'our record, not called yet (its write answer was lost, then read back): call', annotation: formatRangeRequest(rec()), own: own(['r1']), want: 'call r1' },
    { name: 'our record, already called: wait', annotation: formatRangeRequest(rec()), own: own(['r1'], ['r1']), want: /ccm-a, attempt 1\), no outcome recorded; waiting for the cloud to show it, never asking again/ },
    { name: 'someone else\'s record, asking (a restart, a new leader): wait', annotation: formatRangeRequest(rec()), own: own(['r0']), want: /no outcome recorded; waiting/ },
    { name: 'a record whose call was answered: wait for the read-back', annotation: formatRangeRequest(rec({ state: 'done', detail: 'EC2 assigned 2600::/80 to eni-0a' })), want: /, done: EC2 assigned 2600::\/80 to eni-0a; waiting/ },
    { name: 'a record whose answer was lost: wait, never ask again', annotation: formatRangeRequest(rec({ state: 'unknown', detail: 'socket hang up' })), own: own(['r1'], ['r1']), want: /outcome unknown \(socket hang up\); waiting .* never asking again \(the call is not idempotent\)/ },
    { name: 'throttled: nothing was done, a fresh record and one more call', annotation: formatRangeRequest(rec({ state: 'throttled', attempt: 2 })), own: own(['r1'], ['r1']), want: 'record 3' },
    { name: 'refused (a limit): wait for an operator', annotation: formatRangeRequest(rec({ state: 'refused', detail: 'Number of private addresses will exceed limit.' })), want: /refused: Number of private addresses will exceed limit\.; not asking again: fix the cause, then remove the annotation ipam\.node-address-ccm\.io\/cloud-range-request/ },
    { name: 'a record for another interface: wait', annotation: formatRangeRequest(rec({ target: 'eni-0b' })), want: /records a request for eni-0b, but the ranges are now wanted on eni-0a: not asking/ },
    { name: 'not JSON: wait', annotation: 'asked', want: /is not a request record \(not JSON\): not asking the cloud for one IPv6 \/80 prefix on eni-0a/ },
    { name: 'an unknown state: wait', annotation: JSON.stringify({ ...rec(), state: 'maybe' }), want: /field state: "maybe" is not one of asking, done, unknown, throttled, refused/ },
    { name: 'no attempt count: wait', annotation: JSON.stringify({ ...rec(), attempt: 0 }), want: /field attempt: 0 is not a positive integer/ },
  ];
  it.each(cases)('$name', ({ annotation, own: o, want }) => {
    const step = decideRangeRequest({ request, annotation, own: o });
    const text = step.kind === 'record' ? `record ${step.attempt}` : step.kind === 'call' ? `call ${step.record.id}` : step.message;
    if (typeof want === 'string') expect(text).toBe(want);
    else expect(text).toMatch(want);
  });

  it('reads back what it writes', () => {
    const r = rec({ state: 'refused', detail: 'x', attempt: 4 });
    expect(parseRangeRequest(formatRangeRequest(r))).toEqual(r);
    expect(parseRangeRequest('[]')).toBe('not a JSON object');
    expect(parseRangeRequest(JSON.stringify({ ...r, id: '' }))).toBe('field id missing');
  });
});

/**
 * A model of the Node's annotation (guarded by resourceVersion) and of processes that each run the
 * decision as CloudAllocator does: write a record (guarded, from a view that may be stale), call
 * for a record of their own once, record the outcome. Processes restart (forgetting what they did),
 * writes land with their answer lost, the cloud throttles, assigns, loses its answer or refuses.
 */
describe('the request protocol in a model of racing, restarting processes', () => {
  type Action =
    | { kind: 'sync'; p: number; writeLost: boolean }
    | { kind: 'refresh'; p: number }
    | { kind: 'restart'; p: number }
    | { kind: 'outcome'; state: RangeRequestState; recordFails: boolean };
  const action: fc.Arbitrary<Action> = fc.oneof(
    fc.record({ kind: fc.constant('sync' as const), p: fc.integer({ min: 0, max: 2 }), writeLost: fc.boolean() }),
    fc.record({ kind: fc.constant('refresh' as const), p: fc.integer({ min: 0, max: 2 }) }),
    fc.record({ kind: fc.constant('restart' as const), p: fc.integer({ min: 0, max: 2 }) }),
    fc.record({ kind: fc.constant('outcome' as const), state: fc.constantFrom<RangeRequestState>('done', 'unknown', 'throttled', 'refused'), recordFails: fc.boolean() }),
  );

  it('the cloud never gets two calls it could have acted on, and every call is for the record then on the Node', () => {
    fc.assert(
      fc.property(fc.array(action, { minLength: 1, maxLength: 60 }), (actions) => {
        const store: { value: string | undefined; rv: number } = { value: undefined, rv: 1 };
        const procs = [0, 1, 2].map(() => ({ own: { written: new Set<string>(), called: new Set<string>() }, view: { ...store } }));
        const calls: { id: string; state: RangeRequestState }[] = [];
        let nextId = 0;
        // The cloud's next answer; the model's outcome actions change it.
        let answer: { state: RangeRequestState; recordFails: boolean } = { state: 'done', recordFails: false };
        for (const a of actions) {
          if (a.kind === 'outcome') answer = a;
          else if (a.kind === 'refresh') procs[a.p]!.view = { ...store };
          else if (a.kind === 'restart') procs[a.p] = { own: { written: new Set(), called: new Set() }, view: { ...store } };
          else {
            const p = procs[a.p]!;
            for (let attempt = 0; attempt < 5; attempt++) {
              const step = decideRangeRequest({ request, annotation: p.view.value, own: p.own });
              if (step.kind === 'wait') break;
              let record: RangeRequestRecord;
              if (step.kind === 'call') record = step.record;
              else {
                record = rec({ id: `r${++nextId}`, attempt: step.attempt });
                p.own.written.add(record.id);
                if (p.view.rv !== store.rv) {
                  p.view = { ...store };
                  continue;
                }
                store.value = formatRangeRequest(record);
                store.rv++;
                if (a.writeLost) {
                  // The write landed but its answer was lost: read the node again and decide.
                  p.view = { ...store };
                  continue;
                }
              }
              expect(parseRangeRequest(store.value!)).toMatchObject({ id: record.id, state: 'asking' });
              p.own.called.add(record.id);
              calls.push({ id: record.id, state: answer.state });
              if (!answer.recordFails) {
                store.value = formatRangeRequest({ ...record, state: answer.state });
                store.rv++;
              }
              break;
            }
          }
        }
        // Throttled calls did nothing; of the others there is at most one, ever.
        expect(calls.filter((c) => c.state !== 'throttled').length).toBeLessThanOrEqual(1);
        expect(new Set(calls.map((c) => c.id)).size).toBe(calls.length);
      }),
      { numRuns: 500 },
    );
  });
});
