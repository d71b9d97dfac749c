// Two Go standard-library text rules that operators see through Kubernetes' messages and flags:
// fmt's %q (strconv.Quote) for values quoted in errors, events and logs, and strings.TrimSpace for
// the items of kubelet's --node-ip. JavaScript's JSON.stringify and String.prototype.trim differ
// from both on a handful of characters, so the same input would read differently here.

// unicode.IsPrint: letters, marks, numbers, punctuation, symbols, and the ASCII space only.
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const SHORT_ESCAPES: Record<number, string> = { 7: '\\a', 8: '\\b', 12: '\\f', 10: '\\n', 13: '\\r', 9: '\\t', 11: '\\v' };

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}

/**
 * The text Go's fmt %q (strconv.Quote) prints for `s`: printable characters as they are (non-ASCII
 * included), the C escapes, \xHH below U+0020 and for U+007F, \uHHHH and \UHHHHHHHH for every
 * other character that is not printable (U+0085, U+00A0, U+FEFF, ...).
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (PRINTABLE.test(ch)) out += ch;
    else if (SHORT_ESCAPES[c] !== undefined) out += SHORT_ESCAPES[c];
    else if (c < 0x20 || c === 0x7f) out += `\\x${hex(c, 2)}`;
    // A lone surrogate cannot reach Go as text (its JSON decoder makes it U+FFFD, printable).
    else if (c >= 0xd800 && c <= 0xdfff) out += '\ufffd';
    else if (c < 0x10000) out += `\\u${hex(c, 4)}`;
    else out += `\\U${hex(c, 8)}`;
  }
  return `${out}"`;
}

// unicode.IsSpace: the ASCII white space, U+0085 (NEL), U+00A0 and the Unicode space separators.
// Unlike JavaScript's trim, U+FEFF (byte order mark) is not space for Go.
const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEADING = new RegExp(`^[${GO_SPACE}]+`);
const TRAILING = new RegExp(`[${GO_SPACE}]+$`);

/** Go's strings.TrimSpace. */
export function goTrimSpace(s: string): string {
  return s.replace(LEADING, '').replace(TRAILING, '');
}
