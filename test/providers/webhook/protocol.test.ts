// The webhook's v1 documents and config (pure): the published schemas are the ones the code
// validates with, answers are refused field by field, and the config's rules are held.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseWebhookConfig } from '../../../providers/webhook/config.js';
import { buildRequest, readAnswer, requestProblems } from '../../../providers/webhook/protocol.js';
import { REQUEST_SCHEMA, RESPONSE_SCHEMA, WEBHOOK_API_VERSION } from '../../../providers/webhook/schema.js';
import { repoRoot } from '../../kit/cli.js';

const answer = (nodes: Record<string, unknown>, over: Record<string, unknown> = {}) => JSON.stringify({ apiVersion: WEBHOOK_API_VERSION, kind: 'InstancesResponse', nodes, ...over });
const found = (over: Record<string, unknown> = {}) => ({ found: { providerID: 'inv://a', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], ...over } });

describe('the published schemas', () => {
  it.each([
    ['instances-request.v1.schema.json', REQUEST_SCHEMA],
    ['instances-response.v1.schema.json', RESPONSE_SCHEMA],
  ])('docs/webhook/%s is the schema the provider validates with', (file, schema) => {
    expect(JSON.parse(readFileSync(path.join(repoRoot, 'docs/webhook', file), 'utf8'))).toEqual(JSON.parse(JSON.stringify(schema)));
  });

  it('the requests the provider sends conform to the request schema', () => {
    const request = buildRequest([{ name: 'a' }, { name: 'b', providerID: 'inv://b', labels: { 'kubernetes.io/hostname': 'b' } }, { name: 'c', labels: {} }]);
    expect(requestProblems(request)).toEqual([]);
    expect(request.nodes).toEqual([{ name: 'a' }, { name: 'b', providerID: 'inv://b', labels: { 'kubernetes.io/hostname': 'b' } }, { name: 'c' }]);
  });
});

