// The checks on answers of adapters this project did not write (providers/answers.ts): tables of
// what is kept, canonicalised, dropped or turned into an error, and the invariants for any answer.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkBooleanAnswers, checkMetadataAnswers } from '../../providers/answers.js';
import { canonicalIP } from '../../providers/ip.js';
import { isReservedLabelKey } from '../../src/model/label-keys.js';
import { isBatchError, type NodeRef } from '../../providers/types.js';

const asked: NodeRef[] = [{ name: 'a' }, { name: 'b' }];
const meta = (over: Record<string, unknown> = {}) => ({ providerID: 'x://a', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], ...over });
const errorText = (r: unknown) => ((r as { error?: Error }).error?.message ?? '');

describe('checkMetadataAnswers', () => {
  it.each([
    ['upper-case IPv6 is written canonically', meta({ addresses: [{ type: 'InternalIP', address: 'FD00:0:0::1' }] }), { addresses: [{ type: 'InternalIP', address: 'fd00::1' }] }],
    ['IPv4-mapped IPv6 is written as IPv4', meta({ addresses: [{ type: 'ExternalIP', address: '::ffff:1.2.3.4' }] }), { addresses: [{ type: 'ExternalIP', address: '1.2.3.4' }] }],
    ['a Hostname is kept as given', meta({ addresses: [{ type: 'Hostname', address: 'Node-A' }] }), { addresses: [{ type: 'Hostname', address: 'Node-A' }] }],
    ['pod CIDRs are canonical', meta({ podCIDRs: ['FD00:10::/64'] }), { podCIDRs: ['fd00:10::/64'] }],
    ['reserved labels are dropped, others kept', meta({ labels: { 'kubernetes.io/hostname': 'x', 'a.k8s.io/b': 'c', 'example.com/rack': 'r1' } }), { labels: { 'example.com/rack': 'r1' } }],
    ['fields it does not know are not passed on', meta({ secret: 'x', zone: 'z1' }), { providerID: 'x://a', zone: 'z1' }],
  ])('%s', (_name, value, expected) => {
    const r = checkMetadataAnswers('p', [{ name: 'a' }], new Map([['a', { kind: 'found', value }]]));
    const got = r.results.get('a');
    expect(got?.kind).toBe('found');
    expect((got as { value: object }).value).toMatchObject(expected);
    expect((got as { value: object }).value).not.toHaveProperty('secret');
  });

  it.each([
    ['an IP that is not one', meta({ addresses: [{ type: 'InternalIP', address: '10.0.0.300' }] }), 'provider p answered badly for node a: addresses[0].address: InternalIP must be an IP address (value "10.0.0.300")'],
    ['a leading zero (octal to some, decimal to Kubernetes)', meta({ addresses: [{ type: 'InternalIP', address: '010.0.0.1' }] }), 'addresses[0].address: InternalIP must be an IP address (value "010.0.0.1")'],
    ['an unknown address type', meta({ addresses: [{ type: 'PublicIP', address: '1.2.3.4' }] }), 'addresses[0].type: must be one of Hostname, InternalIP, ExternalIP, InternalDNS, ExternalDNS (value "PublicIP")'],
    ['no providerID', { addresses: [] }, 'providerID: must be a string (value undefined)'],
    ['addresses not a list', meta({ addresses: '10.0.0.1' }), 'addresses: must be a list (value "10.0.0.1")'],
    ['a CIDR with host bits', meta({ podCIDRs: ['10.0.0.1/24'] }), 'podCIDRs[0]: host bits are set (network address is 10.0.0.0/24) (value "10.0.0.1/24")'],
    ['a label value that is not a string', meta({ labels: { a: 1 } }), 'labels["a"]: must be a string (value 1)'],
  ])('%s makes that node an error', (_name, value, message) => {
    const r = checkMetadataAnswers('p', asked, new Map([['a', { kind: 'found', value }], ['b', { kind: 'found', value: meta() }]]));
    expect(r.results.get('a')?.kind).toBe('error');
    expect(errorText(r.results.get('a'))).toContain(message);
    expect(r.results.get('b')?.kind).toBe('found');
  });

  it.each([
    ['no answer for an asked node', new Map([['b', { kind: 'notFound' }]]), 'provider p gave no answer for node a'],
    ['a kind it does not know', new Map([['a', { kind: 'gone' }], ['b', { kind: 'notFound' }]]), 'kind: must be found, notFound or error (value "gone")'],
    ['an answer that is not an object', new Map<string, unknown>([['a', 'found'], ['b', { kind: 'notFound' }]]), 'the answer must be an object'],
  ])('%s: an error for that node, never notFound', (_name, answers, message) => {
    const r = checkMetadataAnswers('p', asked, answers);
    expect(r.results.get('a')).toMatchObject({ kind: 'error', retryable: true });
    expect(errorText(r.results.get('a'))).toContain(message);
  });

  it('an error outcome stays retryable whatever the adapter said, and a thrown string becomes an Error', () => {
    const r = checkMetadataAnswers('p', asked, new Map<string, unknown>([['a', { kind: 'error', error: 'quota', retryable: false }], ['b', { kind: 'notFound', reason: 'deleted' }]]));
    expect(r.results.get('a')).toEqual({ kind: 'error', error: new Error('quota'), retryable: true });
    expect(r.results.get('b')).toEqual({ kind: 'notFound', reason: 'deleted' });
  });

  it('answers for nodes not asked about are dropped and noted', () => {
    const r = checkMetadataAnswers('p', [{ name: 'a' }], new Map([['a', { kind: 'notFound' }], ['z', { kind: 'found', value: meta() }]]));
    expect([...r.results.keys()]).toEqual(['a']);
    expect(r.notes).toEqual(['answers for 1 node(s) not asked about were dropped: "z"']);
  });

  it('an answer that is not a Map is the batch\'s error: one BatchError for every node', () => {
    const r = checkMetadataAnswers('p', asked, { a: { kind: 'found', value: meta() } });
    expect([...r.results.values()].map((v) => v.kind)).toEqual(['error', 'error']);
    expect(errorText(r.results.get('a'))).toMatch(/not a Map of node name to outcome/);
    const [a, b] = [...r.results.values()] as { error: Error }[];
    expect(isBatchError(a!.error) && a!.error === b!.error).toBe(true);
  });
});

