// Core v1 NodeSelector matching with Kubernetes semantics: terms are ORed, the requirements
// inside a term are ANDed (the Go multi-CIDR reference ANDed all terms, kubernetes#116419;
// this does not). A nil selector, or one without terms, matches every node (a fallback pool).

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
const OPERATORS: readonly SelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];

export interface NodeSelectorRequirement {
  key: string;
  operator: SelectorOperator;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeSelector {
  nodeSelectorTerms: NodeSelectorTerm[];
}

/** What a selector sees of a node. */
export interface NodeView {
  name: string;
  labels?: Record<string, string>;
}

export class SelectorError extends Error {
  override name = 'SelectorError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

interface CompiledReq {
  field: boolean;
  key: string;
  op: SelectorOperator;
  values: Set<string>;
  num: number;
}

/** A validated selector, ready to match many nodes quickly. */
export class CompiledSelector {
  /** True for a nil or empty selector: matches every node. */
  readonly fallback: boolean;
  /** Canonical text, e.g. `rack in (r1,r2),zone`; terms joined with ` || `; "" for a fallback. */
  readonly text: string;
  private readonly terms: CompiledReq[][];

  private constructor(terms: CompiledReq[][], text: string) {
    this.terms = terms;
    this.fallback = terms.length === 0;
    this.text = text;
  }

  /**
   * Validates a plain selector object. `path` names the field in error messages.
   * Throws SelectorError naming the field and value.
   */
  static compile(selector: unknown, path = 'nodeSelector'): CompiledSelector {
    if (selector === null || selector === undefined) return new CompiledSelector([], '');
    if (typeof selector !== 'object' || Array.isArray(selector)) throw new SelectorError(path, 'must be an object');
    const rawTerms = (selector as { nodeSelectorTerms?: unknown }).nodeSelectorTerms;
    if (rawTerms === undefined || rawTerms === null) return new CompiledSelector([], '');
    if (!Array.isArray(rawTerms)) throw new SelectorError(`${path}.nodeSelectorTerms`, 'must be a list');
    const terms: CompiledReq[][] = [];
    const texts: string[] = [];
    rawTerms.forEach((t: unknown, i) => {
      const tp = `${path}.nodeSelectorTerms[${i}]`;
      if (t === null || typeof t !== 'object' || Array.isArray(t)) throw new SelectorError(tp, 'must be an object');
      const term = t as { matchExpressions?: unknown; matchFields?: unknown };
      const reqs: CompiledReq[] = [
        ...compileList(term.matchExpressions, `${tp}.matchExpressions`, false),
        ...compileList(term.matchFields, `${tp}.matchFields`, true),
      ];
      terms.push(reqs);
      texts.push(termText(reqs));
    });
    // An empty term matches no node (as in Kubernetes); it still counts as a term.
    return new CompiledSelector(terms, [...texts].sort().join(' || '));
  }

  /**
   * -1 when the node does not match; otherwise the number of requirements of the best matching
   * term (0 for a fallback selector).
   */
  score(node: NodeView): number {
    if (this.fallback) return 0;
    let best = -1;
    const labels = node.labels ?? {};
    for (const term of this.terms) {
      if (term.length <= best || term.length === 0) continue;
      let ok = true;
      for (const r of term) {
        if (!matchReq(r, node.name, labels)) {
          ok = false;
          break;
        }
      }
      if (ok) best = term.length;
    }
    return best;
  }

  /**
   * Index keys for quick pre-filtering: a node can only match when it has one of them (see
   * nodeIndexKeys). Undefined when some term has no In requirement to index on.
   */
  indexKeys(): string[] | undefined {
    if (this.fallback) return undefined;
    const keys: string[] = [];
    for (const term of this.terms) {
      if (term.length === 0) continue; // matches nothing
      const r = term.find((q) => q.op === 'In');
      if (!r) return undefined;
      for (const v of r.values) keys.push(indexKey(r.field, r.key, v));
    }
    return keys;
  }

