// gcfg, the INI dialect of cloud-provider-aws's cloud.conf and cloud-provider-gcp's gce.conf, read
// the way both read it: gopkg.in/gcfg.v1 v1.2.3 (go-gcfg/gcfg scanner/scanner.go, read.go, set.go,
// types/bool.go, types/int.go) called as `gcfg.FatalOnly(gcfg.ReadInto(&cfg, reader))`
// (cloud-provider-aws pkg/providers/v1/aws.go readAWSCloudConfig, cloud-provider-gcp
// providers/gce/gce.go readConfig). Pure: text in, values or a GcfgError out.
//
// The rules, each from gcfg's source and its tests (read_test.go, scanner/scanner_test.go):
// - `[Section]` and `[Section "subsection"]` headers; names start with a letter and hold letters,
//   digits and `-`; section and variable names match the declared ones case-insensitively (Go's
//   strings.EqualFold), subsection names exactly.
// - `;` and `#` start a comment anywhere outside a quoted string, with or without a space before:
//   `name=value;note` is `value`.
// - A value runs to the end of the line; white space around it is dropped, inside it kept.
//   Double quotes may wrap any part of it (`"a" "b"` is `a b`), and inside them `\\`, `\"`, `\n`
//   and `\t` are the only escapes. Outside quotes `\"` is a quote and `\` at the end of a line
//   continues the value on the next one; any other backslash is an error. Carriage returns are
//   dropped.
// - `Name = value` sets a single-valued variable: written twice, the last value holds. `Name =`
//   sets the empty string.
// - A name written without `=` (blank) is `true` for a bool, CLEARS a multi-valued variable, and is
//   an error for a string or a number.
// - A multi-valued variable collects one value per line in file order; `Name =` adds an empty one.
// - A bool is one of true/yes/on/1, false/no/off/0, in any case; anything else is an error.
// - Data with no place in the schema (an unknown section or variable, a subsection of a section
//   declared without them) is a warning to gcfg, and FatalOnly drops warnings: it is ignored, and
//   listed in `ignored` so an adapter can log it. Every other problem is fatal.
// - A byte-order mark is not skipped (ReadInto does not; only ReadFileInto would): U+FEFF is an
//   illegal character there, and here. Bytes that are not UTF-8 (U+FFFD once decoded) and NUL are
//   errors, as in gcfg's scanner.

/** How gcfg stores a variable, from the Go field's type in the upstream config struct. */
export type GcfgKind =
  /** `string`: a blank name is an error. */
  | 'string'
  /** `bool`: a blank name is true. */
  | 'bool'
  /** `int32`: decimal, or hexadecimal with `0x` (gcfg's default for sized ints); a blank name is an error. */
  | 'int32'
  /** `[]string`, multi-valued: one value per line; a blank name clears the list. */
  | 'strings';

export interface GcfgSectionSchema {
  /** Declared variable names (matched case-insensitively) and how each is stored. */
  readonly variables: Readonly<Record<string, GcfgKind>>;
  /**
   * True for a section declared as a map (`map[string]*struct{…}`): every `[Name "sub"]` is its own
   * set of variables, and `[Name]` alone is the subsection "" (set.go keys the map by the empty
   * name). False: a header with a subsection is ignored with everything under it.
   */
  readonly subsections?: boolean;
}

/** Declared section names (matched case-insensitively) and their variables. */
export type GcfgSchema = Readonly<Record<string, GcfgSectionSchema>>;

export class GcfgError extends Error {
  constructor(readonly line: number, problem: string, where?: string) {
    super(where === undefined ? `line ${line}: ${problem}` : `${where} (line ${line}): ${problem}`);
    this.name = 'GcfgError';
  }
}

// ---------------------------------------------------------------------------------------------
// Syntax: gcfg's scanner and parser. Any error here is fatal in gcfg too.

/** One header or assignment of a gcfg file, in file order, names as written. */
export type GcfgStatement =
  | { readonly kind: 'header'; readonly section: string; readonly subsection: string | undefined; readonly line: number }
  | {
      readonly kind: 'variable';
      readonly section: string;
      readonly subsection: string | undefined;
      readonly name: string;
      /** Written without `=`. */
      readonly blank: boolean;
      /** The value with quotes and escapes resolved; '' when blank. */
      readonly value: string;
      readonly line: number;
    };

