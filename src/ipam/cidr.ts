// CIDR parsing and formatting for the IPAM core. Parsing follows Go's net.ParseCIDR as the
// API server applies it (netutils.ParseCIDRSloppy): host bits are masked off, and IPv4 octets
// with leading zeros are read as decimal, so a value the API server stored is never refused.

import { parseIPSloppy, type IPFamily } from '../nodeip/ip.js';

export type { IPFamily };

export interface CIDR {
  readonly family: IPFamily;
  /** 32 or 128. */
  readonly bits: number;
  readonly prefix: number;
  /** Network address with host bits cleared. */
  readonly addr: bigint;
  /** Canonical text, e.g. `10.10.0.0/24`, `fd00::/64`. */
  readonly text: string;
}

export class CIDRParseError extends Error {
  override name = 'CIDRParseError';
  constructor(
    readonly value: string,
    readonly reason: string,
  ) {
    super(`invalid CIDR "${value}": ${reason}`);
  }
}

// Hand-rolled: this runs for every restored or released block, so no regex or split.
function parseIPv4(s: string, from = 0, to = s.length): number | undefined {
  let v = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = from; i < to; i++) {
    const ch = s.charCodeAt(i);
    if (ch === 46) {
      if (digits === 0) return undefined;
      v = v * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (ch >= 48 && ch <= 57 && digits < 3) {
      octet = octet * 10 + (ch - 48);
      digits++;
      if (octet > 255) return undefined;
    } else return undefined;
  }
  if (dots !== 3 || digits === 0) return undefined;
  return v * 256 + octet;
}

/** The prefix length after `slash` in IPv4 CIDR text as the fast paths take it (1–3 digits, ≤ 32), or -1. */
function ipv4Prefix(value: string, slash: number): number {
  const n = value.length - slash - 1;
  if (n < 1 || n > 3) return -1;
  let prefix = 0;
  for (let i = slash + 1; i < value.length; i++) {
    const ch = value.charCodeAt(i);
    if (ch < 48 || ch > 57) return -1;
    prefix = prefix * 10 + (ch - 48);
  }
  return prefix > 32 ? -1 : prefix;
}

/**
 * Fast path for IPv4 CIDR text: [masked address, prefix] as numbers, or undefined when the text
 * is not a valid IPv4 CIDR (callers then fall back to parseCIDR for the error).
 */
export function parseIPv4CIDRNumbers(value: string): [number, number] | undefined {
  const slash = value.indexOf('/');
  if (slash < 0) return undefined;
  const prefix = ipv4Prefix(value, slash);
  if (prefix < 0) return undefined;
  const a = parseIPv4(value, 0, slash);
  if (a === undefined) return undefined;
  const block = 2 ** (32 - prefix);
  return [a - (a % block), prefix];
}

/**
 * The same fast path without allocating anything: writes the masked address into `out[at]` and
 * returns the prefix length, or -1 where parseIPv4CIDRNumbers gives undefined (callers then use
 * parseCIDR). For sweeps over every cached node (the IP range audit): once the restore has kept a
 * CIDR object per node, V8 allocates parseCIDR's results straight in the old generation
 * (allocation-site pretenuring), and one audit round's were 26 MB of garbage there.
 */
export function parseIPv4CIDRInto(value: string, out: Uint32Array, at: number): number {
  const slash = value.indexOf('/');
  if (slash < 0) return -1;
  const prefix = ipv4Prefix(value, slash);
  if (prefix < 0) return -1;
  const a = parseIPv4(value, 0, slash);
  if (a === undefined) return -1;
  const block = 2 ** (32 - prefix);
  out[at] = a - (a % block);
  return prefix;
}

/** An IPv4 address (no prefix) by parseCIDR's fast path, written into `out[at]`; false when it is not one. */
export function parseIPv4Into(value: string, out: Uint32Array, at: number): boolean {
  const a = parseIPv4(value);
  if (a === undefined) return false;
  out[at] = a;
  return true;
}

