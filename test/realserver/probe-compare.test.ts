// The probe's comparer (probe/compare.ts): pure, so it runs without Go, in every `npm test`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../kit/cli.js';
import { compareRecordings, flatten, globRegExp, normalise, parseKnownDifferences, reconcile, type Difference } from './probe/compare.js';
import type { ProbeRecord, ProbeStep } from './probe/runner.js';
import { PROBE } from './probe/steps.js';

const U1 = '5ecd502a-27f5-4c41-bf93-484eaf018e7a';
const U2 = 'f103226e-d5e4-4d10-a1e0-aab77b69e520';
const step = (name: string, extra: Partial<ProbeStep> = {}): ProbeStep => ({ name, method: 'GET', path: '/', ...extra }) as ProbeStep;

describe('normalise', () => {
  it('names uids by the step that first returned them, also inside messages, and keeps the rest of the value', () => {
    const recs: ProbeRecord[] = [
      { step: 'a', body: { metadata: { uid: U1 } } },
      { step: 'b', body: { items: [{ metadata: { uid: U1 } }, { metadata: { uid: U2 } }], message: `UID in precondition: ${U2}` } },
    ];
    expect(normalise(recs, [step('a'), step('b')])).toEqual([
      { step: 'a', body: { metadata: { uid: '<uid:a#1>' } } },
      { step: 'b', body: { items: [{ metadata: { uid: '<uid:a#1>' } }, { metadata: { uid: '<uid:b#1>' } }], message: 'UID in precondition: <uid:b#1>' } },
    ]);
  });

  it.each([
    ['a resourceVersion', { resourceVersion: '1234' }, { resourceVersion: '<rv>' }],
    ['an empty resourceVersion (kept: empty is a fact)', { resourceVersion: '' }, { resourceVersion: '' }],
    ['a continue token', { continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEi' }, { continue: '<continue>' }],
    ['a timestamp, keeping its precision', { a: '2026-11-29T03:32:55Z', b: '2025-01-01T00:00:05.123456Z' }, { a: '<time>', b: '<time.6>' }],
    ['a generated name', { name: 'probegen-qdsnv', msg: 'nodes "probegen-x2b4z" not found' }, { name: 'probegen-#####', msg: 'nodes "probegen-#####" not found' }],
    ['managedFields (dropped)', { metadata: { name: 'n', managedFields: [{ manager: 'm' }] } }, { metadata: { name: 'n' } }],
  ])('%s', (_what, body, want) => {
    expect(normalise([{ step: 's', body }], [step('s')])[0].body).toEqual(want);
  });

  it('keeps managedFields for a step that asks, with their times normalised', () => {
    const body = { metadata: { managedFields: [{ manager: 'm', time: '2026-11-29T03:32:55Z' }] } };
    expect(normalise([{ step: 's', body }], [step('s', { managedFields: true })])[0].body).toEqual({ metadata: { managedFields: [{ manager: 'm', time: '<time>' }] } });
  });
});

describe('flatten and compare', () => {
  it('flattens to leaf paths, quoting keys that are not identifiers; empty objects and lists are leaves', () => {
    expect([...flatten({ a: { 'b.c/d': [1, {}], e: [] }, f: null })]).toEqual([
      ['a["b.c/d"][0]', '1'],
      ['a["b.c/d"][1]', '{}'],
      ['a.e', '[]'],
      ['f', 'null'],
    ]);
  });

  it('reports every differing or one-sided path, after normalising; masks compare presence only', () => {
    const steps = [step('x', { mask: ['body.age'] })];
    const double: ProbeRecord[] = [{ step: 'x', code: 200, body: { uid: U1, age: '1s', only: 1, same: 'v' } }];
    const real: ProbeRecord[] = [{ step: 'x', code: 201, body: { uid: U2, age: '9s', same: 'v' } }];
    expect(compareRecordings(double, real, steps)).toEqual<Difference[]>([
      { step: 'x', path: 'body.only', double: '1', real: undefined },
      { step: 'x', path: 'code', double: '200', real: '201' },
    ]);
  });
});

describe('the documented differences', () => {
  it('globs match any run of characters and nothing else', () => {
    expect(globRegExp('node.*').test('node.watch-from-rv')).toBe(true);
    expect(globRegExp('*spec.taints[*].key').test('body.items[0].spec.taints[1].key')).toBe(true);
    expect(globRegExp('*spec.taints[*].key').test('body.spec.taints[1].value')).toBe(false);
  });

  it('reconcile: a difference no row covers is unexplained, a row nothing matches is unused', () => {
    const found: Difference[] = [{ step: 'a.b', path: 'body.x', double: '1', real: '2' }, { step: 'c', path: 'code', double: '200', real: '422' }];
    expect(reconcile(found, [{ step: 'a.*', path: 'body.*' }, { step: 'z', path: '*' }])).toEqual({ unexplained: [found[1]], unused: [{ step: 'z', path: '*' }] });
  });

  it('docs/apiserver-double.md holds the table, each row naming a step glob that matches some probe step', () => {
    const rows = parseKnownDifferences(readFileSync(path.join(repoRoot, 'docs/apiserver-double.md'), 'utf8'));
    expect(rows.length).toBeGreaterThan(0);
    const names = PROBE.flatMap((s) => [s.name, ...('watch' in s ? (s.during ?? []).map((d) => d.name) : [])]);
    for (const r of rows) expect(names.some((n) => globRegExp(r.step).test(n)), `row ${r.step} | ${r.path}`).toBe(true);
  });

  it('every step of the probe has a unique name', () => {
    const names = PROBE.flatMap((s) => [s.name, ...('watch' in s ? (s.during ?? []).map((d) => d.name) : [])]);
    expect(new Set(names).size).toBe(names.length);
  });
});
