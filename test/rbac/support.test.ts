// The RBAC proof's own tools: request attributes as kube-apiserver derives them, grant
// flattening, and the recording proxy (user, attributes and status of each request, streaming).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRbacYaml, startApiServerDouble, type ApiServerDouble } from '../../src/sim/apiserver/index.js';
import { repoRoot } from '../helpers/cli.js';
import { grantKey, grantsFor, withoutVerb } from './support/grants.js';
import { requestAttributes, startRecordingProxy, type RecordingProxy } from './support/recording-proxy.js';

describe('requestAttributes', () => {
  const table: [string, string, ReturnType<typeof requestAttributes>][] = [
    ['GET', '/api/v1/nodes', { verb: 'list', group: '', resource: 'nodes', subresource: '', namespace: '', name: '' }],
    ['GET', '/api/v1/nodes?watch=true&resourceVersion=5', { verb: 'watch', group: '', resource: 'nodes', subresource: '', namespace: '', name: '' }],
    ['GET', '/api/v1/nodes/n1', { verb: 'get', group: '', resource: 'nodes', subresource: '', namespace: '', name: 'n1' }],
    ['PATCH', '/api/v1/nodes/n1/status', { verb: 'patch', group: '', resource: 'nodes', subresource: 'status', namespace: '', name: 'n1' }],
    ['POST', '/api/v1/namespaces/default/events', { verb: 'create', group: '', resource: 'events', subresource: '', namespace: 'default', name: '' }],
    ['PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l', { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', subresource: '', namespace: 'kube-system', name: 'l' }],
    ['DELETE', '/apis/networking.x-k8s.io/v1/clustercidrs/c', { verb: 'delete', group: 'networking.x-k8s.io', resource: 'clustercidrs', subresource: '', namespace: '', name: 'c' }],
    ['DELETE', '/apis/networking.x-k8s.io/v1/clustercidrs', { verb: 'deletecollection', group: 'networking.x-k8s.io', resource: 'clustercidrs', subresource: '', namespace: '', name: '' }],
    ['GET', '/api/v1/namespaces', { verb: 'list', group: '', resource: 'namespaces', subresource: '', namespace: '', name: '' }],
    ['GET', '/api/v1/namespaces/kube-system', { verb: 'get', group: '', resource: 'namespaces', subresource: '', namespace: '', name: 'kube-system' }],
    ['GET', '/api', undefined],
    ['GET', '/apis/coordination.k8s.io/v1', undefined],
    ['GET', '/version', undefined],
  ];
  for (const [method, url, want] of table) {
    it(`${method} ${url}`, () => expect(requestAttributes(method, url)).toEqual(want));
  }
});

describe('grants of deploy/base/rbac.yaml', () => {
  const file = path.join(repoRoot, 'deploy/base/rbac.yaml');
  const policy = parseRbacYaml(readFileSync(file, 'utf8'), file);
  const sa = 'system:serviceaccount:kube-system:node-address-ccm';

  it('flattens the ServiceAccount\'s rules, with scope and resourceNames', () => {
    const grants = grantsFor(policy, sa);
    expect(grants.map(grantKey)).toContain('patch nodes/status');
    const leaseUpdate = grants.find((g) => grantKey(g) === 'update leases.coordination.k8s.io');
    expect(leaseUpdate).toMatchObject({ namespace: 'kube-system', resourceNames: ['node-address-ccm'] });
    expect(grants.find((g) => grantKey(g) === 'list nodes')?.namespace).toBe('');
  });

  it('grants nothing to another user', () => {
    expect(grantsFor(policy, 'system:serviceaccount:default:other')).toEqual([]);
  });

  it('withoutVerb drops exactly that verb and leaves the original alone', () => {
    const cut = withoutVerb(policy, 'patch', 'nodes/status');
    const before = grantsFor(policy, sa).map(grantKey);
    const after = grantsFor(cut, sa).map(grantKey);
    expect(before.filter((k) => !after.includes(k))).toEqual(['patch nodes/status']);
    expect(after.every((k) => before.includes(k))).toBe(true);
    expect(grantsFor(policy, sa).map(grantKey)).toContain('patch nodes/status');
  });
});

describe('recording proxy', () => {
  let server: ApiServerDouble;
  let proxy: RecordingProxy;

  beforeAll(async () => {
    server = await startApiServerDouble({ rbac: { roles: [], bindings: [] }, users: [{ name: 'nobody', token: 'tok-nobody' }] });
    proxy = await startRecordingProxy(server.url, { [server.adminToken]: 'admin', 'tok-nobody': 'nobody' });
  });

  afterAll(async () => {
    await proxy.stop();
    await server.stop();
  });

  const call = (token: string, method: string, p: string, body?: unknown): Promise<Response> =>
    fetch(`${proxy.url}${p}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('forwards requests and records user, attributes and status', async () => {
    const created = await call(server.adminToken, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'p1' } });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { metadata: { name: string } }).metadata.name).toBe('p1');
    const denied = await call('tok-nobody', 'GET', '/api/v1/nodes/p1');
    expect(denied.status).toBe(403);
    await denied.text();
    const recs = proxy.requests();
    expect(recs.map((r) => [r.user, r.verb, r.resource, r.name, r.status])).toEqual([
      ['admin', 'create', 'nodes', '', 201],
      ['nobody', 'get', 'nodes', 'p1', 403],
    ]);
  });

  it('streams watches through', async () => {
    const ac = new AbortController();
    const res = await fetch(`${proxy.url}/api/v1/nodes?watch=true`, { headers: { Authorization: `Bearer ${server.adminToken}` }, signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain('"type":"ADDED"');
    ac.abort();
    await reader.cancel().catch(() => undefined);
    expect(proxy.requests().some((r) => r.verb === 'watch' && r.status === 200)).toBe(true);
  });
});
