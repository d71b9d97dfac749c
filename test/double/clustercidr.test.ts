// The ClusterCIDR custom resource: CRD schema and CEL immutability rules, through CustomObjectsApi.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { CLUSTERCIDR_RULE_MESSAGES, kubeConfigFor, startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { repoRoot } from '../kit/cli.js';
import { expectStatus } from './target.js';

const CRD = path.join(repoRoot, 'deploy/base/crd-clustercidrs.yaml');
const EXAMPLES = path.join(repoRoot, 'deploy/examples');

let s: ApiServerDouble;
let api: CustomObjectsApi;
const G = { group: 'networking.x-k8s.io', version: 'v1', plural: 'clustercidrs' };

function cc(name: string, spec: Record<string, unknown>): object {
  return { apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name }, spec };
}

beforeAll(async () => {
  s = await startApiServerDouble();
  api = kubeConfigFor(s).makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  await s.stop();
});

describe('ClusterCIDR create validation', () => {
  // CEL failures as kube-apiserver 1.35 reports them (test/realserver/double-vs-real.test.ts): a
  // scalar field's value, no value for a rule on an object.
  it.each([
    ['neither ipv4 nor ipv6', { perNodeHostBits: 8 }, 'spec', 'Invalid value: at least one of ipv4 and ipv6 must be set'],
    ['both empty', { perNodeHostBits: 8, ipv4: '', ipv6: '' }, 'spec', 'Invalid value: at least one of ipv4 and ipv6 must be set'],
    ['ipv4 holding an IPv6 range', { perNodeHostBits: 8, ipv4: 'fd00::/48' }, 'spec.ipv4', 'Invalid value: "fd00::/48": ipv4 must be an IPv4 CIDR'],
    ['ipv6 holding an IPv4 range', { perNodeHostBits: 8, ipv6: '10.0.0.0/8' }, 'spec.ipv6', 'Invalid value: "10.0.0.0/8": ipv6 must be an IPv6 CIDR'],
    ['ipv4 that is not a CIDR', { perNodeHostBits: 8, ipv4: '10.0.0.1' }, 'spec.ipv4', 'Invalid value: "10.0.0.1": ipv4 must be an IPv4 CIDR'],
    ['ipv4 longer than 64 bytes', { perNodeHostBits: 8, ipv4: `10.0.0.0/8${' '.repeat(60)}` }, 'spec.ipv4', 'Too long: may not be more than 64 bytes'],
    ['perNodeHostBits below 4', { perNodeHostBits: 3, ipv4: '10.0.0.0/8' }, 'spec.perNodeHostBits', 'Invalid value: 3: perNodeHostBits must be at least 4'],
    ['perNodeHostBits missing', { ipv4: '10.0.0.0/8' }, 'spec.perNodeHostBits', 'Required value'],
    ['perNodeHostBits not an integer', { perNodeHostBits: '8', ipv4: '10.0.0.0/8' }, 'spec.perNodeHostBits', 'Invalid value: "string": spec.perNodeHostBits in body must be of type integer: "string"'],
    ['a selector requirement without operator', { perNodeHostBits: 8, ipv4: '10.0.0.0/8', nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a' }] }] } }, 'spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator', 'Required value'],
  ])('rejects %s with 422 Invalid naming the field', async (_what, spec, field, message) => {
    const st = await expectStatus(api.createClusterCustomObject({ ...G, body: cc('bad', spec) }), 422, 'Invalid');
    expect(st.details?.causes).toContainEqual(expect.objectContaining({ field, message }));
    expect(st.message).toMatch(/^ClusterCIDR\.networking\.x-k8s\.io "bad" is invalid: /);
  });

  it.each([
    ['IPv4 only', { perNodeHostBits: 8, ipv4: '10.0.0.0/8' }],
    ['IPv6 only with an empty ipv4', { perNodeHostBits: 64, ipv4: '', ipv6: 'fd00::/48' }],
    ['dual-stack with a node selector', { perNodeHostBits: 4, ipv4: '10.1.0.0/16', ipv6: 'fd01::/48', nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] }] } }],
  ])('accepts %s and sets generation 1', async (what, spec) => {
    const name = what.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const created = (await api.createClusterCustomObject({ ...G, body: cc(name, spec) })) as { metadata: { generation: number } };
    expect(created.metadata.generation).toBe(1);
  });

  it.runIf(existsSync(EXAMPLES))('accepts the shipped examples in deploy/examples', async () => {
    const docs = readdirSync(EXAMPLES)
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) => parseAllDocuments(readFileSync(path.join(EXAMPLES, f), 'utf8')).map((d) => d.toJSON() as { kind?: string }))
      .filter((o) => o?.kind === 'ClusterCIDR');
    expect(docs.length).toBeGreaterThan(0);
    for (const o of docs) await api.createClusterCustomObject({ ...G, body: o });
  });

  it.runIf(existsSync(CRD))('knows exactly the CEL rule messages of the shipped CRD', () => {
    const messages = [...readFileSync(CRD, 'utf8').matchAll(/^\s*message: (.+)$/gm)].map((m) => m[1].trim());
    expect(new Set(messages)).toEqual(new Set(Object.values(CLUSTERCIDR_RULE_MESSAGES)));
  });
});

