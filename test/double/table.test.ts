// Server-side Table rows: the pure rules behind kubectl get's columns (ages, node status and
// roles, event cells, custom resource columns) and the Accept negotiation.
import { describe, expect, it } from 'vitest';
import { buildTable, customResourceTable, humanDuration, nodeRoles, nodeStatus, tableRequested, tableSpecOf, CLUSTERCIDR_PRINTER_COLUMNS } from '../../src/double/table.js';
import type { KObject } from '../../src/double/index.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const NOW = new Date('2026-06-01T12:00:00Z');
const ago = (ms: number): string => new Date(NOW.getTime() - ms).toISOString().replace(/\.\d+Z$/, 'Z');

describe('humanDuration', () => {
  it.each([
    [-5 * S, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [3 * M + 20 * S, '3m20s'],
    [10 * M + 59 * S, '10m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [5 * H + 12 * M, '5h12m'],
    [30 * H, '30h'],
    [2 * D, '2d'],
    [6 * D + 4 * H, '6d4h'],
    [60 * D, '60d'],
    [2 * 365 * D, '2y'],
    [2 * 365 * D + 30 * D, '2y30d'],
    [9 * 365 * D, '9y'],
  ])('%d ms → %s', (ms, want) => {
    expect(humanDuration(ms)).toBe(want);
  });
});

describe('nodes', () => {
  const node = (over: Partial<KObject> = {}): KObject => ({ metadata: { name: 'n1', creationTimestamp: ago(90 * S), labels: {} }, spec: {}, status: {}, ...over });

  it.each([
    [{}, 'Unknown'],
    [{ status: { conditions: [{ type: 'Ready', status: 'True' }] } }, 'Ready'],
    [{ status: { conditions: [{ type: 'MemoryPressure', status: 'False' }, { type: 'Ready', status: 'Unknown' }] } }, 'NotReady'],
    [{ spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }, 'Ready,SchedulingDisabled'],
    [{ spec: { unschedulable: true } }, 'Unknown,SchedulingDisabled'],
  ])('status of %j is %s', (over, want) => {
    expect(nodeStatus(node(over as Partial<KObject>))).toBe(want);
  });

  it.each([
    [{}, []],
    [{ 'node-role.kubernetes.io/worker': '', 'node-role.kubernetes.io/control-plane': 'x' }, ['control-plane', 'worker']],
    [{ 'kubernetes.io/role': 'master', 'node-role.kubernetes.io/': '' }, ['master']],
    [{ 'kubernetes.io/role': '', 'example.com/role': 'db' }, []],
  ])('roles of %j are %j', (labels, want) => {
    expect(nodeRoles(labels)).toEqual(want);
  });

  it('fills every column, wide ones included, with <none> and <unknown> where kube-apiserver does', () => {
    const spec = tableSpecOf({ group: '', plural: 'nodes' });
    expect(spec.columns.map((c) => [c.name, c.priority])).toEqual([
      ['Name', 0], ['Status', 0], ['Roles', 0], ['Age', 0], ['Version', 0],
      ['Internal-IP', 1], ['External-IP', 1], ['OS-Image', 1], ['Kernel-Version', 1], ['Container-Runtime', 1],
    ]);
    expect(spec.cells(node(), NOW)).toEqual(['n1', 'Unknown', '<none>', '90s', '', '<none>', '<none>', '<unknown>', '<unknown>', '<unknown>']);
    const full = node({
      metadata: { name: 'n2', creationTimestamp: ago(5 * H), labels: { 'node-role.kubernetes.io/worker': '' } },
      status: {
        addresses: [{ type: 'Hostname', address: 'n2' }, { type: 'InternalIP', address: '10.0.0.2' }, { type: 'InternalIP', address: 'fd00::2' }, { type: 'ExternalIP', address: '203.0.113.2' }],
        nodeInfo: { kubeletVersion: 'v1.32.0', osImage: 'Ubuntu 24.04', kernelVersion: '6.8.0', containerRuntimeVersion: 'containerd://2.0.0' },
      },
    });
    expect(spec.cells(full, NOW)).toEqual(['n2', 'Unknown', 'worker', '5h', 'v1.32.0', '10.0.0.2', '203.0.113.2', 'Ubuntu 24.04', '6.8.0', 'containerd://2.0.0']);
  });
});

describe('events', () => {
  const spec = tableSpecOf({ group: '', plural: 'events' });
  it.each([
    ['counted core/v1 event', { involvedObject: { kind: 'Node', name: 'n1', fieldPath: 'spec' }, reason: 'Synced', message: ' done \n', type: 'Normal', source: { component: 'ccm', host: 'h1' }, firstTimestamp: ago(10 * M), lastTimestamp: ago(30 * S), count: 4 }, ['30s', 'Normal', 'Synced', 'node/n1', 'spec', 'ccm, h1', 'done', '10m', 4, 'e']],
    ['events.k8s.io singleton (eventTime, no count)', { involvedObject: { kind: 'Node' }, reason: 'R', eventTime: ago(3 * M), reportingComponent: 'ctl', reportingInstance: 'ctl-1' }, ['3m', '', 'R', 'node', '', 'ctl, ctl-1', '', '3m', 1, 'e']],
    ['series', { involvedObject: { kind: 'Node', name: 'n' }, eventTime: ago(3 * H), series: { count: 7, lastObservedTime: ago(5 * S) } }, ['5s', '', '', 'node/n', '', '', '', '3h', 7, 'e']],
  ])('%s', (_name, ev, want) => {
    expect(spec.cells({ metadata: { name: 'e' }, ...ev }, NOW)).toEqual(want);
  });
});

describe('custom resources', () => {
  it('Name, then the printer columns: missing values are null, dates are ages', () => {
    const spec = customResourceTable(CLUSTERCIDR_PRINTER_COLUMNS);
    expect(spec.columns.map((c) => [c.name, c.type])).toEqual([['Name', 'string'], ['PerNodeHostBits', 'integer'], ['IPv4', 'string'], ['IPv6', 'string'], ['Age', 'date']]);
    expect(spec.cells({ metadata: { name: 'p', creationTimestamp: ago(2 * D) }, spec: { perNodeHostBits: 8, ipv4: '10.0.0.0/8' } }, NOW)).toEqual(['p', 8, '10.0.0.0/8', null, '2d']);
  });
});

describe('negotiation and the Table body', () => {
  it.each([
    ['application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json', 'v1'],
    ['application/json;as=Table;v=v1beta1;g=meta.k8s.io', 'v1beta1'],
    ['application/json', undefined],
    ['application/json, */*', undefined],
    ['application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io', 'v1'],
    ['application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io', 'v1'],
    [undefined, undefined],
  ])('Accept %s → %s', (accept, want) => {
    expect(tableRequested(accept)).toBe(want);
  });

  it('rows carry the object, its metadata, or null, as includeObject asks', () => {
    const lease: KObject = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'ns', creationTimestamp: ago(S) }, spec: { holderIdentity: 'me' } };
    const r = { group: 'coordination.k8s.io', plural: 'leases' };
    const meta = { resourceVersion: '7' };
    const t = (includeObject: 'None' | 'Metadata' | 'Object') => buildTable(r, [lease], meta, { version: 'v1', includeObject, now: NOW }) as { kind: string; apiVersion: string; metadata: object; rows: { cells: unknown[]; object?: unknown }[] };
    expect(t('Metadata')).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: meta, rows: [{ cells: ['l', 'me', '1s'], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: lease.metadata } }] });
    expect(t('Object').rows[0].object).toBe(lease);
    // kube-apiserver writes `object: null` for includeObject=None (test/realserver: node.table-include-none).
    expect(t('None').rows[0]).toEqual({ cells: ['l', 'me', '1s'], object: null });
  });
});
