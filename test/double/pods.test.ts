// Pods in the double: the columns of kubectl get pods derived from a pod's status, what a write
// defaults and refuses, the field selectors kubectl describe node and drain send, and the
// eviction subresource over HTTP (with dry runs, preconditions, RBAC and discovery).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { kubeConfigFor, parseRbacYaml, startApiServerDouble, Store, type ApiServerDouble, type KObject } from '../../src/double/index.js';
import { podSummary, tableSpecOf, buildTable } from '../../src/double/table.js';
import { qosClassOf, quantityValue } from '../../src/double/pods.js';
import { collectWatch, expectStatus, rawRequest } from './target.js';

const S = 1000;
const M = 60 * S;
const NOW = new Date('2026-06-01T12:00:00Z');
const ago = (ms: number): string => new Date(NOW.getTime() - ms).toISOString().replace(/\.\d+Z$/, 'Z');

const running = { running: { startedAt: ago(M) } };
const crashed = (finishedMsAgo: number) => ({ terminated: { exitCode: 1, reason: 'Error', finishedAt: ago(finishedMsAgo) } });
const cs = (name: string, extra: object = {}) => ({ name, ready: false, restartCount: 0, image: 'i', imageID: '', ...extra });

function pod(spec: object, status: object, meta: object = {}): KObject {
  return { metadata: { name: 'p', creationTimestamp: ago(5 * M), ...meta }, spec: { containers: [{ name: 'a', image: 'i' }], ...spec }, status };
}

