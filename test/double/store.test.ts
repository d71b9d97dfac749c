// Store rules without HTTP: history bounds, generation, namespaces, create-on-update.
import { describe, expect, it } from 'vitest';
import { ApiError, Store } from '../../src/double/index.js';

function code(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e.code;
    throw e;
  }
  return undefined;
}

describe('Store', () => {
  it('keeps a bounded history: resuming before it is impossible, within it replays in order', () => {
    const s = new Store({ historySize: 3, namespaces: [] });
    const start = s.resourceVersion;
    for (const n of ['a', 'b', 'c', 'd', 'e']) s.create('nodes', { metadata: { name: n } });
    expect(s.hub.since('nodes', start)).toBeUndefined();
    expect(s.hub.since('nodes', start + 2)?.map((e) => e.object.metadata?.name)).toEqual(['c', 'd', 'e']);
    expect(s.hub.since('nodes', s.resourceVersion)).toEqual([]);
    s.compactHistory();
    expect(s.hub.since('nodes', s.resourceVersion - 1)).toBeUndefined();
  });

  it('bumps generation of a custom resource on spec changes only', () => {
    const s = new Store({ namespaces: [] });
    const c = s.create('clustercidrs.networking.x-k8s.io', { metadata: { name: 'c' }, spec: { perNodeHostBits: 8, ipv4: '10.0.0.0/8' } });
    expect(c.metadata?.generation).toBe(1);
    const labeled = s.update('clustercidrs.networking.x-k8s.io', { ...c, metadata: { ...c.metadata, labels: { a: 'b' } } });
    expect(labeled.metadata?.generation).toBe(1);
  });

  it('answers 404 for a namespaced create in a missing namespace and deletes a namespace with its contents', () => {
    const s = new Store({ namespaces: ['ns1'] });
    expect(code(() => s.create('configmaps', { metadata: { name: 'x' } }, 'nope'))).toBe(404);
    s.create('configmaps', { metadata: { name: 'x' } }, 'ns1');
    s.create('configmaps', { metadata: { name: 'kept', finalizers: ['f'] } }, 'ns1');
    s.delete('namespaces', 'ns1');
    expect(s.list('configmaps').map((c) => [c.metadata?.name, !!c.metadata?.deletionTimestamp])).toEqual([['kept', true]]);
  });

  it('creates leases and events on update when absent, but not nodes', () => {
    const s = new Store();
    const l = s.update('leases.coordination.k8s.io', { metadata: { name: 'l', namespace: 'kube-system' }, spec: { holderIdentity: 'a' } });
    expect(l.metadata?.uid).toBeTruthy();
    expect(code(() => s.update('nodes', { metadata: { name: 'n' } }))).toBe(404);
  });

  it('drops status on create for servicecidrs (leaving the empty struct), keeps it for nodes, and defaults namespaces to Active', () => {
    const s = new Store({ namespaces: [] });
    expect(s.create('servicecidrs.networking.k8s.io', { metadata: { name: 's' }, spec: { cidrs: ['10.96.0.0/16'] }, status: { conditions: [{ type: 'Ready' }] } }).status).toEqual({});
    // A Node's status as Go encodes it: its two struct fields always present.
    expect(s.create('nodes', { metadata: { name: 'n' }, status: { phase: 'Running' } }).status).toEqual({
      phase: 'Running',
      daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
      nodeInfo: { machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: '', containerRuntimeVersion: '', kubeletVersion: '', kubeProxyVersion: '', operatingSystem: '', architecture: '' },
    });
    expect(s.create('namespaces', { metadata: { name: 'x' } }).status).toEqual({ phase: 'Active' });
  });

  it('validates names and labels with 422, body kind with 400, and generates names', () => {
    const s = new Store({ namespaces: [] });
    expect(code(() => s.create('nodes', { metadata: { name: 'Bad_Name' } }))).toBe(422);
    expect(code(() => s.create('nodes', { metadata: { name: 'n', labels: { 'bad key': 'v' } } }))).toBe(422);
    expect(code(() => s.create('nodes', { kind: 'Pod', metadata: { name: 'n' } }))).toBe(400);
    expect(code(() => s.create('nodes', { metadata: {} }))).toBe(422);
    expect(s.create('nodes', { metadata: { generateName: 'gen-' } }).metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it('names the resource and the known ones when asked for an unknown resource', () => {
    expect(() => new Store().get('services', 'x')).toThrow(/unknown resource "services" \(known: nodes, namespaces/);
  });
});
