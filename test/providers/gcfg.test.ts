// The shared gcfg reader against gcfg's own test tables (go-gcfg/gcfg v1.2.3: read_test.go,
// issues_test.go, scanner/scanner_test.go), transcribed as data. gcfg's tests read in strict mode
// (ReadStringInto); the cloud providers read with FatalOnly, so a case gcfg fails only for data
// it cannot store (an unknown section or variable) is expected here to succeed with that data in
// `ignored`. Each Go test struct becomes a schema: a `[]string` field is 'strings', `bool` 'bool',
// `int` 'int32' (the values in the tables fit), a `map[string]*struct` a section with subsections.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { GcfgError, readGcfg, scanGcfg, type GcfgFile, type GcfgSchema } from '../../providers/gcfg.js';

const sp4096 = ' '.repeat(4096);

// read_test.go's structs.
const BASIC: GcfgSchema = {
  Section: { variables: { Name: 'string', Int: 'int32', PName: 'string' } },
  'Hyphen-In-Section': { variables: { 'Hyphen-In-Name': 'string' } },
  // `unexported cBasicS1` has no place (gcfg sets exported fields only); `Exported` has none.
  Exported: { variables: {} },
  'tag-name': { variables: { Name: 'string', Int: 'int32', PName: 'string' } },
};
const MULTI: GcfgSchema = {
  M1: { variables: { Multi: 'strings' } },
  // `NonMulti nonMulti` is a named slice, which gcfg does not read as multi-valued; the table only
  // writes `multi` there, an unknown name.
  M2: { variables: {} },
  M3: { variables: { PMulti: 'strings' } },
};
const SUBS: GcfgSchema = { Sub: { subsections: true, variables: { Name: 'string' } } };
const BOOL: GcfgSchema = { Section: { variables: { Bool: 'bool' } } };
const NUM: GcfgSchema = { Section: { variables: { Int: 'int32' } }, N1: { variables: { Int: 'int32' } } };
const UNI: GcfgSchema = { 甲: { variables: { 乙: 'string' } } };
const ISSUES: GcfgSchema = { Main: { variables: { Foo: 'string' } }, Sect: { variables: { Var: 'bool' } } };

type Values = Record<string, Record<string, string | boolean | number | string[]>>;

/** Every value the file set, by `[Section]` or `[Section "sub"]`, for comparing with a table. */
function snapshot(file: GcfgFile, schema: GcfgSchema): Values {
  const out: Values = {};
  for (const [name, s] of Object.entries(schema)) {
    const sections = s.subsections ? [...file.subsections(name).values()] : [file.section(name)];
    for (const section of sections) {
      const values: Values[string] = {};
      for (const v of section.names()) {
        const kind = s.variables[v]!;
        values[v] = kind === 'strings' ? section.strings(v)!.values.slice() : kind === 'bool' ? section.bool(v)!.value : kind === 'int32' ? section.int32(v)!.value : section.string(v)!.value;
      }
      if (s.subsections || Object.keys(values).length > 0) out[section.header] = values;
    }
  }
  return out;
}

type Want = { values: Values; ignored?: string[] } | 'fatal';
const ok = (values: Values, ignored?: string[]): Want => (ignored ? { values, ignored } : { values });
const name = (v: string): Values => ({ '[Section]': { Name: v } });

function check(text: string, schema: GcfgSchema, want: Want): void {
  if (want === 'fatal') {
    expect(() => readGcfg(text, schema)).toThrow(GcfgError);
    return;
  }
  const file = readGcfg(text, schema);
  expect(snapshot(file, schema)).toEqual(want.values);
  expect(file.ignored).toEqual(want.ignored ?? []);
}

