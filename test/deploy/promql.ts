// What a PromQL expression reads: the metric names its selectors name, their label matchers, and
// the labels each aggregation groups by. Parsed with Prometheus's own grammar
// (@prometheus-io/lezer-promql, the one its web UI uses), so anything Prometheus would refuse to
// parse is reported here as a syntax error rather than guessed at.
import { parser } from '@prometheus-io/lezer-promql';

type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

export interface LabelMatcher {
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

export interface Selector {
  /** The metric name (as written before the braces, or from an `__name__="…"` matcher). */
  metric: string;
  /** Matchers other than the name. */
  matchers: LabelMatcher[];
  /** The selector as written. */
  text: string;
}

export interface Grouping {
  /** `by` keeps these labels, `without` drops them. */
  mode: 'by' | 'without';
  labels: string[];
  /** Metric names of the selectors inside the aggregated expression. */
  metrics: string[];
  text: string;
}

export interface PromQLAnalysis {
  selectors: Selector[];
  groupings: Grouping[];
  /** Syntax errors and constructs this analysis refuses (a metric name it cannot know). */
  errors: string[];
}

/** PromQL string literal: "…", '…' (Go escapes) or `…` (raw). */
function unquote(literal: string): string {
  if (literal.startsWith('`')) return literal.slice(1, -1);
  const body = literal.slice(1, -1);
  return body.replace(/\\(["'\\abfnrtv])/g, (_m, c: string) => ({ a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' } as Record<string, string>)[c] ?? c);
}

const children = (n: SyntaxNode): SyntaxNode[] => {
  const out: SyntaxNode[] = [];
  for (let c = n.firstChild; c; c = c.nextSibling) out.push(c);
  return out;
};

function descendants(n: SyntaxNode, name: string): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  const walk = (m: SyntaxNode): void => {
    for (const c of children(m)) {
      if (c.name === name) out.push(c);
      walk(c);
    }
  };
  walk(n);
  return out;
}

export function analyzePromQL(expr: string): PromQLAnalysis {
  const tree = parser.parse(expr);
  const text = (n: SyntaxNode): string => expr.slice(n.from, n.to);
  const errors: string[] = [];
  tree.iterate({
    enter(ref) {
      if (ref.type.isError) errors.push(`syntax error at offset ${ref.from}: "${expr.slice(Math.max(0, ref.from - 20), ref.from + 20)}"`);
    },
  });

  const selectorOf = (vs: SyntaxNode): Selector | undefined => {
    const id = children(vs).find((c) => c.name === 'Identifier');
    const matchers: LabelMatcher[] = [];
    let name = id ? text(id) : undefined;
    for (const m of descendants(vs, 'UnquotedLabelMatcher')) {
      const [label, op, value] = ['LabelName', 'MatchOp', 'StringLiteral'].map((k) => children(m).find((c) => c.name === k));
      if (!label || !op || !value) continue; // a syntax error, already reported
      const matcher: LabelMatcher = { label: text(label), op: text(op) as LabelMatcher['op'], value: unquote(text(value)) };
      if (matcher.label === '__name__') {
        if (matcher.op !== '=') {
          errors.push(`${text(vs)}: a metric name matched with ${matcher.op} cannot be checked; name the metric`);
          return undefined;
        }
        name = matcher.value;
      } else {
        matchers.push(matcher);
      }
    }
    if (descendants(vs, 'QuotedLabelMatcher').length > 0 || descendants(vs, 'QuotedLabelName').length > 0) {
      errors.push(`${text(vs)}: quoted (UTF-8) names are not supported here`);
      return undefined;
    }
    if (name === undefined) {
      errors.push(`${text(vs)}: a selector without a metric name cannot be checked`);
      return undefined;
    }
    return { metric: name, matchers, text: text(vs) };
  };

  const selectors: Selector[] = [];
  for (const vs of descendants(tree.topNode, 'VectorSelector')) {
    const s = selectorOf(vs);
    if (s) selectors.push(s);
  }

  const groupings: Grouping[] = [];
  for (const agg of descendants(tree.topNode, 'AggregateExpr')) {
    const modifier = children(agg).find((c) => c.name === 'AggregateModifier');
    if (!modifier) continue;
    const mode = children(modifier).some((c) => c.name === 'Without') ? 'without' : 'by';
    const labels = descendants(modifier, 'LabelName').map(text);
    const body = children(agg).find((c) => c.name === 'FunctionCallBody');
    const metrics = body ? descendants(body, 'VectorSelector').flatMap((vs) => selectorOf(vs)?.metric ?? []) : [];
    groupings.push({ mode, labels, metrics: [...new Set(metrics)], text: text(agg) });
  }
  return { selectors, groupings, errors };
}

/**
 * The series names a text exposition makes available, from its `# TYPE` lines (so a family
 * counts even before its first sample): histograms add _bucket, _sum and _count; summaries _sum
 * and _count.
 */
export function exposedSeriesNames(exposition: string): Map<string, { family: string; type: string }> {
  const out = new Map<string, { family: string; type: string }>();
  for (const m of exposition.matchAll(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/gm)) {
    const [, family, type] = m as unknown as [string, string, string];
    const suffixes = type === 'histogram' ? ['_bucket', '_sum', '_count'] : type === 'summary' ? ['', '_sum', '_count'] : [''];
    for (const s of suffixes) out.set(family + s, { family, type });
  }
  return out;
}

/** Every sample of the exposition: its series name and labels (values unescaped). */
export function exposedSamples(exposition: string): { name: string; labels: Record<string, string>; value: string }[] {
  const out: { name: string; labels: Record<string, string>; value: string }[] = [];
  for (const line of exposition.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_x, c: string) => (c === 'n' ? '\n' : c));
    }
    out.push({ name: m[1] as string, labels, value: m[4] as string });
  }
  return out;
}
