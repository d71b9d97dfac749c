// WarningSummary over random passes: whatever was added, a flush writes exactly one line per
// reason, the counts add up to what was added, a reason's examples are its first few in order, a
// reason seen once is logged as it came, and a flush leaves nothing behind.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { pino } from 'pino';
import { WarningSummary, type Logger } from '../src/log.js';

interface Line { reason: string; count?: number; examples?: Array<{ node: string; message: string }>; node?: string; msg: string; hint?: string }

function capture(): { log: Logger; lines: Line[] } {
  const lines: Line[] = [];
  return { lines, log: pino({ level: 'warn' }, { write: (l: string) => void lines.push(JSON.parse(l) as Line) }) as Logger };
}

describe('WarningSummary', () => {
  it('one line per reason, counts that add up, the first examples in order, a lone one as it came', () => {
    const addition = fc.record({ reason: fc.constantFrom('CloudProviderError', 'InstanceNotFound', 'ProvidedNodeIPInvalid'), node: fc.string({ minLength: 1, maxLength: 6 }) });
    fc.assert(
      fc.property(fc.array(addition, { maxLength: 60 }), fc.integer({ min: 1, max: 5 }), (adds, keep) => {
        const summary = new WarningSummary(keep);
        for (const a of adds) summary.add(a.reason, { node: a.node, message: `${a.reason} on ${a.node}` });
        const { log, lines } = capture();
        summary.flush(log, (reason, count) => `${count} nodes: ${reason}`, (reason) => `see ${reason}`);
        const reasons = [...new Set(adds.map((a) => a.reason))];
        expect(lines.map((l) => l.reason).sort()).toEqual(reasons.sort());
        for (const line of lines) {
          const mine = adds.filter((a) => a.reason === line.reason);
          if (mine.length === 1) {
            expect(line).toMatchObject({ node: mine[0]!.node, msg: `${line.reason} on ${mine[0]!.node}` });
            expect(line.count).toBeUndefined();
          } else {
            expect(line).toMatchObject({ count: mine.length, msg: `${mine.length} nodes: ${line.reason}`, hint: `see ${line.reason}` });
            expect(line.examples).toEqual(mine.slice(0, keep).map((a) => ({ node: a.node, message: `${a.reason} on ${a.node}` })));
          }
        }
        // Nothing is kept for the next pass.
        const after = capture();
        summary.flush(after.log, () => 'again');
        expect(after.lines).toEqual([]);
        expect(summary.size).toBe(0);
      }),
      { numRuns: 500 },
    );
  });
});