describe('kubectl get pods columns (READY, STATUS, RESTARTS)', () => {
  const two = { containers: [{ name: 'a', image: 'i' }, { name: 'b', image: 'i' }] };
  const inits = { initContainers: [{ name: 'i1', image: 'i' }, { name: 'i2', image: 'i' }] };
  it.each<[string, KObject, [string, string, string]]>([
    ['just created: Pending, nothing ready', pod({}, { phase: 'Pending' }), ['0/1', 'Pending', '0']],
    ['no status at all', pod({}, {}), ['0/1', '', '0']],
    ['running and ready', pod({}, { phase: 'Running', containerStatuses: [cs('a', { ready: true, state: running })] }), ['1/1', 'Running', '0']],
    ['image being pulled', pod({}, { phase: 'Pending', containerStatuses: [cs('a', { state: { waiting: { reason: 'ContainerCreating' } } })] }), ['0/1', 'ContainerCreating', '0']],
    ['crash looping, restarts with the age of the last', pod({}, { phase: 'Running', containerStatuses: [cs('a', { restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: crashed(2 * M) })] }), ['0/1', 'CrashLoopBackOff', '5 (2m ago)']],
    ['restarts without a finish time: a bare count', pod({}, { phase: 'Running', containerStatuses: [cs('a', { ready: true, restartCount: 3, state: running })] }), ['1/1', 'Running', '3']],
    ['the first container\'s state wins', pod(two, { phase: 'Running', containerStatuses: [cs('a', { state: { waiting: { reason: 'ErrImagePull' } } }), cs('b', { state: { waiting: { reason: 'ContainerCreating' } } })] }), ['0/2', 'ErrImagePull', '0']],
    ['ended without a reason: the exit code', pod({}, { phase: 'Failed', containerStatuses: [cs('a', { state: { terminated: { exitCode: 3 } } })] }), ['0/1', 'ExitCode:3', '0']],
    ['killed by a signal', pod({}, { phase: 'Failed', containerStatuses: [cs('a', { state: { terminated: { exitCode: 137, signal: 9 } } })] }), ['0/1', 'Signal:9', '0']],
    ['completed', pod({}, { phase: 'Succeeded', containerStatuses: [cs('a', { state: { terminated: { exitCode: 0, reason: 'Completed' } } })] }), ['0/1', 'Completed', '0']],
    ['one completed, one still running and the pod Ready', pod(two, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [cs('a', { state: { terminated: { exitCode: 0, reason: 'Completed' } } }), cs('b', { ready: true, state: running })] }), ['1/2', 'Running', '0']],
    ['one completed, one still running, the pod not Ready', pod(two, { phase: 'Running', containerStatuses: [cs('a', { state: { terminated: { exitCode: 0, reason: 'Completed' } } }), cs('b', { ready: true, state: running })] }), ['1/2', 'NotReady', '0']],
    ['evicted: status.reason', pod({}, { phase: 'Failed', reason: 'Evicted' }), ['0/1', 'Evicted', '0']],
    ['held by scheduling gates', pod({}, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }), ['0/1', 'SchedulingGated', '0']],
    ['first init container running', pod(inits, { phase: 'Pending', initContainerStatuses: [cs('i1', { state: running }), cs('i2', { state: { waiting: { reason: 'PodInitializing' } } })] }), ['0/1', 'Init:0/2', '0']],
    ['second init container pending', pod(inits, { phase: 'Pending', initContainerStatuses: [cs('i1', { state: { terminated: { exitCode: 0, reason: 'Completed' } } }), cs('i2', { state: { waiting: { reason: 'PodInitializing' } } })] }), ['0/1', 'Init:1/2', '0']],
    ['init container crash looping: its restarts count', pod(inits, { phase: 'Pending', initContainerStatuses: [cs('i1', { restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: crashed(30 * S) })] }), ['0/1', 'Init:CrashLoopBackOff', '4 (30s ago)']],
    ['init container failed', pod(inits, { phase: 'Pending', initContainerStatuses: [cs('i1', { state: { terminated: { exitCode: 2, reason: 'Error' } } })] }), ['0/1', 'Init:Error', '0']],
    ['init container failed without a reason', pod(inits, { phase: 'Pending', initContainerStatuses: [cs('i1', { state: { terminated: { exitCode: 2 } } })] }), ['0/1', 'Init:ExitCode:2', '0']],
    ['a started sidecar counts as a container; its restarts carry over', pod({ initContainers: [{ name: 'side', image: 'i', restartPolicy: 'Always' }] }, { phase: 'Running', conditions: [{ type: 'Initialized', status: 'True' }], initContainerStatuses: [cs('side', { ready: true, started: true, restartCount: 1, state: running, lastState: crashed(10 * M) })], containerStatuses: [cs('a', { ready: true, state: running })] }), ['2/2', 'Running', '1 (10m ago)']],
    ['being deleted', pod({}, { phase: 'Running', containerStatuses: [cs('a', { ready: true, state: running })] }, { deletionTimestamp: ago(S) }), ['1/1', 'Terminating', '0']],
    ['being deleted after its node was lost', pod({}, { phase: 'Running', reason: 'NodeLost' }, { deletionTimestamp: ago(S) }), ['0/1', 'Unknown', '0']],
    ['finished pods being deleted keep their status', pod({}, { phase: 'Succeeded' }, { deletionTimestamp: ago(S) }), ['0/1', 'Succeeded', '0']],
  ])('%s', (_name, p, [ready, status, restarts]) => {
    expect(podSummary(p, NOW)).toEqual({ ready, status, restarts });
  });

  it('-o wide: the first pod IP, the node, the nominated node, readiness gates met', () => {
    const spec = tableSpecOf({ group: '', plural: 'pods' });
    expect(spec.columns.map((c) => [c.name, c.priority])).toEqual([['Name', 0], ['Ready', 0], ['Status', 0], ['Restarts', 0], ['Age', 0], ['IP', 1], ['Node', 1], ['Nominated Node', 1], ['Readiness Gates', 1]]);
    expect(spec.cells(pod({}, { phase: 'Pending' }), NOW)).toEqual(['p', '0/1', 'Pending', '0', '5m', '<none>', '<none>', '<none>', '<none>']);
    const full = pod(
      { nodeName: 'n1', readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }] },
      { phase: 'Running', podIP: '10.0.0.9', podIPs: [{ ip: '10.244.1.5' }, { ip: 'fd00::5' }], nominatedNodeName: 'n2', conditions: [{ type: 'example.com/lb', status: 'True' }, { type: 'example.com/dns', status: 'False' }] },
    );
    expect(spec.cells(full, NOW).slice(5)).toEqual(['10.244.1.5', 'n1', 'n2', '1/2']);
    expect(spec.cells(pod({}, { podIP: '10.0.0.9' }), NOW)[5]).toBe('10.0.0.9');
  });

  it('marks the rows of finished pods Completed', () => {
    const table = buildTable({ group: '', plural: 'pods' }, [pod({}, { phase: 'Succeeded' }), pod({}, { phase: 'Failed' }), pod({}, { phase: 'Running' })], {}, { version: 'v1', includeObject: 'None', now: NOW }) as { rows: { conditions?: { type: string; reason: string }[] }[] };
    expect(table.rows.map((r) => r.conditions?.map((c) => `${c.type}/${c.reason}`))).toEqual([['Completed/Succeeded'], ['Completed/Failed'], undefined]);
  });
});