  matches(node: NodeView): boolean {
    return this.score(node) >= 0;
  }
}

function indexKey(field: boolean, key: string, value: string): string {
  return `${field ? 'f' : 'l'}\u0000${key}\u0000${value}`;
}

/** The index keys a node carries: one per label, plus its name. */
export function nodeIndexKeys(node: NodeView): string[] {
  const keys = [indexKey(true, 'metadata.name', node.name)];
  for (const [k, v] of Object.entries(node.labels ?? {})) keys.push(indexKey(false, k, v));
  return keys;
}

function compileList(list: unknown, path: string, fields: boolean): CompiledReq[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new SelectorError(path, 'must be a list');
  return list.map((r: unknown, i) => compileReq(r, `${path}[${i}]`, fields));
}

const INTEGER = /^[+-]?[0-9]+$/;

function compileReq(raw: unknown, path: string, field: boolean): CompiledReq {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new SelectorError(path, 'must be an object');
  const { key, operator, values } = raw as { key?: unknown; operator?: unknown; values?: unknown };
  if (typeof key !== 'string' || key === '') throw new SelectorError(`${path}.key`, `must be a non-empty string, got ${JSON.stringify(key)}`);
  if (typeof operator !== 'string' || !OPERATORS.includes(operator as SelectorOperator)) {
    throw new SelectorError(`${path}.operator`, `unknown operator ${JSON.stringify(operator)} (known: ${OPERATORS.join(', ')})`);
  }
  const op = operator as SelectorOperator;
  if (values !== undefined && values !== null && (!Array.isArray(values) || values.some((v) => typeof v !== 'string'))) {
    throw new SelectorError(`${path}.values`, 'must be a list of strings');
  }
  const vals = (values ?? []) as string[];
  if (field) {
    if (key !== 'metadata.name') throw new SelectorError(`${path}.key`, `unsupported field "${key}" (only metadata.name)`);
    if (op !== 'In' && op !== 'NotIn') throw new SelectorError(`${path}.operator`, `"${op}" is not allowed for fields (only In, NotIn)`);
    if (vals.length !== 1) throw new SelectorError(`${path}.values`, `must hold exactly one value for metadata.name, got ${vals.length}`);
  }
  let num = NaN;
  switch (op) {
    case 'In':
    case 'NotIn':
      if (vals.length === 0) throw new SelectorError(`${path}.values`, `must be non-empty for operator ${op}`);
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (vals.length !== 0) throw new SelectorError(`${path}.values`, `must be empty for operator ${op}, got ${JSON.stringify(vals)}`);
      break;
    case 'Gt':
    case 'Lt':
      if (vals.length !== 1 || !INTEGER.test(vals[0])) throw new SelectorError(`${path}.values`, `must be a single integer for operator ${op}, got ${JSON.stringify(vals)}`);
      num = Number(vals[0]);
      break;
  }
  return { field, key, op, values: new Set(vals), num };
}

function matchReq(r: CompiledReq, name: string, labels: Record<string, string>): boolean {
  const has = r.field || Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = r.field ? name : labels[r.key];
  switch (r.op) {
    case 'In':
      return has && r.values.has(value);
    case 'NotIn':
      return !has || !r.values.has(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || !INTEGER.test(value)) return false;
      const v = Number(value);
      return r.op === 'Gt' ? v > r.num : v < r.num;
    }
  }
}

function reqText(r: CompiledReq): string {
  const key = r.field ? `field:${r.key}` : r.key;
  const vals = [...r.values].sort().join(',');
  switch (r.op) {
    case 'In':
      return `${key} in (${vals})`;
    case 'NotIn':
      return `${key} notin (${vals})`;
    case 'Exists':
      return key;
    case 'DoesNotExist':
      return `!${key}`;
    case 'Gt':
      return `${key}>${vals}`;
    case 'Lt':
      return `${key}<${vals}`;
  }
}

function termText(reqs: CompiledReq[]): string {
  return reqs
    .map(reqText)
    .sort()
    .join(',');
}
