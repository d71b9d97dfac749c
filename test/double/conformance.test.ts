// Conformance of the API server double through client-node's real calls. Runs against a real
// cluster too (E2E_REAL_CLUSTER=1, see target.ts); double-only checks are marked so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApisApi,
  CoordinationV1Api,
  CoreApi,
  CoreV1Api,
  EventsV1Api,
  NetworkingV1Api,
  PatchStrategy,
  VersionApi,
  makeInformer,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import { eventually } from '../kit/wait.js';
import { collectWatch, expectStatus, fakeNode, openTarget, rawRequest, REAL, type Target } from './target.js';

let t: Target;
let core: CoreV1Api;
const created: string[] = [];

async function createNode(name: string, extra: Parameters<typeof fakeNode>[1] = {}): Promise<V1Node> {
  const n = await core.createNode({ body: fakeNode(name, extra) as V1Node });
  t.track(`/api/v1/nodes/${name}`);
  created.push(name);
  return n;
}

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

beforeAll(async () => {
  t = await openTarget();
  core = t.kc.makeApiClient(CoreV1Api);
});

afterAll(async () => {
  await t?.close();
});

describe('discovery', () => {
  it('serves /version, /api, /apis and resource lists with subresources', async () => {
    const version = await t.kc.makeApiClient(VersionApi).getCode();
    expect(version.major).toMatch(/^\d+$/);
    const api = await t.kc.makeApiClient(CoreApi).getAPIVersions();
    expect(api.versions).toContain('v1');
    const groups = await t.kc.makeApiClient(ApisApi).getAPIVersions();
    const names = groups.groups.map((g) => g.name);
    expect(names).toEqual(expect.arrayContaining(['coordination.k8s.io', 'events.k8s.io', 'networking.k8s.io']));
    const resources = await core.getAPIResources();
    const nodes = resources.resources.find((r) => r.name === 'nodes');
    expect(nodes).toMatchObject({ kind: 'Node', namespaced: false });
    expect(nodes?.verbs).toEqual(expect.arrayContaining(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']));
    expect(resources.resources.map((r) => r.name)).toEqual(expect.arrayContaining(['nodes/status', 'namespaces', 'configmaps', 'events']));
    const health = await rawRequest(t.kc, 'GET', '/healthz');
    expect([health.status, health.body]).toEqual([200, 'ok']);
  });
});

describe('create, get, update', () => {
  it('maintains uid, creationTimestamp and one global resourceVersion; a Node keeps the status it was created with', async () => {
    const n = await createNode(`${t.prefix}create`, { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } });
    expect(n.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(n.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(n.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.0.0.1' }]);
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `${t.prefix}cm` }, data: { a: '1' } } });
    t.track(`/api/v1/namespaces/default/configmaps/${t.prefix}cm`);
    // One counter across resources: a later write of another kind has a larger version.
    expect(BigInt(cm.metadata?.resourceVersion as string)).toBeGreaterThan(BigInt(n.metadata?.resourceVersion as string));
    const got = await core.readNode({ name: n.metadata?.name as string });
    expect(got.metadata?.resourceVersion).toBe(n.metadata?.resourceVersion);
  });

  it('answers AlreadyExists, Conflict on a stale resourceVersion, and NotFound, as Status bodies', async () => {
    const name = `${t.prefix}conflict`;
    const n = await createNode(name);
    const dup = await expectStatus(core.createNode({ body: fakeNode(name) as V1Node }), 409, 'AlreadyExists');
    expect(dup.message).toBe(`nodes "${name}" already exists`);
    const fresh = await core.replaceNode({ name, body: { ...n, metadata: { ...n.metadata, labels: { x: '1' } } } });
    expect(fresh.metadata?.resourceVersion).not.toBe(n.metadata?.resourceVersion);
    const stale = await expectStatus(core.replaceNode({ name, body: { ...n, metadata: { ...n.metadata, labels: { x: '2' } } } }), 409, 'Conflict');
    expect(stale.message).toContain('the object has been modified');
    await expectStatus(core.readNode({ name: `${t.prefix}absent` }), 404, 'NotFound');
    await expectStatus(core.replaceNode({ name: `${t.prefix}absent`, body: fakeNode(`${t.prefix}absent`) as V1Node }), 404, 'NotFound');
    await expectStatus(core.createNamespacedConfigMap({ namespace: `${t.prefix}no-such-ns`, body: { metadata: { name: 'x' } } }), 404, 'NotFound');
  });

  it('keeps status out of main-resource writes and everything but status out of /status writes', async () => {
    const name = `${t.prefix}status`;
    const n = await createNode(name, { status: { addresses: [{ type: 'Hostname', address: name }] } });
    const viaMain = await core.replaceNode({ name, body: { ...n, spec: { ...n.spec, podCIDR: '10.1.0.0/24', podCIDRs: ['10.1.0.0/24'] }, status: { addresses: [] } } });
    expect(viaMain.spec?.podCIDR).toBe('10.1.0.0/24');
    expect(viaMain.status?.addresses).toEqual([{ type: 'Hostname', address: name }]);
    const viaStatus = await core.replaceNodeStatus({ name, body: { ...viaMain, spec: { ...viaMain.spec, podCIDR: '10.2.0.0/24' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.9' }] } } });
    expect(viaStatus.spec?.podCIDR).toBe('10.1.0.0/24');
    expect(viaStatus.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.0.0.9' }]);
  });

  it('does not bump resourceVersion for a write that changes nothing', async () => {
    const name = `${t.prefix}noop`;
    const n = await createNode(name);
    const again = await core.patchNode({ name, body: { metadata: { labels: n.metadata?.labels } } }, merge);
    expect(again.metadata?.resourceVersion).toBe(n.metadata?.resourceVersion);
  });
});

describe('Node validation', () => {
  it('fixes podCIDRs and providerID once set, derives podCIDR, and checks CIDRs and taints', async () => {
    const name = `${t.prefix}valid`;
    await createNode(name);
    const set = await core.patchNode({ name, body: { spec: { podCIDRs: ['10.20.0.0/24'], providerID: 'static://a' } } }, merge);
    expect([set.spec?.podCIDR, set.spec?.podCIDRs, set.spec?.providerID]).toEqual(['10.20.0.0/24', ['10.20.0.0/24'], 'static://a']);
    // Both fields: a podCIDRs alone that disagrees with podCIDR loses to it and changes nothing.
    const cidrChange = await expectStatus(core.patchNode({ name, body: { spec: { podCIDR: '10.20.1.0/24', podCIDRs: ['10.20.1.0/24'] } } }, merge), 422, 'Invalid');
    expect(cidrChange.details?.causes).toContainEqual(expect.objectContaining({ field: 'spec.podCIDRs' }));
    const idChange = await expectStatus(core.patchNode({ name, body: { spec: { providerID: 'static://b' } } }, merge), 422, 'Invalid');
    expect(idChange.details?.causes).toContainEqual(expect.objectContaining({ field: 'spec.providerID' }));
    const other = `${t.prefix}valid2`;
    await createNode(other);
    await expectStatus(core.patchNode({ name: other, body: { spec: { podCIDRs: ['10.0.0.0/24', '10.0.1.0/24'] } } }, merge), 422, 'Invalid');
    await expectStatus(core.patchNode({ name: other, body: { spec: { podCIDRs: ['not-a-cidr'] } } }, merge), 422, 'Invalid');
    const taint = await expectStatus(core.patchNode({ name: other, body: { spec: { taints: [{ key: 'a', effect: 'Sometimes' }] } } }, merge), 422, 'Invalid');
    // kube-apiserver reports taint errors under metadata.taints (validateNodeTaints' path).
    expect(taint.details?.causes).toContainEqual(expect.objectContaining({ field: 'metadata.taints[0].effect' }));
    await expectStatus(core.patchNode({ name: other, body: { spec: { taints: [{ key: 'a', effect: 'NoSchedule' }, { key: 'a', effect: 'NoSchedule' }] } } }, merge), 422, 'Invalid');
  });
});

describe('delete with finalizers', () => {
  it('marks deletionTimestamp, keeps the object until the last finalizer goes, then removes it', async () => {
    const name = `${t.prefix}fin`;
    const n = await createNode(name);
    await core.patchNode({ name, body: { metadata: { finalizers: ['e2e.node-address-ccm.io/a', 'e2e.node-address-ccm.io/b'] } } }, merge);
    const w = await collectWatch(t.kc, '/api/v1/nodes', { fieldSelector: `metadata.name=${name}`, resourceVersion: n.metadata?.resourceVersion });
    await core.deleteNode({ name });
    const marked = await core.readNode({ name });
    expect(marked.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    // No new finalizers on an object being deleted.
    await expectStatus(core.patchNode({ name, body: { metadata: { finalizers: ['e2e.node-address-ccm.io/a', 'e2e.node-address-ccm.io/b', 'e2e.node-address-ccm.io/c'] } } }, merge), 422, 'Invalid');
    // Strategic merge removes one finalizer from the set.
    const one = await core.patchNode({ name, body: { metadata: { '$deleteFromPrimitiveList/finalizers': ['e2e.node-address-ccm.io/a'] } } }, strategic);
    expect(one.metadata?.finalizers).toEqual(['e2e.node-address-ccm.io/b']);
    await core.patchNode({ name, body: [{ op: 'remove', path: '/metadata/finalizers' }] }, jsonPatch);
    await expectStatus(core.readNode({ name }), 404, 'NotFound');
    const events = await w.waitFor((es) => es.some((e) => e.type === 'DELETED'));
    expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED']);
    w.stop();
  });

  it('checks delete preconditions', async () => {
    const name = `${t.prefix}precond`;
    await createNode(name);
    await expectStatus(core.deleteNode({ name, body: { preconditions: { resourceVersion: '1' } } }), 409, 'Conflict');
    await core.deleteNode({ name });
    await expectStatus(core.readNode({ name }), 404, 'NotFound');
  });
});

describe('patch', () => {
  it('strategic merge: conditions by type, addresses with $patch: replace and $setElementOrder, podCIDRs as a set, taints replaced whole', async () => {
    const name = `${t.prefix}smp`;
    await createNode(name, {
      status: {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'KubeletNotReady' },
          { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory' },
        ],
        addresses: [
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'Hostname', address: name },
        ],
      },
    });
    const cond = await core.patchNodeStatus(
      { name, body: { status: { '$setElementOrder/conditions': [{ type: 'MemoryPressure' }, { type: 'Ready' }], conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } } },
      strategic,
    );
    expect(cond.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['Ready', 'True', 'KubeletReady'],
    ]);
    // Dual-stack: two InternalIP entries share the merge key, so they must be sent with $patch: replace.
    const replaced = await core.patchNodeStatus(
      {
        name,
        body: {
          status: {
            addresses: [{ $patch: 'replace' }, { type: 'InternalIP', address: '10.0.0.2' }, { type: 'InternalIP', address: 'fd00::2' }, { type: 'Hostname', address: name }],
          },
        },
      },
      strategic,
    );
    expect(replaced.status?.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.2' },
      { type: 'InternalIP', address: 'fd00::2' },
      { type: 'Hostname', address: name },
    ]);
    const ordered = await core.patchNodeStatus(
      { name, body: { status: { '$setElementOrder/addresses': [{ type: 'Hostname' }, { type: 'InternalIP' }], addresses: [{ type: 'Hostname', address: name }] } } },
      strategic,
    );
    expect(ordered.status?.addresses?.map((a) => a.type)).toEqual(['Hostname', 'InternalIP', 'InternalIP']);
    const cidrs = await core.patchNode({ name, body: { spec: { podCIDRs: ['10.9.0.0/24', 'fd00:9::/64'] } } }, strategic);
    expect([cidrs.spec?.podCIDR, cidrs.spec?.podCIDRs]).toEqual(['10.9.0.0/24', ['10.9.0.0/24', 'fd00:9::/64']]);
    // podCIDRs merge as a set: sending one that is already there changes nothing.
    const same = await core.patchNode({ name, body: { spec: { podCIDRs: ['fd00:9::/64'] } } }, strategic);
    expect([same.spec?.podCIDRs, same.metadata?.resourceVersion]).toEqual([['10.9.0.0/24', 'fd00:9::/64'], cidrs.metadata?.resourceVersion]);
    // core/v1 declares no patch strategy for spec.taints: the list in the patch replaces it.
    const tainted = await core.patchNode({ name, body: { spec: { taints: [{ key: 'e2e.node-address-ccm.io/other', effect: 'NoSchedule' }] } } }, strategic);
    expect(tainted.spec?.taints?.map((x) => x.key)).toEqual(['e2e.node-address-ccm.io/other']);
  });

  it('json patch: applies operations and answers 422 when a test operation fails', async () => {
    const name = `${t.prefix}jsonpatch`;
    const n = await createNode(name);
    const rv = n.metadata?.resourceVersion as string;
    const ok = await core.patchNode({ name, body: [{ op: 'test', path: '/metadata/resourceVersion', value: rv }, { op: 'add', path: '/metadata/labels/patched', value: 'yes' }] }, jsonPatch);
    expect(ok.metadata?.labels?.patched).toBe('yes');
    await expectStatus(core.patchNode({ name, body: [{ op: 'test', path: '/metadata/resourceVersion', value: rv }, { op: 'add', path: '/metadata/labels/again', value: 'no' }] }, jsonPatch), 422, 'Invalid');
    expect((await core.readNode({ name })).metadata?.labels?.again).toBeUndefined();
  });

  it('merge patch with a stale resourceVersion conflicts; apply patch needs a fieldManager and accepts force (the double refuses apply)', async () => {
    const name = `${t.prefix}apply`;
    const n = await createNode(name);
    await core.patchNode({ name, body: { metadata: { labels: { a: '1' } } } }, merge);
    await expectStatus(core.patchNode({ name, body: { metadata: { resourceVersion: n.metadata?.resourceVersion, labels: { a: '2' } } } }, merge), 409, 'Conflict');
    const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
    const body = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { applied: 'yes' } } };
    if (REAL) {
      await expectStatus(core.patchNode({ name, body }, apply), 422, 'Invalid');
      const applied = await core.patchNode({ name, body, fieldManager: 'e2e', force: true }, apply);
      expect(applied.metadata?.labels).toMatchObject({ a: '1', applied: 'yes' });
    } else {
      // The double keeps no field ownership, so it refuses server-side apply rather than merge wrongly.
      await expectStatus(core.patchNode({ name, body, fieldManager: 'e2e', force: true }, apply), 415, 'UnsupportedMediaType');
      expect((await core.readNode({ name })).metadata?.labels).toEqual({ a: '1', 'e2e.node-address-ccm.io/fake': 'true' });
    }
    await expectStatus(core.patchNode({ name, body: { metadata: {} }, force: true }, merge), 422, 'Invalid');
  });
});

