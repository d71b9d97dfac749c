// JSON text read the way a YAML 1.2 parser with unique keys reads it, fast. Configuration files
// are YAML, and JSON is YAML; but the YAML parser takes about 80 s for a 21 MB JSON file that
// JSON.parse reads in half a second. JSON.parse alone keeps the last of two equal keys where the
// YAML parser refuses the file, so the keys are checked too.

/** A key that appears twice in one object of the text. */
export interface DuplicateKey {
  key: string;
  /** Keys from the top level to the object that holds the duplicate (array indexes as numbers). */
  path: (string | number)[];
  /** 1-based line of the second occurrence. */
  line: number;
}

interface Frame {
  keys: Set<string> | undefined; // undefined: an array
  index: number;
  key: string | number | undefined; // where this container sits in its parent
}

/**
 * The first key that appears twice in one object of `text`, read as JSON (escapes decoded, so
 * "a" and "\u0061" are the same key); undefined when there is none. The text must be valid JSON
 * (JSON.parse it first): this only walks its structure.
 */
export function findDuplicateJsonKey(text: string): DuplicateKey | undefined {
  const stack: Frame[] = [];
  let expectKey = false;
  let pendingKey: string | undefined;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (top?.keys && expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (top.keys.has(key)) return { key, path: pathOf(stack), line: lineAt(text, i) };
        top.keys.add(key);
        pendingKey = key;
        expectKey = false;
      }
      i = end + 1;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = stack[stack.length - 1];
      const key = parent === undefined ? undefined : parent.keys ? pendingKey : parent.index;
      stack.push({ keys: c === 0x7b ? new Set() : undefined, index: 0, key });
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.keys) expectKey = true;
      else if (top) top.index++;
    }
    i++;
  }
  return undefined;
}

/** Index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let j = start;
  for (;;) {
    j = text.indexOf('"', j + 1);
    if (j < 0) return text.length;
    // Escaped when preceded by an odd number of backslashes.
    let backslashes = 0;
    for (let k = j - 1; text.charCodeAt(k) === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return j;
  }
}

function pathOf(stack: Frame[]): (string | number)[] {
  return stack.slice(1).map((f) => f.key as string | number);
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let k = text.indexOf('\n'); k >= 0 && k < index; k = text.indexOf('\n', k + 1)) line++;
  return line;
}

/**
 * The value of a configuration text when it is JSON (an object or array at the top, after
 * whitespace); undefined when it is not JSON, so the caller parses it as YAML. Throws on a
 * duplicate key, as a YAML parser with unique keys does.
 */
export function parseJsonConfig(text: string): { value: unknown } | undefined {
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined; // YAML flow style, comments…: the YAML parser decides, with its own message
  }
  const dup = findDuplicateJsonKey(text);
  if (dup) throw duplicateKeyError(dup);
  return { value };
}

/** The error for a duplicate key, naming it, where it is and its line. */
export function duplicateKeyError(dup: DuplicateKey): DuplicateJsonKeyError {
  const where = dup.path.length > 0 ? ` in ${dup.path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.').replace(/\.\[/g, '[')}` : '';
  return new DuplicateJsonKeyError(`duplicate key ${JSON.stringify(dup.key)}${where} (line ${dup.line}): each key may appear once`, dup);
}

export class DuplicateJsonKeyError extends Error {
  override name = 'DuplicateJsonKeyError';
  constructor(message: string, readonly duplicate: DuplicateKey) {
    super(message);
  }
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++;
  return i;
}

/**
 * Where the members of the JSON object whose `{` is at `open` lie in `text`: four offsets per
 * member (the key with its quotes, then the value, which may carry whitespace around it), and the
 * index just past the closing `}`. Only the object's own punctuation is checked; each key and
 * value is valid JSON only if JSON.parse of its span says so. Undefined when the punctuation is
 * not JSON's (a missing colon, a trailing comma, an empty value, an unclosed object).
 */
