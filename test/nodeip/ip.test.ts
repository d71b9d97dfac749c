import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { canonicalIP, ipFamilyOf, isUnspecifiedIP, parseIPSloppy, sameIP } from '../../src/nodeip/index.js';

describe('parseIPSloppy', () => {
  it.each([
    // IPv4: four decimal parts, leading zeros read as decimal (never octal).
    ['1.2.3.4', 4, '1.2.3.4'],
    ['010.001.002.003', 4, '10.1.2.3'],
    ['0000000001.2.3.4', 4, '1.2.3.4'],
    ['255.255.255.255', 4, '255.255.255.255'],
    ['0.0.0.0', 4, '0.0.0.0'],
    // IPv4-mapped IPv6 is IPv4 and prints as IPv4.
    ['::ffff:1.2.3.4', 4, '1.2.3.4'],
    ['::FFFF:0102:0304', 4, '1.2.3.4'],
    ['0:0:0:0:0:ffff:10.0.0.1', 4, '10.0.0.1'],
    ['::ffff:0.0.0.0', 4, '0.0.0.0'],
    // IPv6 printed as Go prints it (RFC 5952).
    ['::', 6, '::'],
    ['0:0:0:0:0:0:0:0', 6, '::'],
    ['::1', 6, '::1'],
    ['ABCD::1234', 6, 'abcd::1234'],
    ['fd00:0000:0000:0000:0000:0000:0000:0002', 6, 'fd00::2'],
    ['2001:db8:0:0:1:0:0:1', 6, '2001:db8::1:0:0:1'],
    ['1:0:0:1:0:0:0:1', 6, '1:0:0:1::1'],
    ['2001:db8:0:1:1:1:1:1', 6, '2001:db8:0:1:1:1:1:1'],
    ['fe80::', 6, 'fe80::'],
    ['1:2:3:4:5:6:7::', 6, '1:2:3:4:5:6:7:0'],
    ['::1.2.3.4', 6, '::102:304'],
    ['1:2:3:4:5:6:1.2.3.4', 6, '1:2:3:4:5:6:102:304'],
    ['1::010.1.2.3', 6, '1::a01:203'],
    ['00001::', 6, '1::'],
  ])('parses %j as IPv%i %s', (text, family, canonical) => {
    const ip = parseIPSloppy(text);
    expect(ip).toBeDefined();
    expect(ip?.family).toBe(family);
    expect(ip?.canonical).toBe(canonical);
    expect(ipFamilyOf(text)).toBe(family);
    expect(canonicalIP(text)).toBe(canonical);
  });

  it.each([
    [''],
    ['1.2.3'],
    ['1.2.3.4.5'],
    ['16909060'],
    ['256.1.1.1'],
    ['1.2.3.-4'],
    ['1.2.3.4 '],
    [' 1.2.3.4'],
    ['1..2.3'],
    ['0x1.2.3.4'],
    ['1.2.3.4/32'],
    ['fe80::1%eth0'],
    ['::1 '],
    [':::'],
    [':1::'],
    ['1::2::3'],
    ['1:2:3:4:5:6:7:8:9'],
    ['1:2:3:4:5:6:7:8::'],
    ['::1:2:3:4:5:6:7:8'],
    ['1:2:3:4:5:6:7'],
    ['12345::'],
    ['g::1'],
    ['1:2:3:4:5:6:7:1.2.3.4'],
    ['1.2.3.4::'],
    ['::ffff:1.2.3'],
    ['abcd'],
    ['localhost'],
  ])('rejects %j', (text) => {
    expect(parseIPSloppy(text)).toBeUndefined();
    expect(ipFamilyOf(text)).toBeUndefined();
  });

  it.each([
    ['0.0.0.0', true],
    ['::', true],
    ['::ffff:0.0.0.0', true],
    ['000.000.000.000', true],
    ['0.0.0.1', false],
    ['::1', false],
  ])('isUnspecifiedIP(%j) is %s', (text, expected) => {
    expect(isUnspecifiedIP(parseIPSloppy(text)!)).toBe(expected);
  });

  it.each([
    ['10.0.0.1', '010.000.000.001', true],
    ['1.2.3.4', '::ffff:1.2.3.4', true],
    ['fd00::2', 'FD00:0:0::2', true],
    ['0.0.0.0', '::', false],
    ['1.2.3.4', '::1.2.3.4', false],
    ['host', 'host', false],
  ])('sameIP(%j, %j) is %s', (a, b, expected) => {
    expect(sameIP(a, b)).toBe(expected);
  });
});

/**
 * Go's parseIPv4 and dtoi (net/ip.go as k8s.io/utils/net forks it for ParseIPSloppy), written out
 * as they read: the octets, or undefined. The oracle for the index-scanning IPv4 path.
 */
function goParseIPv4(text: string): number[] | undefined {
  const big = 0xffffff;
  let s = text;
  const p: number[] = [];
  for (let i = 0; i < 4; i++) {
    if (s.length === 0) return undefined;
    if (i > 0) {
      if (s[0] !== '.') return undefined;
      s = s.slice(1);
    }
    let n = 0;
    let k = 0;
    for (; k < s.length && s[k]! >= '0' && s[k]! <= '9'; k++) {
      n = n * 10 + (s.charCodeAt(k) - 48);
      if (n >= big) return undefined;
    }
    if (k === 0 || n > 0xff) return undefined;
    s = s.slice(k);
    p.push(n);
  }
  return s.length === 0 ? p : undefined;
}

describe('parseIPSloppy: IPv4 text against Go\'s parseIPv4', () => {
  // Dotted parts with leading zeros, long digit runs, too many or too few parts, and stray characters.
  const part = fc.oneof(
    fc.tuple(fc.nat(3), fc.nat(300)).map(([zeros, n]) => '0'.repeat(zeros) + String(n)),
    fc.constantFrom('', '16777215', '16777216', '99999999', '-1', '1 ', 'x', '255', '0'),
  );
  const dotted = fc.array(part, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.'));
  const noise = fc.string({ unit: fc.constantFrom('0', '1', '2', '5', '9', '.', ':', 'a', ' ', '/'), maxLength: 20 });
  it('gives Go\'s answer (undefined, or family 4, the dotted octets and the IPv4-mapped bytes) for any text', () => {
    fc.assert(
      fc.property(fc.oneof(dotted, noise), (text) => {
        const dot = text.indexOf('.');
        const colon = text.indexOf(':');
        fc.pre(dot >= 0 && (colon < 0 || dot < colon)); // the IPv4 grammar applies
        const octets = goParseIPv4(text);
        const ip = parseIPSloppy(text);
        if (octets === undefined) {
          expect(ip).toBeUndefined();
          return;
        }
        expect(ip?.family).toBe(4);
        expect(ip?.canonical).toBe(octets.join('.'));
        expect(Array.from(ip!.bytes)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...octets]);
      }),
      { numRuns: 5000 },
    );
  });
});