describe('list', () => {
  const labelCases: [string, string[]][] = [
    ['tier=a', ['l1']],
    ['tier==a', ['l1']],
    ['tier!=a', ['l2', 'l3']],
    ['tier in (a,b)', ['l1', 'l2']],
    ['tier notin (a)', ['l2', 'l3']],
    ['tier', ['l1', 'l2']],
    ['!tier', ['l3']],
    ['tier=a,zone=z1', ['l1']],
  ];
  let names: Record<string, string>;

  beforeAll(async () => {
    names = { l1: `${t.prefix}l1`, l2: `${t.prefix}l2`, l3: `${t.prefix}l3` };
    await createNode(names.l1, { labels: { tier: 'a', zone: 'z1', suite: t.prefix.slice(0, -1) } });
    await createNode(names.l2, { labels: { tier: 'b', suite: t.prefix.slice(0, -1) } });
    await createNode(names.l3, { labels: { suite: t.prefix.slice(0, -1) } });
  });

  it.each(labelCases)('labelSelector %s', async (selector, expected) => {
    const list = await core.listNode({ labelSelector: `suite=${t.prefix.slice(0, -1)},${selector}` });
    expect(list.items.map((n) => n.metadata?.name)).toEqual(expected.map((k) => names[k]));
  });

  it('fieldSelector metadata.name, and 400 on an unsupported field or a bad selector', async () => {
    const list = await core.listNode({ fieldSelector: `metadata.name=${names.l2}` });
    expect(list.items.map((n) => n.metadata?.name)).toEqual([names.l2]);
    await expectStatus(core.listNode({ fieldSelector: 'spec.nope=1' }), 400, 'BadRequest');
    await expectStatus(core.listNode({ labelSelector: 'a in (b' }), 400, 'BadRequest');
  });

  it('pages with limit/continue from one consistent snapshot', async () => {
    const first = await core.listNode({ labelSelector: `suite=${t.prefix.slice(0, -1)}`, limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.metadata?._continue).toBeTruthy();
    await createNode(`${t.prefix}l0-late`, { labels: { suite: t.prefix.slice(0, -1) } });
    const second = await core.listNode({ labelSelector: `suite=${t.prefix.slice(0, -1)}`, limit: 2, _continue: first.metadata?._continue });
    expect(second.items.map((n) => n.metadata?.name)).toEqual([names.l3]);
    expect(second.metadata?._continue).toBeFalsy();
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
  });
});

describe('watch', () => {
  it('streams ADDED, MODIFIED, DELETED from a resourceVersion, with bookmarks when asked', async () => {
    const list = await core.listNode();
    const w = await collectWatch(t.kc, '/api/v1/nodes', { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true, labelSelector: `watch=${t.prefix.slice(0, -1)}` });
    const name = `${t.prefix}w1`;
    await createNode(name, { labels: { watch: t.prefix.slice(0, -1) } });
    await core.patchNode({ name, body: { metadata: { annotations: { step: '2' } } } }, merge);
    await core.deleteNode({ name });
    await w.waitFor((es) => es.some((e) => e.type === 'DELETED'));
    const changes = w.events.filter((e) => e.type !== 'BOOKMARK');
    expect(changes.map((e) => [e.type, e.object.metadata?.name])).toEqual([
      ['ADDED', name],
      ['MODIFIED', name],
      ['DELETED', name],
    ]);
    // Each event's object carries the resourceVersion of that write, in increasing order.
    const rvs = changes.map((e) => BigInt(e.object.metadata?.resourceVersion as string));
    expect([...rvs].sort((a, b) => (a < b ? -1 : 1))).toEqual(rvs);
    if (!REAL) {
      const bm = await w.waitFor((es) => es.some((e) => e.type === 'BOOKMARK'));
      const bookmark = bm.find((e) => e.type === 'BOOKMARK');
      // An empty Node as Go encodes one (its spec and status structs), as kube-apiserver sends it.
      expect(bookmark?.object).toMatchObject({ kind: 'Node', apiVersion: 'v1', metadata: { resourceVersion: expect.stringMatching(/^\d+$/) } });
    }
    w.stop();
  });

  it('sends objects entering and leaving a label selector as ADDED and DELETED', async () => {
    const name = `${t.prefix}w2`;
    const n = await createNode(name);
    const sel = `moving=${t.prefix.slice(0, -1)}`;
    const w = await collectWatch(t.kc, '/api/v1/nodes', { resourceVersion: n.metadata?.resourceVersion, labelSelector: sel });
    await core.patchNode({ name, body: { metadata: { labels: { moving: t.prefix.slice(0, -1) } } } }, merge);
    await core.patchNode({ name, body: { metadata: { labels: { moving: null } } } }, merge);
    const es = await w.waitFor((x) => x.length >= 2);
    expect(es.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    w.stop();
  });

  it('without a resourceVersion starts with the current objects as ADDED; timeoutSeconds ends the stream', async () => {
    const name = `${t.prefix}w3`;
    await createNode(name);
    const w = await collectWatch(t.kc, '/api/v1/nodes', { fieldSelector: `metadata.name=${name}`, timeoutSeconds: 1 });
    await w.waitFor((es) => es.length === 1);
    expect(w.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name } } });
    await expect(Promise.race([w.ended, new Promise((r) => setTimeout(() => r('still open'), 5000))])).resolves.not.toBe('still open');
  });

  it.runIf(!REAL)('answers a resourceVersion older than the history with an ERROR 410 Expired event, then closes', async () => {
    const before = (await core.listNode()).metadata?.resourceVersion;
    await createNode(`${t.prefix}w4`);
    t.double?.compactHistory();
    const w = await collectWatch(t.kc, '/api/v1/nodes', { resourceVersion: before });
    await w.ended;
    expect(w.events).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) }]);
  });

  it.runIf(!REAL)('informer: lists, watches, and relists after 410', async () => {
    const sel = `inf=${t.prefix.slice(0, -1)}`;
    const informer = makeInformer(t.kc, '/api/v1/nodes', () => core.listNode({ labelSelector: sel }), sel);
    const seen = new Map<string, string>();
    informer.on('add', (o) => seen.set(o.metadata?.name as string, 'add'));
    informer.on('update', (o) => seen.set(o.metadata?.name as string, `update:${o.metadata?.labels?.step ?? ''}`));
    informer.on('delete', (o) => seen.set(o.metadata?.name as string, 'delete'));
    await createNode(`${t.prefix}i1`, { labels: { inf: t.prefix.slice(0, -1) } });
    await informer.start();
    await eventually(() => expect(seen.get(`${t.prefix}i1`)).toBe('add'));
    await createNode(`${t.prefix}i2`, { labels: { inf: t.prefix.slice(0, -1) } });
    await eventually(() => expect(seen.get(`${t.prefix}i2`)).toBe('add'));
    const lists = t.double?.count({ verb: 'list', resource: 'nodes' }) ?? 0;
    // History lost while the watch is down: the resume gets 410 and the informer relists.
    t.double?.pauseWatches();
    await core.patchNode({ name: `${t.prefix}i1`, body: { metadata: { labels: { step: 'missed' } } } }, merge);
    await core.deleteNode({ name: `${t.prefix}i2` });
    t.double?.compactHistory();
    t.double?.closeWatches();
    t.double?.resumeWatches();
    await eventually(() => expect([seen.get(`${t.prefix}i1`), seen.get(`${t.prefix}i2`)]).toEqual(['update:missed', 'delete']));
    expect(t.double?.count({ verb: 'list', resource: 'nodes' })).toBeGreaterThan(lists);
    await informer.stop();
  });
});

