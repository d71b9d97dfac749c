// The few DER (ASN.1 distinguished encoding) shapes an X.509 certificate needs. Pure: bytes in,
// bytes out. Enough to write a self-signed serving certificate without an openssl binary.

/** Tag, length and value; lengths use the short form below 128 bytes, else the long form. */
export function tlv(tag: number, value: Uint8Array): Buffer {
  const n = value.length;
  let len: number[];
  if (n < 0x80) len = [n];
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len = [0x80 | bytes.length, ...bytes];
  }
  return Buffer.concat([Buffer.from([tag, ...len]), value]);
}

export const sequence = (...items: Uint8Array[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: Uint8Array[]): Buffer => tlv(0x31, Buffer.concat(items));
/** [n] EXPLICIT: a constructed context-specific tag around one element. */
export const explicit = (n: number, item: Uint8Array): Buffer => tlv(0xa0 | n, item);
/** [n] IMPLICIT primitive (e.g. GeneralName dNSName [2], iPAddress [7]). */
export const implicitPrimitive = (n: number, value: Uint8Array): Buffer => tlv(0x80 | n, value);
export const octetString = (value: Uint8Array): Buffer => tlv(0x04, value);
export const utf8String = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const boolean = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
/** BIT STRING with no unused bits. */
export const bitString = (value: Uint8Array): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), value]));

/** A non-negative INTEGER from its big-endian magnitude (a leading 0 keeps it positive). */
export function unsignedInteger(magnitude: Uint8Array): Buffer {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const trimmed = Buffer.from(magnitude.subarray(i));
  return tlv(0x02, (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed.length ? trimmed : Buffer.from([0]));
}

export function smallInteger(n: number): Buffer {
  if (!Number.isInteger(n) || n < 0 || n > 0x7fffffff) throw new Error(`der: small integer out of range: ${n}`);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return unsignedInteger(Buffer.from(bytes.length ? bytes : [0]));
}

/** OBJECT IDENTIFIER from dotted text ("1.2.840.10045.4.3.2"). */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((a) => {
    if (!/^\d+$/.test(a)) throw new Error(`der: invalid object identifier "${dotted}"`);
    return Number(a);
  });
  if (arcs.length < 2 || (arcs[0] as number) > 2) throw new Error(`der: invalid object identifier "${dotted}"`);
  const out: number[] = [];
  const first = (arcs[0] as number) * 40 + (arcs[1] as number);
  for (const arc of [first, ...arcs.slice(2)]) {
    const chunk: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** X.509 Time: UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5). */
export function time(d: Date): Buffer {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '');
  const year = d.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii'));
  return tlv(0x18, Buffer.from(`${digits}Z`, 'ascii'));
}