type Token =
  | { readonly tok: 'eof' | 'eol' | 'assign' | 'lbrack' | 'rbrack'; readonly line: number }
  | { readonly tok: 'ident' | 'string'; readonly text: string; readonly line: number };

const EOF = -1;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const isWhiteSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === CR;
const isLetter = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x80 && /\p{L}/u.test(String.fromCodePoint(c)));
const isDigit = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x80 && /\p{Nd}/u.test(String.fromCodePoint(c)));

/** How gcfg's scanner names a character in its errors: U+0007, U+002F '/'. */
function describe(c: number): string {
  const code = `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  if (c === 0xfeff) return `${code} (a byte-order mark; save the file without one)`;
  return c < 0x20 || c === 0x7f ? code : `${code} '${String.fromCodePoint(c)}'`;
}

class Scanner {
  /** The current character (a code point), EOF at the end. */
  private ch = 0x20;
  /** Index of the character after `ch`. */
  private next = 0;
  /** Line of `ch`. */
  line = 1;
  /** The token after `=` is a value, scanned by its own rules. */
  private valueNext = false;

  constructor(private readonly src: string) {
    this.advance();
  }

  private advance(): void {
    if (this.ch === LF) this.line++;
    if (this.next >= this.src.length) {
      this.ch = EOF;
      return;
    }
    const c = this.src.codePointAt(this.next)!;
    this.next += c > 0xffff ? 2 : 1;
    if (c === 0) throw new GcfgError(this.line, 'illegal character NUL');
    if (c === 0xfffd || (c >= 0xd800 && c <= 0xdfff)) throw new GcfgError(this.line, 'the file is not valid UTF-8');
    this.ch = c;
  }

  scan(): Token {
    for (;;) {
      while (isWhiteSpace(this.ch)) this.advance();
      const line = this.line;
      if (this.valueNext) {
        this.valueNext = false;
        return { tok: 'string', text: this.value(), line };
      }
      if (isLetter(this.ch)) return { tok: 'ident', text: this.identifier(), line };
      const c = this.ch;
      this.advance();
      switch (c) {
        case EOF:
          return { tok: 'eof', line };
        case LF:
          return { tok: 'eol', line };
        case QUOTE:
          return { tok: 'string', text: this.subsectionName(line), line };
        case 0x5b:
          return { tok: 'lbrack', line };
        case 0x5d:
          return { tok: 'rbrack', line };
        case 0x3b: // ;
        case 0x23: // #
          while (this.ch !== LF && this.ch !== EOF) this.advance();
          continue;
        case 0x3d: // =
          this.valueNext = true;
          return { tok: 'assign', line };
        default:
          throw new GcfgError(line, `illegal character ${describe(c)}`);
      }
    }
  }

  private identifier(): string {
    let out = '';
    while (isLetter(this.ch) || isDigit(this.ch) || this.ch === 0x2d) {
      out += String.fromCodePoint(this.ch);
      this.advance();
    }
    return out;
  }

  /** A quoted subsection name, its opening quote read: only `\\` and `\"` escape. */
  private subsectionName(line: number): string {
    let out = '';
    while (this.ch !== QUOTE) {
      const c = this.ch;
      if (c === LF || c === EOF) throw new GcfgError(line, 'the quoted subsection name is not terminated');
      this.advance();
      if (c === BACKSLASH) {
        const e = this.ch;
        if (e !== BACKSLASH && e !== QUOTE) throw new GcfgError(this.line, `unknown escape sequence in a subsection name: "\\${e === EOF ? '' : String.fromCodePoint(e)}" (only \\\\ and \\")`);
        this.advance();
        out += String.fromCodePoint(e);
      } else {
        out += String.fromCodePoint(c);
      }
    }
    this.advance();
    return out;
  }

  /**
   * A value, from its first non-blank character to the end of its line (or a comment outside
   * quotes), quotes and escapes resolved. White space outside quotes is held back until something
   * follows it, which drops it at the end of the value (gcfg trims only there).
   */
  private value(): string {
    const line = this.line;
    let out = '';
    let held = '';
    let inQuote = false;
    while (inQuote || (this.ch !== EOF && this.ch !== LF && this.ch !== 0x3b && this.ch !== 0x23)) {
      const c = this.ch;
      if (c === EOF || (inQuote && c === LF)) throw new GcfgError(line, 'the quoted value is not terminated (a quote opens a string that must close on the same line)');
      this.advance();
      if (inQuote) {
        if (c === QUOTE) inQuote = false;
        else if (c === BACKSLASH) out += this.valueEscape();
        else if (c !== CR) out += String.fromCodePoint(c);
      } else if (c === BACKSLASH) {
        if (this.ch === CR) this.advance();
        if (this.ch !== LF && this.ch !== QUOTE) {
          throw new GcfgError(this.line, 'a "\\" outside quotes must end the line (to continue the value) or come before a double quote');
        }
        // A continued line adds nothing itself; an escaped quote is a quote.
        out += held + (this.ch === QUOTE ? '"' : '');
        held = '';
        this.advance();
      } else if (c === QUOTE) {
        out += held;
        held = '';
        inQuote = true;
      } else if (isWhiteSpace(c)) {
        if (c !== CR) held += String.fromCodePoint(c);
      } else {
        out += held + String.fromCodePoint(c);
        held = '';
      }
    }
    return out;
  }

  private valueEscape(): string {
    const e = this.ch;
    const line = this.line;
    this.advance();
    switch (e) {
      case BACKSLASH:
        return '\\';
      case QUOTE:
        return '"';
      case 0x6e:
        return '\n';
      case 0x74:
        return '\t';
      default:
        throw new GcfgError(line, `unknown escape sequence "\\${e === EOF || e === LF ? '' : String.fromCodePoint(e)}" in a quoted value (only \\\\, \\", \\n and \\t)`);
    }
  }
}