describe('ClusterCIDR immutability', () => {
  const base = { perNodeHostBits: 8, ipv4: '10.0.0.0/16', ipv6: 'fd00::/48', nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'Exists' }] }] } };
  it.each([
    ['perNodeHostBits', { perNodeHostBits: 10 }, [['spec.perNodeHostBits', 'perNodeHostBits is immutable']]],
    ['ipv4', { ipv4: '10.2.0.0/16' }, [['spec', 'ipv4 is immutable'], ['spec.ipv4', 'ipv4 is immutable']]],
    ['ipv6', { ipv6: 'fd02::/48' }, [['spec', 'ipv6 is immutable'], ['spec.ipv6', 'ipv6 is immutable']]],
    ['ipv6 removed', { ipv6: null }, [['spec', 'ipv6 is immutable']]],
    ['nodeSelector', { nodeSelector: { nodeSelectorTerms: [] } }, [['spec.nodeSelector', 'nodeSelector is immutable']]],
    ['nodeSelector removed', { nodeSelector: null }, [['spec', 'nodeSelector is immutable']]],
  ])('refuses a change of %s', async (what, change, expected) => {
    const name = `imm-${what.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
    await api.createClusterCustomObject({ ...G, body: cc(name, base) });
    const st = await expectStatus(
      api.patchClusterCustomObject({ ...G, name, body: { spec: change } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
      422,
      'Invalid',
    );
    // spec's own rules come first; the value shown (a scalar's, none for an object) is left out here.
    expect(st.details?.causes?.map((c) => [c.field, c.message?.replace(/^Invalid value: (?:"[^"]*"|-?\d+): /, '').replace(/^Invalid value: /, '')])).toEqual(expected);
  });

  it('treats an empty ipv4 and an absent one as the same value', async () => {
    await api.createClusterCustomObject({ ...G, body: cc('empty-v4', { perNodeHostBits: 8, ipv4: '', ipv6: 'fd03::/48' }) });
    await api.patchClusterCustomObject({ ...G, name: 'empty-v4', body: { spec: { ipv4: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  });

  it('allows metadata changes, keeps generation, refuses strategic merge (415) and unconditional updates', async () => {
    await api.createClusterCustomObject({ ...G, body: cc('meta', { perNodeHostBits: 8, ipv4: '10.3.0.0/16' }) });
    const labeled = (await api.patchClusterCustomObject({ ...G, name: 'meta', body: { metadata: { labels: { a: 'b' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))) as {
      metadata: { generation: number; labels: Record<string, string> };
    };
    expect(labeled.metadata).toMatchObject({ generation: 1, labels: { a: 'b' } });
    await expectStatus(api.patchClusterCustomObject({ ...G, name: 'meta', body: { metadata: { labels: { c: 'd' } } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch)), 415, 'UnsupportedMediaType');
    await expectStatus(api.replaceClusterCustomObject({ ...G, name: 'meta', body: cc('meta', { perNodeHostBits: 8, ipv4: '10.3.0.0/16' }) }), 422, 'Invalid');
    const deleted = (await api.deleteClusterCustomObject({ ...G, name: 'meta' })) as { kind: string };
    expect(deleted.kind).toBe('ClusterCIDR');
  });
});
