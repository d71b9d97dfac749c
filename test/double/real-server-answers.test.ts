// What the probe against kube-apiserver 1.35.4 (test/realserver/double-vs-real.test.ts) found the
// double answering differently, and the double now answers as kube-apiserver does. Each expected
// body here is the one the real server sent to the same request (the probe step is named).
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeConfigFor, type ApiServerDouble } from '../../src/double/index.js';
import { startDouble } from '../kit/double.js';
import { rawRequest } from './target.js';

const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const FOREIGN = '00000000-0000-4000-8000-000000000000';
const CC = '/apis/networking.x-k8s.io/v1/clustercidrs';

let s: ApiServerDouble;
let kc: KubeConfig;
const req = async (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: Record<string, unknown>; text: string; headers: Headers }> => {
  const r = await rawRequest(kc, method, path, body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body), contentType);
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(r.body) as Record<string, unknown>;
  } catch {
    // a plain-text answer
  }
  return { status: r.status, body: parsed, text: r.body, headers: r.headers };
};
const node = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { probe: 'yes' } }, ...extra });
const uidOf = async (path: string): Promise<string> => ((await req('GET', path)).body.metadata as { uid: string }).uid;

beforeAll(async () => {
  s = await startDouble();
  kc = kubeConfigFor(s);
});
afterAll(() => s.stop());

