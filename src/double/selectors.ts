// Label and field selectors in the query-string syntax kube-apiserver parses. Pure functions.
import { badRequest } from './errors.js';
import type { FieldReader, KObject, ResourceDef } from './resource-def.js';

export type LabelOp = 'eq' | 'neq' | 'in' | 'notin' | 'exists' | 'notexists' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

// A qualified label key: optional DNS prefix, then a name of up to 63 characters.
const KEY_RE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts;
}

function checkKey(key: string, selector: string): string {
  if (!KEY_RE.test(key)) throw badRequest(`unable to parse requirement: invalid label key "${key}" in labelSelector "${selector}"`);
  return key;
}

function checkValue(value: string, selector: string): string {
  if (!VALUE_RE.test(value) || value.length > 63) throw badRequest(`unable to parse requirement: invalid label value "${value}" in labelSelector "${selector}"`);
  return value;
}

/** Parses `a=b,c!=d,e in (f,g),h notin (i),j,!k,l>3`. An empty selector matches everything. */
export function parseLabelSelector(selector: string | undefined | null): LabelRequirement[] {
  if (!selector || selector.trim() === '') return [];
  const reqs: LabelRequirement[] = [];
  for (const raw of splitTopLevel(selector)) {
    const part = raw.trim();
    if (part === '') throw badRequest(`unable to parse requirement: empty requirement in labelSelector "${selector}"`);
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/))) {
      const values = m[3].split(',').map((v) => checkValue(v.trim(), selector));
      reqs.push({ key: checkKey(m[1], selector), op: m[2] as 'in' | 'notin', values });
    } else if ((m = part.match(/^([^=!<>\s]+)\s*(==|=|!=)\s*(.*)$/))) {
      reqs.push({ key: checkKey(m[1], selector), op: m[2] === '!=' ? 'neq' : 'eq', values: [checkValue(m[3].trim(), selector)] });
    } else if ((m = part.match(/^([^=!<>\s]+)\s*([<>])\s*(\S+)$/))) {
      if (!/^-?\d+$/.test(m[3])) throw badRequest(`unable to parse requirement: for 'gt', 'lt' operators, the value must be an integer in labelSelector "${selector}"`);
      reqs.push({ key: checkKey(m[1], selector), op: m[2] === '>' ? 'gt' : 'lt', values: [m[3]] });
    } else if ((m = part.match(/^!\s*(\S+)$/))) {
      reqs.push({ key: checkKey(m[1], selector), op: 'notexists', values: [] });
    } else if (/^\S+$/.test(part)) {
      reqs.push({ key: checkKey(part, selector), op: 'exists', values: [] });
    } else {
      throw badRequest(`unable to parse requirement: "${part}" in labelSelector "${selector}"`);
    }
  }
  return reqs;
}

export function matchesLabels(reqs: readonly LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const r of reqs) {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case 'eq':
        if (!has || v !== r.values[0]) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(v)) return false;
        break;
      // `!=` and `notin` match objects without the label, as in Kubernetes.
      case 'neq':
        if (has && v === r.values[0]) return false;
        break;
      case 'notin':
        if (has && r.values.includes(v)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case 'notexists':
        if (has) return false;
        break;
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v)) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        if (r.op === 'gt' ? !(n > bound) : !(n < bound)) return false;
        break;
      }
    }
  }
  return true;
}

export interface FieldRequirement {
  field: string;
  op: 'eq' | 'neq';
  value: string;
}

/** Splits a field selector on the commas that are not escaped (`\,` is a comma inside a value). */
function splitFieldTerms(selector: string): string[] {
  const terms: string[] = [];
  let cur = '';
  for (let i = 0; i < selector.length; i++) {
    const ch = selector[i];
    if (ch === '\\' && i + 1 < selector.length) {
      cur += ch + selector[++i];
    } else if (ch === ',') {
      terms.push(cur);
      cur = '';
    } else cur += ch;
  }
  terms.push(cur);
  return terms;
}

/** Undoes the escaping kubectl and client-go apply to values (`\\`, `\,`, `\=`); others are errors. */
function unescapeFieldValue(value: string, selector: string): string {
  return value.replace(/\\(.?)/g, (_m, ch: string) => {
    if (ch === '\\' || ch === ',' || ch === '=') return ch;
    throw badRequest(`invalid field selector: '${selector}': invalid escape sequence \\${ch}`);
  });
}

/** Parses `metadata.name=x,spec.unschedulable!=true`; only `supported` field names are accepted. */
export function parseFieldSelector(selector: string | undefined | null, supported: readonly string[]): FieldRequirement[] {
  if (!selector || selector.trim() === '') return [];
  const reqs: FieldRequirement[] = [];
  for (const raw of splitFieldTerms(selector)) {
    const part = raw.trim();
    const m = part.match(/^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${part}'`);
    if (!supported.includes(m[1])) throw badRequest(`field label not supported: ${m[1]}`);
    reqs.push({ field: m[1], op: m[2] === '!=' ? 'neq' : 'eq', value: unescapeFieldValue(m[3], selector) });
  }
  return reqs;
}

/** Reads a dotted path as the string kube-apiserver compares selectors against. */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[seg];
  }
  if (cur === undefined || cur === null) return path === 'spec.unschedulable' ? 'false' : '';
  return String(cur);
}

/** Whether an object satisfies every requirement; `read` is the kind's own field reader if it has one. */
export function matchesFields(reqs: readonly FieldRequirement[], obj: unknown, read: FieldReader = fieldValue): boolean {
  for (const r of reqs) {
    const v = read(obj as KObject, r.field);
    if (r.op === 'eq' ? v !== r.value : v === r.value) return false;
  }
  return true;
}

/**
 * The field requirements of a LIST or WATCH on `r`: metadata.name and metadata.namespace, which
 * every kind supports, plus the kind's own selectable fields, read the kind's way.
 */
export function fieldSelectorFor(r: Pick<ResourceDef, 'fieldSelectors' | 'fieldValue'>, selector: string | undefined | null): { reqs: FieldRequirement[]; matches: (obj: KObject) => boolean } {
  const reqs = parseFieldSelector(selector, ['metadata.name', 'metadata.namespace', ...r.fieldSelectors]);
  const read = r.fieldValue ?? fieldValue;
  return { reqs, matches: (obj) => reqs.length === 0 || matchesFields(reqs, obj, read) };
}