describe('checkBooleanAnswers', () => {
  it.each([[true, 'found'], ['yes', 'error'], [undefined, 'error']])('value %j → %s', (value, kind) => {
    expect(checkBooleanAnswers('p', [{ name: 'a' }], new Map([['a', { kind: 'found', value }]])).results.get('a')?.kind).toBe(kind);
  });
});

// Anything an adapter could hand back, built from the pieces that matter.
const ipText = fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.string(), fc.constantFrom('FD00::1', '::ffff:10.0.0.1', '010.1.1.1', 'fe80::1%eth0', ''));
const address = fc.record({ type: fc.constantFrom('InternalIP', 'ExternalIP', 'Hostname', 'InternalDNS', 'bogus'), address: ipText });
const labelKey = fc.oneof(fc.string(), fc.constantFrom('kubernetes.io/x', 'node.kubernetes.io/y', 'a.k8s.io/z', 'example.com/ok', 'k8s.io/'));
const value = fc.oneof(
  fc.record({ providerID: fc.string(), addresses: fc.array(address, { maxLength: 5 }), labels: fc.option(fc.dictionary(labelKey, fc.oneof(fc.string(), fc.integer())), { nil: undefined }) }, { requiredKeys: ['providerID', 'addresses'] }),
  fc.anything(),
);
const outcome = fc.oneof(
  fc.record({ kind: fc.constant('found'), value }),
  fc.record({ kind: fc.constant('notFound'), reason: fc.option(fc.string(), { nil: undefined }) }),
  fc.record({ kind: fc.constant('error'), error: fc.anything() }),
  fc.anything(),
);
const names = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 6 });

describe('whatever an adapter answers (property)', () => {
  it('exactly one outcome per asked node, only canonical IPs, no reserved label, an error never becomes notFound', () => {
    // Keys mostly from the asked names, so most outcomes are read; some are strangers or not strings.
    const input = names.chain((asked) => fc.tuple(
      fc.constant(asked),
      fc.array(fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...asked) }, fc.string({ maxLength: 8 }), fc.anything()), outcome), { maxLength: 10 }),
      fc.boolean(),
    ));
    fc.assert(fc.property(input, ([asked, entries, useMap]) => {
      const refs = asked.map((name) => ({ name }));
      const answers = useMap ? new Map(entries) : Object.fromEntries(entries.filter(([k]) => typeof k === 'string'));
      const { results } = checkMetadataAnswers('p', refs, answers);
      expect([...results.keys()].sort()).toEqual([...asked].sort());
      for (const [name, r] of results) {
        const given = answers instanceof Map ? answers.get(name) as { kind?: unknown } | undefined : undefined;
        if (r.kind === 'notFound') expect(given?.kind).toBe('notFound');
        if (r.kind === 'error') expect(r.retryable).toBe(true);
        if (r.kind !== 'found') continue;
        for (const a of r.value.addresses) {
          if (a.type === 'InternalIP' || a.type === 'ExternalIP') expect(canonicalIP(a.address)).toBe(a.address);
        }
        for (const key of Object.keys(r.value.labels ?? {})) expect(isReservedLabelKey(key)).toBe(false);
      }
    }), { numRuns: 500 });
  });
});
