// The ClusterCIDR custom resource: CRD schema and CEL immutability rules, through CustomObjectsApi.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { kubeConfigFor, startApiServerDouble, type ApiServerDouble } from '../../src/sim/apiserver/index.js';
import { expectStatus } from './target.js';

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
  it.each([
    ['neither ipv4 nor ipv6', { perNodeHostBits: 8 }, 'spec'],
    ['ipv4 holding an IPv6 range', { perNodeHostBits: 8, ipv4: 'fd00::/48' }, 'spec.ipv4'],
    ['ipv6 holding an IPv4 range', { perNodeHostBits: 8, ipv6: '10.0.0.0/8' }, 'spec.ipv6'],
    ['ipv4 that is not a CIDR', { perNodeHostBits: 8, ipv4: '10.0.0.1' }, 'spec.ipv4'],
    ['perNodeHostBits below 4', { perNodeHostBits: 3, ipv4: '10.0.0.0/8' }, 'spec.perNodeHostBits'],
    ['perNodeHostBits missing', { ipv4: '10.0.0.0/8' }, 'spec.perNodeHostBits'],
    ['perNodeHostBits not an integer', { perNodeHostBits: '8', ipv4: '10.0.0.0/8' }, 'spec.perNodeHostBits'],
  ])('rejects %s with 422 Invalid naming the field', async (_what, spec, field) => {
    const st = await expectStatus(api.createClusterCustomObject({ ...G, body: cc('bad', spec) }), 422, 'Invalid');
    expect(st.details?.causes?.map((c) => c.field)).toContain(field);
    expect(st.message).toMatch(/^ClusterCIDR\.networking\.x-k8s\.io "bad" is invalid: /);
  });

  it.each([
    ['IPv4 only', { perNodeHostBits: 8, ipv4: '10.0.0.0/8' }],
    ['IPv6 only', { perNodeHostBits: 64, ipv6: 'fd00::/48' }],
    ['dual-stack with a node selector', { perNodeHostBits: 4, ipv4: '10.1.0.0/16', ipv6: 'fd01::/48', nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] }] } }],
  ])('accepts %s and sets generation 1', async (what, spec) => {
    const name = what.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const created = (await api.createClusterCustomObject({ ...G, body: cc(name, spec) })) as { metadata: { generation: number } };
    expect(created.metadata.generation).toBe(1);
  });
});

describe('ClusterCIDR immutability', () => {
  it.each([
    ['perNodeHostBits', { perNodeHostBits: 10 }],
    ['ipv4', { ipv4: '10.2.0.0/16' }],
    ['ipv6', { ipv6: 'fd02::/48' }],
    ['nodeSelector', { nodeSelector: { nodeSelectorTerms: [] } }],
  ])('refuses a change of spec.%s', async (field, change) => {
    const name = `imm-${field.toLowerCase()}`;
    await api.createClusterCustomObject({ ...G, body: cc(name, { perNodeHostBits: 8, ipv4: '10.0.0.0/16', ipv6: 'fd00::/48' }) });
    const st = await expectStatus(
      api.patchClusterCustomObject({ ...G, name, body: { spec: change } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
      422,
      'Invalid',
    );
    expect(st.details?.causes).toEqual([expect.objectContaining({ field: `spec.${field}`, message: expect.stringContaining('Value is immutable') })]);
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
