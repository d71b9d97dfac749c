// IP text handling with the exact leniency of Kubernetes' ParseIPSloppy (a fork of the Go 1.16
// parser): IPv4 parts may carry leading zeros and are read as decimal, IPv4-mapped IPv6 counts as
// IPv4, zones and shorthand IPv4 forms are rejected. Written here rather than taken from ipaddr.js,
// which reads "010" as octal and accepts "1.2.3".

export type IPFamily = 4 | 6;

export interface ParsedIP {
  family: IPFamily;
  /** Go's String(): dotted decimal for IPv4 (and IPv4-mapped), RFC 5952 for IPv6. */
  canonical: string;
  /** 16 bytes; IPv4 is stored IPv4-mapped, as Go does. */
  bytes: Uint8Array;
}

// Go's parser stops accumulating a number at this bound, so absurdly long digit runs fail.
const BIG = 0xffffff;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Reads decimal digits at the start of s: [value, digits consumed] or undefined. */
function readDecimal(s: string): [number, number] | undefined {
  let n = 0;
  let i = 0;
  for (; i < s.length && isDigit(s.charCodeAt(i)); i++) {
    n = n * 10 + (s.charCodeAt(i) - 48);
    if (n >= BIG) return undefined;
  }
  return i === 0 ? undefined : [n, i];
}

function readHex(s: string): [number, number] | undefined {
  let n = 0;
  let i = 0;
  for (; i < s.length; i++) {
    const v = hexValue(s.charCodeAt(i));
    if (v < 0) break;
    n = n * 16 + v;
    if (n >= BIG) return undefined;
  }
  return i === 0 ? undefined : [n, i];
}

/**
 * An IPv4 address as Go's parseIPv4 reads `s` (four decimal parts, each at most 255, leading zeros
 * read as decimal, each part's digits bounded by BIG as dtoi bounds them): the address as a 32-bit
 * number, plus 2^32 when the text is not canonical (a part with a leading zero), or -1. Scans by
 * index: the address refresh parses every address of every node each round, and a version that
 * sliced the text and returned a tuple per part made most of a round's garbage.
 */
function scanV4(s: string): number {
  let value = 0;
  let canonical = true;
  let i = 0;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (s.charCodeAt(i) !== 46) return -1; // '.'
      i++;
    }
    let n = 0;
    const start = i;
    for (; i < s.length && isDigit(s.charCodeAt(i)); i++) {
      n = n * 10 + (s.charCodeAt(i) - 48);
      if (n >= BIG) return -1;
    }
    if (i === start || n > 0xff) return -1;
    if (i - start > 1 && s.charCodeAt(start) === 48) canonical = false;
    value = value * 256 + n;
  }
  if (i !== s.length) return -1;
  return canonical ? value : value + 2 ** 32;
}

/** An IPv4 address (or IPv4-mapped IPv6) as parsed: its 16 bytes are made only when asked for. */
class ParsedIPv4 implements ParsedIP {
  readonly family = 4 as const;
  constructor(
    readonly canonical: string,
    readonly value: number,
  ) {}

  get bytes(): Uint8Array {
    const b = new Uint8Array(16);
    b[10] = 0xff;
    b[11] = 0xff;
    b[12] = this.value >>> 24;
    b[13] = (this.value >>> 16) & 0xff;
    b[14] = (this.value >>> 8) & 0xff;
    b[15] = this.value & 0xff;
    return b;
  }
}

function dottedV4(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 0xff}.${(v >>> 8) & 0xff}.${v & 0xff}`;
}

function parseV4Octets(s: string): number[] | undefined {
  const octets: number[] = [];
  let rest = s;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (rest[0] !== '.') return undefined;
      rest = rest.slice(1);
    }
    const read = readDecimal(rest);
    if (!read || read[0] > 0xff) return undefined;
    octets.push(read[0]);
    rest = rest.slice(read[1]);
  }
  return rest.length === 0 ? octets : undefined;
}

function parseV6Bytes(text: string): Uint8Array | undefined {
  const ip = new Uint8Array(16);
  let s = text;
  let ellipsis = -1;
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return ip;
  }
  let i = 0;
  while (i < 16) {
    const read = readHex(s);
    if (!read || read[0] > 0xffff) return undefined;
    const [n, used] = read;
    if (used < s.length && s[used] === '.') {
      // A trailing dotted IPv4 fills the last 32 bits (or sits right before an expansion).
      if (ellipsis < 0 && i !== 12) return undefined;
      if (i + 4 > 16) return undefined;
      const v4 = parseV4Octets(s);
      if (!v4) return undefined;
      ip.set(v4, i);
      s = '';
      i += 4;
      break;
    }
    ip[i] = n >> 8;
    ip[i + 1] = n & 0xff;
    i += 2;
    s = s.slice(used);
    if (s.length === 0) break;
    if (s[0] !== ':' || s.length === 1) return undefined;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return undefined;
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) return undefined;
  if (i < 16) {
    if (ellipsis < 0) return undefined;
    const gap = 16 - i;
    ip.copyWithin(ellipsis + gap, ellipsis, i);
    ip.fill(0, ellipsis, ellipsis + gap);
  } else if (ellipsis >= 0) {
    // "::" must stand for at least one zero group.
    return undefined;
  }
  return ip;
}

function isV4Mapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

function formatV6(b: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
  // Longest run of two or more zero groups becomes "::"; the first one wins a tie.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i >= 2 && j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (g: number) => g.toString(16);
  if (bestStart < 0) return groups.map(hex).join(':');
  const head = groups.slice(0, bestStart).map(hex).join(':');
  const tail = groups.slice(bestStart + bestLen).map(hex).join(':');
  return `${head}::${tail}`;
}

/**
 * Parses IP text as Kubernetes does (ParseIPSloppy). Returns undefined for anything that is not an
 * IP address, including the empty string, CIDRs, zones and surrounding whitespace.
 */
export function parseIPSloppy(text: string): ParsedIP | undefined {
  // Like Go, the first '.' or ':' decides which grammar applies.
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '.') {
      const v4 = scanV4(text);
      if (v4 === -1) return undefined;
      // Canonical text as given (every address a cloud or a kubelet writes) is kept, not rebuilt.
      return v4 < 2 ** 32 ? new ParsedIPv4(text, v4) : new ParsedIPv4(dottedV4(v4 - 2 ** 32), v4 - 2 ** 32);
    }
    if (c === ':') {
      const bytes = parseV6Bytes(text);
      if (!bytes) return undefined;
      if (isV4Mapped(bytes)) return { family: 4, canonical: Array.from(bytes.subarray(12)).join('.'), bytes };
      return { family: 6, canonical: formatV6(bytes), bytes };
    }
  }
  return undefined;
}

/** 4 or 6 for IP text (IPv4-mapped IPv6 is 4), undefined when the text is not an IP. */
export function ipFamilyOf(text: string): IPFamily | undefined {
  return parseIPSloppy(text)?.family;
}

/** True for 0.0.0.0 (also written IPv4-mapped) and ::. */
export function isUnspecifiedIP(ip: ParsedIP): boolean {
  return ip.canonical === '0.0.0.0' || ip.canonical === '::';
}

/** Whether two texts denote the same IP; false when either is not an IP. */
export function sameIP(a: string, b: string): boolean {
  const pa = parseIPSloppy(a);
  const pb = parseIPSloppy(b);
  return pa !== undefined && pb !== undefined && pa.canonical === pb.canonical;
}

/** The canonical text of an IP, or undefined when the text is not an IP. */
export function canonicalIP(text: string): string | undefined {
  return parseIPSloppy(text)?.canonical;
}
