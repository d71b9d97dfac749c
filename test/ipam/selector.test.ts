import { describe, it, expect } from 'vitest';
import { CompiledSelector, SelectorError } from '../../src/ipam/selector.js';

const node = { name: 'n1', labels: { rack: 'r1', zone: 'a', size: '16', 'gpu.example.com/model': 'x' } };
const expr = (key: string, operator: string, values?: string[]) => ({ nodeSelectorTerms: [{ matchExpressions: [{ key, operator, values }] }] });

describe('NodeSelector matching', () => {
  it.each([
    ['In hit', expr('rack', 'In', ['r0', 'r1']), 1],
    ['In miss', expr('rack', 'In', ['r2']), -1],
    ['In absent', expr('row', 'In', ['r1']), -1],
    ['NotIn hit', expr('rack', 'NotIn', ['r2']), 1],
    ['NotIn absent matches', expr('row', 'NotIn', ['x']), 1],
    ['NotIn miss', expr('rack', 'NotIn', ['r1']), -1],
    ['Exists', expr('zone', 'Exists'), 1],
    ['Exists absent', expr('row', 'Exists'), -1],
    ['DoesNotExist', expr('row', 'DoesNotExist'), 1],
    ['DoesNotExist present', expr('zone', 'DoesNotExist'), -1],
    ['Gt', expr('size', 'Gt', ['8']), 1],
    ['Gt equal', expr('size', 'Gt', ['16']), -1],
    ['Lt', expr('size', 'Lt', ['17']), 1],
    ['Lt non-integer label', expr('zone', 'Lt', ['17']), -1],
    ['matchFields In', { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] }, 1],
    ['matchFields NotIn', { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] }] }, -1],
    [
      'expressions in a term are ANDed',
      { nodeSelectorTerms: [{ matchExpressions: [{ key: 'rack', operator: 'In', values: ['r1'] }, { key: 'zone', operator: 'In', values: ['b'] }] }] },
      -1,
    ],
    [
      'terms are ORed (not ANDed as kubernetes#116419 did); best term counts',
      {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'rack', operator: 'In', values: ['r9'] }] },
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'size', operator: 'Exists' }] },
          { matchExpressions: [{ key: 'zone', operator: 'Exists' }] },
        ],
      },
      2,
    ],
    ['an empty term matches nothing', { nodeSelectorTerms: [{}] }, -1],
    ['nil selector is a fallback', null, 0],
    ['no terms is a fallback', { nodeSelectorTerms: [] }, 0],
  ])('%s', (_name, sel, score) => {
    expect(CompiledSelector.compile(sel).score(node)).toBe(score);
  });

  it('fallback flag and canonical text', () => {
    expect(CompiledSelector.compile(undefined).fallback).toBe(true);
    const s = CompiledSelector.compile({
      nodeSelectorTerms: [
        {
          matchExpressions: [
            { key: 'zone', operator: 'Exists' },
            { key: 'rack', operator: 'In', values: ['b', 'a'] },
            { key: 'x', operator: 'DoesNotExist' },
            { key: 'n', operator: 'Gt', values: ['3'] },
          ],
        },
        { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n2'] }] },
      ],
    });
    expect(s.fallback).toBe(false);
    expect(s.text).toBe('!x,n>3,rack in (a,b),zone || field:metadata.name notin (n2)');
  });

  it.each([
    [expr('rack', 'Like', ['r1']), 'nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: unknown operator "Like" (known: In, NotIn, Exists, DoesNotExist, Gt, Lt)'],
    [expr('rack', 'In', []), 'nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values: must be non-empty for operator In'],
    [expr('rack', 'Exists', ['a']), 'values: must be empty for operator Exists, got ["a"]'],
    [expr('size', 'Gt', ['1', '2']), 'values: must be a single integer for operator Gt, got ["1","2"]'],
    [expr('size', 'Lt', ['x']), 'must be a single integer for operator Lt, got ["x"]'],
    [expr('', 'Exists'), 'matchExpressions[0].key: must be a non-empty string, got ""'],
    [{ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.uid', operator: 'In', values: ['a'] }] }] }, 'matchFields[0].key: unsupported field "metadata.uid" (only metadata.name)'],
    [{ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'Exists' }] }] }, 'matchFields[0].operator: "Exists" is not allowed for fields (only In, NotIn)'],
    [{ nodeSelectorTerms: 'x' }, 'nodeSelector.nodeSelectorTerms: must be a list'],
  ])('rejects %j', (sel, msg) => {
    expect(() => CompiledSelector.compile(sel)).toThrow(SelectorError);
    expect(() => CompiledSelector.compile(sel)).toThrow(msg);
  });
});
