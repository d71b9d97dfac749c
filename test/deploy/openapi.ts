// Validation of an object against a CRD's structural openAPIV3Schema, for the subset of OpenAPI
// v3 our CRD uses, the way the API server applies it:
//  - structure: type, properties, required, items, format int32/int64, minimum/maximum,
//    minLength/maxLength, enum, pattern; unknown fields are errors (kubectl's default
//    server-side field validation is Strict), except under x-kubernetes-preserve-unknown-fields
//    and in metadata (ObjectMeta is validated by the API server itself);
//  - x-kubernetes-validations: every rule is evaluated with the small CEL evaluator in cel.ts.
//    A rule that uses oldSelf is a transition rule: it runs only on update and only where the
//    old object has a value at the same place, unless optionalOldSelf is set, in which case it
//    also runs on create with oldSelf an empty optional.
// Keywords this validator does not implement make it throw rather than pass silently.
import { evaluate, mentionsOldSelf, optionalOf } from './cel.js';
import { isObject, type Json, type JsonObject } from './kustomize.js';

const KNOWN = new Set([
  'type', 'description', 'properties', 'required', 'items', 'format', 'minimum', 'maximum', 'minLength', 'maxLength',
  'enum', 'pattern', 'x-kubernetes-validations', 'x-kubernetes-list-type', 'x-kubernetes-map-type',
  'x-kubernetes-preserve-unknown-fields', 'default', 'nullable',
]);

export interface ValidationRule {
  rule: string;
  message?: string;
  optionalOldSelf?: boolean;
}

/** Errors of `value` against `schema`; `old` is the previous object on an update. */
export function validate(schema: JsonObject, value: Json, old?: { value: Json | undefined }, path = ''): string[] {
  const errors: string[] = [];
  const here = path || '<root>';
  for (const key of Object.keys(schema)) {
    if (!KNOWN.has(key)) throw new Error(`${here}: schema keyword ${key} is not implemented by this validator`);
  }
  if (value === null) {
    if (schema.nullable !== true) errors.push(`${here}: must not be null`);
    return errors;
  }
  switch (schema.type) {
    case 'object': {
      if (!isObject(value)) return [`${here}: must be an object`];
      const props = isObject(schema.properties) ? schema.properties : undefined;
      for (const req of (schema.required as string[] | undefined) ?? []) {
        if (!(req in value)) errors.push(`${here}: ${req} is required`);
      }
      const open = schema['x-kubernetes-preserve-unknown-fields'] === true || path === '.metadata' || props === undefined;
      for (const [k, v] of Object.entries(value)) {
        const sub = props?.[k];
        if (isObject(sub)) {
          const oldObj = old && isObject(old.value) ? old.value : undefined;
          const oldChild = oldObj && k in oldObj ? { value: oldObj[k] } : undefined;
          errors.push(...validate(sub, v, oldChild, `${path}.${k}`));
        } else if (!open) errors.push(`${path}.${k}: unknown field`);
      }
      break;
    }
    case 'array':
      if (!Array.isArray(value)) return [`${here}: must be an array`];
      // Items are not correlated with the old list (our lists are atomic): no oldSelf below.
      if (isObject(schema.items)) value.forEach((v, i) => errors.push(...validate(schema.items as JsonObject, v, undefined, `${path}[${i}]`)));
      break;
    case 'string':
      if (typeof value !== 'string') return [`${here}: must be a string`];
      if (typeof schema.maxLength === 'number' && [...value].length > schema.maxLength) errors.push(`${here}: longer than ${schema.maxLength}`);
      if (typeof schema.minLength === 'number' && [...value].length < schema.minLength) errors.push(`${here}: shorter than ${schema.minLength}`);
      if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${here}: does not match ${schema.pattern}`);
      break;
    case 'integer':
    case 'number':
      if (typeof value !== 'number' || (schema.type === 'integer' && !Number.isInteger(value))) return [`${here}: must be ${schema.type}`];
      if (schema.format === 'int32' && (value < -(2 ** 31) || value > 2 ** 31 - 1)) errors.push(`${here}: out of int32 range`);
      if (typeof schema.minimum === 'number' && value < schema.minimum) errors.push(`${here}: less than ${schema.minimum}`);
      if (typeof schema.maximum === 'number' && value > schema.maximum) errors.push(`${here}: greater than ${schema.maximum}`);
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return [`${here}: must be a boolean`];
      break;
    default:
      throw new Error(`${here}: schema type ${String(schema.type)} is not implemented by this validator`);
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errors.push(`${here}: not one of ${JSON.stringify(schema.enum)}`);
  }
  if (errors.length > 0) return errors; // the API server skips CEL on structurally invalid values

  for (const r of (schema['x-kubernetes-validations'] as unknown as ValidationRule[] | undefined) ?? []) {
    const transition = mentionsOldSelf(r.rule);
    let ok: unknown;
    if (!transition) ok = safeEval(r.rule, { self: value });
    else if (r.optionalOldSelf) ok = safeEval(r.rule, { self: value, oldSelf: optionalOf(old?.value) });
    else if (old && old.value !== undefined) ok = safeEval(r.rule, { self: value, oldSelf: old.value });
    else continue;
    if (ok !== true) errors.push(`${here}: ${r.message ?? `failed rule: ${r.rule}`}${ok instanceof Error ? ` (${ok.message})` : ''}`);
  }
  return errors;
}

function safeEval(rule: string, vars: Record<string, unknown>): unknown {
  try {
    return evaluate(rule, vars);
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}
