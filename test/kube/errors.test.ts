import { describe, it, expect } from 'vitest';
import {
  ApiError,
  FencedError,
  TransportError,
  apiErrorFromResponse,
  isAlreadyExists,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
  isOutcomeUnknown,
  isRetryable,
  isTooManyRequests,
  writeOutcome,
} from '../../src/kube/errors.js';
import { resourcePath, NODES, LEASES, CLUSTERCIDRS, SERVICECIDRS } from '../../src/kube/types.js';

const status = (code: number, reason: string, extra: object = {}) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: `msg ${reason}`, ...extra });

describe('apiErrorFromResponse', () => {
  it('parses metav1.Status', () => {
    const e = apiErrorFromResponse('PUT', '/api/v1/nodes/a', 409, status(409, 'Conflict'));
    expect(e).toBeInstanceOf(ApiError);
    expect([e.code, e.reason, e.status?.message]).toEqual([409, 'Conflict', 'msg Conflict']);
    expect(e.message).toBe('PUT /api/v1/nodes/a: 409 Conflict: msg Conflict');
  });

  it('takes retryAfterSeconds from details, else from the Retry-After header', () => {
    expect(apiErrorFromResponse('GET', '/x', 429, status(429, 'TooManyRequests', { details: { retryAfterSeconds: 7 } }), '1').retryAfterSeconds).toBe(7);
    expect(apiErrorFromResponse('GET', '/x', 429, 'slow down', '3').retryAfterSeconds).toBe(3);
    expect(apiErrorFromResponse('GET', '/x', 429, 'slow down', 'Wed, 21 Oct 2015 07:28:00 GMT').retryAfterSeconds).toBeUndefined();
  });

  it('falls back to the code for the reason and to the text for the message', () => {
    const e = apiErrorFromResponse('GET', '/x', 404, '<html>nope</html>');
    expect([e.reason, e.status, e.message]).toEqual(['NotFound', undefined, 'GET /x: 404 NotFound: <html>nope</html>']);
    expect(apiErrorFromResponse('GET', '/x', 502, '').message).toContain('HTTP 502');
  });
});

const api = (code: number, reason?: string, retryAfter?: string) => apiErrorFromResponse('PATCH', '/p', code, reason ? status(code, reason) : '', retryAfter);
const transport = (kind: 'timeout' | 'connection' | 'aborted', sent: boolean) =>
  new TransportError({ kind, requestSent: sent, method: 'PATCH', path: '/p', detail: 'x' });

describe('classification', () => {
  it.each([
    // error, conflict, notFound, invalid, tooMany, gone, alreadyExists
    ['409 Conflict', api(409, 'Conflict'), [true, false, false, false, false, false]],
    ['409 AlreadyExists', api(409, 'AlreadyExists'), [false, false, false, false, false, true]],
    ['409 bare', api(409), [true, false, false, false, false, false]],
    ['404', api(404, 'NotFound'), [false, true, false, false, false, false]],
    ['422', api(422, 'Invalid'), [false, false, true, false, false, false]],
    ['429', api(429, 'TooManyRequests'), [false, false, false, true, false, false]],
    ['410 Expired', api(410, 'Expired'), [false, false, false, false, true, false]],
    ['410 Gone', api(410, 'Gone'), [false, false, false, false, true, false]],
    ['timeout', transport('timeout', true), [false, false, false, false, false, false]],
    ['plain Error', new Error('x'), [false, false, false, false, false, false]],
  ])('%s', (_name, err, expected) => {
    expect([isConflict(err), isNotFound(err), isInvalid(err), isTooManyRequests(err), isGone(err), isAlreadyExists(err)]).toEqual(expected);
  });

  it.each([
    ['success', undefined, 'applied'],
    ['fenced', new FencedError('lost lease'), 'not-applied'],
    ['refused before sending', transport('connection', false), 'not-applied'],
    ['timeout after sending', transport('timeout', true), 'unknown'],
    ['dropped after sending', transport('connection', true), 'unknown'],
    ['cancelled after sending', transport('aborted', true), 'unknown'],
    ['409', api(409, 'Conflict'), 'not-applied'],
    ['422', api(422, 'Invalid'), 'not-applied'],
    ['429', api(429, 'TooManyRequests'), 'not-applied'],
    ['500', api(500, 'InternalError'), 'unknown'],
    ['504', api(504, 'Timeout'), 'unknown'],
    ['503 without Retry-After', api(503), 'unknown'],
    ['503 with Retry-After', api(503, undefined, '1'), 'not-applied'],
  ])('write outcome: %s → %s', (_name, err, outcome) => {
    expect(writeOutcome(err)).toBe(outcome);
    expect(isOutcomeUnknown(err)).toBe(outcome === 'unknown');
  });

  it.each([
    [api(429), true],
    [api(500), true],
    [api(409, 'Conflict'), true],
    [api(404), false],
    [api(422), false],
    [transport('timeout', true), true],
    [transport('aborted', false), false],
    [new FencedError('x'), false],
  ])('retryable %#', (err, expected) => {
    expect(isRetryable(err)).toBe(expected);
  });
});

describe('resourcePath', () => {
  it.each([
    [NODES, {}, '/api/v1/nodes'],
    [NODES, { name: 'n-1' }, '/api/v1/nodes/n-1'],
    [NODES, { name: 'n-1', subresource: 'status' }, '/api/v1/nodes/n-1/status'],
    [LEASES, { namespace: 'kube-system', name: 'ccm' }, '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ccm'],
    [CLUSTERCIDRS, { name: 'c' }, '/apis/networking.x-k8s.io/v1/clustercidrs/c'],
    [SERVICECIDRS, {}, '/apis/networking.k8s.io/v1/servicecidrs'],
  ])('%o %o', (res, opts, expected) => {
    expect(resourcePath(res, opts)).toBe(expected);
  });

  it.each([
    [LEASES, {}, 'namespace'],
    [NODES, { namespace: 'x' }, 'namespace'],
    [NODES, { name: 'a/b' }, 'name'],
    [NODES, { name: '..' }, 'name'],
    [NODES, { subresource: 'status' }, 'subresource'],
  ])('rejects %o %o naming %s', (res, opts, field) => {
    expect(() => resourcePath(res, opts)).toThrow(field);
  });
});