describe('pod writes', () => {
  const store = (): Store => new Store({ namespaces: ['default'] });
  const body = (spec: object = {}, meta: object = {}): object => ({ metadata: { name: 'p', ...meta }, spec: { containers: [{ name: 'a', image: 'nginx' }], ...spec } });

  it('create: status starts Pending with a QoS class; defaults and default admission fill the spec', () => {
    const p = store().create('pods', { ...body({ nodeName: 'n1' }), status: { phase: 'Running' } }, 'default');
    expect(p.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
    expect(p.spec).toMatchObject({
      restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', terminationGracePeriodSeconds: 30, enableServiceLinks: true, securityContext: {},
      serviceAccountName: 'default', serviceAccount: 'default', priority: 0, preemptionPolicy: 'PreemptLowerPriority', nodeName: 'n1',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    });
    expect((p.spec as { containers: object[] }).containers[0]).toEqual({ name: 'a', image: 'nginx', imagePullPolicy: 'Always', resources: {}, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
  });

  it('create: a toleration of everything needs no defaults; scheduling gates gate PodScheduled', () => {
    const p = store().create('pods', body({ tolerations: [{ operator: 'Exists' }], schedulingGates: [{ name: 'g' }] }), 'default');
    expect((p.spec as { tolerations: object[] }).tolerations).toEqual([{ operator: 'Exists' }]);
    expect((p.status as { conditions: object[] }).conditions).toEqual([expect.objectContaining({ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' })]);
  });

  it.each([
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx:1.27', 'IfNotPresent'],
    ['registry.local:5000/nginx', 'Always'],
    ['registry.local:5000/nginx:1.27', 'IfNotPresent'],
    ['nginx@sha256:abc', 'IfNotPresent'],
  ])('image %s is pulled %s', (image, policy) => {
    const p = store().create('pods', body({ containers: [{ name: 'a', image }] }), 'default');
    expect((p.spec as { containers: { imagePullPolicy: string }[] }).containers[0].imagePullPolicy).toBe(policy);
  });

  it.each<[string, object, string]>([
    ['BestEffort', {}, 'BestEffort'],
    ['requests only', { requests: { cpu: '100m' } }, 'Burstable'],
    ['limits only: requests default to them', { limits: { cpu: '1', memory: '1Gi' } }, 'Guaranteed'],
    ['equal in other units', { requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: '1', memory: '1Gi' } }, 'Guaranteed'],
    ['memory limit missing', { limits: { cpu: '1' } }, 'Burstable'],
  ])('QoS class: %s', (_name, resources, qos) => {
    const p = store().create('pods', body({ containers: [{ name: 'a', image: 'i', resources }] }), 'default');
    expect((p.status as { qosClass: string }).qosClass).toBe(qos);
    expect(qosClassOf(p.spec)).toBe(qos);
  });

  it('reads quantities', () => {
    expect([quantityValue('500m'), quantityValue('2'), quantityValue('1Ki'), quantityValue('1e3'), quantityValue('1.5G'), quantityValue('x')]).toEqual([0.5, 2, 1024, 1000, 1.5e9, NaN]);
  });

  it.each<[string, object, string]>([
    ['no containers', { metadata: { name: 'p' }, spec: { containers: [] } }, 'spec.containers: Required value'],
    ['no spec', { metadata: { name: 'p' } }, 'spec.containers: Required value'],
    ['a container without an image', body({ containers: [{ name: 'a' }] }), 'spec.containers[0].image: Required value'],
    ['a container named badly', body({ containers: [{ name: 'A_b', image: 'i' }] }), 'spec.containers[0].name: Invalid value: "A_b"'],
    ['two containers with one name', body({ initContainers: [{ name: 'a', image: 'i' }] }), 'spec.containers[0].name: Duplicate value: "a"'],
    ['an unknown restart policy', body({ restartPolicy: 'Sometimes' }), 'spec.restartPolicy: Unsupported value: "Sometimes"'],
  ])('refuses %s (422)', (_name, obj, message) => {
    expect(() => store().create('pods', obj, 'default')).toThrow(expect.objectContaining({ code: 422, message: expect.stringContaining(message) }));
  });

  it('update: images, added tolerations, removed gates and a lower deadline pass; other spec changes are refused', () => {
    const s = store();
    const p = s.create('pods', body({ schedulingGates: [{ name: 'g' }], activeDeadlineSeconds: 60 }), 'default');
    const spec = p.spec as Record<string, unknown> & { containers: Record<string, unknown>[]; tolerations: object[] };
    const next = { ...p, spec: { ...spec, containers: [{ ...spec.containers[0], image: 'nginx:2' }], tolerations: [...spec.tolerations, { key: 'x', operator: 'Exists' }], schedulingGates: [], activeDeadlineSeconds: 30 } };
    expect((s.update('pods', next).spec as { containers: { image: string }[] }).containers[0].image).toBe('nginx:2');
    const refuse = (change: object, message: string): void => {
      const cur = s.get('pods', 'p', 'default');
      expect(() => s.update('pods', { ...cur, spec: { ...(cur.spec as object), ...change } })).toThrow(expect.objectContaining({ code: 422, message: expect.stringContaining(message) }));
    };
    refuse({ nodeName: 'elsewhere' }, 'spec: Forbidden: a pod update may change only');
    refuse({ tolerations: [] }, 'spec.tolerations: Forbidden');
    refuse({ schedulingGates: [{ name: 'new' }] }, 'spec.schedulingGates: Forbidden');
    refuse({ activeDeadlineSeconds: 90 }, 'spec.activeDeadlineSeconds: Invalid value: 90');
    // Status goes through /status; the spec stays.
    const cur = s.get('pods', 'p', 'default');
    expect(s.update('pods', { ...cur, status: { phase: 'Running' } }, { subresource: 'status' }).status).toEqual({ phase: 'Running' });
  });
});

describe('pod field selectors', () => {
  const s = new Store({ namespaces: ['default', 'kube-system'] });
  const add = (name: string, ns: string, spec: object, status?: object): void => {
    s.create('pods', { metadata: { name, namespace: ns }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } });
    if (status) s.update('pods', { ...s.get('pods', name, ns), status }, { subresource: 'status' });
  };
  add('web-1', 'default', { nodeName: 'n1' }, { phase: 'Running', podIPs: [{ ip: '10.244.1.5' }, { ip: 'fd00::5' }], podIP: '10.244.1.5' });
  add('web-2', 'default', { nodeName: 'n2' }, { phase: 'Running', podIP: '10.244.2.7' });
  add('job-1', 'default', { nodeName: 'n1', restartPolicy: 'Never' }, { phase: 'Succeeded' });
  add('job-2', 'default', { nodeName: 'n1', restartPolicy: 'OnFailure' }, { phase: 'Failed', nominatedNodeName: 'n3' });
  add('agent', 'kube-system', { nodeName: 'n1', hostNetwork: true, serviceAccountName: 'agent', schedulerName: 'custom' }, { phase: 'Running' });
  add('pending', 'default', {});
  const names = (fieldSelector: string): string[] => s.list('pods', { fieldSelector }).map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`);

  it.each<[string, string[]]>([
    // kubectl describe node: the node's pods that have not finished.
    ['spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed', ['default/web-1', 'kube-system/agent']],
    // kubectl drain: everything bound to the node.
    ['spec.nodeName=n1', ['default/job-1', 'default/job-2', 'default/web-1', 'kube-system/agent']],
    ['spec.nodeName=', ['default/pending']],
    ['spec.nodeName==n2', ['default/web-2']],
    ['status.phase=Pending', ['default/pending']],
    ['spec.restartPolicy=Always,metadata.namespace=default', ['default/pending', 'default/web-1', 'default/web-2']],
    ['spec.schedulerName!=default-scheduler', ['kube-system/agent']],
    ['spec.serviceAccountName=agent', ['kube-system/agent']],
    ['spec.hostNetwork=true', ['kube-system/agent']],
    ['spec.hostNetwork=false,spec.nodeName=n1', ['default/job-1', 'default/job-2', 'default/web-1']],
    ['status.podIP=10.244.1.5', ['default/web-1']],
    ['status.podIP=10.244.2.7', ['default/web-2']],
    ['status.nominatedNodeName=n3', ['default/job-2']],
    ['metadata.name=web-2', ['default/web-2']],
    ['metadata.name=web\\,2', []],
  ])('%s', (selector, want) => {
    expect(names(selector)).toEqual(want);
  });

  it('refuses fields pods do not support, and bad escapes', () => {
    expect(() => names('spec.containers=x')).toThrow('field label not supported: spec.containers');
    expect(() => names('metadata.name=a\\b')).toThrow(/invalid escape sequence/);
  });
});

describe('over HTTP: LIST with selectors, eviction, deletion, discovery', () => {
  let s: ApiServerDouble;
  let core: CoreV1Api;
  const POLICY = parseRbacYaml(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: evictor}
rules:
  - {apiGroups: [""], resources: ["pods"], verbs: ["get", "list"]}
  - {apiGroups: [""], resources: ["pods/eviction"], verbs: ["create"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: evictor}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: evictor}
subjects: [{kind: User, name: evictor}]
`);
  const newPod = (name: string, extra: Partial<V1Pod['spec']> = {}): Promise<V1Pod> => core.createNamespacedPod({ namespace: 'default', body: { metadata: { name }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], ...extra } } });
  const eviction = (name: string, deleteOptions: object = {}): string => JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' }, deleteOptions });
  const evictPath = (name: string): string => `/api/v1/namespaces/default/pods/${name}/eviction`;

  beforeAll(async () => {
    s = await startApiServerDouble({ rbac: POLICY, users: [{ name: 'evictor', token: 'evictor-token' }] });
    core = kubeConfigFor(s).makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('lists across namespaces with kubectl describe node\'s selector (paged), and watches with it', async () => {
    await newPod('listed');
    const watch = await collectWatch(kubeConfigFor(s), '/api/v1/pods', { fieldSelector: 'spec.nodeName=n1,status.phase!=Succeeded' });
    try {
      const list = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed', limit: 500 });
      expect(list.items.map((p) => p.metadata?.name)).toEqual(['listed']);
      const patched = await rawRequest(kubeConfigFor(s), 'PATCH', '/api/v1/namespaces/default/pods/listed/status', '{"status":{"phase":"Succeeded"}}', 'application/merge-patch+json');
      expect(patched.status).toBe(200);
      // The pod stops matching: a watcher sees it go.
      await watch.waitFor((e) => e.some((x) => x.type === 'DELETED' && x.object.metadata?.name === 'listed'));
      expect((await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=n1,status.phase!=Succeeded' })).items).toEqual([]);
    } finally {
      watch.stop();
      await core.deleteNamespacedPod({ name: 'listed', namespace: 'default' });
    }
  });

  it('a protobuf body (kubectl create namespace sends one) answers 415 naming the kind and the way round, and stores nothing', async () => {
    const before = s.store.resourceVersion;
    const res = await rawRequest(kubeConfigFor(s), 'POST', '/api/v1/namespaces', 'k8s\u0000\n\u000f\n\u0002v1\u0012\tNamespace', 'application/vnd.kubernetes.protobuf');
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body)).toMatchObject({ reason: 'UnsupportedMediaType', message: expect.stringMatching(/send Namespace as JSON \(for kubectl: create -f or apply -f/) });
    expect(s.store.resourceVersion).toBe(before);
  });

  it('discovery lists pods (po, category all), pods/status, and pods/eviction as policy/v1 Eviction', async () => {
    const res = await rawRequest(kubeConfigFor(s), 'GET', '/api/v1');
    const list = JSON.parse(res.body) as { resources: Record<string, unknown>[] };
    const byName = Object.fromEntries(list.resources.map((r) => [r.name, r]));
    expect(byName.pods).toMatchObject({ kind: 'Pod', namespaced: true, shortNames: ['po'], categories: ['all'], singularName: 'pod' });
    expect(byName['pods/status']).toMatchObject({ kind: 'Pod', verbs: ['get', 'patch', 'update'] });
    expect(byName['pods/eviction']).toEqual({ name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
  });

  it('an eviction deletes the pod and answers 201 Success', async () => {
    await newPod('evicted');
    const res = await rawRequest(kubeConfigFor(s), 'POST', evictPath('evicted'), eviction('evicted'));
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    expect(s.store.peek('pods', 'evicted', 'default')).toBeUndefined();
    // client-node's own call takes the same path.
    await newPod('evicted-2');
    await core.createNamespacedPodEviction({ name: 'evicted-2', namespace: 'default', body: { metadata: { name: 'evicted-2', namespace: 'default' } } });
    expect(s.store.peek('pods', 'evicted-2', 'default')).toBeUndefined();
  });

  it('a dry-run eviction (deleteOptions or query) changes nothing', async () => {
    await newPod('kept');
    const rv = s.store.resourceVersion;
    expect((await rawRequest(kubeConfigFor(s), 'POST', evictPath('kept'), eviction('kept', { dryRun: ['All'] }))).status).toBe(201);
    expect((await rawRequest(kubeConfigFor(s), 'POST', `${evictPath('kept')}?dryRun=All`, eviction('kept'))).status).toBe(201);
    expect(s.store.resourceVersion).toBe(rv);
    expect(s.store.peek('pods', 'kept', 'default')).toBeDefined();
    expect((await rawRequest(kubeConfigFor(s), 'POST', evictPath('kept'), eviction('kept', { dryRun: ['Maybe'] }))).status).toBe(422);
  });

  it('refuses a missing pod (404), a name that is not the URL\'s (400), a stale precondition (409), other methods (405)', async () => {
    const kc = kubeConfigFor(s);
    const missing = await rawRequest(kc, 'POST', evictPath('nope'), eviction('nope'));
    expect([missing.status, (JSON.parse(missing.body) as { message: string }).message]).toEqual([404, 'pods "nope" not found']);
    await newPod('guarded');
    expect((await rawRequest(kc, 'POST', evictPath('guarded'), eviction('other'))).status).toBe(400);
    expect((await rawRequest(kc, 'POST', evictPath('guarded'), JSON.stringify({ kind: 'Pod', metadata: { name: 'guarded' } }))).status).toBe(400);
    expect((await rawRequest(kc, 'POST', evictPath('guarded'), eviction('guarded', { preconditions: { uid: 'not-its-uid' } }))).status).toBe(409);
    expect((await rawRequest(kc, 'GET', evictPath('guarded'))).status).toBe(405);
    expect(s.store.peek('pods', 'guarded', 'default')).toBeDefined();
  });

  it('RBAC: create on pods/eviction evicts; it grants no delete', async () => {
    await newPod('rbac');
    const asEvictor = kubeConfigFor(s, 'evictor').makeApiClient(CoreV1Api);
    const denied = await expectStatus(asEvictor.deleteNamespacedPod({ name: 'rbac', namespace: 'default' }), 403, 'Forbidden');
    expect(denied.message).toContain('cannot delete resource "pods"');
    await asEvictor.createNamespacedPodEviction({ name: 'rbac', namespace: 'default', body: { metadata: { name: 'rbac', namespace: 'default' } } });
    expect(s.store.peek('pods', 'rbac', 'default')).toBeUndefined();
    expect(s.count({ verb: 'create', resource: 'pods', subresource: 'eviction', user: 'evictor', code: 201 })).toBe(1);
  });

  it('DELETE answers the deleted pod, as kube-apiserver does for pods', async () => {
    await newPod('deleted');
    const res = await rawRequest(kubeConfigFor(s), 'DELETE', '/api/v1/namespaces/default/pods/deleted');
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'Pod', metadata: { name: 'deleted' } });
  });
});
