import { describe, it, expect } from 'vitest';
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
