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

/** An error that the HTTP layer turns into a Status response with this code. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toStatus(): StatusBody {
    const body: StatusBody = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, code: this.code };
    if (this.details) body.details = this.details;
    return body;
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
  detail: string;
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
      return `Duplicate value: ${JSON.stringify(e.value)}`;
    case 'FieldValueNotSupported':
      return `Unsupported value: ${JSON.stringify(e.value)}: ${e.detail}`;
    default:
      return `Invalid value: ${JSON.stringify(e.value)}: ${e.detail}`;
  }
}

/** 422 Invalid with one cause per field error, like kube-apiserver's validation failures. */
export function invalid(kind: string, group: string, name: string, errors: FieldError[]): ApiError {
  const causes = errors.map((e) => ({ reason: e.type, message: describeFieldError(e), field: e.field }));
  const summary = errors.map((e) => `${e.field}: ${describeFieldError(e)}`);
  const list = summary.length === 1 ? summary[0] : `[${summary.join(', ')}]`;
  const qualified = group ? `${kind}.${group}` : kind;
  return new ApiError(422, 'Invalid', `${qualified} "${name}" is invalid: ${list}`, { name, group, kind, causes });
}
