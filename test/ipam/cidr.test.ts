import { describe, it, expect } from 'vitest';
import { CIDRParseError, cidrContains, cidrsOverlap, formatIPv6Around, formatIPv6Groups, hexGroup, parseCIDR, parseCIDRList } from '../../src/ipam/cidr.js';

describe('parseCIDR', () => {
  it.each([
    ['10.10.0.1/24', '10.10.0.0/24', 4, 24],
    ['10.0.0.0/8', '10.0.0.0/8', 4, 8],
    ['0.0.0.0/0', '0.0.0.0/0', 4, 0],
    ['192.168.1.77/32', '192.168.1.77/32', 4, 32],
    // The API server parses IPv4 leniently: leading zeros are decimal.
    ['010.001.0.0/16', '10.1.0.0/16', 4, 16],
    ['FD00:0:0:0:0:0:0:1/64', 'fd00::/64', 6, 64],
    ['fd00:1:2:3:4:5:6:7/128', 'fd00:1:2:3:4:5:6:7/128', 6, 128],
    ['2001:db8:0:0:1:0:0:1/128', '2001:db8::1:0:0:1/128', 6, 128],
    ['2001:0:0:1:0:0:0:0/64', '2001:0:0:1::/64', 6, 64],
    ['::/0', '::/0', 6, 0],
    ['::ffff:10.1.2.3/120', '::ffff:a01:200/120', 6, 120],
    ['fd00:96::/112', 'fd00:96::/112', 6, 112],
    ['1:0:1:0:1:0:1:0/128', '1:0:1:0:1:0:1:0/128', 6, 128],
    // ParseCIDRSloppy (what the API server validates podCIDRs with) reads numbers as Go's dtoi and
    // xtoi do: any count of leading zeros, in octets, groups and the prefix length.
    ['0010.0.5.0/24', '10.0.5.0/24', 4, 24],
    ['10.0.5.0/0024', '10.0.5.0/24', 4, 24],
    ['00fd00::/00064', 'fd00::/64', 6, 64],
    ['fd00:0:0:00001::/64', 'fd00:0:0:1::/64', 6, 64],
  ])('%s → %s', (input, text, family, prefix) => {
    const c = parseCIDR(input);
    expect(c.text).toBe(text);
    expect(c.family).toBe(family);
    expect(c.prefix).toBe(prefix);
  });

  it.each([
    ['10.0.0.0', 'missing "/prefix"'],
    ['10.0.0.0/33', 'prefix length must be 0..32'],
    ['10.0.0.256/24', 'not an IPv4 address'],
    ['10.0.0/24', 'not an IPv4 address'],
    ['fd00::/129', 'prefix length must be 0..128'],
    ['fd00:::1/64', 'not an IPv6 address'],
    ['fd00::1::2/64', 'not an IPv6 address'],
    ['fe80::1%eth0/64', 'not an IPv6 address'],
    ['10.0.0.0/-1', 'prefix length'],
    ['10.0.0.0/ 8', 'prefix length'],
    ['10.0.0.0/', 'prefix length'],
    ['10.0.0.0/99999999', 'prefix length'],
    ['00000000256.0.0.0/8', 'not an IPv4 address'],
    ['fd00:10000::/64', 'not an IPv6 address'],
    ['1.2.3/24', 'not an IPv4 address'],
  ])('rejects %s', (input, reason) => {
    expect(() => parseCIDR(input)).toThrow(CIDRParseError);
    expect(() => parseCIDR(input)).toThrow(`invalid CIDR "${input}": ${reason}`);
  });

  it('containment and overlap', () => {
    const a = parseCIDR('10.0.0.0/8');
    const b = parseCIDR('10.1.0.0/16');
    const c = parseCIDR('11.0.0.0/16');
    expect(cidrContains(a, b)).toBe(true);
    expect(cidrContains(b, a)).toBe(false);
    expect(cidrsOverlap(b, a)).toBe(true);
    expect(cidrsOverlap(a, c)).toBe(false);
    expect(cidrsOverlap(a, parseCIDR('::/0'))).toBe(false);
  });

  it('parses flag lists', () => {
    expect(parseCIDRList('10.0.0.0/8, fd00::/48,').map((c) => c.text)).toEqual(['10.0.0.0/8', 'fd00::/48']);
  });
});

describe('IPv6 text', () => {
  it('matches ipaddr.js RFC 5952 output and round-trips', async () => {
    const fc = (await import('fast-check')).default;
    const ipaddr = (await import('ipaddr.js')).default;
    // Bias towards zero groups so "::" placement is exercised.
    const group = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), (g) => {
        const text = formatIPv6Groups(g);
        const ref = ipaddr.IPv6.parse(g.map((x) => x.toString(16)).join(':')).toString();
        expect(text).toBe(ref);
        expect(parseCIDR(`${text}/128`).text).toBe(`${text}/128`);
      }),
      { numRuns: 2000 },
    );
  });

  it('splits around one group: head + hexGroup(v) + tail is the text for every nonzero v', async () => {
    const fc = (await import('fast-check')).default;
    const group = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), fc.integer({ min: 0, max: 7 }), fc.integer({ min: 1, max: 0xffff }), (g, at, v) => {
        const [head, tail] = formatIPv6Around(g, at);
        const withV = [...g];
        withV[at] = v;
        expect(head + hexGroup(v) + tail).toBe(formatIPv6Groups(withV));
        expect(hexGroup(v)).toBe(v.toString(16));
      }),
      { numRuns: 3000 },
    );
  });
});
