// Label and field selector parsing and matching, table-driven.
import { describe, expect, it } from 'vitest';
import { ApiError, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from '../../src/double/index.js';

const labels = { app: 'web', tier: 'front', 'example.com/zone': 'z1', n: '5' };

describe('label selectors', () => {
  it.each<[string, boolean]>([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (web, db)', true],
    ['app in (db)', false],
    ['app notin (db)', true],
    ['missing notin (db)', true],
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['example.com/zone=z1', true],
    ['app=web,tier=back', false],
    ['app in (web),tier notin (back),!missing', true],
    ['n>4', true],
    ['n<5', false],
  ])('%j matches: %s', (selector, expected) => {
    expect(matchesLabels(parseLabelSelector(selector), labels)).toBe(expected);
  });

  it.each(['app in (web', 'a=b,,c', '-bad=x', 'app=in valid', 'n>x'])('rejects %j with 400', (selector) => {
    expect(() => parseLabelSelector(selector)).toThrow(ApiError);
    try {
      parseLabelSelector(selector);
    } catch (e) {
      expect((e as ApiError).code).toBe(400);
    }
  });
});

describe('field selectors', () => {
  const obj = { metadata: { name: 'n1', namespace: '' }, spec: {} };
  it.each<[string, boolean]>([
    ['metadata.name=n1', true],
    ['metadata.name==n1', true],
    ['metadata.name!=n1', false],
    ['metadata.name=n2', false],
    ['spec.unschedulable=false', true],
    ['metadata.name=n1,spec.unschedulable!=true', true],
  ])('%j matches: %s', (selector, expected) => {
    expect(matchesFields(parseFieldSelector(selector, ['metadata.name', 'spec.unschedulable']), obj)).toBe(expected);
  });

  it('rejects unsupported fields naming them', () => {
    expect(() => parseFieldSelector('status.phase=Running', ['metadata.name'])).toThrow('field label not supported: status.phase');
  });
});
