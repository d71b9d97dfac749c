// Pure patch functions, table-driven.
import { describe, expect, it } from 'vitest';
import { ApiError, applyJsonPatch, applyMergePatch, applyStrategicMergePatch, DEFAULT_RESOURCES, type Json } from '../../src/double/index.js';

const nodeSchema = DEFAULT_RESOURCES.find((r) => r.plural === 'nodes')!.smp;

describe('applyJsonPatch', () => {
  const doc = { a: { b: [1, 2, 3] }, c: 'x' };
  it.each<[string, unknown[], Json]>([
    ['add to a map', [{ op: 'add', path: '/d', value: 1 }], { a: { b: [1, 2, 3] }, c: 'x', d: 1 }],
    ['add at an index', [{ op: 'add', path: '/a/b/1', value: 9 }], { a: { b: [1, 9, 2, 3] }, c: 'x' }],
    ['append with -', [{ op: 'add', path: '/a/b/-', value: 4 }], { a: { b: [1, 2, 3, 4] }, c: 'x' }],
    ['remove', [{ op: 'remove', path: '/a/b/0' }], { a: { b: [2, 3] }, c: 'x' }],
    ['replace', [{ op: 'replace', path: '/c', value: 'y' }], { a: { b: [1, 2, 3] }, c: 'y' }],
    ['move', [{ op: 'move', from: '/c', path: '/e' }], { a: { b: [1, 2, 3] }, e: 'x' }],
    ['copy', [{ op: 'copy', from: '/a/b/2', path: '/f' }], { a: { b: [1, 2, 3] }, c: 'x', f: 3 }],
    ['escaped keys', [{ op: 'add', path: '/a~1b~0c', value: true }], { a: { b: [1, 2, 3] }, c: 'x', 'a/b~c': true }],
    ['a passing test', [{ op: 'test', path: '/a/b', value: [1, 2, 3] }], { a: { b: [1, 2, 3] }, c: 'x' }],
  ])('%s', (_what, ops, expected) => {
    expect(applyJsonPatch(doc, ops)).toEqual(expected);
    expect(doc).toEqual({ a: { b: [1, 2, 3] }, c: 'x' });
  });

  it.each<[string, unknown, number]>([
    ['a failing test', [{ op: 'test', path: '/c', value: 'nope' }], 422],
    ['a test of a missing path', [{ op: 'test', path: '/zz', value: 1 }], 422],
    ['removing a missing key', [{ op: 'remove', path: '/zz' }], 422],
    ['adding under a missing parent', [{ op: 'add', path: '/zz/y', value: 1 }], 422],
    ['an index past the end', [{ op: 'replace', path: '/a/b/3', value: 1 }], 422],
    // A patch that parses but does not apply: kube-apiserver's bare 422.
    ['an unknown op', [{ op: 'frob', path: '/c' }], 422],
    ['a body that is not an array', { op: 'add' }, 400],
  ])('rejects %s with %i', (_what, ops, code) => {
    let err: unknown;
    try {
      applyJsonPatch(doc, ops);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(code);
  });
});

describe('applyMergePatch', () => {
  it.each<[string, Json, Json, Json]>([
    ['sets and deletes keys', { a: 1, b: 2 }, { b: null, c: 3 }, { a: 1, c: 3 }],
    ['merges nested maps', { m: { x: 1, y: 2 } }, { m: { y: null, z: 3 } }, { m: { x: 1, z: 3 } }],
    ['replaces lists', { l: [1, 2] }, { l: [3] }, { l: [3] }],
    ['replaces a scalar with a map', { a: 1 }, { a: { b: 1 } }, { a: { b: 1 } }],
  ])('%s', (_what, doc, patch, expected) => {
    expect(applyMergePatch(doc, patch)).toEqual(expected);
  });
});

describe('applyStrategicMergePatch (Node schema)', () => {
  const node = {
    metadata: { name: 'n', finalizers: ['a'], labels: { x: '1' } },
    spec: { podCIDRs: ['10.0.0.0/24'], taints: [{ key: 't1', effect: 'NoSchedule' }] },
    status: {
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'DiskPressure', status: 'False' },
      ],
      addresses: [
        { type: 'InternalIP', address: '10.0.0.1' },
        { type: 'Hostname', address: 'n' },
      ],
    },
  };
  it.each<[string, Json, (r: typeof node) => unknown, unknown]>([
    ['merges conditions by type', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, (r) => r.status.conditions, [{ type: 'Ready', status: 'True' }, { type: 'DiskPressure', status: 'False' }]],
    // New elements come first: what the patch names, in its order, then what only the server had
    // (strategicpatch's normalizeElementOrder; kube-apiserver does the same, test/realserver).
    ['puts a condition with a new type first', { status: { conditions: [{ type: 'PIDPressure', status: 'False' }] } }, (r) => r.status.conditions.map((c) => c.type), ['PIDPressure', 'Ready', 'DiskPressure']],
    ['deletes a condition with $patch: delete', { status: { conditions: [{ type: 'Ready', $patch: 'delete' }] } }, (r) => r.status.conditions.map((c) => c.type), ['DiskPressure']],
    ['merges addresses by type', { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.2' }] } }, (r) => r.status.addresses, [{ type: 'InternalIP', address: '10.0.0.2' }, { type: 'Hostname', address: 'n' }]],
    ['replaces addresses with $patch: replace', { status: { addresses: [{ $patch: 'replace' }, { type: 'ExternalIP', address: '1.1.1.1' }] } }, (r) => r.status.addresses, [{ type: 'ExternalIP', address: '1.1.1.1' }]],
    ['orders with $setElementOrder', { status: { '$setElementOrder/conditions': [{ type: 'DiskPressure' }, { type: 'Ready' }] } }, (r) => r.status.conditions.map((c) => c.type), ['DiskPressure', 'Ready']],
    ['unions podCIDRs in the patch order', { spec: { podCIDRs: ['fd00::/64', '10.0.0.0/24'] } }, (r) => r.spec.podCIDRs, ['fd00::/64', '10.0.0.0/24']],
    ['replaces taints whole (no patch strategy upstream)', { spec: { taints: [{ key: 't2', effect: 'NoExecute' }] } }, (r) => r.spec.taints, [{ key: 't2', effect: 'NoExecute' }]],
    ['unions finalizers in the patch order', { metadata: { finalizers: ['b', 'a'] } }, (r) => r.metadata.finalizers, ['b', 'a']],
    ['puts a new finalizer first', { metadata: { finalizers: ['b'] } }, (r) => r.metadata.finalizers, ['b', 'a']],
    ['removes finalizers with $deleteFromPrimitiveList', { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }, (r) => r.metadata.finalizers, []],
    ['deletes a label with null', { metadata: { labels: { x: null } } }, (r) => r.metadata.labels, {}],
    ['replaces a map with $patch: replace', { metadata: { labels: { $patch: 'replace', y: '2' } } }, (r) => r.metadata.labels, { y: '2' }],
  ])('%s', (_what, patch, pick, expected) => {
    expect(pick(applyStrategicMergePatch(node, patch, nodeSchema) as unknown as typeof node)).toEqual(expected);
  });

  it('rejects a keyed list element without its merge key', () => {
    expect(() => applyStrategicMergePatch(node, { status: { conditions: [{ status: 'True' }] } }, nodeSchema)).toThrow(/merge key: type/);
  });
});

// The order of a merged list, from upstream's own table (k8s.io/apimachinery
// pkg/util/strategicpatch/patch_test.go, the "preserve order" and "set elements order … with
// server-only items" cases: their Current, ThreeWay patch and Result).
describe('strategic merge: the order of merged lists (upstream test cases)', () => {
  const schema = { mergingList: { mergeKey: 'name' }, mergingIntList: { set: true } } as const;
  const named = (...ns: number[]): Json[] => ns.map((name) => ({ name }));
  it.each<[string, Json, Json, Json]>([
    ['add an item in a list of primitives and preserve order', { mergingIntList: [1, 4, 2] }, { '$setElementOrder/mergingIntList': [3, 1, 2], mergingIntList: [3] }, { mergingIntList: [3, 1, 4, 2] }],
    ['delete an item in a list of primitives and preserve order', { mergingIntList: [1, 2, 3] }, { '$setElementOrder/mergingIntList': [2, 1], '$deleteFromPrimitiveList/mergingIntList': [3] }, { mergingIntList: [2, 1] }],
    ['set elements order in a list with server-only items', { mergingList: [{ name: 1, other: 'a' }, { name: 3 }, { name: 4 }, { name: 2 }, { name: 9 }] }, { '$setElementOrder/mergingList': named(4, 2, 3, 1) }, { mergingList: [{ name: 4 }, { name: 2 }, { name: 3 }, { name: 1, other: 'a' }, { name: 9 }] }],
    ['set elements order in a list with server-only items 2', { mergingList: named(1, 2, 9, 3, 4) }, { '$setElementOrder/mergingList': named(2, 1, 4, 3) }, { mergingList: named(2, 1, 9, 4, 3) }],
    ['set elements order in a list with server-only items 3', { mergingList: named(1, 2, 7, 9, 8, 3, 4) }, { '$setElementOrder/mergingList': named(2, 1, 4, 3) }, { mergingList: named(2, 1, 7, 9, 8, 4, 3) }],
  ])('%s', (_what, current, patch, result) => {
    expect(applyStrategicMergePatch(current, patch, schema)).toEqual(result);
  });
});