function parseIPv6(s: string): bigint | undefined {
  if (s.includes('%')) return undefined; // zones are not allowed in CIDRs
  let head = s;
  let v4tail: number | undefined;
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.', lastColon)) {
    v4tail = parseIPv4(s.slice(lastColon + 1));
    if (v4tail === undefined) return undefined;
    // Keep the colon so "::1.2.3.4" splits the same way as "::x:y".
    head = s.slice(0, lastColon + 1) + '0:0';
  }
  const dbl = head.indexOf('::');
  if (dbl !== -1 && head.indexOf('::', dbl + 1) !== -1) return undefined;
  const toGroups = (part: string): string[] => (part === '' ? [] : part.split(':'));
  let groups: string[];
  if (dbl === -1) {
    groups = toGroups(head);
    if (groups.length !== 8) return undefined;
  } else {
    const left = toGroups(head.slice(0, dbl));
    const right = toGroups(head.slice(dbl + 2));
    const missing = 8 - left.length - right.length;
    if (missing < 1) return undefined;
    groups = [...left, ...new Array<string>(missing).fill('0'), ...right];
  }
  let v = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  if (v4tail !== undefined) v = (v & ~0xffffffffn) | BigInt(v4tail);
  return v;
}

/** Go's dtoi, as ParseCIDRSloppy reads the prefix: decimal digits (leading zeros too), below 0xFFFFFF. */
function goDecimal(s: string): number | undefined {
  if (s.length === 0) return undefined;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
    n = n * 10 + (c - 48);
    if (n >= 0xffffff) return undefined;
  }
  return n;
}

/**
 * The address by Kubernetes' ParseIPSloppy, for the rare text the fast parsers above refuse but
 * the API server stores (an IPv4 octet or an IPv6 group written with extra leading zeros, as
 * `0010.0.0.0` or `00fd00::`). The family stays the one the text's syntax gives.
 */
