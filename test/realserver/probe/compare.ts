// Holds two recordings of the probe side by side, field by field. Pure: no I/O.
//
// What must differ between two servers is normalised first, the same way on both sides:
// - uids (any RFC 4122 string, also inside messages) become <uid:STEP#N>, named by the step whose
//   answer first carried them (the N-th new one there), so "the answer carries the uid the create
//   returned" and "a re-created object has a new uid" still compare, and one extra uid on one side
//   does not renumber every later one;
// - resourceVersion fields become <rv> (non-empty) — their numbers are each store's own;
// - continue tokens become <continue> (each server's own encoding);
// - timestamps become <time> (RFC 3339, seconds) or <time.N> (N fraction digits: MicroTime has 6);
// - generated names (generateName "probegen-") become probegen-#####;
// - metadata.managedFields is dropped, except in steps that ask for it (the double keeps none).
// Then each record is flattened to leaf paths (`body.metadata.labels["a.b/c"]`, `events[0].type`)
// and every path whose value differs, or that only one side has, is one difference.
import type { ProbeRecord, ProbeStep } from './runner.js';

export interface Difference {
  step: string;
  path: string;
  /** The normalised value on each side as JSON, or undefined when that side lacks the path. */
  double: string | undefined;
  real: string | undefined;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.(\d+))?(Z|[+-]\d\d:\d\d)$/;
const GENERATED = /\bprobegen-[a-z0-9]{5}\b/g;

class Normaliser {
  readonly #uids = new Map<string, string>();
  #step = '';
  #inStep = 0;

  beginStep(step: string): void {
    this.#step = step;
    this.#inStep = 0;
  }

  string(s: string): string {
    const t = s.match(TIME);
    if (t) return t[2] ? `<time.${t[2].length}>` : '<time>';
    return s.replace(UUID, (u) => {
      let token = this.#uids.get(u);
      if (!token) {
        token = `<uid:${this.#step}#${++this.#inStep}>`;
        this.#uids.set(u, token);
      }
      return token;
    }).replace(GENERATED, 'probegen-#####');
  }

  value(v: unknown, key: string, keepManagedFields: boolean): unknown {
    if (typeof v === 'string') {
      if (key === 'resourceVersion' && v !== '') return '<rv>';
      if (key === 'continue' && v !== '') return '<continue>';
      return this.string(v);
    }
    if (Array.isArray(v)) return v.map((x) => this.value(x, '', keepManagedFields));
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      // Keys in sorted order, so uids are numbered alike whatever order a server writes fields in.
      for (const k of Object.keys(v).sort()) {
        if (k === 'managedFields' && !keepManagedFields) continue;
        out[k] = this.value((v as Record<string, unknown>)[k], k, keepManagedFields);
      }
      return out;
    }
    return v;
  }
}

/** A recording with what must differ normalised (one numbering of uids across the whole recording). */
export function normalise(records: readonly ProbeRecord[], steps: readonly ProbeStep[]): ProbeRecord[] {
  const keep = new Set<string>();
  for (const s of allSteps(steps)) if ('managedFields' in s && s.managedFields) keep.add(s.name);
  const n = new Normaliser();
  return records.map((r) => {
    n.beginStep(r.step);
    return n.value(r, '', keep.has(r.step)) as ProbeRecord;
  });
}

