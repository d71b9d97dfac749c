// CloudAllocator with the aws adapter: the real SDK against the EC2 emulator, the node IPAM loop
// against the API server double. Pod CIDRs come from the prefixes delegated to each node's primary
// interface; with AssignIPv6PodPrefix a node without an IPv6 prefix gets exactly one
// AssignIpv6Addresses call, whatever the cloud answers and however often the allocator restarts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AwsProvider, type AwsProviderOptions } from '../../../providers/aws/provider.js';
import { BackoffGate } from '../../../providers/aws/backoff.js';
import { cloudRangesFromProvider } from '../../../src/controllers/nodeipam/cloud-ranges.js';
import { parseRangeRequest } from '../../../src/controllers/nodeipam/range-request.js';
import { CLOUD_POOL, CLOUD_RANGE_REQUEST_ANNOTATION, POD_CIDR_POOL_ANNOTATION, type NodeObject } from '../../../src/model/node.js';
import { EC2Emulator, type EmulatedInstance } from '../../emulators/ec2/server.js';
import { createNode, useDouble } from '../../kit/double.js';
import { eventually } from '../../kit/wait.js';
import { podCIDRsOf, startReplica, storedNodes } from './harness.js';

const emu = new EC2Emulator();
let endpoint = '';
const cluster = useDouble();

beforeAll(async () => {
  endpoint = await emu.start();
});
afterAll(() => emu.stop());
beforeEach(() => {
  emu.reset();
});

function aws(config: AwsProviderOptions['config']): AwsProvider {
  const p = new AwsProvider({
    endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'fake' },
    maxAttempts: 1, retryMode: 'standard', gate: new BackoffGate({ baseMs: 1, maxMs: 5 }), config,
  });
  cluster.defer(() => p.close());
  return p;
}

const iid = (n: number): string => `i-${n.toString(16).padStart(17, '0')}`;
const eni = (n: number): string => `eni-${n.toString(16).padStart(8, '0')}`;

function ec2(n: number, o: { v4?: string[]; v6?: string[]; limit?: number } = {}): EmulatedInstance {
  return {
    instanceId: iid(n),
    availabilityZone: 'us-east-1a',
    privateDnsName: `ip-10-0-${n >> 8}-${n & 255}.ec2.internal`,
    networkInterfaces: [{ networkInterfaceId: eni(n), deviceIndex: 0, privateIps: [`10.0.${n >> 8}.${n & 255}`], ipv4Prefixes: o.v4, ipv6Prefixes: o.v6, ipv6PrefixLimit: o.limit, subnetIpv6Cidr: `2600:1f18:0:${n.toString(16)}::/64` }],
  };
}

function join(n: number, name = `n${n}`): void {
  createNode(cluster.api, { name, tainted: false, providerID: `aws:///us-east-1a/${iid(n)}` });
}

const node = (name: string): NodeObject => cluster.api.store.get('nodes', name) as unknown as NodeObject;
const requestRecord = (name: string) => {
  const v = node(name).metadata.annotations?.[CLOUD_RANGE_REQUEST_ANNOTATION];
  return v === undefined ? undefined : parseRangeRequest(v);
};

