// The JSON fast path of configuration files must read exactly what the YAML parser (unique keys)
// reads: the same value, and a refusal for the same texts. Tables for the edges, then random
// JSON texts with keys drawn from a small alphabet (so duplicates are common) checked against
// the yaml package itself.
import fc from 'fast-check';
import { parse as parseYAML } from 'yaml';
import { describe, expect, it } from 'vitest';
import { DuplicateJsonKeyError, findDuplicateJsonKey, parseJsonConfig, splitJsonConfig, type SplitJsonConfig } from '../../src/util/json-text.js';

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

/** The split read back as one value, the way JSON.parse would give it (the last of two equal keys wins in both). */
function joined(split: SplitJsonConfig, field: string): unknown {
  const members: Record<string, unknown> = {};
  for (let i = 0; i < split.size; i++) members[split.key(i)] = split.value(i);
  return { ...split.rest, [field]: members };
}

describe('splitJsonConfig', () => {
  it.each([
    ['{"nodes": {}}', { nodes: {} }],
    [' \n{ "a" : 1 , "nodes" : { "n1" : { "x" : [1, {"y": "}"}] } ,"n2":null } }\n', { a: 1, nodes: { n1: { x: [1, { y: '}' }] }, n2: null } }],
    ['{"nodes": {"q\\"}": "]", "\\u006e": {}}, "b": [{}]}', { nodes: { 'q"}': ']', n: {} }, b: [{}] }],
  ])('%s', (text, value) => {
    const split = splitJsonConfig(text, 'nodes');
    expect(split).toBeDefined();
    expect(joined(split!, 'nodes')).toEqual(value);
    expect(JSON.parse(text)).toEqual(value);
  });

  it.each([
    ['not an object at the top', '[{"nodes": {}}]'],
    ['no such field', '{"other": {}}'],
    ['the field not an object', '{"nodes": [1]}'],
    ['the field null', '{"nodes": null}'],
    ['a missing colon', '{"nodes": {"n1" {}}}'],
    ['a trailing comma', '{"nodes": {"n1": {},}}'],
    ['an empty value', '{"nodes": {"n1": , "n2": {}}}'],
    ['an unclosed object', '{"nodes": {"n1": {}'],
    ['text after the top object', '{"nodes": {}} x'],
    ['a bracket closing nothing', '{"nodes": {"n1": {}]}'],
    ['a bracket for a comma', '{"nodes": {"n1": {}] "n2": {}}}'],
    ['invalid outside the field', '{"a": tru, "nodes": {}}'],
  ])('leaves %s to the whole parse', (_why, text) => {
    expect(splitJsonConfig(text, 'nodes')).toBeUndefined();
  });

  it('gives each key as a string of its own, not a slice of the text', () => {
    const name = 'ip-10-0-0-5.eu-west-1.compute.internal';
    const split = splitJsonConfig(`{"nodes": {"${name}": {}}}`, 'nodes')!;
    expect(split.key(0)).toBe(name);
  });

  // A text with a "nodes" object, the members' values any JSON, then one character dropped,
  // doubled or swapped for a structural one about half the time.
  const configText = fc.tuple(jsonText, jsonText, fc.array(fc.tuple(fc.constantFrom('n1', 'n2', 'a\\"'), jsonText.map((t) => t)), { maxLength: 4 }), fc.constantFrom('', ' ', '\n'))
    .map(([before, after, members, ws]) => `${ws}{"b":${before},${ws}"nodes":${ws}{${members.map(([k, v]) => `"${k}"${ws}:${ws}${v}`).join(`,${ws}`)}}${ws},"c":${after}}${ws}`);
  // Half of the mutations hit punctuation, where a scanner's slip would hide.
  const mutated = fc.tuple(configText, fc.nat(), fc.boolean(), fc.constantFrom('drop', 'double', '{', '}', '[', ']', ',', ':', '"', ' ', 'keep', 'keep')).map(([text, at, punctuation, how]) => {
    const marks = [...text].flatMap((c, k) => ('{}[],:'.includes(c) ? [k] : []));
    const i = punctuation && marks.length > 0 ? marks[at % marks.length]! : at % text.length;
    if (how === 'keep') return text;
    if (how === 'drop') return text.slice(0, i) + text.slice(i + 1);
    if (how === 'double') return text.slice(0, i + 1) + text.slice(i);
    return text.slice(0, i) + how + text.slice(i + 1);
  });

  it('accepts a text only when it is JSON, reads it as JSON.parse does, and splits every JSON text with the field', () => {
    fc.assert(fc.property(mutated, (text) => {
      let whole: { value: unknown } | undefined;
      try {
        whole = { value: JSON.parse(text) as unknown };
      } catch {
        whole = undefined;
      }
      const split = splitJsonConfig(text, 'nodes');
      let read: { value: unknown } | undefined;
      try {
        read = split && { value: joined(split, 'nodes') };
      } catch (err) {
        expect(err).toBeInstanceOf(SyntaxError);
        read = undefined;
      }
      // Sound: a split that reads whole is valid JSON, with the same value where no key repeats
      // (a repeated top-level "nodes" is the caller's duplicate-key check).
      if (read) {
        expect(whole, text).toBeDefined();
        if (!findDuplicateJsonKey(text)) expect(read.value).toEqual(whole!.value);
      }
      // Complete: every JSON text with a "nodes" object splits, so large files take this path.
      const v = whole?.value as Record<string, unknown> | undefined;
      if (v && typeof v === 'object' && !Array.isArray(v) && v.nodes && typeof v.nodes === 'object' && !Array.isArray(v.nodes) && !findDuplicateJsonKey(text)) {
        expect(read, text).toBeDefined();
      }
    }), { numRuns: 3000 });
  });
});