function allSteps(steps: readonly ProbeStep[]): ProbeStep[] {
  return steps.flatMap((s): ProbeStep[] => ('watch' in s ? [s, ...(s.during ?? [])] : [s]));
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Leaf paths of a JSON value: `a.b[0]["c.d/e"]` → JSON text of the leaf (empty objects and arrays are leaves). */
export function flatten(v: unknown, prefix = '', out = new Map<string, string>()): Map<string, string> {
  if (Array.isArray(v)) {
    if (v.length === 0) out.set(prefix, '[]');
    v.forEach((x, i) => flatten(x, `${prefix}[${i}]`, out));
  } else if (v && typeof v === 'object') {
    const keys = Object.keys(v);
    if (keys.length === 0) out.set(prefix, '{}');
    for (const k of keys) {
      const p = IDENT.test(k) ? (prefix ? `${prefix}.${k}` : k) : `${prefix}[${JSON.stringify(k)}]`;
      flatten((v as Record<string, unknown>)[k], p, out);
    }
  } else out.set(prefix, JSON.stringify(v));
  return out;
}

/** A glob over paths or step names: `*` is any run of characters, everything else literal. */
export function globRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

/** Every field where the two recordings differ, after normalising both; steps' masks applied. */
export function compareRecordings(double: readonly ProbeRecord[], real: readonly ProbeRecord[], steps: readonly ProbeStep[]): Difference[] {
  const masks = new Map<string, RegExp[]>();
  for (const s of allSteps(steps)) if ('mask' in s && s.mask) masks.set(s.name, s.mask.map(globRegExp));
  const a = new Map(normalise(double, steps).map((r) => [r.step, r]));
  const b = new Map(normalise(real, steps).map((r) => [r.step, r]));
  const order = [...new Set([...double.map((r) => r.step), ...real.map((r) => r.step)])];
  const out: Difference[] = [];
  for (const step of order) {
    const { step: _a, ...ra } = a.get(step) ?? { step };
    const { step: _b, ...rb } = b.get(step) ?? { step };
    const fa = flatten(ra);
    const fb = flatten(rb);
    const masked = masks.get(step) ?? [];
    for (const path of new Set([...fa.keys(), ...fb.keys()])) {
      let va = fa.get(path);
      let vb = fb.get(path);
      if (masked.some((m) => m.test(path))) {
        va = va === undefined ? undefined : '<masked>';
        vb = vb === undefined ? undefined : '<masked>';
      }
      if (va !== vb) out.push({ step, path, double: va, real: vb });
    }
  }
  return out;
}

/** A documented difference: globs over the step name and the path. */
export interface KnownDifference {
  step: string;
  path: string;
}

/**
 * Reads the table of known differences from docs/apiserver-double.md: the rows between the
 * `<!-- probe-differences:begin -->` and `<!-- probe-differences:end -->` markers, whose first two
 * cells are a step glob and a path glob in backticks.
 */
export function parseKnownDifferences(markdown: string): KnownDifference[] {
  const begin = markdown.indexOf('<!-- probe-differences:begin -->');
  const end = markdown.indexOf('<!-- probe-differences:end -->');
  if (begin < 0 || end < begin) throw new Error('docs/apiserver-double.md: the probe-differences markers are missing');
  const rows: KnownDifference[] = [];
  for (const line of markdown.slice(begin, end).split('\n')) {
    const m = line.match(/^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|/);
    if (m) rows.push({ step: m[1], path: m[2] });
  }
  return rows;
}

export interface Reconciliation {
  /** Differences found that no documented row covers: new differences. */
  unexplained: Difference[];
  /** Documented rows that matched no difference: fixed, or the probe changed. */
  unused: KnownDifference[];
}

/** Which found differences the documented rows do not cover, and which rows cover nothing. */
export function reconcile(found: readonly Difference[], known: readonly KnownDifference[]): Reconciliation {
  const rows = known.map((k) => ({ k, step: globRegExp(k.step), path: globRegExp(k.path), used: false }));
  const unexplained: Difference[] = [];
  for (const d of found) {
    let covered = false;
    for (const r of rows) {
      if (r.step.test(d.step) && r.path.test(d.path)) {
        r.used = true;
        covered = true;
      }
    }
    if (!covered) unexplained.push(d);
  }
  return { unexplained, unused: rows.filter((r) => !r.used).map((r) => r.k) };
}

/** One line per difference, for a failing test's message. */
export function formatDifferences(diffs: readonly Difference[]): string {
  return diffs.map((d) => `| \`${d.step}\` | \`${d.path}\` | ${d.double ?? '(absent)'} | ${d.real ?? '(absent)'} |`).join('\n');
}