describe('CloudAllocator on AWS: pod CIDRs from delegated prefixes', () => {
  it('writes the primary interface\'s prefixes in the NodeIPFamilies order, says how several were joined, and sets NetworkUnavailable=False', async () => {
    emu.add(ec2(1, { v4: ['10.9.0.16/28', '10.9.0.0/28'], v6: ['2600:1f18:0:1:7::/80'] }));
    const r = await startReplica(cluster, { cloud: cloudRangesFromProvider(aws({ nodeIPFamilies: ['ipv6', 'ipv4'] })) });
    join(1);
    await eventually(() => podCIDRsOf(cluster.api, 'n1').length > 0, { timeoutMs: 10_000, what: 'n1 written' });
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual(['2600:1f18:0:1:7::/80', '10.9.0.0/27']);
    expect(node('n1').metadata.annotations?.[POD_CIDR_POOL_ANNOTATION]).toBe(CLOUD_POOL);
    expect(r.events.for('n1')).toContainEqual(expect.objectContaining({ type: 'Normal', reason: 'CloudRangeChosen', message: `interface ${eni(1)}: its 2 IPv4 prefixes form one aligned block, 10.9.0.0/27, the pod CIDR` }));
    // Recorded in the shared ledger like any other block.
    expect(r.controller.ledger.nodeAllocation('n1')?.podCIDRs).toEqual(['2600:1f18:0:1:7::/80', '10.9.0.0/27']);
    await eventually(() => ((node('n1').status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === 'NetworkUnavailable' && c.status === 'False'), { timeoutMs: 5000, what: 'condition' });
    expect(emu.assignCalls()).toBe(0);
  });

  it('dual-stack with one family missing: the node waits, the event names the interface and the family; it is written once the prefix appears', async () => {
    emu.add(ec2(1, { v4: ['10.9.0.16/28'] }));
    const r = await startReplica(cluster, { cloud: cloudRangesFromProvider(aws({ nodeIPFamilies: ['ipv4', 'ipv6'] })) });
    join(1);
    await eventually(() => r.events.for('n1').some((e) => e.reason === 'CloudRangeNotAvailable'), { timeoutMs: 10_000, what: 'the event' });
    expect(r.events.for('n1').find((e) => e.reason === 'CloudRangeNotAvailable')?.message).toBe(
      `no pod range from the cloud: interface ${eni(1)} (device index 0) of instance ${iid(1)} has no IPv6 prefix (Ipv6Prefixes is empty)`,
    );
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual([]);
    emu.instances.get(iid(1))!.networkInterfaces![0]!.ipv6Prefixes = ['2600:1f18:0:1:3::/80'];
    await eventually(() => podCIDRsOf(cluster.api, 'n1').length > 0, { timeoutMs: 15_000, what: 'n1 written after the retry' });
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual(['10.9.0.16/28', '2600:1f18:0:1:3::/80']);
    expect(emu.assignCalls()).toBe(0);
  });

  it('refuses a prefix inside a Service CIDR, and one another node holds, with events; never one block to two nodes', async () => {
    cluster.api.store.create('servicecidrs.networking.k8s.io', { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'svc' }, spec: { cidrs: ['10.96.0.0/16'] } });
    emu.add(ec2(1, { v4: ['10.96.4.0/28'] }), ec2(2, { v4: ['10.9.0.0/28'] }), ec2(3, { v4: ['10.9.0.0/28'] }));
    // n2 still holds 10.9.0.0/28 (its instance was terminated, the Node not yet deleted); instance 3 got the prefix again.
    createNode(cluster.api, { name: 'n2', tainted: false, providerID: `aws:///us-east-1a/${iid(2)}`, podCIDRs: ['10.9.0.0/28'] });
    const r = await startReplica(cluster, { cloud: cloudRangesFromProvider(aws({ nodeIPFamilies: ['ipv4'] })) });
    join(1);
    join(3);
    await eventually(() => r.events.for('n1').some((e) => e.reason === 'CloudRangeClash') && r.events.for('n3').some((e) => e.reason === 'CloudRangeClash'), { timeoutMs: 10_000, what: 'clash events' });
    expect(r.events.for('n1').find((e) => e.reason === 'CloudRangeClash')?.message).toBe("the cloud's pod range 10.96.4.0/28 for node n1 overlaps Service range 10.96.0.0/16: refused, the node waits");
    expect(r.events.for('n3').find((e) => e.reason === 'CloudRangeClash')?.message).toBe("the cloud's pod range 10.9.0.0/28 for node n3 overlaps the block of node n2: refused, the node waits");
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual([]);
    expect(podCIDRsOf(cluster.api, 'n3')).toEqual([]);
    expect(r.controller.ledger.nodeAllocation('n3')).toBeUndefined();
    // Once n2's Node is gone, the block is n3's.
    cluster.api.store.delete('nodes', 'n2');
    await eventually(() => podCIDRsOf(cluster.api, 'n3').length > 0, { timeoutMs: 20_000, what: 'n3 written once n2 is gone' });
    expect(podCIDRsOf(cluster.api, 'n3')).toEqual(['10.9.0.0/28']);
  });

  it('1,200 joining nodes cost one DescribeInstances per 500 (batching unchanged)', async () => {
    const count = 1200;
    for (let n = 1; n <= count; n++) emu.add(ec2(n, { v4: [`10.${64 + (n >> 8)}.${n & 255}.0/28`] }));
    for (let n = 1; n <= count; n++) join(n);
    await startReplica(cluster, { cloud: cloudRangesFromProvider(aws({ nodeIPFamilies: ['ipv4'] })), workers: 2 });
    await eventually(() => storedNodes(cluster.api).every((n) => podCIDRsOf(cluster.api, n.metadata.name).length > 0), { timeoutMs: 60_000, intervalMs: 100, what: 'every node written' });
    expect(podCIDRsOf(cluster.api, 'n513')).toEqual(['10.66.1.0/28']);
    expect(emu.describeCalls()).toBe(Math.ceil(count / 500));
  }, 90_000);
});

