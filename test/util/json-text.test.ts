// The JSON fast path of configuration files must read exactly what the YAML parser (unique keys)
// reads: the same value, and a refusal for the same texts. Tables for the edges, then random
// JSON texts with keys drawn from a small alphabet (so duplicates are common) checked against
// the yaml package itself.
import fc from 'fast-check';
import { parse as parseYAML } from 'yaml';
import { describe, expect, it } from 'vitest';
import { DuplicateJsonKeyError, findDuplicateJsonKey, parseJsonConfig } from '../../src/util/json-text.js';

describe('findDuplicateJsonKey', () => {
  it.each([
    ['{}', undefined],
    ['{"a":1,"b":2}', undefined],
    ['{"a":1,"a":2}', { key: 'a', path: [], line: 1 }],
    ['{"a":{"x":1},"b":{"x":2}}', undefined],
    ['{"nodes":{"n1":{},\n"n1":{}}}', { key: 'n1', path: ['nodes'], line: 2 }],
    ['{"a":"b","b":"a"}', undefined], // values are not keys
    ['{"a":["a","a"]}', undefined],
    ['[{"k":1},{"k":1,"k":2}]', { key: 'k', path: [1], line: 1 }],
    ['{"l":[[],[{"x":0,"x":0}]]}', { key: 'x', path: ['l', 1, 0], line: 1 }],
    ['{"a":1,"\\u0061":2}', { key: 'a', path: [], line: 1 }], // the same key once decoded
    ['{"q\\"":1,"q\\\\":2}', undefined], // escaped quote and backslash are different keys
    ['{"q\\\\":1,"q\\\\":2}', { key: 'q\\', path: [], line: 1 }],
    ['{"x":{"a":1},"a":2}', undefined], // a key of a nested object is not one of its parent
  ])('%s', (text, expected) => {
    JSON.parse(text); // the table holds valid JSON only
    expect(findDuplicateJsonKey(text)).toEqual(expected);
  });
});

describe('parseJsonConfig', () => {
  it('leaves YAML to the YAML parser', () => {
    expect(parseJsonConfig('nodes:\n  n1: {}\n')).toBeUndefined();
    expect(parseJsonConfig('{a: 1}')).toBeUndefined(); // flow style, not JSON
    expect(parseJsonConfig('{"a": 1} # a comment')).toBeUndefined();
    expect(parseJsonConfig('')).toBeUndefined();
  });

  it('reads JSON, leading whitespace included', () => {
    expect(parseJsonConfig('\n  {"nodes": {"n1": {"zone": "z"}}}\n')).toEqual({ value: { nodes: { n1: { zone: 'z' } } } });
  });

  it('refuses a duplicate key with its place', () => {
    expect(() => parseJsonConfig('{"nodes": {\n"n1": {},\n"n1": {}}}')).toThrow(new DuplicateJsonKeyError('duplicate key "n1" in nodes (line 3): each key may appear once', { key: 'n1', path: ['nodes'], line: 3 }));
    expect(() => parseJsonConfig('{"a": [{"k": 1, "k": 2}]}')).toThrow('duplicate key "k" in a[0] (line 1)');
  });
});

/** JSON texts whose keys come from a four-letter alphabet, escapes and whitespace included. */
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string; object: string; array: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.constant('null'), fc.constant('true'), fc.integer().map(String), fc.string({ maxLength: 4 }).map((s) => JSON.stringify(s))),
    tie('object'), tie('array')),
  object: fc.array(fc.tuple(fc.constantFrom('a', 'b', '\\u0061', 'a\\"', 'b\\\\'), tie('value'), fc.constantFrom('', ' ', '\n')), { maxLength: 4 })
    .map((entries) => `{${entries.map(([k, v, ws]) => `${ws}"${k}":${ws}${v}`).join(',')}}`),
  array: fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
})).object;

describe('against the yaml package (uniqueKeys)', () => {
  it('refuses exactly the texts YAML refuses, and otherwise reads the same value', () => {
    fc.assert(fc.property(jsonText, (text) => {
      let yaml: { value: unknown } | { error: string };
      try {
        yaml = { value: parseYAML(text, { uniqueKeys: true }) as unknown };
      } catch (err) {
        yaml = { error: (err as Error).message };
      }
      let json: { value: unknown } | { error: string };
      try {
        json = parseJsonConfig(text) ?? { error: 'not JSON' };
      } catch (err) {
        expect(err).toBeInstanceOf(DuplicateJsonKeyError);
        json = { error: (err as Error).message };
      }
      expect('error' in json).toBe('error' in yaml);
      if ('value' in json && 'value' in yaml) expect(json.value).toEqual(yaml.value);
    }), { numRuns: 2000 });
  });
});