// read_test.go, readtests, group by group (the index is the case's place in its group).
const readtests: Array<[group: string, cases: Array<[text: string, schema: GcfgSchema, want: Want]>]> = [
  ['scanning', [
    ['[section]\nname=value', BASIC, ok(name('value'))],
    ['[section]\nname="val#ue"', BASIC, ok(name('val#ue'))],
    ['[hyphen-in-section]\nhyphen-in-name=value', BASIC, ok({ '[Hyphen-In-Section]': { 'Hyphen-In-Name': 'value' } })],
    ['[section]\nname=""', BASIC, ok(name(''))],
    ['[section]\nname=" "', BASIC, ok(name(' '))],
    ['[section]\nname="value"', BASIC, ok(name('value'))],
    ['[section]\nname=" value "', BASIC, ok(name(' value '))],
    ['\n[section]\nname="va ; lue"', BASIC, ok(name('va ; lue'))],
    ['[section]\nname="val" "ue"', BASIC, ok(name('val ue'))],
    ['[section]\nname="value', BASIC, 'fatal'],
    ['[section]\nname="va\\\\lue"', BASIC, ok(name('va\\lue'))],
    ['[section]\nname="va\\"lue"', BASIC, ok(name('va"lue'))],
    ['[section]\nname="va\\nlue"', BASIC, ok(name('va\nlue'))],
    ['[section]\nname="va\\tlue"', BASIC, ok(name('va\tlue'))],
    ['[section]\nname=\\"value\\"', BASIC, ok(name('"value"'))],
    ['\n[section]\nname=\\', BASIC, 'fatal'],
    ['\n[section]\nname=\\a', BASIC, 'fatal'],
    ['\n[section]\nname="val\\a"', BASIC, 'fatal'],
    ['\n[section]\nname=val\\', BASIC, 'fatal'],
    ['\n[sub "A\\\n"]\nname=value', SUBS, 'fatal'],
    ['\n[sub "A\\\t"]\nname=value', SUBS, 'fatal'],
    ['[section]\nname=value \\\n value', BASIC, ok(name('value  value'))],
    ['[section]\nname="value \\\n value"', BASIC, 'fatal'],
  ]],
  ['scanning:whitespace', [
    [' \n[section]\nname=value', BASIC, ok(name('value'))],
    [' [section]\nname=value', BASIC, ok(name('value'))],
    ['\t[section]\nname=value', BASIC, ok(name('value'))],
    ['[ section]\nname=value', BASIC, ok(name('value'))],
    ['[section ]\nname=value', BASIC, ok(name('value'))],
    ['[section]\n name=value', BASIC, ok(name('value'))],
    ['[section]\nname =value', BASIC, ok(name('value'))],
    ['[section]\nname= value', BASIC, ok(name('value'))],
    ['[section]\nname=value ', BASIC, ok(name('value'))],
    ['[section]\r\nname=value', BASIC, ok(name('value'))],
    ['[section]\r\nname=value\r\n', BASIC, ok(name('value'))],
    [';cmnt\r\n[section]\r\nname=value\r\n', BASIC, ok(name('value'))],
    [`${sp4096}[section]\nname=value\n`, BASIC, ok(name('value'))],
    [`[${sp4096}section]\nname=value\n`, BASIC, ok(name('value'))],
    [`[section${sp4096}]\nname=value\n`, BASIC, ok(name('value'))],
    [`[section]${sp4096}\nname=value\n`, BASIC, ok(name('value'))],
    [`[section]\n${sp4096}name=value\n`, BASIC, ok(name('value'))],
    [`[section]\nname${sp4096}=value\n`, BASIC, ok(name('value'))],
    [`[section]\nname=${sp4096}value\n`, BASIC, ok(name('value'))],
    [`[section]\nname=value\n${sp4096}`, BASIC, ok(name('value'))],
  ]],
  ['scanning:comments', [
    ['; cmnt\n[section]\nname=value', BASIC, ok(name('value'))],
    ['# cmnt\n[section]\nname=value', BASIC, ok(name('value'))],
    [' ; cmnt\n[section]\nname=value', BASIC, ok(name('value'))],
    ['\t; cmnt\n[section]\nname=value', BASIC, ok(name('value'))],
    ['\n[section]; cmnt\nname=value', BASIC, ok(name('value'))],
    ['\n[section] ; cmnt\nname=value', BASIC, ok(name('value'))],
    ['\n[section]\nname=value; cmnt', BASIC, ok(name('value'))],
    ['\n[section]\nname=value ; cmnt', BASIC, ok(name('value'))],
    ['\n[section]\nname="value" ; cmnt', BASIC, ok(name('value'))],
    ['\n[section]\nname=value ; "cmnt', BASIC, ok(name('value'))],
    ['\n[section]\nname="va ; lue" ; cmnt', BASIC, ok(name('va ; lue'))],
    ['\n[section]\nname=; cmnt', BASIC, ok(name(''))],
  ]],
  ['scanning:subsections', [
    ['\n[sub "A"]\nname=value', SUBS, ok({ '[Sub "A"]': { Name: 'value' } })],
    ['\n[sub "b"]\nname=value', SUBS, ok({ '[Sub "b"]': { Name: 'value' } })],
    ['\n[sub "A\\\\"]\nname=value', SUBS, ok({ '[Sub "A\\\\"]': { Name: 'value' } })],
    ['\n[sub "A\\""]\nname=value', SUBS, ok({ '[Sub "A\\""]': { Name: 'value' } })],
  ]],
  ['syntax', [
    ['\n[section]\n=', BASIC, 'fatal'],
    ['name=value', BASIC, 'fatal'],
    ['\n[]\nname=value', BASIC, 'fatal'],
    ['\n[sub ""]\nname=value', SUBS, 'fatal'],
  ]],
  ['setting', [
    ['[section]\nname=value', BASIC, ok(name('value'))],
    ['[section]', BASIC, ok({})],
    ['[section]\npname=value', BASIC, ok({ '[Section]': { PName: 'value' } })],
    ['[m3]', MULTI, ok({})],
    ['[m3]\npmulti', MULTI, ok({ '[M3]': { PMulti: [] } })],
    ['[m3]\npmulti=value', MULTI, ok({ '[M3]': { PMulti: ['value'] } })],
    ['[m3]\npmulti=value1\npmulti=value2', MULTI, ok({ '[M3]': { PMulti: ['value1', 'value2'] } })],
    // Strict gcfg fails the next five; FatalOnly drops those warnings.
    ['\n[nonexistent]\nname=value', BASIC, ok({}, ['[nonexistent]'])],
    ['\n[section "nonexistent"]\nname=value', BASIC, ok({}, ['[section "nonexistent"]'])],
    ['\n[section]\nnonexistent=value', BASIC, ok({}, ['[Section] nonexistent'])],
    ['[hyphen-in-section]\nhyphen-in-name=value', BASIC, ok({ '[Hyphen-In-Section]': { 'Hyphen-In-Name': 'value' } })],
    ['[unexported]\nname=value', BASIC, ok({}, ['[unexported]'])],
    ['[exported]\nunexported=value', BASIC, ok({}, ['[Exported] unexported'])],
    ['[甲]\n乙=丙', UNI, ok({ '[甲]': { 乙: '丙' } })],
    ['[tag-name]\nname=value', BASIC, ok({ '[tag-name]': { Name: 'value' } })],
    ['\n[sub "A"]\n[sub "B"]', SUBS, ok({ '[Sub "A"]': {}, '[Sub "B"]': {} })],
  ]],
  ['multivalue', [
    ['\n[m1]', MULTI, ok({})],
    ['\n[m1]\nmulti=value', MULTI, ok({ '[M1]': { Multi: ['value'] } })],
    ['\n[m1]\nmulti=value1\nmulti=value2', MULTI, ok({ '[M1]': { Multi: ['value1', 'value2'] } })],
    // "blank" empties the multi-valued slice.
    ['\n[m1]\nmulti\nmulti=value1\nmulti=value2', MULTI, ok({ '[M1]': { Multi: ['value1', 'value2'] } })],
    ['\n[m2]', MULTI, ok({})],
    ['\n[m2]\nmulti=value', MULTI, ok({}, ['[M2] multi'])],
    ['\n[m2]\nmulti=value1\nmulti=value2', MULTI, ok({}, ['[M2] multi'])],
  ]],
  ['type:string', [
    ['[section]\nname=value', BASIC, ok(name('value'))],
    ['[section]\nname=', BASIC, ok(name(''))],
  ]],
  ['type:bool', [
    ...(['true', 'yes', 'on', '1', 'tRuE'] as const).map((w): [string, GcfgSchema, Want] => [`[section]\nbool=${w}`, BOOL, ok({ '[Section]': { Bool: true } })]),
    ...(['false', 'no', 'off', '0', 'NO'] as const).map((w): [string, GcfgSchema, Want] => [`[section]\nbool=${w}`, BOOL, ok({ '[Section]': { Bool: false } })]),
    // "blank" value handled as true
    ['[section]\nbool', BOOL, ok({ '[Section]': { Bool: true } })],
    ...(['maybe', 't', 'truer', '2', '-1'] as const).map((w): [string, GcfgSchema, Want] => [`[section]\nbool=${w}`, BOOL, 'fatal']),
  ]],
  ['type:numeric', [
    ['[section]\nint=0', NUM, ok({ '[Section]': { Int: 0 } })],
    ['[section]\nint=1', NUM, ok({ '[Section]': { Int: 1 } })],
    ['[section]\nint=-1', NUM, ok({ '[Section]': { Int: -1 } })],
    ['[section]\nint=0.2', NUM, 'fatal'],
    ['[section]\nint=1e3', NUM, 'fatal'],
    // sized ints are read as decimal or hex, not octal
    ['[n1]\nint=010', NUM, ok({ '[N1]': { Int: 10 } })],
    ['[n1]\nint=0x10', NUM, ok({ '[N1]': { Int: 16 } })],
  ]],
];

