// The Kubernetes protobuf bodies kubectl sends for its self-subject reviews, decoded to the JSON
// shape the review handlers read; malformed or other bodies are refused with a clear status.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/double/index.js';
import { decodeSelfReview, readFields } from '../../src/double/review-proto.js';

// Test-side protobuf writer: length-delimited fields only (all a review body uses).
function field(num: number, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const varint = (n: number): number[] => (n < 128 ? [n] : [(n & 0x7f) | 0x80, ...varint(n >> 7)]);
  return Buffer.concat([Buffer.from(varint((num << 3) | 2)), Buffer.from(varint(body.length)), body]);
}

function envelope(apiVersion: string, kind: string, raw: Buffer): Buffer {
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), field(1, Buffer.concat([field(1, apiVersion), field(2, kind)])), field(2, raw), field(4, 'application/vnd.kubernetes.protobuf')]);
}

function thrown(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('did not throw');
}

describe('decodeSelfReview', () => {
  it('reads a SelfSubjectAccessReview\'s resource attributes (metadata skipped)', () => {
    const attrs = Buffer.concat([field(1, 'kube-system'), field(2, 'patch'), field(3, 'coordination.k8s.io'), field(5, 'leases'), field(6, 'status'), field(7, 'ccm')]);
    const body = envelope('authorization.k8s.io/v1', 'SelfSubjectAccessReview', Buffer.concat([field(1, Buffer.alloc(0)), field(2, field(1, attrs))]));
    expect(decodeSelfReview(body)).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { namespace: 'kube-system', verb: 'patch', group: 'coordination.k8s.io', resource: 'leases', subresource: 'status', name: 'ccm' } },
    });
  });

  it('reads non-resource attributes, a rules review\'s namespace, and a bare SelfSubjectReview', () => {
    const nonRes = envelope('authorization.k8s.io/v1', 'SelfSubjectAccessReview', field(2, field(2, Buffer.concat([field(1, '/metrics'), field(2, 'get')]))));
    expect(decodeSelfReview(nonRes).spec).toEqual({ nonResourceAttributes: { path: '/metrics', verb: 'get' } });
    expect(decodeSelfReview(envelope('authorization.k8s.io/v1', 'SelfSubjectRulesReview', field(2, field(1, 'default')))).spec).toEqual({ namespace: 'default' });
    expect(decodeSelfReview(envelope('authentication.k8s.io/v1', 'SelfSubjectReview', Buffer.alloc(0)))).toEqual({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  });

  it('refuses a body without the k8s prefix or cut short (400), and other kinds (415)', () => {
    expect(thrown(() => decodeSelfReview(Buffer.from('{"kind":"SelfSubjectReview"}')))).toMatchObject({ code: 400, message: 'the protobuf request body is malformed: missing the k8s protobuf prefix' });
    const whole = envelope('authorization.k8s.io/v1', 'SelfSubjectRulesReview', field(2, field(1, 'default')));
    expect(thrown(() => decodeSelfReview(whole.subarray(0, whole.length - 3)))).toMatchObject({ code: 400 });
    expect(thrown(() => decodeSelfReview(envelope('v1', 'Node', Buffer.alloc(0))))).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
  });

  it('splits varint fields too', () => {
    expect(readFields(Buffer.from([0x08, 0x96, 0x01, 0x12, 0x01, 0x41]))).toEqual([{ num: 1, value: 150 }, { num: 2, bytes: Buffer.from('A') }]);
  });
});
