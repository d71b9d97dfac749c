// The PromQL analysis the alert checks rely on: what it extracts, and what it refuses.
import { describe, expect, it } from 'vitest';
import { analyzePromQL, exposedSamples, exposedSeriesNames } from './promql.js';

describe('analyzePromQL', () => {
  it.each<[string, string, { metric: string; matchers?: string[] }[]]>([
    ['a bare name', 'up', [{ metric: 'up' }]],
    ['matchers of every operator', 'a_total{job="x", result!="ok", kind=~"A|B", sev!~"info"}', [{ metric: 'a_total', matchers: ['job=x', 'result!=ok', 'kind=~A|B', 'sev!~info'] }]],
    ['a range inside a function', 'rate(b_total{job="x"}[10m])', [{ metric: 'b_total', matchers: ['job=x'] }]],
    ['binary operators, or, absent, offset', 'sum(c) < 1 or absent(d{job="j"}) or e offset 5m > 2',
      [{ metric: 'c' }, { metric: 'd', matchers: ['job=j'] }, { metric: 'e' }]],
    ['histogram series names as written', 'histogram_quantile(0.9, sum by (le) (rate(f_bucket[5m])))', [{ metric: 'f_bucket' }]],
    ['the name as a __name__ matcher', '{__name__="g", job="x"}', [{ metric: 'g', matchers: ['job=x'] }]],
    ['escapes and raw strings in values', 'h{a="x\\"y", b=`r\\aw`}', [{ metric: 'h', matchers: ['a=x"y', 'b=r\\aw'] }]],
    ['a label_replace argument is a string, not a selector', 'label_replace(i, "dst", "$1", "src", "(.*)")', [{ metric: 'i' }]],
    ['a subquery', 'max_over_time(j[1h:5m])', [{ metric: 'j' }]],
  ])('%s', (_name, expr, expected) => {
    const a = analyzePromQL(expr);
    expect(a.errors).toEqual([]);
    expect(a.selectors.map((s) => ({ metric: s.metric, ...(s.matchers.length ? { matchers: s.matchers.map((m) => `${m.label}${m.op}${m.value}`) } : {}) }))).toEqual(expected);
  });

  it('reports groupings with the metrics they aggregate', () => {
    const a = analyzePromQL('sum by (provider, operation) (rate(x_total{result="error"}[5m])) / sum without (instance) (rate(x_total[5m])) > 0.1 or max(y)');
    expect(a.errors).toEqual([]);
    expect(a.groupings.map((g) => [g.mode, g.labels, g.metrics])).toEqual([
      ['by', ['provider', 'operation'], ['x_total']],
      ['without', ['instance'], ['x_total']],
    ]);
  });

  it.each<[string, string, RegExp]>([
    ['an unclosed parenthesis', 'sum(rate(x[5m])', /syntax error/],
    ['a stray operator', 'x > > 1', /syntax error/],
    ['an unknown word after a selector', 'x foo', /syntax error/],
    ['a metric name matched by regex', '{__name__=~"node_.*"}', /cannot be checked; name the metric/],
    ['a selector without a name', '{job="x"}', /without a metric name/],
  ])('refuses %s', (_name, expr, message) => {
    expect(analyzePromQL(expr).errors.join('\n')).toMatch(message);
  });
});

describe('exposition parsing', () => {
  const text = [
    '# HELP a_total A counter.',
    '# TYPE a_total counter',
    'a_total{code="200",host="h:1"} 3',
    '# TYPE h_seconds histogram',
    'h_seconds_bucket{le="0.1",verb="GET"} 1',
    'h_seconds_sum{verb="GET"} 0.05',
    'h_seconds_count{verb="GET"} 1',
    '# TYPE s summary',
    '# TYPE g gauge',
    'g{v="quote\\"d"} 1',
    '',
  ].join('\n');

  it('names every series a family makes available, samples or not', () => {
    expect([...exposedSeriesNames(text).keys()].sort()).toEqual(['a_total', 'g', 'h_seconds_bucket', 'h_seconds_count', 'h_seconds_sum', 's', 's_count', 's_sum']);
    expect(exposedSeriesNames(text).get('h_seconds_sum')).toEqual({ family: 'h_seconds', type: 'histogram' });
  });

  it('reads samples and their labels', () => {
    expect(exposedSamples(text)).toEqual([
      { name: 'a_total', labels: { code: '200', host: 'h:1' }, value: '3' },
      { name: 'h_seconds_bucket', labels: { le: '0.1', verb: 'GET' }, value: '1' },
      { name: 'h_seconds_sum', labels: { verb: 'GET' }, value: '0.05' },
      { name: 'h_seconds_count', labels: { verb: 'GET' }, value: '1' },
      { name: 'g', labels: { v: 'quote"d' }, value: '1' },
    ]);
  });
});