describe('readGcfg: gcfg read_test.go, read with FatalOnly', () => {
  for (const [group, cases] of readtests) {
    it.each(cases.map((c, i) => [`${group}:${i}`, ...c] as const))('%s %j', (_id, text, schema, want) => check(text, schema, want));
  }

  it('TestReadStringIntoExtraData: an unknown variable is dropped, the rest is read', () => {
    check('\n\t[section]\n\tname = value\n\tname2 = value2', { Section: { variables: { Name: 'string' } } }, ok(name('value'), ['[Section] name2']));
  });

  it('utf8bomtests: ReadInto (what the cloud providers call) does not skip a byte-order mark', () => {
    expect(() => readGcfg('\ufeff[section]\nname=value', BASIC)).toThrow(/line 1: illegal character U\+FEFF \(a byte-order mark/);
  });
});

describe('readGcfg: gcfg issues_test.go', () => {
  it.each(['[section]\nint=X', '[section]\nint=', '[section]\nint=1A'])('issue 1: %j is an error', (text) => check(text, NUM, 'fatal'));
  it.each(['[main]\n;\nfoo = bar\n', '[main]\r\n;\r\nfoo = bar\r\n'])('issue 2: a bare ";" line is a comment (%j)', (text) => check(text, ISSUES, ok({ '[Main]': { Foo: 'bar' } })));
  it('issue 11: a value error names the section and the variable', () => {
    expect(() => readGcfg('[Sect]\nVar=X', ISSUES)).toThrow('[Sect] Var (line 2): "X" is not a boolean');
  });
  it('issue 12: an escaped double quote outside quotes (testdata/issue12.gcfg)', () => {
    check('[section]\n\tname = \\"value\\"\n', BASIC, ok(name('"value"')));
  });
});

describe('scanGcfg: gcfg scanner/scanner_test.go', () => {
  // tokens: identifiers with non-ASCII digits, and the value literals, each read as `name = <literal>`.
  it.each(['foobar', 'a۰۱۸', 'foo६४', 'bar９８７６', 'foo-bar'])('identifier %s', (ident) => {
    expect(scanGcfg(`[${ident}]\n${ident} = v`)).toEqual([
      { kind: 'header', section: ident, subsection: undefined, line: 1 },
      { kind: 'variable', section: ident, subsection: undefined, name: ident, blank: false, value: 'v', line: 2 },
    ]);
  });

  const values: Array<[literal: string, value: string]> = [
    ['"\\n"', '\n'],
    ['"foobar"', 'foobar'],
    ['"foo\\nbar"', 'foo\nbar'],
    ['"foo\\"bar"', 'foo"bar'],
    ['"foo\\\\bar"', 'foo\\bar'],
    ['"foobar" ;', 'foobar'],
    ['"foobar" #', 'foobar'],
    ['"foobar";', 'foobar'],
    ['"foobar"#', 'foobar'],
    ['foobar ', 'foobar'],
    ['"foo" "bar" ', 'foo bar'],
    ['foo\\\nbar', 'foobar'],
    ['foo\\\r\nbar', 'foobar'],
    ['\\"foobar\\"', '"foobar"'],
    // stripCR: a carriage return is dropped wherever it is, inside quotes too.
    ['foo \r bar', 'foo  bar'],
    ['"foo\rbar"', 'foobar'],
  ];
  it.each(values)('value literal %j', (literal, value) => {
    const st = scanGcfg(`[s]\nname =${literal}\n`);
    expect(st[1]).toMatchObject({ kind: 'variable', name: 'name', blank: false, value });
  });

  // TestScanErrors, placed where each token can appear (a line start, a value, a subsection name).
  const errors: Array<[text: string, message: RegExp]> = [
    ['[s]\n\x07', /line 2: illegal character U\+0007$/],
    ['[s]\n/', /line 2: illegal character U\+002F '\/'/],
    ['[s]\n_', /line 2: illegal character U\+005F '_'/],
    ['[s]\n…', /line 2: illegal character U\+2026 '…'/],
    ['[s "', /line 1: the quoted subsection name is not terminated/],
    ['[s "\n"]', /line 1: the quoted subsection name is not terminated/],
    ['[s]\nn = "', /line 2: the quoted value is not terminated/],
    ['[s]\nn = "\n', /line 2: the quoted value is not terminated/],
    ['[s]\nn = \\', /line 2: a "\\" outside quotes must end the line/],
    ['[s]\nn = \\\r', /line 2: a "\\" outside quotes must end the line/],
    ...['z', 'a', 'b', 'f', 'r', 't', 'v', '0'].map((e): [string, RegExp] => [`[s "\\${e}"]`, /line 1: unknown escape sequence in a subsection name/]),
    ...['z', 'a', 'b', 'f', 'r', 'v', '0'].map((e): [string, RegExp] => [`[s]\nn = "\\${e}"`, /line 2: unknown escape sequence "\\[a-z0]" in a quoted value/]),
  ];
  it.each(errors)('error: %j', (text, message) => {
    expect(() => scanGcfg(text)).toThrow(GcfgError);
    expect(() => scanGcfg(text)).toThrow(message);
  });

  it('a value continued over a line break counts lines on', () => {
    expect(scanGcfg('[s]\na = x \\\n y\nb = z').map((s) => s.line)).toEqual([1, 2, 4]);
  });

  it('NUL and text that was not UTF-8 are errors', () => {
    expect(() => scanGcfg('[s]\nn = a\0')).toThrow('line 2: illegal character NUL');
    expect(() => scanGcfg('[s]\n; caf\ufffd\n')).toThrow('line 2: the file is not valid UTF-8');
  });
});

describe('readGcfg: what the cloud configs rely on', () => {
  const AWSISH: GcfgSchema = {
    Global: { variables: { Region: 'string', NodeIPFamilies: 'strings', Flag: 'bool', Port: 'int32' } },
    ServiceOverride: { subsections: true, variables: { Service: 'string', URL: 'string' } },
  };

  it('a bare multi-valued name clears the list; "Name =" adds an empty value (cloud-provider-aws issue 39)', () => {
    const g = readGcfg('[Global]\nNodeIPFamilies = ipv6\nNodeIPFamilies\nNodeIPFamilies = ipv4\n', AWSISH).section('Global');
    expect(g.strings('NodeIPFamilies')).toEqual({ values: ['ipv4'], lines: [4], line: 4 });
    expect(readGcfg('[Global]\nNodeIPFamilies = ipv4\nNodeIPFamilies =\n', AWSISH).section('Global').strings('NodeIPFamilies')?.values).toEqual(['ipv4', '']);
    const cleared = readGcfg('[Global]\nNodeIPFamilies = ipv4\nNodeIPFamilies ; nothing after\n', AWSISH).section('Global');
    expect(cleared.strings('NodeIPFamilies')).toEqual({ values: [], lines: [], line: 3 });
    expect(readGcfg('[Global]\n', AWSISH).section('Global').strings('NodeIPFamilies')).toBeUndefined();
  });

  it('a repeated single-valued name keeps the last value, with its line', () => {
    expect(readGcfg('[Global]\nRegion = a\nregion = b\nREGION = c', AWSISH).section('Global').string('Region')).toEqual({ value: 'c', line: 4 });
  });

  it('a blank string or number is an error naming the variable', () => {
    expect(() => readGcfg('[Global]\nRegion', AWSISH)).toThrow('[Global] Region (line 2): needs a value ("Region = …")');
    expect(() => readGcfg('[Global]\nPort\n', AWSISH)).toThrow('[Global] Port (line 2): needs a value');
  });

  it('int32: range, hex, and what Go\'s scanner refuses', () => {
    const port = (v: string) => readGcfg(`[Global]\nPort = ${v}`, AWSISH).section('Global').int32('Port')?.value;
    expect([port('2147483647'), port('-2147483648'), port('+7'), port('0x7fffffff'), port('-0x10'), port('0x1_0'), port('" 5 "')]).toEqual([2147483647, -2147483648, 7, 2147483647, -16, 16, 5]);
    for (const bad of ['2147483648', '0X10', '+0x10', '0x', '1_0', '0x10_', '5 5']) {
      expect(() => port(bad), bad).toThrow(GcfgError);
    }
  });

  it('names fold as Go\'s EqualFold does, subsection names do not', () => {
    const file = readGcfg('[gLoBaL]\nnodeipfamilie\u017f = ipv4\n[serviceoverride "A"]\nservice = ec2\n[ServiceOverride "a"]\nURL = u\n', AWSISH);
    expect(file.section('Global').strings('NodeIPFamilies')?.values).toEqual(['ipv4']);
    expect([...file.subsections('ServiceOverride').keys()]).toEqual(['A', 'a']);
  });

  it('a header without a subsection is the subsection "" of a map section; a subsection of a plain section is ignored whole', () => {
    const file = readGcfg('[ServiceOverride]\nService = ec2\n[Global "x"]\nRegion = nowhere\n', AWSISH);
    expect(file.subsections('ServiceOverride').get('')?.string('Service')?.value).toBe('ec2');
    expect(file.section('Global').string('Region')).toBeUndefined();
    expect(file.ignored).toEqual(['[Global "x"]']);
  });

  it('asking for a variable the schema does not declare is a bug, not input', () => {
    const g = readGcfg('', AWSISH).section('Global');
    expect(() => g.string('region')).toThrow(/declares no string variable "region"/);
    expect(() => g.bool('Region')).toThrow(/declares no bool variable "Region"/);
  });
});

describe('readGcfg properties', () => {
  const SCHEMA: GcfgSchema = { Global: { variables: { One: 'string', Many: 'strings', Flag: 'bool' } } };
  // Characters a value may hold; gcfg drops carriage returns, so they cannot round-trip.
  const valueText = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '\t', '\n', '"', '\\', ';', '#', '=', '[', ']', 'é', '甲') });
  const quote = (v: string): string => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;

  it('any value written quoted and escaped reads back as written', () => {
    fc.assert(
      fc.property(valueText, (v) => {
        expect(readGcfg(`[Global]\nOne = ${quote(v)}\n`, SCHEMA).section('Global').string('One')?.value).toBe(v);
      }),
    );
  });

  it('a multi-valued name holds the values written after its last bare line; a single-valued one the last value', () => {
    const op = fc.oneof(fc.constant<undefined>(undefined), valueText);
    fc.assert(
      fc.property(fc.array(op, { maxLength: 12 }), fc.array(valueText, { maxLength: 4 }), (ops, ones) => {
        const lines = ['[Global]', ...ops.map((v) => (v === undefined ? 'Many' : `many = ${quote(v)}`)), ...ones.map((v) => `ONE=${quote(v)}`)];
        const g = readGcfg(lines.join('\n'), SCHEMA).section('Global');
        const lastClear = ops.lastIndexOf(undefined);
        expect(g.strings('Many')?.values).toEqual(ops.length === 0 ? undefined : ops.slice(lastClear + 1));
        expect(g.string('One')?.value).toBe(ones.length === 0 ? undefined : ones[ones.length - 1]);
      }),
    );
  });

  it('names in any case, comments after values and unknown lines anywhere change nothing', () => {
    const plain = fc.stringMatching(/^[a-z0-9.:/-]{1,12}$/);
    const junk = fc.constantFrom('Unknown = 1', '[Other]\nx = y\n[Global]', '; note', '# note', '', '  \t', '[Global "sub"]\nOne = no\n[Global]');
    const casing = (s: string, mask: number): string => [...s].map((c, i) => ((mask >> i) & 1 ? c.toUpperCase() : c.toLowerCase())).join('');
    fc.assert(
      fc.property(plain, plain, fc.boolean(), fc.nat(), fc.array(junk, { maxLength: 3 }), fc.constantFrom(';', '#', ' ;', ' #'), (one, many, flag, mask, extra, comment) => {
        const text = [`[${casing('Global', mask)}]`, ...extra, `${casing('One', mask >> 3)} = ${one}${comment} c`, ...extra, `${casing('MANY', mask >> 5)}=${many}${comment}`, `${casing('flag', mask >> 7)} = ${flag}`].join('\n');
        const g = readGcfg(text, SCHEMA).section('Global');
        expect([g.string('One')?.value, g.strings('Many')?.values, g.bool('Flag')?.value]).toEqual([one, [many], flag]);
      }),
    );
  });

  it('any text either reads or fails with a GcfgError naming a line', () => {
    const text = fc.string({ unit: fc.constantFrom('[', ']', '"', '\\', '=', ';', '#', ' ', '\n', '\r', 'a', 'G', '1', '-', '_', 'é', '\0', '\ufeff') });
    fc.assert(
      fc.property(text, (t) => {
        try {
          readGcfg(`[Global]\n${t}`, SCHEMA);
        } catch (err) {
          expect(err).toBeInstanceOf(GcfgError);
          expect((err as Error).message).toMatch(/line \d+/);
        }
      }),
      { numRuns: 500 },
    );
  });
});