function sloppyAddress(text: string, family: IPFamily): bigint | undefined {
  const ip = parseIPSloppy(text);
  if (ip === undefined) return undefined;
  const bytes = family === 4 ? ip.bytes.subarray(12) : ip.bytes;
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/** Parses `addr/prefix`, masking host bits as Go's ParseCIDR does. Throws CIDRParseError. */
export function parseCIDR(value: string): CIDR {
  if (typeof value !== 'string') throw new CIDRParseError(String(value), 'not a string');
  const slash = value.indexOf('/');
  if (slash === -1) throw new CIDRParseError(value, 'missing "/prefix"');
  const ipText = value.slice(0, slash);
  const prefixText = value.slice(slash + 1);
  const isV6 = ipText.includes(':');
  const bits = isV6 ? 128 : 32;
  const prefix = goDecimal(prefixText);
  if (prefix === undefined || prefix > bits) {
    throw new CIDRParseError(value, `prefix length must be 0..${bits}`);
  }
  let addr: bigint;
  if (isV6) {
    const a = parseIPv6(ipText) ?? sloppyAddress(ipText, 6);
    if (a === undefined) throw new CIDRParseError(value, 'not an IPv6 address');
    addr = a;
  } else {
    const a = parseIPv4(ipText);
    const b = a === undefined ? sloppyAddress(ipText, 4) : BigInt(a);
    if (b === undefined) throw new CIDRParseError(value, 'not an IPv4 address');
    addr = b;
  }
  addr &= prefixMask(bits, prefix);
  const family: IPFamily = isV6 ? 6 : 4;
  const text = `${formatAddr(family, addr)}/${prefix}`;
  // Already canonical (every pod CIDR this controller wrote): keep the caller's string, which the
  // node cache holds anyway, rather than a second copy per held block.
  return { family, bits, prefix, addr, text: text === value ? value : text };
}

export function prefixMask(bits: number, prefix: number): bigint {
  const all = (1n << BigInt(bits)) - 1n;
  return all ^ ((1n << BigInt(bits - prefix)) - 1n);
}

export function formatIPv4(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

// Number#toString(16) is slow on V8; IPv6 text is on the allocation hot path, so groups are
// looked up: values below 0x1000 directly, larger ones as one digit plus three padded digits.
let hexShort: string[] | undefined;
let hexPadded: string[] | undefined;

function hexTables(): [string[], string[]] {
  if (!hexShort || !hexPadded) {
    hexShort = [];
    hexPadded = [];
    for (let i = 0; i < 4096; i++) {
      const h = i.toString(16);
      hexShort.push(h);
      hexPadded.push(h.padStart(3, '0'));
    }
  }
  return [hexShort, hexPadded];
}

function hex16(n: number, short: string[], padded: string[]): string {
  return n < 4096 ? short[n] : short[n >>> 12] + padded[n & 4095];
}

/** RFC 5952 text from eight 16-bit groups: longest run of two or more zero groups becomes "::". */
export function formatIPv6Groups(g: ArrayLike<number>): string {
  const [short, padded] = hexTables();
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  let s = '';
  if (bestStart === -1) {
    for (let i = 0; i < 8; i++) s += (i > 0 ? ':' : '') + hex16(g[i], short, padded);
    return s;
  }
  for (let i = 0; i < bestStart; i++) s += (i > 0 ? ':' : '') + hex16(g[i], short, padded);
  s += '::';
  const after = bestStart + bestLen;
  for (let i = after; i < 8; i++) s += (i > after ? ':' : '') + hex16(g[i], short, padded);
  return s;
}

/** One group's text, as in formatIPv6Groups (lower-case hex, no leading zeros). */
export function hexGroup(n: number): string {
  if (hexShort === undefined || hexPadded === undefined) hexTables();
  return n < 4096 ? hexShort![n] : hexShort![n >>> 12] + hexPadded![n & 4095];
}

/**
 * The text of eight groups around group `at`, taken as nonzero whatever its value:
 * `head + hexGroup(v) + tail` equals formatIPv6Groups(g) with g[at] = v, for every v ≠ 0.
 * Lets a caller that varies one group reuse the rest of the text.
 */
export function formatIPv6Around(g: ArrayLike<number>, at: number): [string, string] {
  const [short, padded] = hexTables();
  const zero = (i: number): boolean => i !== at && g[i] === 0;
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (!zero(i)) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && zero(j)) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  // Group `at` is written as "x", which no other part of the text contains.
  const text = (i: number): string => (i === at ? 'x' : hex16(g[i], short, padded));
  let s = '';
  if (bestStart === -1) {
    for (let i = 0; i < 8; i++) s += (i > 0 ? ':' : '') + text(i);
  } else {
    for (let i = 0; i < bestStart; i++) s += (i > 0 ? ':' : '') + text(i);
    s += '::';
    const after = bestStart + bestLen;
    for (let i = after; i < 8; i++) s += (i > after ? ':' : '') + text(i);
  }
  const x = s.indexOf('x');
  return [s.slice(0, x), s.slice(x + 1)];
}

export function formatAddr(family: IPFamily, addr: bigint): string {
  if (family === 4) return formatIPv4(Number(addr));
  const g = new Uint16Array(8);
  for (let i = 7; i >= 0; i--) {
    g[i] = Number(addr & 0xffffn);
    addr >>= 16n;
  }
  return formatIPv6Groups(g);
}

export function formatCIDR(family: IPFamily, addr: bigint, prefix: number): string {
  return `${formatAddr(family, addr)}/${prefix}`;
}

/** Number of addresses in the CIDR. */
export function cidrSize(c: CIDR): bigint {
  return 1n << BigInt(c.bits - c.prefix);
}

/** True when `outer` contains every address of `inner`. */
export function cidrContains(outer: CIDR, inner: CIDR): boolean {
  return outer.family === inner.family && inner.prefix >= outer.prefix && (inner.addr & prefixMask(outer.bits, outer.prefix)) === outer.addr;
}

export function cidrsOverlap(a: CIDR, b: CIDR): boolean {
  return cidrContains(a, b) || cidrContains(b, a);
}

/** Parses a comma-separated list (as flags carry them), skipping empty items. */
export function parseCIDRList(value: string): CIDR[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(parseCIDR);
}