export function jsonObjectMembers(text: string, open: number): { spans: number[]; end: number } | undefined {
  if (text.charCodeAt(open) !== 0x7b /* { */) return undefined;
  const spans: number[] = [];
  let i = skipSpace(text, open + 1);
  if (text.charCodeAt(i) === 0x7d /* } */) return { spans, end: i + 1 };
  for (;;) {
    if (text.charCodeAt(i) !== 0x22 /* " */) return undefined;
    const keyEnd = stringEnd(text, i) + 1;
    if (keyEnd > text.length) return undefined;
    const keyStart = i;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a /* : */) return undefined;
    const valueStart = ++i;
    // The value ends at the first comma or closing brace outside any string or bracket of its own.
    let depth = 0;
    for (;;) {
      if (i >= text.length) return undefined;
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i = stringEnd(text, i) + 1;
        continue;
      }
      if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        if (depth === 0) break;
        depth--;
      } else if (c === 0x2c && depth === 0) break;
      i++;
    }
    if (skipSpace(text, valueStart) === i) return undefined;
    spans.push(keyStart, keyEnd, valueStart, i);
    if (text.charCodeAt(i) === 0x7d) return { spans, end: i + 1 };
    if (text.charCodeAt(i) !== 0x2c) return undefined; // a `]` closing nothing of ours
    i = skipSpace(text, i + 1);
  }
}

/** A JSON configuration text with one large top-level object field split into its members. */
export interface SplitJsonConfig {
  /** The top-level object, with the split field as an empty object. */
  rest: Record<string, unknown>;
  /** How many members the split field has. */
  readonly size: number;
  /** Member i's key (a string of its own, not a slice that would keep the whole text alive); throws SyntaxError on a bad escape. */
  key(i: number): string;
  /** Member i's value, parsed now; throws SyntaxError when its text is not JSON. */
  value(i: number): unknown;
}

/**
 * A JSON text whose top-level object field `field` (say, a node list of 140,000 entries) is read
 * one member at a time: JSON.parse of the whole text holds every entry's parsed tree at once
 * (about 200 MB for 140,000 nodes, against 26 MB of text), where a member parsed, checked and
 * kept in a compact form leaves garbage that dies young. Undefined when the text is not a JSON
 * object at the top, has no such field holding an object, or its punctuation outside the members'
 * values is not JSON: the caller then parses it whole (parseJsonConfig), with that path's errors.
 * The text as a whole is valid JSON exactly when `rest` parsed (it did, or this returned
 * undefined) and every value(i) parses. Duplicate keys are not looked for here
 * (findDuplicateJsonKey).
 */
export function splitJsonConfig(text: string, field: string): SplitJsonConfig | undefined {
  const top = jsonObjectMembers(text, skipSpace(text, 0));
  if (!top || skipSpace(text, top.end) !== text.length) return undefined;
  for (let m = 0; m < top.spans.length; m += 4) {
    let key: unknown;
    try {
      key = JSON.parse(text.slice(top.spans[m], top.spans[m + 1]));
    } catch {
      return undefined;
    }
    if (key !== field) continue;
    const open = skipSpace(text, top.spans[m + 2]!);
    const inner = jsonObjectMembers(text, open);
    if (!inner || skipSpace(text, inner.end) !== top.spans[m + 3]) return undefined;
    let rest: unknown;
    try {
      rest = JSON.parse(`${text.slice(0, open)}{}${text.slice(inner.end)}`);
    } catch {
      return undefined;
    }
    const spans = inner.spans;
    return {
      rest: rest as Record<string, unknown>,
      size: spans.length / 4,
      key: (i) => JSON.parse(text.slice(spans[4 * i], spans[4 * i + 1])) as string,
      value: (i) => JSON.parse(text.slice(spans[4 * i + 2], spans[4 * i + 3])) as unknown,
    };
  }
  return undefined;
}