describe('readAnswer', () => {
  it('reads each of the three outcomes, with the shutdown state and canonical IPs', () => {
    const r = readAnswer(answer({
      a: found({ addresses: [{ type: 'InternalIP', address: 'FD00::1' }], zone: 'z', shutdown: true, labels: { 'kubernetes.io/role': 'x', 'inv.example/rack': '3' } }),
      b: { notFound: { reason: 'deleted' } },
      c: { notFound: {} },
      d: { error: { message: 'the hypervisor is not answering' } },
    }));
    expect(r).toEqual({
      ok: true,
      outcomes: new Map<string, unknown>([
        ['a', { kind: 'found', shutdown: true, metadata: { providerID: 'inv://a', addresses: [{ type: 'InternalIP', address: 'fd00::1' }], zone: 'z', labels: { 'inv.example/rack': '3' } } }],
        ['b', { kind: 'notFound', reason: 'deleted' }],
        ['c', { kind: 'notFound' }],
        ['d', { kind: 'error', message: 'the hypervisor is not answering' }],
      ]),
      notes: ['node a: label "kubernetes.io/role" dropped: the kubernetes.io and k8s.io namespaces are not the cloud\'s'],
    });
  });

  it.each([
    ['not JSON', '<html>', [/^not JSON: /]],
    ['another version', answer({}, { apiVersion: 'webhook.node-address-ccm.io/v2' }), ['apiVersion: must be "webhook.node-address-ccm.io/v1" (value "webhook.node-address-ccm.io/v2")']],
    ['another kind', answer({}, { kind: 'InstancesRequest' }), ['kind: must be "InstancesResponse" (value "InstancesRequest")']],
    ['no nodes', JSON.stringify({ apiVersion: WEBHOOK_API_VERSION, kind: 'InstancesResponse' }), ['nodes: required']],
    ['nodes as a list', answer({}, { nodes: [] }), ['nodes: must be object (value [])']],
    ['an unknown top-level field', answer({}, { items: {} }), ['items: unknown field (value {})']],
  ])('%s: the whole answer is refused (the batch waits)', (_name, body, problems) => {
    const r = readAnswer(body);
    expect(r.ok).toBe(false);
    const got = (r as { problems: string[] }).problems;
    expect(got).toHaveLength(problems.length);
    problems.forEach((p, i) => (typeof p === 'string' ? expect(got[i]).toBe(p) : expect(got[i]).toMatch(p)));
  });

  it.each([
    ['two outcomes for one node', { a: { ...found(), notFound: {} } }, [/^nodes\.a: must hold exactly one of found, notFound, error \(value \{"found":\{"providerID":"inv:\/\/a",.*\.\.\.\)$/]],
    ['an unknown address type', { a: found({ addresses: [{ type: 'PublicIP', address: '1.2.3.4' }] }) }, ['nodes.a.found.addresses[0].type: must be one of Hostname, InternalIP, ExternalIP, InternalDNS, ExternalDNS (value "PublicIP")']],
    ['a misspelt field', { a: found({ providerId: 'x' }) }, ['nodes.a.found.providerId: unknown field (value "x")']],
    ['an error without a message', { a: { error: {} } }, ['nodes.a.error.message: required']],
    ['an IP that is not one', { a: found({ addresses: [{ type: 'InternalIP', address: '10.0.0.256' }] }) }, ['nodes.a.found.addresses[0].address: InternalIP must be an IP address (value "10.0.0.256")']],
    ['a pod CIDR with host bits', { 'node.b': found({ podCIDRs: ['10.0.0.1/24'] }) }, ['nodes."node.b".found.podCIDRs[0]: host bits are set (network address is 10.0.0.0/24) (value "10.0.0.1/24")']],
    ['a field of the wrong type', { a: found({ zone: 5 }) }, ['nodes.a.found.zone: must be string (value 5)']],
    ['an outcome that is not one', { a: { gone: {} } }, ['nodes.a.gone: unknown field (value {})']],
  ])('%s: that entry alone is refused, field by field; the others are read', (_name, nodes, problems) => {
    const r = readAnswer(answer({ ...nodes, ok: found({ providerID: 'inv://ok' }), gone: { notFound: {} } }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const [name] = Object.keys(nodes) as [string];
    const own = r.outcomes.get(name);
    expect(own?.kind).toBe('refused');
    const got = (own as { problems: string[] }).problems;
    expect(got).toHaveLength(problems.length);
    problems.forEach((p, i) => (typeof p === 'string' ? expect(got[i]).toBe(p) : expect(got[i]).toMatch(p)));
    expect(r.outcomes.get('ok')).toMatchObject({ kind: 'found', metadata: { providerID: 'inv://ok' } });
    expect(r.outcomes.get('gone')).toEqual({ kind: 'notFound' });
  });

  it('problems in several entries: each entry names its own', () => {
    const r = readAnswer(answer({ a: found({ zone: 5 }), b: { gone: {} }, c: found({ labels: { 'kubernetes.io/role': 'x' } }) }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.outcomes.get('a')).toEqual({ kind: 'refused', problems: ['nodes.a.found.zone: must be string (value 5)'] });
    expect(r.outcomes.get('b')).toEqual({ kind: 'refused', problems: ['nodes.b.gone: unknown field (value {})'] });
    expect(r.outcomes.get('c')?.kind).toBe('found');
    expect(r.notes).toEqual(['node c: label "kubernetes.io/role" dropped: the kubernetes.io and k8s.io namespaces are not the cloud\'s']);
  });

  it('names five problems of an entry and counts the rest', () => {
    const addresses = Array.from({ length: 8 }, (_, i) => ({ type: 'PublicIP', address: `10.0.0.${i}` }));
    const r = readAnswer(answer({ a: found({ addresses }) }));
    const problems = (r.ok && r.outcomes.get('a')?.kind === 'refused') ? (r.outcomes.get('a') as { problems: string[] }).problems : [];
    expect(problems).toHaveLength(6);
    expect(problems[5]).toBe('and 3 more');
  });
});

describe('parseWebhookConfig', () => {
  it('defaults', () => {
    expect(parseWebhookConfig('url: https://inv.example:8443/v1/instances\n')).toEqual({ url: new URL('https://inv.example:8443/v1/instances'), timeoutMs: 10_000, batchSize: 100, attempts: 4, insecurePlainHTTP: false });
  });

  it('every key', () => {
    const c = parseWebhookConfig('url: https://inv.example/\ncaFile: /ca\ntokenFile: /t\nclientCertFile: /c\nclientKeyFile: /k\ntimeout: 250ms\nbatchSize: 500\nattempts: 1\n');
    expect(c).toMatchObject({ caFile: '/ca', tokenFile: '/t', clientCertFile: '/c', clientKeyFile: '/k', timeoutMs: 250, batchSize: 500, attempts: 1 });
  });

  it.each([
    ['plain HTTP to loopback with the flag', 'url: http://127.0.0.1:8080/\ninsecurePlainHTTP: true\n'],
    ['plain HTTP to ::1 with the flag', 'url: http://[::1]:8080/\ninsecurePlainHTTP: true\n'],
  ])('%s is accepted', (_name, text) => {
    expect(parseWebhookConfig(text).url.protocol).toBe('http:');
  });

  it.each([
    ['', 'cloud-config url: required'],
    ['url: https://x/\nbatchsize: 5\n', 'cloud-config batchsize: unknown field (value 5)'],
    ['url: https://x/\nbatchSize: 501\n', 'cloud-config batchSize: must be <= 500 (value 501)'],
    ['url: https://x/\ntimeout: 10\n', 'cloud-config timeout: must be string (value 10)'],
    ['url: https://x/\ntimeout: 10h\n', 'cloud-config timeout: must match pattern "^[0-9]+(ms|s|m)$" (value "10h")'],
    ['url: https://x/\ntimeout: 0s\n', 'cloud-config timeout: must be positive (value "0s")'],
    ['url: not a url\n', 'cloud-config url: not a URL (value "not a url")'],
    ['url: ftp://x/\n', 'cloud-config url: must be https:// (value "ftp://x/")'],
    ['url: http://127.0.0.1/\n', 'cloud-config url: plain http:// needs insecurePlainHTTP: true (and a loopback address); use https:// (value "http://127.0.0.1/")'],
    ['url: http://10.0.0.5/\ninsecurePlainHTTP: true\n', 'cloud-config url: plain http:// only to a loopback address (127.0.0.0/8, ::1, localhost) (value "http://10.0.0.5/")'],
    ['url: https://u:p@x/\n', 'cloud-config url: must not hold credentials (use tokenFile or a client certificate) (value "https://…@x")'],
    ['url: https://x/\nclientCertFile: /c\n', 'cloud-config clientKeyFile: required with clientCertFile (clientCertFile "/c")'],
    ['url: [1\n', /^cloud-config: not valid YAML: /],
  ])('%j → %s', (text, message) => {
    expect(() => parseWebhookConfig(text)).toThrow(message);
  });
});
