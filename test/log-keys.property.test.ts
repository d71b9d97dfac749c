// Every log line holds each key once, whatever the children bind and the calls repeat: a call's
// field equal to a binding is dropped, one that differs is kept as `<key>.call`, a child's binding
// replaces its parent's (the logger's name included), and pino's own keys (level, time, msg) are
// never written twice.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createLogger } from '../src/log.js';
import { findDuplicateJsonKey } from '../src/util/json-text.js';

function capture(): { lines: string[]; log: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const destination = new Writable({ write(chunk, _enc, done) { lines.push(...String(chunk).split('\n').filter((l) => l !== '')); done(); } });
  return { lines, log: createLogger({ level: 'debug', destination }) };
}

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('log lines', () => {
  it('the provider line of issue 38: "provider" once', async () => {
    const { lines, log } = capture();
    log.child({ provider: 'acme' }).warn({ provider: 'acme', operation: 'instancesMetadata' }, 'answer checked: a note');
    await flush();
    expect(findDuplicateJsonKey(lines[0]!)).toBeUndefined();
    expect(JSON.parse(lines[0]!)).toMatchObject({ provider: 'acme', operation: 'instancesMetadata', msg: 'answer checked: a note' });
  });

  it('each key once, over random bindings and fields', async () => {
    const key = fc.constantFrom('provider', 'node', 'controller', 'msg', 'level', 'time', 'name', 'err', 'count');
    const value = fc.oneof(fc.constantFrom('a', 'b'), fc.integer({ min: 0, max: 2 }));
    const fields = fc.dictionary(key, value, { maxKeys: 5 });
    await fc.assert(fc.asyncProperty(fc.array(fields, { maxLength: 3 }), fields, fc.boolean(), async (chain, call, withMessage) => {
      const { lines, log } = capture();
      let logger = log;
      const bound: Record<string, unknown> = { name: 'node-address-ccm' };
      // pino itself refuses a binding named level; the others are legal.
      for (const b of chain) {
        const { level: _ignored, ...rest } = b;
        logger = logger.child(rest);
        Object.assign(bound, rest);
      }
      if (withMessage) logger.info(call, 'the message');
      else logger.info(call);
      await flush();
      expect(lines).toHaveLength(1);
      expect(findDuplicateJsonKey(lines[0]!)).toBeUndefined();
      const line = JSON.parse(lines[0]!) as Record<string, unknown>;
      const lineKeys = ['time', 'msg'];
      for (const [k, v] of Object.entries(bound)) expect(line[lineKeys.includes(k) ? `${k}.bound` : k]).toEqual(v);
      for (const [k, v] of Object.entries(call)) {
        const reserved = ['level', 'time'].includes(k) || (withMessage && k === 'msg');
        if (!reserved && !(k in bound)) expect(line[k]).toEqual(v);
        else if (!reserved && !lineKeys.includes(k) && bound[k] === v) expect(line[`${k}.call`]).toBeUndefined();
        else if (!reserved && !lineKeys.includes(k)) expect(line[`${k}.call`]).toEqual(v);
        else if (reserved) expect(line[`${k}.call`]).toEqual(v);
      }
      if (withMessage) expect(line.msg).toBe('the message');
    }), { numRuns: 300 });
  });
});
