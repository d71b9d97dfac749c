// fieldValidation (Ignore, Warn, Strict): what a write does with fields the kind's schema
// (openapi-schema.ts) does not declare, answered in kube-apiserver's wording.
import { ApiError, badRequest, invalid } from './errors.js';
import { definitionOf, pruneUnknownFields, unknownFields } from './openapi-schema.js';
import { goFormat } from './go-format.js';

export { goFormat };
import type { Resource } from './store.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/**
 * The directive of a request. Absent: Ignore — the double stores unknown fields as before
 * (kube-apiserver would warn by default and drop them; see docs/apiserver-double.md).
 */
export function fieldValidationOf(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation');
  // kube-apiserver's default: warn about unknown fields and drop them.
  if (v === null || v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  throw badRequest(`fieldValidation: Unsupported value: "${v}": supported values: "Ignore", "Strict", "Warn"`);
}

/** Unknown-field paths of `obj` under the schema of `r`'s kind (none for a kind without one). */
export function unknownFieldsOf(r: Pick<Resource, 'group' | 'version' | 'kind'>, obj: unknown): string[] {
  const def = definitionOf(r);
  if (!def) return [];
  // Strategic-merge directives ($patch, $setElementOrder/…, $retainKeys…) are not fields.
  return unknownFields(obj, { t: 'ref', name: def }).filter((p) => !/(^|\.)\$/.test(p));
}

/** `obj` without the fields the schema of `r`'s kind does not declare (unchanged for a kind without one). */
export function pruneUnknownOf(r: Pick<Resource, 'group' | 'version' | 'kind'>, obj: unknown): unknown {
  const def = definitionOf(r);
  return def ? pruneUnknownFields(obj, { t: 'ref', name: def }) : obj;
}

export function strictDecodingMessage(fields: string[]): string {
  return `strict decoding error: ${fields.map((f) => `unknown field "${f}"`).join(', ')}`;
}

/**
 * The error of a patch whose fields the schema lacks, under Strict: a strategic merge patch is
 * reported against the `patch` field (422), other patches as a decoding error (400).
 */
export function strictPatchError(strategic: boolean, patch: unknown, fields: string[]): ApiError {
  if (!strategic) return badRequest(strictDecodingMessage(fields));
  return invalid('', '', '', [{ field: 'patch', type: 'FieldValueInvalid', value: goFormat(patch), detail: strictDecodingMessage(fields) }]);
}

/** An HTTP Warning header value (code 299) carrying `text`. */
export function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}
