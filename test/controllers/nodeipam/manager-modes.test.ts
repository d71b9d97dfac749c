// The allocator types wired through the whole process (ControllerManager) against the API double:
// CloudAllocator with cloud-node (the cloud's ranges, the condition, no claims), and the audit
// loop's metric and conflict events in MultiCIDRRangeAllocator mode.
import { describe, expect, it } from 'vitest';
import { FakeProvider } from '../../../providers/fake/fake.js';
import { resolveRunOptions, type RawRunFlags } from '../../../src/manager/options.js';
import { useDouble, createNode } from '../../kit/double.js';
import { hasUninitializedTaint, type NodeObject, POD_CIDR_POOL_ANNOTATION } from '../../../src/model/node.js';
import { AUDIT_FINDINGS_METRIC } from '../../../src/controllers/nodeipam/audit-loop.js';
import { eventually } from '../../kit/wait.js';
import { ip } from '../../kit/nodes.js';
import { createClusterCIDR, podCIDRsOf } from './harness.js';

const cluster = useDouble();

function start(flags: RawRunFlags, provider?: FakeProvider) {
  return cluster.runManager(resolveRunOptions({ leaderElect: 'false', securePort: '0', ...flags }), {
    userAgent: 'ccm-modes', watchStaleAfterMs: 5000, auditIntervalMs: 100,
    ...(provider ? { provider } : {}),
  }).manager;
}

const stored = (name: string): NodeObject => cluster.api.store.get('nodes', name) as unknown as NodeObject;

describe('ControllerManager allocator types', () => {
  it('CloudAllocator with cloud-node: cloud-node initialises without pod CIDRs, node-ipam writes the cloud ranges and the condition', async () => {
    const cloud = new FakeProvider();
    cloud.setInstance('a', { addresses: [ip('10.0.0.1')], podCIDRs: ['10.8.3.0/24'] });
    start({ cloudProvider: 'fake', allocateNodeCidrs: true, cidrAllocatorType: 'CloudAllocator' }, cloud);
    createNode(cluster.api, { name: 'a' });
    await eventually(() => !hasUninitializedTaint(stored('a')) && podCIDRsOf(cluster.api, 'a').length > 0, { timeoutMs: 10_000, what: 'initialised with the cloud range' });
    expect(podCIDRsOf(cluster.api, 'a')).toEqual(['10.8.3.0/24']);
    expect(stored('a').metadata.annotations?.[POD_CIDR_POOL_ANNOTATION]).toBe('cloud');
    await eventually(() => ((stored('a').status?.conditions as { type: string; status: string }[] | undefined) ?? []).some((c) => c.type === 'NetworkUnavailable' && c.status === 'False'), { timeoutMs: 5000, what: 'condition' });
    expect(cluster.api.count({ verb: 'list', resource: 'clustercidrs.networking.x-k8s.io' })).toBe(0);
  });

  it('CloudAllocator without cloud-node: the range lookups count in the cloud-call metrics', async () => {
    const cloud = new FakeProvider();
    cloud.setInstance('a', { addresses: [ip('10.0.0.1')], podCIDRs: ['10.8.3.0/24'] });
    const manager = start({ cloudProvider: 'fake', controllers: 'node-ipam', allocateNodeCidrs: true, cidrAllocatorType: 'CloudAllocator' }, cloud);
    createNode(cluster.api, { name: 'a', tainted: false });
    await eventually(() => podCIDRsOf(cluster.api, 'a').length > 0, { timeoutMs: 10_000, what: 'the cloud range written' });
    const text = await manager.registry.metrics();
    expect(text).toMatch(/^cloudprovider_requests_total\{provider="fake",operation="instancesMetadata",result="success"\} [1-9]\d*$/m);
    expect(text).toMatch(/^cloudprovider_request_duration_seconds_count\{provider="fake",operation="instancesMetadata"\} [1-9]\d*$/m);
  });

  it('MultiCIDRRangeAllocator: the audit loop exports findings and records a conflict event', async () => {
    createClusterCIDR(cluster.api, 'pool', { perNodeHostBits: 8, ipv4: '10.1.0.0/20' });
    // Two nodes with the same block, set by someone else: a conflict the audit reports.
    createNode(cluster.api, { name: 'x', tainted: false, podCIDRs: ['10.1.5.0/24'] });
    createNode(cluster.api, { name: 'y', tainted: false, podCIDRs: ['10.1.5.0/24'] });
    const m = start({ controllers: 'node-ipam', allocateNodeCidrs: true, cidrAllocatorType: 'MultiCIDRRangeAllocator' });
    await eventually(() => (cluster.api.store.list('events', { namespace: 'default' }) as { reason?: string }[]).some((e) => e.reason === 'IPRangeConflict'), { timeoutMs: 10_000, what: 'IPRangeConflict event' });
    const text = await m.registry.getSingleMetricAsString(AUDIT_FINDINGS_METRIC);
    expect(text).toContain(`${AUDIT_FINDINGS_METRIC}{kind="PodCIDROverlap",severity="conflict"} 1`);
    expect(text).toContain(`${AUDIT_FINDINGS_METRIC}{kind="PodCIDRNotAllocated",severity="warning"} 2`);
  });
});