describe('metadata.uid in a write (node.merge-uid-*, node.update-uid-foreign, node.json-test-*)', () => {
  it('a merge or strategic patch naming another uid is 422 Invalid, the cause listed twice, and changes nothing', async () => {
    await req('POST', '/api/v1/nodes', node('uid-a'));
    const uid = await uidOf('/api/v1/nodes/uid-a');
    for (const [type, path] of [[MERGE, ''], [STRATEGIC, ''], [MERGE, '/status']] as const) {
      const r = await req('PATCH', `/api/v1/nodes/uid-a${path}`, { metadata: { uid: FOREIGN, labels: { x: 'y' } } }, type);
      const cause = { reason: 'FieldValueInvalid', message: `Invalid value: "${FOREIGN}": field is immutable`, field: 'metadata.uid' };
      expect([r.status, r.body]).toEqual([422, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Node "uid-a" is invalid: metadata.uid: Invalid value: "${FOREIGN}": field is immutable`, reason: 'Invalid', details: { name: 'uid-a', kind: 'Node', causes: [cause, cause] }, code: 422 }]);
    }
    expect((await uidOf('/api/v1/nodes/uid-a'))).toBe(uid);
    expect(s.store.get('nodes', 'uid-a').metadata?.labels).toEqual({ probe: 'yes' });
    const same = await req('PATCH', '/api/v1/nodes/uid-a', { metadata: { uid, labels: { x: 'y' } } }, MERGE);
    expect([same.status, (same.body.metadata as { labels: object }).labels]).toEqual([200, { probe: 'yes', x: 'y' }]);
  });

  it('a stale resourceVersion is a 409 Conflict before the uid is looked at', async () => {
    const created = await req('POST', '/api/v1/nodes', node('uid-b'));
    await req('PATCH', '/api/v1/nodes/uid-b', { metadata: { labels: { bump: '1' } } }, MERGE);
    const stale = (created.body.metadata as { resourceVersion: string }).resourceVersion;
    const r = await req('PATCH', '/api/v1/nodes/uid-b', { metadata: { uid: FOREIGN, resourceVersion: stale } }, MERGE);
    expect([r.status, r.body.reason, r.body.details]).toEqual([409, 'Conflict', { name: 'uid-b', kind: 'nodes' }]);
  });

  it('a PUT naming another uid fails its storage precondition: 409 Conflict', async () => {
    await req('POST', '/api/v1/nodes', node('uid-c'));
    const uid = await uidOf('/api/v1/nodes/uid-c');
    const r = await req('PUT', '/api/v1/nodes/uid-c', node('uid-c', { metadata: { name: 'uid-c', uid: FOREIGN } }));
    expect([r.status, r.body.message, r.body.details]).toEqual([
      409,
      `Operation cannot be fulfilled on nodes "uid-c": StorageError: invalid object, Code: 4, Key: /registry/minions/uid-c, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${FOREIGN}, UID in object meta: ${uid}`,
      { name: 'uid-c', kind: 'nodes' },
    ]);
  });

  it('a JSON patch whose test fails, or whose path is missing, or whose op is unknown, is a bare 422', async () => {
    await req('POST', '/api/v1/nodes', node('uid-d'));
    const bare = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server rejected our request due to an error in our request', reason: 'Invalid', details: {}, code: 422 };
    for (const ops of [
      [{ op: 'test', path: '/metadata/uid', value: FOREIGN }, { op: 'add', path: '/metadata/labels/j', value: 'x' }],
      [{ op: 'test', path: '/metadata/resourceVersion', value: '1' }],
      [{ op: 'remove', path: '/metadata/labels/absent' }],
      [{ op: 'frobnicate', path: '/metadata/labels/x' }],
    ]) {
      const r = await req('PATCH', '/api/v1/nodes/uid-d', ops, JSON_PATCH);
      expect([r.status, r.body]).toEqual([422, bare]);
    }
  });

  it('a custom resource: the same 422 for a foreign uid', async () => {
    await req('POST', CC, { apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name: 'uid-cc' }, spec: { perNodeHostBits: 8, ipv4: '10.250.0.0/16' } });
    const r = await req('PATCH', `${CC}/uid-cc`, { metadata: { uid: FOREIGN } }, MERGE);
    expect([r.status, r.body.message, (r.body.details as { causes: unknown[] }).causes.length]).toEqual([422, `ClusterCIDR.networking.x-k8s.io "uid-cc" is invalid: metadata.uid: Invalid value: "${FOREIGN}": field is immutable`, 2]);
  });
});

describe('Nodes', () => {
  it('podCIDR wins over a podCIDRs that disagrees with it (node.strategic-podcidrs-add)', async () => {
    await req('POST', '/api/v1/nodes', node('cidr-a'));
    await req('PATCH', '/api/v1/nodes/cidr-a', { spec: { podCIDRs: ['10.244.2.0/24'] } }, STRATEGIC);
    const added = await req('PATCH', '/api/v1/nodes/cidr-a', { spec: { podCIDRs: ['fd00:10:244:2::/64'] } }, STRATEGIC);
    expect([added.status, (added.body.spec as object)]).toEqual([200, { podCIDR: '10.244.2.0/24', podCIDRs: ['10.244.2.0/24'] }]);
    const both = await req('PATCH', '/api/v1/nodes/cidr-a', { spec: { podCIDRs: ['10.244.2.0/24', 'fd00:10:244:2::/64'] } }, STRATEGIC);
    expect([both.status, both.body.message]).toEqual([422, 'Node "cidr-a" is invalid: spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid']);
  });

  it('are written as Go encodes them: zero-valued structs present, allocatable from capacity, empty omitempty fields gone (node.create-generate-name)', async () => {
    const r = await req('POST', '/api/v1/nodes', { metadata: { name: 'shape-a' }, spec: { taints: [], unschedulable: false }, status: { capacity: { cpu: '2' } } });
    expect(r.body.spec).toEqual({});
    expect(r.body.status).toEqual({
      capacity: { cpu: '2' },
      allocatable: { cpu: '2' },
      daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
      nodeInfo: { machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: '', containerRuntimeVersion: '', kubeletVersion: '', kubeProxyVersion: '', operatingSystem: '', architecture: '' },
    });
    const cleared = await req('PATCH', '/api/v1/nodes/shape-a', { spec: { taints: [{ key: 'a', effect: 'NoSchedule' }] } }, MERGE);
    expect(cleared.body.spec).toEqual({ taints: [{ key: 'a', effect: 'NoSchedule' }] });
    const removed = await req('PATCH', '/api/v1/nodes/shape-a', [{ op: 'remove', path: '/spec/taints/0' }], JSON_PATCH);
    expect(removed.body.spec).toEqual({});
  });

  it('taint errors are reported under metadata.taints, twice on an update (node.merge-taint-*)', async () => {
    await req('POST', '/api/v1/nodes', node('taint-a'));
    const dup = await req('PATCH', '/api/v1/nodes/taint-a', { spec: { taints: [{ key: 'a', effect: 'NoSchedule' }, { key: 'a', value: 'y', effect: 'NoSchedule' }] } }, MERGE);
    const detail = 'Duplicate value: {"Key":"a","Value":"y","Effect":"NoSchedule","TimeAdded":null}: taints must be unique by key and effect pair';
    expect([dup.status, dup.body.message, dup.body.details]).toEqual([422, `Node "taint-a" is invalid: metadata.taints[1]: ${detail}`, { name: 'taint-a', kind: 'Node', causes: [0, 1].map(() => ({ reason: 'FieldValueDuplicate', message: detail, field: 'metadata.taints[1]' })) }]);
  });

  it('names and labels are refused with apimachinery\'s messages (node.create-invalid-*)', async () => {
    const name = await req('POST', '/api/v1/nodes', { metadata: { name: 'Probe_Bad' } });
    expect(name.body.message).toBe(`Node "Probe_Bad" is invalid: metadata.name: Invalid value: "Probe_Bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`);
    const label = await req('POST', '/api/v1/nodes', { metadata: { name: 'probe-bad-label', labels: { 'bad key!': 'x' } } });
    expect(label.body.message).toBe(`Node "probe-bad-label" is invalid: metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`);
  });
});

describe('lists and watches', () => {
  it('list items of built-in kinds carry no apiVersion and kind; a custom resource\'s do (node.list-label, clustercidr.list)', async () => {
    await req('POST', '/api/v1/nodes', node('list-a'));
    const nodes = await req('GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dlist-a');
    expect(nodes.body.items).toEqual([expect.not.objectContaining({ kind: expect.anything() })]);
    expect((nodes.body.items as object[])[0]).not.toHaveProperty('apiVersion');
    await req('POST', CC, { apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name: 'list-cc' }, spec: { perNodeHostBits: 8, ipv4: '10.251.0.0/16' } });
    const ccs = await req('GET', `${CC}?fieldSelector=metadata.name%3Dlist-cc`);
    expect(ccs.body.items).toEqual([expect.objectContaining({ kind: 'ClusterCIDR', apiVersion: 'networking.x-k8s.io/v1' })]);
    expect(ccs.body.metadata).toEqual({ resourceVersion: expect.any(String), continue: '' });
  });

  it('an object leaving a watch\'s selection is DELETED in its last matching state, at the new resourceVersion (node.watch-from-rv)', async () => {
    const created = await req('POST', '/api/v1/nodes', node('leave-a'));
    const rv = (created.body.metadata as { resourceVersion: string }).resourceVersion;
    const moved = await req('PATCH', '/api/v1/nodes/leave-a', { metadata: { labels: { probe: 'no' } } }, MERGE);
    const stream = await rawRequest(kc, 'GET', `/api/v1/nodes?watch=true&labelSelector=probe%3Dyes&resourceVersion=${rv}&timeoutSeconds=1`);
    const events = stream.body.trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string; resourceVersion: string; labels: object } } });
    const gone = events.find((e) => e.type === 'DELETED' && e.object.metadata.name === 'leave-a');
    expect(gone?.object.metadata).toMatchObject({ resourceVersion: (moved.body.metadata as { resourceVersion: string }).resourceVersion, labels: { probe: 'yes' } });
  });

  it('checks the watch options as upstream does (node.watch-send-initial-events-without-*)', async () => {
    const noMatch = await req('GET', '/api/v1/nodes?watch=true&sendInitialEvents=true&allowWatchBookmarks=true');
    expect([noMatch.status, noMatch.body.message]).toEqual([422, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan']);
    const noSend = await req('GET', '/api/v1/nodes?watch=true&resourceVersionMatch=NotOlderThan');
    expect([noSend.status, noSend.body.message]).toEqual([422, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided']);
    // Without bookmarks: the initial events, and no initial-events-end bookmark.
    await req('POST', '/api/v1/nodes', node('initial-a'));
    const stream = await rawRequest(kc, 'GET', '/api/v1/nodes?watch=true&fieldSelector=metadata.name%3Dinitial-a&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1');
    expect(stream.body.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['ADDED']);
  });

  it('a bookmark is an empty Node as Go encodes one (node.watch-initial-events-end)', async () => {
    const stream = await rawRequest(kc, 'GET', '/api/v1/nodes?watch=true&fieldSelector=metadata.name%3Dnone&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1');
    const bookmark = JSON.parse(stream.body.trim().split('\n')[0]) as { type: string; object: Record<string, unknown> };
    expect(bookmark).toEqual({ type: 'BOOKMARK', object: { kind: 'Node', apiVersion: 'v1', metadata: { resourceVersion: expect.any(String), annotations: { 'k8s.io/initial-events-end': 'true' } }, spec: {}, status: { daemonEndpoints: { kubeletEndpoint: { Port: 0 } }, nodeInfo: expect.objectContaining({ machineID: '' }) } } });
  });

  it('a resourceVersion newer than the store: 504 with its cause (node.list-rv-future)', async () => {
    const r = await req('GET', '/api/v1/nodes?resourceVersion=999999999');
    expect([r.status, r.body.details]).toEqual([504, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 }]);
  });

  it('Tables: object null for includeObject=None, kube-apiserver\'s words for a bad value (node.table-include-*)', async () => {
    const accept = 'application/json;as=Table;g=meta.k8s.io;v=v1';
    const get = async (q: string) => {
      const cluster = kc.getCurrentCluster();
      const res = await fetch(`${cluster?.server}/api/v1/nodes/list-a${q}`, { headers: { Accept: accept, Authorization: `Bearer ${kc.getCurrentUser()?.token}` } });
      return { status: res.status, body: (await res.json()) as { rows?: { object: unknown }[]; message?: string } };
    };
    expect((await get('?includeObject=None')).body.rows?.[0].object).toBeNull();
    const bad = await get('?includeObject=Everything');
    expect([bad.status, bad.body.message]).toEqual([400, `Unable to convert to Table as requested: includeObject: Invalid value: "Everything": must be 'Metadata', 'Object', 'None', or empty`]);
  });
});

describe('error bodies, word for word', () => {
  it('leave out an empty group and name (node.get-missing, node.create-dry-run-bad-value)', async () => {
    const r = await req('GET', '/api/v1/nodes/nowhere');
    expect(r.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'nodes "nowhere" not found', reason: 'NotFound', details: { name: 'nowhere', kind: 'nodes' }, code: 404 });
    const dry = await req('POST', '/api/v1/nodes?dryRun=Some', node('dry-x'));
    expect(dry.body.details).toEqual({ group: 'meta.k8s.io', kind: 'CreateOptions', causes: [expect.objectContaining({ field: 'dryRun' })] });
  });

  it('a path no group serves is a plain-text 404; an unknown resource of a served group a Status with empty details (misc.unknown-*)', async () => {
    const group = await req('GET', '/apis/example.com/v1/things');
    expect([group.status, group.text, group.headers.get('content-type')]).toEqual([404, '404 page not found\n', 'text/plain; charset=utf-8']);
    const resource = await req('GET', '/api/v1/frobs');
    expect([resource.status, resource.body.message, resource.body.details]).toEqual([404, 'the server could not find the requested resource', {}]);
  });

  it('403 names the resource without its subresource as the subject (auth.patch-status-forbidden)', async () => {
    const guarded = await startDouble({ rbac: { roles: [], bindings: [] }, users: [{ name: 'nobody', token: 'nobody-token' }] });
    try {
      const r = await fetch(`${guarded.url}/api/v1/nodes/x/status`, { method: 'PATCH', headers: { Authorization: 'Bearer nobody-token', 'Content-Type': MERGE }, body: '{}' });
      expect(((await r.json()) as { message: string }).message).toBe('nodes "x" is forbidden: User "nobody" cannot patch resource "nodes/status" in API group "" at the cluster scope');
    } finally {
      await guarded.stop();
    }
  });

  it('patch bodies that do not decode, and patch types a kind does not take (node.*-malformed, node.patch-unsupported-type, clustercidr.strategic-refused)', async () => {
    await req('POST', '/api/v1/nodes', node('decode-a'));
    const cases: [string, string, number, string][] = [
      [MERGE, '{"metadata":', 400, 'error decoding patch: unexpected end of JSON input'],
      [MERGE, '[{}]', 400, 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}'],
      [JSON_PATCH, '[{"op":', 400, 'error decoding patch: unexpected end of JSON input'],
      [JSON_PATCH, '{"op":"add"}', 400, 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp'],
      [STRATEGIC, '[1,2', 400, 'unexpected end of JSON input'],
      [STRATEGIC, '{"spec":{"$patch":"explode"}}', 500, 'unknown patch type: explode in map: map[$patch:explode]'],
      ['text/plain', '{}', 415, '415: Unsupported Media Type'],
    ];
    for (const [type, body, code, message] of cases) {
      const r = await req('PATCH', '/api/v1/nodes/decode-a', body, type);
      expect([type, body, r.status, r.body.message]).toEqual([type, body, code, message]);
    }
    const bad = await req('POST', '/api/v1/nodes', '{"metadata": ');
    expect(bad.body.message).toBe('the object provided is unrecognized (must be of type Node): couldn\'t get version/kind; json parse error: unexpected end of JSON input ({"metadata": )');
    await req('POST', CC, { apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name: 'decode-cc' }, spec: { perNodeHostBits: 8, ipv4: '10.252.0.0/16' } });
    const smp = await req('PATCH', `${CC}/decode-cc`, { metadata: { labels: { a: 'b' } } }, STRATEGIC);
    expect([smp.status, smp.body.message, smp.body.details]).toEqual([415, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml', undefined]);
  });

  it('create with a resourceVersion: 500 without a reason (node.create-with-resourceversion)', async () => {
    const r = await req('POST', '/api/v1/nodes', { metadata: { name: 'rv-a', resourceVersion: '12' } });
    expect(r.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'resourceVersion should not be set on objects to be created', code: 500 });
  });

  it('delete preconditions name the kind (node.delete-uid-foreign, node.delete-rv-stale)', async () => {
    await req('POST', '/api/v1/nodes', node('pre-a'));
    const uid = await uidOf('/api/v1/nodes/pre-a');
    const r = await req('DELETE', '/api/v1/nodes/pre-a', { preconditions: { uid: FOREIGN } });
    expect([r.status, r.body.message, r.body.details]).toEqual([409, `Operation cannot be fulfilled on Node "pre-a": the UID in the precondition (${FOREIGN}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`, { name: 'pre-a', kind: 'Node' }]);
    const rv = await req('DELETE', '/api/v1/nodes/pre-a', { preconditions: { resourceVersion: '1' } });
    expect(rv.body.message).toMatch(/^Operation cannot be fulfilled on Node "pre-a": the ResourceVersion in the precondition \(1\) does not match the ResourceVersion in record \(\d+\)\. The object might have been modified$/);
  });

  it('a custom resource: kind required, unconditional update refused against the resource, new finalizers while deleting refused twice, CEL skipped after a schema error (clustercidr.*)', async () => {
    const noKind = await req('POST', CC, { metadata: { name: 'cc-nokind' }, spec: { perNodeHostBits: 8, ipv4: '10.253.0.0/16' } });
    expect([noKind.status, noKind.body.message]).toEqual([400, 'the object provided is unrecognized (must be of type ClusterCIDR): Object \'Kind\' is missing in \'{"metadata":{"name":"cc-nokind"},"spec":{"perNodeHostBits":8,"ipv4":"10.253.0.0/16"}}\' ({"metadata":{"name":"cc-nokind ...)']);
    const noSpec = await req('POST', CC, { apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name: 'cc-nospec' } });
    expect(noSpec.body.message).toBe('ClusterCIDR.networking.x-k8s.io "cc-nospec" is invalid: [spec: Required value, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]');
    const body = { apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name: 'cc-fin', finalizers: ['example.com/a'] }, spec: { perNodeHostBits: 8, ipv4: '10.254.0.0/16' } };
    await req('POST', CC, body);
    const put = await req('PUT', `${CC}/cc-fin`, body);
    expect([put.status, put.body.message, (put.body.details as { kind: string }).kind]).toEqual([422, 'clustercidrs.networking.x-k8s.io "cc-fin" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update', 'clustercidrs']);
    const dry = await req('DELETE', `${CC}/cc-fin?dryRun=All`);
    expect((dry.body.metadata as { generation: number }).generation).toBe(2);
    await req('DELETE', `${CC}/cc-fin`);
    const late = await req('PATCH', `${CC}/cc-fin`, [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/late' }], JSON_PATCH);
    const detail = 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/late"}';
    expect([late.status, late.body.message, (late.body.details as { causes: { message: string }[] }).causes.map((c) => c.message)]).toEqual([422, `ClusterCIDR.networking.x-k8s.io "cc-fin" is invalid: metadata.finalizers: ${detail}`, [detail, detail]]);
  });

  it('an eviction naming another pod (pod.evict-name-mismatch)', async () => {
    await req('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'ev-a' }, spec: { containers: [{ name: 'c', image: 'i' }] } });
    const r = await req('POST', '/api/v1/namespaces/default/pods/ev-a/eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'other', namespace: 'default' } });
    expect([r.status, r.body.message]).toEqual([400, 'name in URL does not match name in Eviction object']);
  });
});

describe('Events, ServiceCIDRs and Pods', () => {
  it('an Event about a Node lives in "default"; Events are written as Go encodes them (event.create*)', async () => {
    await req('POST', '/api/v1/namespaces', { metadata: { name: 'elsewhere' } });
    const event = { metadata: { name: 'n.1' }, involvedObject: { kind: 'Node', name: 'n' }, reason: 'Synced', message: 'm', type: 'Normal', count: 1 };
    const wrong = await req('POST', '/api/v1/namespaces/elsewhere/events', event);
    expect([wrong.status, wrong.body.message]).toEqual([422, 'Event "n.1" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace']);
    const ok = await req('POST', '/api/v1/namespaces/default/events', event);
    expect(ok.body).toMatchObject({ eventTime: null, firstTimestamp: null, lastTimestamp: null, source: {}, reportingComponent: '', reportingInstance: '' });
    const v1 = await req('GET', '/apis/events.k8s.io/v1/namespaces/default/events/n.1');
    expect(v1.body).toMatchObject({ eventTime: null, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null, deprecatedSource: {} });
    expect(v1.body).not.toHaveProperty('reportingInstance');
  });

  it('ServiceCIDR cidrs are immutable, except that a single-stack range may gain its other family (servicecidr.*)', async () => {
    const base = '/apis/networking.k8s.io/v1/servicecidrs';
    const three = await req('POST', base, { metadata: { name: 'sc-three' }, spec: { cidrs: ['10.98.0.0/24', '10.99.0.0/24', 'fd00:99::/112'] } });
    expect(three.body.message).toBe('ServiceCIDR.networking.k8s.io "sc-three" is invalid: spec.cidrs: Invalid value: {"CIDRs":["10.98.0.0/24","10.99.0.0/24","fd00:99::/112"]}: may only hold up to 2 values');
    const created = await req('POST', base, { metadata: { name: 'sc-a' }, spec: { cidrs: ['10.97.0.0/24'] } });
    expect(created.body.status).toEqual({});
    const changed = await req('PATCH', `${base}/sc-a`, { spec: { cidrs: ['10.97.1.0/24'] } }, MERGE);
    expect([changed.status, changed.body.message]).toEqual([422, 'ServiceCIDR.networking.k8s.io "sc-a" is invalid: spec.cidrs[0]: Invalid value: "10.97.1.0/24": field is immutable']);
    const dual = await req('PATCH', `${base}/sc-a`, { spec: { cidrs: ['10.97.0.0/24', 'fd00:97::/112'] } }, MERGE);
    expect(dual.status).toBe(200);
  });

  it('a pod has a generation, and a pod deleted at once is answered marked for deletion (pod.create, pod.delete-grace-0)', async () => {
    const created = await req('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'gen-a' }, spec: { containers: [{ name: 'c', image: 'i' }] } });
    expect((created.body.metadata as { generation: number }).generation).toBe(1);
    const gone = await req('DELETE', '/api/v1/namespaces/default/pods/gen-a', { gracePeriodSeconds: 0 });
    expect(gone.body.metadata).toMatchObject({ generation: 2, deletionGracePeriodSeconds: 0, deletionTimestamp: expect.any(String) });
    expect(s.store.peek('pods', 'gen-a', 'default')).toBeUndefined();
  });
});