describe('collections', () => {
  it('deletes a collection by label selector and refuses writes on the all-namespaces path', async () => {
    const sel = `batch=${t.prefix.slice(0, -1)}`;
    for (const n of ['c1', 'c2']) {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `${t.prefix}${n}`, labels: { batch: t.prefix.slice(0, -1) } } } });
      t.track(`/api/v1/namespaces/default/configmaps/${t.prefix}${n}`);
    }
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `${t.prefix}c3` } } });
    t.track(`/api/v1/namespaces/default/configmaps/${t.prefix}c3`);
    await core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: sel });
    const left = await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(left.items.map((c) => c.metadata?.name).filter((n) => /-c\d$/.test(n ?? '') && n?.startsWith(t.prefix))).toEqual([`${t.prefix}c3`]);
    const post = await rawRequest(t.kc, 'POST', '/api/v1/configmaps', JSON.stringify({ metadata: { name: `${t.prefix}c4`, namespace: 'default' } }));
    expect(post.status).toBe(405);
  });
});

describe('events, leases, servicecidrs', () => {
  it('core/v1 and events.k8s.io/v1 events: create, list by involved object', async () => {
    const node = `${t.prefix}ev`;
    const ev = await core.createNamespacedEvent({
      namespace: 'default',
      body: { metadata: { generateName: `${t.prefix}ev.` }, involvedObject: { kind: 'Node', name: node }, reason: 'Synced', message: 'hello', type: 'Normal', source: { component: 'e2e' } },
    });
    t.track(`/api/v1/namespaces/default/events/${ev.metadata?.name}`);
    expect(ev.metadata?.name).toMatch(new RegExp(`^${t.prefix}ev\\.[a-z0-9]{5}$`));
    const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${node}` });
    expect(list.items.map((e) => e.reason)).toEqual(['Synced']);
    const ev2 = await t.kc.makeApiClient(EventsV1Api).createNamespacedEvent({
      namespace: 'default',
      body: { metadata: { name: `${t.prefix}ev2` }, eventTime: new Date(), reportingController: 'e2e.node-address-ccm.io/test', reportingInstance: 'x', action: 'Sync', reason: 'Synced', regarding: { kind: 'Node', name: node }, type: 'Normal' },
    });
    t.track(`/apis/events.k8s.io/v1/namespaces/default/events/${ev2.metadata?.name}`);
    expect(ev2.metadata?.uid).toBeTruthy();
    // One storage, two versions: each event is readable through the other API with its fields renamed.
    const asV1 = await t.kc.makeApiClient(EventsV1Api).readNamespacedEvent({ namespace: 'default', name: ev.metadata?.name as string });
    expect([asV1.note, asV1.regarding?.name, asV1.metadata?.uid]).toEqual(['hello', node, ev.metadata?.uid]);
    const asCore = await core.readNamespacedEvent({ namespace: 'default', name: `${t.prefix}ev2` });
    expect([asCore.involvedObject.name, asCore.reportingComponent, asCore.metadata?.resourceVersion]).toEqual([node, 'e2e.node-address-ccm.io/test', ev2.metadata?.resourceVersion]);
  });

  it('leases: create, optimistic update, stale update conflicts', async () => {
    const api = t.kc.makeApiClient(CoordinationV1Api);
    const name = `${t.prefix}lease`;
    const l = await api.createNamespacedLease({ namespace: 'kube-system', body: { metadata: { name }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: new Date() } } });
    t.track(`/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${name}`);
    const renewed = await api.replaceNamespacedLease({ namespace: 'kube-system', name, body: { ...l, spec: { ...l.spec, renewTime: new Date(Date.now() + 2000) } } });
    expect(renewed.metadata?.resourceVersion).not.toBe(l.metadata?.resourceVersion);
    await expectStatus(api.replaceNamespacedLease({ namespace: 'kube-system', name, body: { ...l, spec: { ...l.spec, holderIdentity: 'b' } } }), 409, 'Conflict');
    expect((await api.readNamespacedLease({ namespace: 'kube-system', name })).spec?.holderIdentity).toBe('a');
    await expectStatus(api.createNamespacedLease({ namespace: 'kube-system', body: { metadata: { name: `${t.prefix}bad-lease` }, spec: { leaseDurationSeconds: 0 } } }), 422, 'Invalid');
  });

  it.runIf(!REAL)('servicecidrs with a status subresource', async () => {
    const api = t.kc.makeApiClient(NetworkingV1Api);
    const name = `${t.prefix}svc`;
    const s = await api.createServiceCIDR({ body: { metadata: { name }, spec: { cidrs: ['10.96.0.0/16', 'fd00:96::/112'] }, status: { conditions: [] } } });
    // Status is dropped on create: the empty struct is left, as kube-apiserver writes it.
    expect(s.status).toEqual({});
    const ready = await api.patchServiceCIDRStatus(
      { name, body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: '', message: '', lastTransitionTime: new Date() }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(ready.status?.conditions?.map((c) => c.type)).toEqual(['Ready']);
    expect((await api.listServiceCIDR()).items.map((x) => x.metadata?.name)).toContain(name);
  });
});
