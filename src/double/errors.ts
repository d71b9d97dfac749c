// metav1.Status bodies, shaped as kube-apiserver sends them, so clients that branch on `reason`
// and `code` (client-node's informer, retry helpers) behave as they would against a real cluster.

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'MethodNotAllowed'
  | 'UnsupportedMediaType'
  | 'NotAcceptable'
  | 'Timeout'
  | 'ServiceUnavailable';

export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** kube-apiserver's words for a 422 it has nothing more to say about (a JSON patch that cannot apply). */
export const REJECTED_REQUEST = 'the server rejected our request due to an error in our request';

/**
 * A JSON patch that does not apply (a failed `test`, a path that does not exist, an unknown op):
 * kube-apiserver answers a bare 422 — its handler builds the error with NewGenericServerResponse,
 * which drops the patch library's message — so neither the op nor the path is named
 * (k8s.io/apiserver pkg/endpoints/handlers/patch.go, applyJSPatch).
 */
export function patchNotApplied(): ApiError {
  return new ApiError(422, 'Invalid', REJECTED_REQUEST, {});
}

/** An error that the HTTP layer turns into a Status response with this code. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: number,
    /** undefined: no reason, as kube-apiserver sends for an error it has no reason for (StatusReasonUnknown). */
    readonly reason: StatusReason | undefined,
    message: string,
    readonly details?: StatusDetails,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toStatus(): StatusBody {
    const body: StatusBody = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, code: this.code };
    if (this.reason === undefined) delete body.reason;
    if (this.details) {
      // Go's omitempty: an empty group or name is not sent (core resources have group "").
      const { group, name, ...rest } = this.details;
      body.details = { ...(name ? { name } : {}), ...(group ? { group } : {}), ...rest };
    }
    return body;
  }
}

/**
 * A path no API group or version serves: kube-apiserver's mux answers a plain-text
 * "404 page not found", not a Status.
 */
export class PageNotFound extends ApiError {
  constructor() {
    super(404, 'NotFound', '404 page not found');
  }
}

/** "nodes" in group "" → "nodes"; "leases" in "coordination.k8s.io" → "leases.coordination.k8s.io". */
export function qualifiedResource(group: string, plural: string): string {
  return group ? `${plural}.${group}` : plural;
}

export function notFound(group: string, plural: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(group, plural)} "${name}" not found`, { name, group, kind: plural });
}

export function alreadyExists(group: string, plural: string, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(group, plural)} "${name}" already exists`, { name, group, kind: plural });
}

export function conflict(group: string, plural: string, name: string, why: string): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(group, plural)} "${name}": ${why}`, { name, group, kind: plural });
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

export interface FieldError {
  field: string;
  /** FieldValueInvalid, FieldValueRequired, FieldValueForbidden, FieldValueNotSupported… */
  type: 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueForbidden' | 'FieldValueDuplicate' | 'FieldValueNotSupported' | 'FieldValueTooLong';
  value?: unknown;
  /**
   * The value as kube-apiserver prints it when JSON would not (a Go struct: `{"Key":"a",…}`), or
   * null for an error that names no value (a CEL rule on an object: `Invalid value: <message>`).
   */
  rendered?: string | null;
  detail: string;
}

function valueText(e: FieldError): string | null {
  return e.rendered === undefined ? JSON.stringify(e.value) : e.rendered;
}

function describeFieldError(e: FieldError): string {
  switch (e.type) {
    case 'FieldValueRequired':
      return e.detail === 'Required value' ? e.detail : `Required value: ${e.detail}`;
    case 'FieldValueTooLong':
      return `Too long: ${e.detail}`;
    case 'FieldValueForbidden':
      return `Forbidden: ${e.detail}`;
    case 'FieldValueDuplicate':
      return `Duplicate value: ${valueText(e)}${e.detail ? `: ${e.detail}` : ''}`;
    case 'FieldValueNotSupported':
      return `Unsupported value: ${JSON.stringify(e.value)}: ${e.detail}`;
    default: {
      const v = valueText(e);
      return v === null ? `Invalid value: ${e.detail}` : `Invalid value: ${v}: ${e.detail}`;
    }
  }
}

/** 422 Invalid with one cause per field error, like kube-apiserver's validation failures. */
export function invalid(kind: string, group: string, name: string, errors: FieldError[]): ApiError {
  const causes = errors.map((e) => ({ reason: e.type, message: describeFieldError(e), field: e.field }));
  // The message lists each distinct error once; the causes keep every one (kube-apiserver runs some
  // checks twice on an update, e.g. metadata.uid, and reports both causes under one message).
  const summary = [...new Set(errors.map((e) => `${e.field}: ${describeFieldError(e)}`))];
  const list = summary.length === 1 ? summary[0] : `[${summary.join(', ')}]`;
  const qualified = group ? `${kind}.${group}` : kind;
  return new ApiError(422, 'Invalid', `${qualified} "${name}" is invalid: ${list}`, { name, group, kind, causes });
}
