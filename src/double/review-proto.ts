// kubectl sends its access reviews (auth can-i, can-i --list, whoami) in Kubernetes protobuf:
// the "k8s\0" magic, a runtime.Unknown envelope, and the review message inside. This decodes
// the fields a review's spec carries into the JSON shape reviews.ts reads; answers stay JSON
// (kubectl accepts them).
import { ApiError } from './errors.js';

export const KUBE_PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

interface WireField {
  num: number;
  bytes?: Buffer;
  value?: number;
}

function malformed(why: string): ApiError {
  return new ApiError(400, 'BadRequest', `the protobuf request body is malformed: ${why}`);
}

/** Splits one message into its fields (varint and length-delimited; fixed widths skipped). */
export function readFields(buf: Buffer): WireField[] {
  const out: WireField[] = [];
  let i = 0;
  const varint = (): number => {
    let result = 0;
    let mul = 1;
    for (;;) {
      if (i >= buf.length) throw malformed('truncated varint');
      const b = buf[i++];
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
      if (mul > 2 ** 63) throw malformed('varint too long');
    }
  };
  while (i < buf.length) {
    const key = varint();
    const num = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) out.push({ num, value: varint() });
    else if (wire === 2) {
      const len = varint();
      if (i + len > buf.length) throw malformed('field longer than the message');
      out.push({ num, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw malformed(`unsupported wire type ${wire}`);
  }
  return out;
}

function strings(fields: WireField[], names: Record<number, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) if (names[f.num] && f.bytes) out[names[f.num]] = f.bytes.toString('utf8');
  return out;
}

function message(fields: WireField[], num: number): WireField[] | undefined {
  const f = fields.find((x) => x.num === num && x.bytes);
  return f ? readFields(f.bytes as Buffer) : undefined;
}

/** The kind and raw message of a Kubernetes protobuf body. */
export function unwrap(body: Buffer): { apiVersion: string; kind: string; raw: Buffer } {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw malformed('missing the k8s protobuf prefix');
  const unknown = readFields(body.subarray(4));
  const typeMeta = strings(message(unknown, 1) ?? [], { 1: 'apiVersion', 2: 'kind' });
  const raw = unknown.find((f) => f.num === 2)?.bytes ?? Buffer.alloc(0);
  return { apiVersion: typeMeta.apiVersion ?? '', kind: typeMeta.kind ?? '', raw };
}

/** A SelfSubjectAccessReview, SelfSubjectRulesReview or SelfSubjectReview body as JSON. */
export function decodeSelfReview(body: Buffer): Record<string, unknown> {
  const { apiVersion, kind, raw } = unwrap(body);
  const fields = readFields(raw);
  const spec = message(fields, 2) ?? [];
  const out: Record<string, unknown> = { apiVersion, kind };
  if (kind === 'SelfSubjectAccessReview') {
    const res = message(spec, 1);
    const nonRes = message(spec, 2);
    out.spec = {
      ...(res ? { resourceAttributes: strings(res, { 1: 'namespace', 2: 'verb', 3: 'group', 4: 'version', 5: 'resource', 6: 'subresource', 7: 'name' }) } : {}),
      ...(nonRes ? { nonResourceAttributes: strings(nonRes, { 1: 'path', 2: 'verb' }) } : {}),
    };
  } else if (kind === 'SelfSubjectRulesReview') out.spec = strings(spec, { 1: 'namespace' });
  else if (kind !== 'SelfSubjectReview') throw new ApiError(415, 'UnsupportedMediaType', `protobuf bodies are accepted for self-subject reviews only, got a ${kind || 'body without a kind'}`);
  return out;
}
