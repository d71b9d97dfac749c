import fc from 'fast-check';
import { describe, it, expect } from 'vitest';
import { CIDRParseError, cidrContains, cidrsOverlap, formatIPv6Around, formatIPv6Groups, hexGroup, parseCIDR, parseCIDRList, parseIPv4CIDRInto, parseIPv4CIDRNumbers, parseIPv4Into } from '../../src/ipam/cidr.js';

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

describe('IPv4 fast paths', () => {
  // Text near IPv4 CIDRs and addresses: valid ones, leading zeros, octets and prefixes out of
  // range, missing or extra parts, stray characters, IPv6, empty.
  const part = fc.oneof(fc.integer({ min: 0, max: 255 }).map(String), fc.integer({ min: 0, max: 999 }).map((n) => String(n).padStart(3, '0')), fc.constantFrom('', '256', '1a', '-1', ' 1', '0x1', '4294967295'));
  const address = fc.oneof(
    { weight: 4, arbitrary: fc.tuple(part, part, part, part).map((p) => p.join('.')) },
    { weight: 1, arbitrary: fc.array(part, { minLength: 1, maxLength: 6 }).map((p) => p.join('.')) },
    { weight: 1, arbitrary: fc.constantFrom('fd00::1', '::ffff:10.0.0.1', '10.0.0.1%eth0', '', '.', '1..2.3') },
  );
  const prefix = fc.oneof(fc.integer({ min: 0, max: 32 }).map(String), fc.constantFrom('', '33', '026', '0026', '-1', '1e1', ' 8', '128'));
  const cidr = fc.oneof({ weight: 5, arbitrary: fc.tuple(address, prefix).map(([a, p]) => `${a}/${p}`) }, { weight: 1, arbitrary: address }, { weight: 1, arbitrary: fc.string() });

  /** parseCIDR's answer for IPv4 text as [masked address, prefix], or undefined when it throws or gives IPv6. */
  const slow = (text: string): [number, number] | undefined => {
    try {
      const c = parseCIDR(text);
      return c.family === 4 ? [Number(c.addr), c.prefix] : undefined;
    } catch (err) {
      if (err instanceof CIDRParseError) return undefined;
      throw err;
    }
  };

  it('parseIPv4CIDRInto writes what parseCIDR gives, or refuses (the caller then asks parseCIDR); it agrees with parseIPv4CIDRNumbers', () => {
    fc.assert(
      fc.property(cidr, fc.integer({ min: 0, max: 3 }), (text, at) => {
        const out = new Uint32Array(4).fill(7);
        const prefix = parseIPv4CIDRInto(text, out, at);
        const numbers = parseIPv4CIDRNumbers(text);
        if (prefix < 0) {
          expect(numbers).toBeUndefined();
          expect([...out]).toEqual([7, 7, 7, 7]); // nothing written
          return;
        }
        expect([out[at], prefix]).toEqual(slow(text));
        expect(numbers).toEqual([out[at], prefix]);
        expect(out.filter((_, i) => i !== at).every((v) => v === 7)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('parseIPv4Into gives the address parseCIDR gives for it as a /32, or refuses', () => {
    fc.assert(
      fc.property(address, (text) => {
        const out = new Uint32Array(1);
        if (parseIPv4Into(text, out, 0)) expect([out[0], 32]).toEqual(slow(`${text}/32`));
      }),
      { numRuns: 5000 },
    );
  });

  it('the forms a real cluster writes take the fast path; the API server\'s leading zeros do too, as parseCIDR reads them', () => {
    const out = new Uint32Array(1);
    expect(parseIPv4CIDRInto('100.3.2.192/26', out, 0)).toBe(26);
    expect(out[0]).toBe(Number(parseCIDR('100.3.2.192/26').addr));
    expect(parseIPv4CIDRInto('10.10.0.1/24', out, 0)).toBe(24); // host bits masked, as Go's ParseCIDR does
    expect(out[0]).toBe(0x0a0a0000);
    expect(parseIPv4CIDRInto('010.001.0.0/16', out, 0)).toBe(16);
    expect(out[0]).toBe(0x0a010000);
    expect(parseIPv4CIDRInto('fd00::/64', out, 0)).toBe(-1);
    expect(parseIPv4Into('192.168.1.77', out, 0)).toBe(true);
    expect(out[0]).toBe(0xc0a8014d);
    expect(parseIPv4Into('ip-10-0-0-1.region-1.compute.internal', out, 0)).toBe(false);
  });
});