describe('CloudAllocator on AWS with AssignIPv6PodPrefix: one AssignIpv6Addresses per node, ever', () => {
  const config = { nodeIPFamilies: ['ipv6' as const], assignIPv6PodPrefix: true };

  it('asks once, records it on the Node before the call, reads the prefix back, writes it', async () => {
    emu.add(ec2(1));
    const r = await startReplica(cluster, { cloud: cloudRangesFromProvider(aws(config)) });
    join(1);
    await eventually(() => podCIDRsOf(cluster.api, 'n1').length > 0, { timeoutMs: 10_000, what: 'n1 written' });
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual(['2600:1f18:0:1:1::/80']);
    expect(emu.assignCalls(eni(1))).toBe(1);
    expect(requestRecord('n1')).toMatchObject({ target: eni(1), state: 'done', attempt: 1, detail: `EC2 assigned 2600:1f18:0:1:1::/80 to ${eni(1)}` });
    expect(r.events.for('n1').map((e) => e.reason)).toContain('CloudRangeRequested');
    // Three writes: the record (before the call), its outcome, the pod CIDRs.
    expect(cluster.api.count({ verb: 'patch', resource: 'nodes', subresource: '' })).toBe(3);
  });

  it('an answer lost after success: read back, never asked again', async () => {
    emu.add(ec2(1));
    emu.loseNextAssignAnswer('reset');
    await startReplica(cluster, { cloud: cloudRangesFromProvider(aws(config)) });
    join(1);
    await eventually(() => podCIDRsOf(cluster.api, 'n1').length > 0, { timeoutMs: 15_000, what: 'n1 written' });
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual(['2600:1f18:0:1:1::/80']);
    expect(emu.assignCalls()).toBe(1);
    expect(requestRecord('n1')).toMatchObject({ state: 'unknown' });
    expect(emu.instances.get(iid(1))!.networkInterfaces![0]!.ipv6Prefixes).toEqual(['2600:1f18:0:1:1::/80']);
  });

  it('a prefix slow to show (EC2 is eventually consistent) is waited for, not asked for again', async () => {
    emu.add(ec2(1));
    emu.assignLag = 3;
    await startReplica(cluster, { cloud: cloudRangesFromProvider(aws(config)) });
    join(1);
    await eventually(() => podCIDRsOf(cluster.api, 'n1').length > 0, { timeoutMs: 20_000, what: 'n1 written' });
    expect(emu.assignCalls()).toBe(1);
  });

  it('throttled: nothing was assigned, so it is asked once more; the node gets one prefix', async () => {
    emu.add(ec2(1));
    emu.throttleNextAssign(1);
    await startReplica(cluster, { cloud: cloudRangesFromProvider(aws(config)) });
    join(1);
    await eventually(() => podCIDRsOf(cluster.api, 'n1').length > 0, { timeoutMs: 20_000, what: 'n1 written' });
    expect(emu.requests.filter((q) => q.action === 'AssignIpv6Addresses').map((q) => q.status)).toEqual([503, 200]);
    expect(requestRecord('n1')).toMatchObject({ state: 'done', attempt: 2 });
    expect(emu.instances.get(iid(1))!.networkInterfaces![0]!.ipv6Prefixes).toHaveLength(1);
  });

  it('the interface\'s limit: refused, the node waits with the reason, and no allocator (this one or the next) asks again', async () => {
    emu.add(ec2(1, { limit: 0 }));
    const first = await startReplica(cluster, { cloud: cloudRangesFromProvider(aws(config)) });
    join(1);
    await eventually(() => (requestRecord('n1') as { state?: string } | undefined)?.state === 'refused', { timeoutMs: 10_000, what: 'refused recorded' });
    await eventually(() => first.events.for('n1').some((e) => /not asking again/.test(e.message)), { timeoutMs: 10_000, what: 'the waiting event' });
    await first.stop();
    const second = await startReplica(cluster, { cloud: cloudRangesFromProvider(aws(config)) });
    await eventually(() => second.events.for('n1').some((e) => /refused: Number of private addresses will exceed limit\.; not asking again/.test(e.message)), { timeoutMs: 10_000, what: 'the next allocator waits too' });
    expect(emu.assignCalls()).toBe(1);
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual([]);
  });

  it('the allocator stops between the call and the write (its answer held, then lost): the next one reads the prefix back and never asks', async () => {
    emu.add(ec2(1));
    emu.loseNextAssignAnswer('hang');
    const first = await startReplica(cluster, { cloud: cloudRangesFromProvider(aws(config)) });
    join(1);
    await eventually(() => emu.assignCalls() === 1, { timeoutMs: 10_000, what: 'the call made' });
    expect(requestRecord('n1')).toMatchObject({ state: 'asking', attempt: 1 });
    // Stopping waits for the worker stuck in the call; release it as a dying process would.
    const stopping = first.stop();
    emu.releaseHeld();
    await stopping;
    const second = await startReplica(cluster, { cloud: cloudRangesFromProvider(aws(config)) });
    await eventually(() => podCIDRsOf(cluster.api, 'n1').length > 0, { timeoutMs: 15_000, what: 'n1 written by the second allocator' });
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual(['2600:1f18:0:1:1::/80']);
    expect(emu.assignCalls()).toBe(1);
    expect(second.events.for('n1').some((e) => e.reason === 'CloudRangeRequested')).toBe(false);
  });

  it('200 nodes needing a prefix: 200 calls, one each, and the reads stay batched', async () => {
    const count = 200;
    for (let n = 1; n <= count; n++) emu.add(ec2(n));
    for (let n = 1; n <= count; n++) join(n);
    await startReplica(cluster, { cloud: cloudRangesFromProvider(aws(config)), workers: 2 });
    await eventually(() => storedNodes(cluster.api).every((n) => podCIDRsOf(cluster.api, n.metadata.name).length > 0), { timeoutMs: 60_000, intervalMs: 100, what: 'every node written' });
    for (let n = 1; n <= count; n++) expect(emu.assignCalls(eni(n))).toBe(1);
    // One read finds them all without a prefix; the read-backs are batched as they come.
    expect(emu.describeCalls()).toBeLessThan(count / 4);
  }, 90_000);
});
