// The OpenAPI v2 document in protobuf, as kubectl (client-go's discovery) requests and decodes
// it: gnostic's openapi_v2.Document wire format, for the parts openapi.ts produces (info,
// definitions with their schemas and vendor extensions). Vendor extension values travel as YAML
// text, which JSON is.

type Json = Record<string, unknown>;

function varint(n: number): Buffer {
  const bytes: number[] = [];
  let v = n;
  while (v > 0x7f) {
    bytes.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

/** A length-delimited field (strings, bytes, embedded messages). */
function field(num: number, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  return Buffer.concat([varint((num << 3) | 2), varint(body.length), body]);
}

function intField(num: number, value: number): Buffer {
  return Buffer.concat([varint(num << 3), varint(value)]);
}

/** NamedAny{name=1, value=2 Any{yaml=2}}. */
function namedAny(name: string, value: unknown): Buffer {
  return Buffer.concat([field(1, name), field(2, field(2, JSON.stringify(value)))]);
}

// Field numbers of openapi_v2.Schema.
const S = { ref: 1, format: 2, description: 4, maxLength: 11, required: 19, enum: 20, additionalProperties: 21, type: 22, items: 23, properties: 25, vendorExtension: 31 };

/** Encodes one JSON schema as an openapi_v2.Schema message. */
export function encodeSchema(s: Json): Buffer {
  const parts: Buffer[] = [];
  if (typeof s.$ref === 'string') parts.push(field(S.ref, s.$ref));
  if (typeof s.format === 'string') parts.push(field(S.format, s.format));
  if (typeof s.description === 'string') parts.push(field(S.description, s.description));
  if (typeof s.maxLength === 'number') parts.push(intField(S.maxLength, s.maxLength));
  for (const r of (s.required as string[] | undefined) ?? []) parts.push(field(S.required, r));
  for (const e of (s.enum as unknown[] | undefined) ?? []) parts.push(field(S.enum, field(2, JSON.stringify(e))));
  if (s.additionalProperties && typeof s.additionalProperties === 'object') parts.push(field(S.additionalProperties, field(1, encodeSchema(s.additionalProperties as Json))));
  if (typeof s.type === 'string') parts.push(field(S.type, field(1, s.type)));
  if (s.items && typeof s.items === 'object') parts.push(field(S.items, field(1, encodeSchema(s.items as Json))));
  if (s.properties && typeof s.properties === 'object') {
    const named = Object.entries(s.properties as Record<string, Json>).map(([k, v]) => field(1, Buffer.concat([field(1, k), field(2, encodeSchema(v))])));
    parts.push(field(S.properties, Buffer.concat(named)));
  }
  for (const [k, v] of Object.entries(s)) if (k.startsWith('x-')) parts.push(field(S.vendorExtension, namedAny(k, v)));
  return Buffer.concat(parts);
}

/** Encodes the document openApiV2() returns as an openapi_v2.Document message. */
export function encodeOpenApiV2(doc: Json): Buffer {
  const info = (doc.info ?? {}) as { title?: string; version?: string };
  const defs = Object.entries((doc.definitions ?? {}) as Record<string, Json>).map(([name, schema]) => field(1, Buffer.concat([field(1, name), field(2, encodeSchema(schema))])));
  return Buffer.concat([
    field(1, String(doc.swagger ?? '2.0')),
    field(2, Buffer.concat([field(1, info.title ?? ''), field(2, info.version ?? '')])),
    field(8, Buffer.alloc(0)),
    field(9, Buffer.concat(defs)),
  ]);
}
