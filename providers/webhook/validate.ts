// JSON Schema validation with ajv, its errors said field by field: `nodes.n1.found.addresses[0].type:
// must be one of InternalIP, ... (value "PublicIP")`. One Ajv instance per process, made when the
// first schema is compiled (the webhook provider is the only user; nothing else loads ajv).
import { Ajv, type ErrorObject } from 'ajv';
import { showValue } from '../answers.js';

let ajv: Ajv | undefined;

/**
 * Every problem `value` has against the schema; empty when it conforms. `at`: the JSON pointer
 * of `value` in the document it comes from, so its fields are named from the top
 * (`nodes.n1.found.zone` for the outcome of node n1 checked alone).
 */
export type Validator = (value: unknown, at?: string) => string[];

/** A JSON pointer (/nodes/n1/addresses/0) as a field path (nodes.n1.addresses[0]). */
export function fieldPath(pointer: string): string {
  if (pointer === '') return '(top level)';
  return pointer.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).reduce((path, part) => {
    if (/^\d+$/.test(part)) return `${path}[${part}]`;
    const name = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(part) ? part : JSON.stringify(part);
    return path === '' ? name : `${path}.${name}`;
  }, '');
}

function valueAt(root: unknown, pointer: string): unknown {
  let v = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[key] : undefined;
  }
  return v;
}

function describeError(e: ErrorObject, root: unknown, at: string): string {
  const p = e.params as Record<string, unknown>;
  const here = e.instancePath;
  switch (e.keyword) {
    case 'additionalProperties': {
      const pointer = `${here}/${String(p.additionalProperty).replace(/~/g, '~0').replace(/\//g, '~1')}`;
      return `${fieldPath(at + pointer)}: unknown field (value ${showValue(valueAt(root, pointer))})`;
    }
    case 'required':
      return `${fieldPath(`${at}${here}/${String(p.missingProperty)}`)}: required`;
    case 'enum':
      return `${fieldPath(at + here)}: must be one of ${(p.allowedValues as unknown[]).join(', ')} (value ${showValue(valueAt(root, here))})`;
    case 'const':
      return `${fieldPath(at + here)}: must be ${showValue(p.allowedValue)} (value ${showValue(valueAt(root, here))})`;
    case 'minProperties':
    case 'maxProperties':
      if (e.parentSchema && (e.parentSchema as Record<string, unknown>).minProperties === 1 && (e.parentSchema as Record<string, unknown>).maxProperties === 1) {
        return `${fieldPath(at + here)}: must hold exactly one of found, notFound, error (value ${showValue(valueAt(root, here))})`;
      }
      return `${fieldPath(at + here)}: ${e.message ?? e.keyword}`;
    default:
      return `${fieldPath(at + here)}: ${e.message ?? e.keyword} (value ${showValue(valueAt(root, here))})`;
  }
}

export function compileSchema(schema: object): Validator {
  ajv ??= new Ajv({ allErrors: true, strict: true, verbose: true });
  const validate = ajv.compile(schema);
  return (value, at = '') => {
    if (validate(value)) return [];
    // Several keywords can fail on one field (maxProperties and additionalProperties): say each line once.
    return [...new Set((validate.errors ?? []).map((e) => describeError(e, value, at)))];
  };
}
