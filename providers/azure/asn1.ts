// A small BER/DER reader: enough to walk a PKCS#12 file (RFC 7292) and the PKCS#5/#8 structures
// inside it. Pure: bytes in, elements out. BER is read as well as DER because PKCS#12 files from
// some writers (Windows, Java keytool) use indefinite lengths and constructed OCTET STRINGs, and
// Go's x/crypto/pkcs12, which cloud-provider-azure reads certificates with, accepts them too.

export interface Asn1Element {
  /** The identifier octet (class, constructed bit, tag number below 31). */
  tag: number;
  /** Content octets (for a constructed element, its children's encodings). */
  content: Buffer;
  /** The children of a constructed element. */
  children: Asn1Element[];
  /** The whole encoding (identifier, length, content, end-of-contents). */
  encoded: Buffer;
}

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

export class Asn1Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Asn1Error';
  }
}

const MAX_DEPTH = 32;

function readOne(buf: Buffer, start: number, depth: number): { element: Asn1Element; end: number } {
  if (depth > MAX_DEPTH) throw new Asn1Error('nested deeper than 32 levels');
  if (start >= buf.length) throw new Asn1Error(`truncated: an element starts at byte ${start} of ${buf.length}`);
  const tag = buf[start]!;
  if ((tag & 0x1f) === 0x1f) throw new Asn1Error(`tag numbers above 30 are not used here (byte ${start})`);
  const constructed = (tag & 0x20) !== 0;
  let pos = start + 1;
  if (pos >= buf.length) throw new Asn1Error(`truncated: no length at byte ${pos}`);
  const first = buf[pos++]!;
  if (first === 0x80) {
    // Indefinite length (BER): children until an end-of-contents pair of zero bytes.
    if (!constructed) throw new Asn1Error(`indefinite length on a primitive element (byte ${start})`);
    const children: Asn1Element[] = [];
    const contentStart = pos;
    for (;;) {
      if (pos + 1 >= buf.length) throw new Asn1Error(`truncated: no end-of-contents for the element at byte ${start}`);
      if (buf[pos] === 0 && buf[pos + 1] === 0) break;
      const child = readOne(buf, pos, depth + 1);
      children.push(child.element);
      pos = child.end;
    }
    const content = buf.subarray(contentStart, pos);
    return { element: { tag, content, children, encoded: buf.subarray(start, pos + 2) }, end: pos + 2 };
  }
  let length = first;
  if (first & 0x80) {
    const n = first & 0x7f;
    if (n > 4) throw new Asn1Error(`a length of ${n} octets at byte ${start + 1}`);
    length = 0;
    for (let i = 0; i < n; i++) {
      if (pos >= buf.length) throw new Asn1Error(`truncated length at byte ${pos}`);
      length = length * 256 + buf[pos++]!;
    }
  }
  const end = pos + length;
  if (end > buf.length) throw new Asn1Error(`the element at byte ${start} claims ${length} bytes, ${buf.length - pos} are left`);
  const content = buf.subarray(pos, end);
  const children: Asn1Element[] = [];
  if (constructed) {
    let p = pos;
    while (p < end) {
      const child = readOne(buf, p, depth + 1);
      if (child.end > end) throw new Asn1Error(`the element at byte ${p} runs past its parent`);
      children.push(child.element);
      p = child.end;
    }
  }
  return { element: { tag, content, children, encoded: buf.subarray(start, end) }, end };
}

/** The one element `bytes` hold; anything after it is an error. */
export function readAsn1(bytes: Uint8Array): Asn1Element {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { element, end } = readOne(buf, 0, 0);
  if (end !== buf.length) throw new Asn1Error(`${buf.length - end} bytes after the outermost element`);
  return element;
}

function describeTag(tag: number): string {
  return `0x${tag.toString(16).padStart(2, '0')}`;
}

/** The element, checked to have this tag. */
export function expectTag(e: Asn1Element | undefined, tag: number, what: string): Asn1Element {
  if (!e) throw new Asn1Error(`${what}: missing`);
  if (e.tag !== tag) throw new Asn1Error(`${what}: expected tag ${describeTag(tag)}, got ${describeTag(e.tag)}`);
  return e;
}

/** A dotted object identifier. */
export function oidOf(e: Asn1Element | undefined, what: string): string {
  const bytes = expectTag(e, TAG.OID, what).content;
  if (bytes.length === 0) throw new Asn1Error(`${what}: empty object identifier`);
  const arcs: number[] = [];
  let value = 0;
  for (const b of bytes) {
    value = value * 128 + (b & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER) throw new Asn1Error(`${what}: object identifier arc too large`);
    if ((b & 0x80) === 0) {
      arcs.push(value);
      value = 0;
    }
  }
  const head = arcs.shift()!;
  const top = head < 40 ? 0 : head < 80 ? 1 : 2;
  return [top, head - 40 * top, ...arcs].join('.');
}

/** A non-negative INTEGER that fits a JavaScript number. */
export function smallIntegerOf(e: Asn1Element | undefined, what: string): number {
  const bytes = expectTag(e, TAG.INTEGER, what).content;
  if (bytes.length === 0 || bytes[0]! & 0x80) throw new Asn1Error(`${what}: not a non-negative integer`);
  if (bytes.length > 6) throw new Asn1Error(`${what}: integer too large`);
  return bytes.reduce((n, b) => n * 256 + b, 0);
}

/** The octets of an OCTET STRING (primitive, or BER constructed from pieces), also under an IMPLICIT tag. */
export function octetsOf(e: Asn1Element | undefined, what: string, tag: number = TAG.OCTET_STRING): Buffer {
  if (!e) throw new Asn1Error(`${what}: missing`);
  if (e.tag === tag) return e.content;
  if (e.tag === (tag | 0x20)) return Buffer.concat(e.children.map((c, i) => octetsOf(c, `${what} piece ${i}`)));
  throw new Asn1Error(`${what}: expected an octet string (tag ${describeTag(tag)}), got ${describeTag(e.tag)}`);
}

/** The element inside a context-specific [n] EXPLICIT tag. */
export function explicitOf(e: Asn1Element | undefined, n: number, what: string): Asn1Element {
  const wrapper = expectTag(e, 0xa0 | n, what);
  if (wrapper.children.length !== 1) throw new Asn1Error(`${what}: [${n}] holds ${wrapper.children.length} elements, expected one`);
  return wrapper.children[0]!;
}