/** The statements of a gcfg file; throws GcfgError on anything gcfg's parser refuses. */
export function scanGcfg(text: string): GcfgStatement[] {
  const s = new Scanner(text);
  const out: GcfgStatement[] = [];
  let section: string | undefined;
  let subsection: string | undefined;
  let t = s.scan();
  for (;;) {
    switch (t.tok) {
      case 'eof':
        return out;
      case 'eol':
        t = s.scan();
        break;
      case 'lbrack': {
        const line = t.line;
        t = s.scan();
        if (t.tok !== 'ident') throw new GcfgError(t.line, 'expected a section name after "["');
        const name = t.text;
        let sub: string | undefined;
        t = s.scan();
        if (t.tok === 'string') {
          if (t.text === '') throw new GcfgError(t.line, `[${name} ""]: empty subsection name`);
          sub = t.text;
          t = s.scan();
        }
        if (t.tok !== 'rbrack') throw new GcfgError(t.line, sub === undefined ? `expected "]" or a quoted subsection name after "[${name}"` : `expected "]" after [${name} "${sub}"`);
        t = s.scan();
        if (t.tok !== 'eol' && t.tok !== 'eof') throw new GcfgError(t.line, 'expected the end of the line (or a comment) after the section header');
        section = name;
        subsection = sub;
        out.push({ kind: 'header', section, subsection, line });
        break;
      }
      case 'ident': {
        const { text: name, line } = t;
        if (section === undefined) throw new GcfgError(line, `"${name}" appears before any [section] header`);
        t = s.scan();
        if (t.tok === 'eol' || t.tok === 'eof') {
          out.push({ kind: 'variable', section, subsection, name, blank: true, value: '', line });
          break;
        }
        if (t.tok !== 'assign') throw new GcfgError(t.line, `expected "=" after "${name}"`);
        const value = s.scan();
        // The scanner reads what follows "=" as a value, always a string token, always ending at a
        // line break, a comment or the end of the file.
        if (value.tok !== 'string') throw new Error(`gcfg scanner: expected a value after "=", got ${value.tok}`);
        out.push({ kind: 'variable', section, subsection, name, blank: false, value: value.text, line });
        t = s.scan();
        break;
      }
      default:
        throw new GcfgError(t.line, 'expected a [section] header or a "name = value" line');
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Meaning: gcfg's set() against a declared schema.

/**
 * Go's strings.EqualFold, for comparing a written name with a declared (ASCII) one: lower case,
 * plus the one non-ASCII letter whose simple case folding reaches an ASCII letter that
 * toLowerCase leaves alone (U+017F, long s; the Kelvin sign already lowers to "k").
 */
export function foldGcfgName(name: string): string {
  return name.toLowerCase().replace(/\u017f/g, 's');
}

export interface GcfgSetting<T> {
  readonly value: T;
  /** Line of the assignment that holds (the last one). */
  readonly line: number;
}

export interface GcfgList {
  readonly values: readonly string[];
  /** Line of each value. */
  readonly lines: readonly number[];
  /** Line of the last assignment, a clearing one included. */
  readonly line: number;
}

type Stored = { kind: 'string'; value: string; line: number } | { kind: 'bool'; value: boolean; line: number } | { kind: 'int32'; value: number; line: number } | { kind: 'strings'; values: string[]; lines: number[]; line: number };

/** The values one section (or one subsection) was given. */
export class GcfgSection {
  readonly #variables = new Map<string, { name: string; kind: GcfgKind }>();
  readonly #values = new Map<string, Stored>();

  constructor(
    /** The declared section name. */
    readonly name: string,
    readonly subsection: string | undefined,
    schema: GcfgSectionSchema,
  ) {
    for (const [declared, kind] of Object.entries(schema.variables)) this.#variables.set(foldGcfgName(declared), { name: declared, kind });
  }

  /** `[Name]` or `[Name "sub"]`, for messages. */
  get header(): string {
    return this.subsection === undefined ? `[${this.name}]` : `[${this.name} ${JSON.stringify(this.subsection)}]`;
  }

  /** The declared variable a written name stands for, if any. */
  variable(written: string): { name: string; kind: GcfgKind } | undefined {
    return this.#variables.get(foldGcfgName(written));
  }

  /** Declared names the file set (a cleared list included), in the order first set. */
  names(): string[] {
    return [...this.#values.keys()];
  }

  string(name: string): GcfgSetting<string> | undefined {
    const v = this.#get(name, 'string');
    return v?.kind === 'string' ? { value: v.value, line: v.line } : undefined;
  }

  bool(name: string): GcfgSetting<boolean> | undefined {
    const v = this.#get(name, 'bool');
    return v?.kind === 'bool' ? { value: v.value, line: v.line } : undefined;
  }

  int32(name: string): GcfgSetting<number> | undefined {
    const v = this.#get(name, 'int32');
    return v?.kind === 'int32' ? { value: v.value, line: v.line } : undefined;
  }

  /** A multi-valued variable; undefined when never written, empty when cleared last. */
  strings(name: string): GcfgList | undefined {
    const v = this.#get(name, 'strings');
    return v?.kind === 'strings' ? { values: [...v.values], lines: [...v.lines], line: v.line } : undefined;
  }

  #get(name: string, kind: GcfgKind): Stored | undefined {
    const declared = this.variable(name);
    // A caller asking for a name its own schema lacks, or with another type, is a bug, not input.
    if (declared === undefined || declared.name !== name || declared.kind !== kind) {
      throw new Error(`gcfg: ${this.header} declares no ${kind} variable ${JSON.stringify(name)}`);
    }
    return this.#values.get(name);
  }

  /** Applies one assignment as gcfg's set() does; throws GcfgError on a fatal one. */
  set(declared: { name: string; kind: GcfgKind }, statement: { blank: boolean; value: string; line: number }): void {
    const { name, kind } = declared;
    const { blank, value, line } = statement;
    const where = `${this.header} ${name}`;
    switch (kind) {
      case 'strings': {
        // A blank name starts the list again (set.go sets the slice to its zero value).
        const prev = this.#values.get(name);
        const list = prev?.kind === 'strings' && !blank ? prev : { kind, values: [] as string[], lines: [] as number[], line };
        list.line = line;
        if (!blank) {
          list.values.push(value);
          list.lines.push(line);
        }
        this.#values.set(name, list);
        return;
      }
      case 'bool':
        this.#values.set(name, { kind, value: blank ? true : parseGcfgBool(value, line, where), line });
        return;
      case 'string':
        if (blank) throw blankError(line, where, name);
        this.#values.set(name, { kind, value, line });
        return;
      case 'int32':
        if (blank) throw blankError(line, where, name);
        this.#values.set(name, { kind, value: parseGcfgInt32(value, line, where), line });
        return;
    }
  }
}

function blankError(line: number, where: string, name: string): GcfgError {
  return new GcfgError(line, `needs a value ("${name} = …"); a name alone sets a boolean to true or clears a list`, where);
}

const BOOL_WORDS: ReadonlyMap<string, boolean> = new Map([
  ['true', true], ['yes', true], ['on', true], ['1', true],
  ['false', false], ['no', false], ['off', false], ['0', false],
]);

/** gcfg's types.ParseBool: the eight words, in any case. */
export function parseGcfgBool(value: string, line: number, where: string): boolean {
  const b = BOOL_WORDS.get(value.toLowerCase());
  if (b === undefined) throw new GcfgError(line, `${JSON.stringify(value)} is not a boolean (true, yes, on, 1, false, no, off or 0)`, where);
  return b;
}

/**
 * gcfg's types.ParseInt in its default mode for sized ints (decimal or hex): decimal digits with an
 * optional sign, leading zeros still decimal ("010" is 10); `0x` (lower-case x) makes it hex, as Go
 * reads it with fmt's %v, which allows a sign before and underscores between the digits.
 */
export function parseGcfgInt32(value: string, line: number, where: string): number {
  const v = value.trim();
  let n: number | undefined;
  if (/^[+-]?[0-9]+$/.test(v)) n = Number(v);
  else if (/^-?0x_?[0-9a-fA-F]+(?:_[0-9a-fA-F]+)*$/.test(v)) n = (v.startsWith('-') ? -1 : 1) * Number.parseInt(v.replace(/^-?0x/, '').replace(/_/g, ''), 16);
  if (n === undefined) throw new GcfgError(line, `${JSON.stringify(value)} is not an integer (decimal, or hexadecimal with 0x)`, where);
  if (n < -(2 ** 31) || n > 2 ** 31 - 1) throw new GcfgError(line, `${JSON.stringify(value)} is out of range for a 32-bit integer`, where);
  return n;
}

export interface GcfgFile {
  /** A section declared without subsections; always present (gcfg's zero struct). */
  section(name: string): GcfgSection;
  /** The subsections of a section declared with them, by name, in the order first seen. */
  subsections(name: string): ReadonlyMap<string, GcfgSection>;
  /** What gcfg warns about and FatalOnly drops: `[Section]` of an unknown section (or a subsection gcfg cannot store), `[Section] Name` of an unknown variable. */
  readonly ignored: readonly string[];
}

/**
 * Reads `text` against `schema` as `gcfg.FatalOnly(gcfg.ReadInto(&cfg, …))` does. Throws GcfgError
 * (naming the line, and the section and variable where there is one) on anything fatal; the
 * values are then not used at all.
 */
export function readGcfg(text: string, schema: GcfgSchema): GcfgFile {
  const sections = new Map<string, { name: string; schema: GcfgSectionSchema }>();
  for (const [name, s] of Object.entries(schema)) sections.set(foldGcfgName(name), { name, schema: s });
  const plain = new Map<string, GcfgSection>();
  const mapped = new Map<string, Map<string, GcfgSection>>();
  for (const { name, schema: s } of sections.values()) {
    if (s.subsections) mapped.set(name, new Map());
    else plain.set(name, new GcfgSection(name, undefined, s));
  }
  const ignored = new Set<string>();

  /** The section a statement writes into, or undefined (and noted) when gcfg has no place for it. */
  const target = (st: GcfgStatement): GcfgSection | undefined => {
    const declared = sections.get(foldGcfgName(st.section));
    if (declared === undefined || (!declared.schema.subsections && st.subsection !== undefined)) {
      ignored.add(st.subsection === undefined ? `[${st.section}]` : `[${st.section} ${JSON.stringify(st.subsection)}]`);
      return undefined;
    }
    if (!declared.schema.subsections) return plain.get(declared.name)!;
    const subs = mapped.get(declared.name)!;
    const key = st.subsection ?? '';
    let sub = subs.get(key);
    if (sub === undefined) {
      sub = new GcfgSection(declared.name, key, declared.schema);
      subs.set(key, sub);
    }
    return sub;
  };

  for (const st of scanGcfg(text)) {
    const section = target(st);
    if (section === undefined || st.kind === 'header') continue;
    const declared = section.variable(st.name);
    if (declared === undefined) {
      ignored.add(`${section.header} ${st.name}`);
      continue;
    }
    section.set(declared, st);
  }

  return {
    section(name) {
      const s = plain.get(name);
      if (s === undefined) throw new Error(`gcfg: the schema declares no section [${name}] without subsections`);
      return s;
    },
    subsections(name) {
      const s = mapped.get(name);
      if (s === undefined) throw new Error(`gcfg: the schema declares no section [${name}] with subsections`);
      return s;
    },
    ignored: [...ignored],
  };
}
