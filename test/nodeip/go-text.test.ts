// Go's %q and strings.TrimSpace, as operators see them in Kubernetes' messages and in what kubelet
// makes of --node-ip. Expected texts are written out by hand from Go's rules (strconv.Quote:
// unicode.IsPrint characters as they are, C escapes, \xHH below U+0020 and for U+007F, \u / \U
// otherwise; unicode.IsSpace for trimming), not computed by the code under test.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { goQuote, goTrimSpace, parseKubeletNodeIPFlag } from '../../src/nodeip/index.js';

describe('goQuote (fmt %q)', () => {
  it.each<[string, string, string]>([
    ['plain text', '10.0.0.1', '"10.0.0.1"'],
    ['the empty string', '', '""'],
    ['quote and backslash', 'a"b\\c', '"a\\"b\\\\c"'],
    ['C escapes', '\u0007\b\f\n\r\t\v', '"\\a\\b\\f\\n\\r\\t\\v"'],
    ['U+0000', '\u0000', '"\\x00"'],
    ['U+0001 (JSON would write \\u0001)', '10.0.0.1\u0001', '"10.0.0.1\\x01"'],
    ['U+001B', '\u001b', '"\\x1b"'],
    ['U+007F', '\u007f', '"\\x7f"'],
    ['U+0085 (NEL, a control character)', '\u0085', '"\\u0085"'],
    ['U+00A0 (no-break space, not printable for Go)', '\u00a0', '"\\u00a0"'],
    ['U+00AD (soft hyphen, format)', '\u00ad', '"\\u00ad"'],
    ['U+200B (zero width space, format)', '\u200b', '"\\u200b"'],
    ['U+2028 (line separator)', '\u2028', '"\\u2028"'],
    ['U+FEFF (byte order mark)', '\ufeff', '"\\ufeff"'],
    ['U+E000 (private use)', '\ue000', '"\\ue000"'],
    ['U+E0001 (language tag, beyond the BMP)', '\u{e0001}', '"\\U000e0001"'],
    ['printable non-ASCII stays as it is', 'zürich-é-東京-😀', '"zürich-é-東京-😀"'],
    ['a lone surrogate reaches Go as U+FFFD', '\ud800', '"\ufffd"'],
  ])('%s', (_name, input, quoted) => {
    expect(goQuote(input)).toBe(quoted);
  });

  it('agrees with JSON.stringify on printable ASCII', () => {
    fc.assert(fc.property(fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }), (s) => {
      expect(goQuote(s)).toBe(JSON.stringify(s));
    }));
  });
});

describe('goTrimSpace (strings.TrimSpace)', () => {
  it.each<[string, string, string]>([
    ['ASCII white space', ' \t\n\v\f\r10.0.0.1 \r\n', '10.0.0.1'],
    ['U+0085 is space for Go (not for String.prototype.trim)', '\u008510.0.0.1\u0085', '10.0.0.1'],
    ['U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000', '\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u30001\u3000', '1'],
    ['U+FEFF is not space for Go (String.prototype.trim removes it)', '\ufeff10.0.0.1\ufeff', '\ufeff10.0.0.1\ufeff'],
    ['U+200B is not space', '\u200b1\u200b', '\u200b1\u200b'],
    ['inner space stays', ' a b ', 'a b'],
    ['all space', ' \u0085 ', ''],
  ])('%s', (_name, input, trimmed) => {
    expect(goTrimSpace(input)).toBe(trimmed);
  });
});

describe("kubelet's --node-ip trimming", () => {
  it.each<[string, string, string | undefined, string[]]>([
    ['U+0085 around an IP: trimmed, the IP is used', '\u008510.0.0.10\u0085', '10.0.0.10', []],
    ['U+FEFF before an IP: not trimmed, the item is ignored', '\ufeff10.0.0.12', undefined, ['\ufeff10.0.0.12']],
    ['U+FEFF on one item of two: the other is used', '10.0.0.1,\ufefffd00::1', '10.0.0.1', ['\ufefffd00::1']],
  ])('%s', (_name, flag, annotation, ignored) => {
    const got = parseKubeletNodeIPFlag(flag);
    expect(got.annotation).toBe(annotation);
    expect(got.ignored).toEqual(ignored);
  });
});
