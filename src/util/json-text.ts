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
  if (dup) {
    const where = dup.path.length > 0 ? ` in ${dup.path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.').replace(/\.\[/g, '[')}` : '';
    throw new DuplicateJsonKeyError(`duplicate key ${JSON.stringify(dup.key)}${where} (line ${dup.line}): each key may appear once`, dup);
  }
  return { value };
}

export class DuplicateJsonKeyError extends Error {
  override name = 'DuplicateJsonKeyError';
  constructor(message: string, readonly duplicate: DuplicateKey) {
    super(message);
  }
}
