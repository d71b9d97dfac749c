// Errors from the API client, classified the way callers need to react: by reason (conflict, not
// found, gone, …) and by whether a write may have taken effect even though it reported failure.
import type { Status } from './types.js';

const REASON_BY_CODE: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** The API server answered with a non-2xx status. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: number;
  readonly reason: string;
  readonly retryAfterSeconds: number | undefined;
  readonly status: Status | undefined;
  readonly method: string;
  readonly path: string;

  constructor(init: { code: number; reason?: string; message: string; retryAfterSeconds?: number; status?: Status; method: string; path: string }) {
    super(`${init.method} ${init.path}: ${init.code} ${init.reason ?? REASON_BY_CODE[init.code] ?? 'Unknown'}: ${init.message}`);
    this.code = init.code;
    this.reason = init.reason || REASON_BY_CODE[init.code] || 'Unknown';
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
  }
}

export type TransportErrorKind = 'timeout' | 'aborted' | 'connection' | 'protocol';

/** No (complete) answer from the API server: timeout, cancelled, connection refused or dropped, bad body. */
export class TransportError extends Error {
  override name = 'TransportError';
  readonly kind: TransportErrorKind;
  /** The full request reached the wire, so a write may have been applied. */
  readonly requestSent: boolean;
  readonly method: string;
  readonly path: string;
  /**
   * The connection was one kept alive from an earlier request, and the server reset it before
   * answering a byte: most often it had closed that idle connection as the request went out
   * (Node's keep-alive race) and never read it, but a server can also reset after applying a
   * write. KubeClient sends a GET again once; a write's outcome stays unknown.
   */
  readonly staleConnection: boolean;

  constructor(init: { kind: TransportErrorKind; requestSent: boolean; method: string; path: string; cause?: unknown; detail: string; staleConnection?: boolean }) {
    super(`${init.method} ${init.path}: ${init.kind}: ${init.detail}`, { cause: init.cause });
    this.kind = init.kind;
    this.requestSent = init.requestSent;
    this.method = init.method;
    this.path = init.path;
    this.staleConnection = init.staleConnection ?? false;
  }
}

/** A write was refused locally because this process is no longer allowed to write (lost the lease). */
export class FencedError extends Error {
  override name = 'FencedError';
}

/** Builds an ApiError from an HTTP status, the raw body and a Retry-After header. */
export function apiErrorFromResponse(method: string, path: string, code: number, body: string, retryAfterHeader?: string): ApiError {
  let status: Status | undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object' && (parsed as Status).kind === 'Status') status = parsed as Status;
  } catch {
    // Not JSON (a proxy's HTML page, an empty body): keep the text as the message.
  }
  let retryAfterSeconds = status?.details?.retryAfterSeconds;
  if (retryAfterSeconds === undefined && retryAfterHeader !== undefined && /^\d+$/.test(retryAfterHeader.trim())) {
    retryAfterSeconds = Number(retryAfterHeader.trim());
  }
  const text = body.trim().slice(0, 500);
  return new ApiError({
    code,
    reason: status?.reason,
    message: status?.message ?? (text || `HTTP ${code}`),
    retryAfterSeconds,
    status,
    method,
    path,
  });
}

function reasonIs(err: unknown, code: number, reason: string): boolean {
  return err instanceof ApiError && (err.reason === reason || (err.code === code && !err.status?.reason));
}

export const isNotFound = (err: unknown): boolean => reasonIs(err, 404, 'NotFound');
/** 409 Conflict: stale resourceVersion on update. Not AlreadyExists (also a 409). */
export const isConflict = (err: unknown): boolean => reasonIs(err, 409, 'Conflict');
export const isAlreadyExists = (err: unknown): boolean => err instanceof ApiError && err.reason === 'AlreadyExists';
/** 422 Invalid; a failed json-patch `test` also lands here or as a Conflict, depending on version. */
export const isInvalid = (err: unknown): boolean => reasonIs(err, 422, 'Invalid');
export const isTooManyRequests = (err: unknown): boolean => err instanceof ApiError && (err.code === 429 || err.reason === 'TooManyRequests');
/** 410 Gone / reason Expired: the resourceVersion is too old; relist. */
export const isGone = (err: unknown): boolean => err instanceof ApiError && (err.code === 410 || err.reason === 'Expired' || err.reason === 'Gone');
export const isFenced = (err: unknown): boolean => err instanceof FencedError;

/** Whether it is worth trying again later (throttling, server trouble, network). */
export function isRetryable(err: unknown): boolean {
  if (err instanceof TransportError) return err.kind !== 'aborted';
  if (err instanceof ApiError) return err.code === 429 || err.code >= 500 || isConflict(err);
  return false;
}

export type WriteOutcome = 'applied' | 'not-applied' | 'unknown';

/**
 * What a failed write means for the object. `unknown` when the request went out and no definite
 * answer came back (timeout or dropped connection after sending, 5xx other than 503 admission
 * rejection): the caller must re-read before assuming the write did not happen.
 */
export function writeOutcome(err: unknown): WriteOutcome {
  if (err === undefined) return 'applied';
  if (err instanceof FencedError) return 'not-applied';
  if (err instanceof TransportError) return err.requestSent ? 'unknown' : 'not-applied';
  if (err instanceof ApiError) {
    if (err.code < 500) return 'not-applied';
    // 503 with Retry-After is the server shedding load before handling the request.
    if (err.code === 503 && err.retryAfterSeconds !== undefined) return 'not-applied';
    return 'unknown';
  }
  return 'unknown';
}

export const isOutcomeUnknown = (err: unknown): boolean => writeOutcome(err) === 'unknown';
