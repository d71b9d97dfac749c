// The node cache keeps only what the controllers read (slimNode). Two checks: the transform keeps
// exactly its documented fields of a realistic Node, and the whole controller manager, run over
// full Nodes whose every property read is recorded, reads nothing the transform drops.
import { describe, expect, it } from 'vitest';
import { FakeProvider } from '../../providers/fake/fake.js';
import { CACHED_NODE_ANNOTATIONS, slimNode } from '../../src/model/cached-node.js';
import { hasUninitializedTaint, nodePodCIDRs, PROVIDED_NODE_IP_ANNOTATION, type NodeObject, POD_CIDR_POOL_ANNOTATION } from '../../src/model/node.js';
import { resolveRunOptions } from '../../src/manager/options.js';
import { useDouble } from '../kit/double.js';
import { ip } from '../kit/nodes.js';
import { eventually } from '../kit/wait.js';
import { realisticNode } from '../../src/simulation/realistic-node.js';

describe('slimNode', () => {
  it('keeps the fields the controllers read and drops the rest of a realistic 12 KB Node', () => {
    const full = realisticNode('worker-1', { nodeIP: '10.0.0.5,fd00::5', podCIDRs: ['10.244.1.0/24'], tainted: true });
    const full2 = JSON.parse(JSON.stringify(full)) as NodeObject;
    const slim = slimNode(full);
    expect(JSON.stringify(full).length).toBeGreaterThan(10_000);
    expect(JSON.stringify(slim).length).toBeLessThan(2_500);
    // The input is not modified.
    expect(full).toEqual(full2);
    expect(Object.keys(slim.metadata).sort()).toEqual(['annotations', 'creationTimestamp', 'labels', 'name', 'resourceVersion', 'uid']);
    expect(Object.keys(slim.metadata.annotations!).sort()).toEqual([PROVIDED_NODE_IP_ANNOTATION, POD_CIDR_POOL_ANNOTATION].sort());
    expect(slim.metadata.labels).toEqual(full.metadata.labels);
    expect(slim.spec).toEqual({ providerID: full.spec!.providerID, podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], taints: full.spec!.taints });
    expect(slim.status!.addresses).toEqual(full.status!.addresses);
    expect(slim.status!.conditions).toEqual([{ type: 'Ready', status: 'True' }, { type: 'NetworkUnavailable', status: 'False' }]);
    expect(Object.keys(slim.status!).sort()).toEqual(['addresses', 'conditions']);
  });

  it('keeps one copy of strings that repeat: the node name in its hostname label and Hostname address, values shared by nodes', () => {
    const [a, b] = ['worker-1', 'worker-2'].map((n, i) => slimNode(JSON.parse(JSON.stringify(realisticNode(n, { index: i * 3 }))) as NodeObject));
    expect(a!.metadata.labels!['kubernetes.io/hostname']).toBe('worker-1');
    expect(a!.status!.addresses!.find((x) => x.type === 'Hostname')?.address).toBe('worker-1');
    // Same zone (index 0 and 3), arch and instance type: equal values, kept once (interned).
    expect(a!.metadata.labels!['topology.kubernetes.io/zone']).toBe(b!.metadata.labels!['topology.kubernetes.io/zone']);
    expect(a!.metadata.labels).toEqual({ ...b!.metadata.labels, 'kubernetes.io/hostname': 'worker-1', 'team.example.com/pool': a!.metadata.labels!['team.example.com/pool'] });
  });

  it('nodes with the same conditions share one frozen list; other conditions get their own', () => {
    const cond = (type: string, status: string) => ({ type, status, reason: 'r', message: 'm', lastHeartbeatTime: '2026-11-01T10:00:00Z', lastTransitionTime: '2026-11-01T10:00:00Z' });
    const withConditions = (name: string, conditions: unknown[]): NodeObject => ({ metadata: { name }, status: { conditions } });
    const [a, b, c] = [
      withConditions('a', [cond('Ready', 'True'), cond('MemoryPressure', 'False'), cond('NetworkUnavailable', 'False')]),
      withConditions('b', [cond('MemoryPressure', 'True'), cond('Ready', 'True'), cond('NetworkUnavailable', 'False')]),
      withConditions('c', [cond('Ready', 'False'), cond('NetworkUnavailable', 'False')]),
    ].map((n) => slimNode(n).status!.conditions as { type: string; status: string }[]);
    expect(a).toEqual([{ type: 'Ready', status: 'True' }, { type: 'NetworkUnavailable', status: 'False' }]);
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(c).toEqual([{ type: 'Ready', status: 'False' }, { type: 'NetworkUnavailable', status: 'False' }]);
    // Shared, so frozen: changing one in place throws instead of changing every node's.
    expect(() => a!.push({ type: 'X', status: 'True' })).toThrow(TypeError);
    expect(() => {
      a![0]!.status = 'False';
    }).toThrow(TypeError);
    expect(b![0]!.status).toBe('True');
  });

  it('a cached node has exactly the keys its JSON form has (no undefined-valued ones), whatever the input leaves out', () => {
    const inputs: NodeObject[] = [
      { metadata: { name: 'bare' } },
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'a', uid: 'u', resourceVersion: '7' }, spec: {}, status: {} },
      { metadata: { name: 'b', deletionTimestamp: '2026-11-01T10:00:00Z', finalizers: ['x'] }, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } },
      JSON.parse(JSON.stringify(realisticNode('worker-3', { tainted: true }))) as NodeObject,
      JSON.parse(JSON.stringify(realisticNode('worker-4', { nodeIP: '10.0.0.4', podCIDRs: ['10.244.4.0/24'] }))) as NodeObject,
      JSON.parse(JSON.stringify(realisticNode('worker-5', { nodeIP: '10.0.0.5', podCIDRs: ['10.244.5.0/24'], poolAnnotation: false }))) as NodeObject,
      JSON.parse(JSON.stringify(realisticNode('worker-6', { podCIDRs: ['10.244.6.0/24'] }))) as NodeObject,
    ];
    for (const input of inputs) {
      const slim = slimNode(input);
      const json = JSON.parse(JSON.stringify(slim)) as NodeObject;
      // Same keys at every level as the plain JSON value: an absent field is absent, not undefined.
      expect(Object.keys(slim)).toEqual(Object.keys(json));
      expect(Object.keys(slim.metadata)).toEqual(Object.keys(json.metadata));
      if (slim.metadata.annotations) expect(Object.keys(slim.metadata.annotations)).toEqual(Object.keys(json.metadata.annotations!));
      if (slim.spec) expect(Object.keys(slim.spec)).toEqual(Object.keys(json.spec!));
      if (slim.status) expect(Object.keys(slim.status)).toEqual(Object.keys(json.status!));
      const plain = (n: NodeObject) => ({
        ...n,
        metadata: { ...n.metadata, ...(n.metadata.annotations ? { annotations: { ...n.metadata.annotations } } : {}) },
        ...(n.status ? { status: { ...n.status } } : {}),
      });
      expect(plain(slim)).toStrictEqual(plain(json));
    }
  });

  it('nodes whose kept annotation is the pool alone share one frozen object per pool; a node with more keeps its own', () => {
    const withAnnotations = (name: string, annotations: Record<string, string>): NodeObject => ({ metadata: { name, annotations: { 'other.example/x': name, ...annotations } } });
    const [a, b, c, d] = [
      withAnnotations('a', { [POD_CIDR_POOL_ANNOTATION]: 'default' }),
      withAnnotations('b', { [POD_CIDR_POOL_ANNOTATION]: 'default' }),
      withAnnotations('c', { [POD_CIDR_POOL_ANNOTATION]: 'gpu' }),
      withAnnotations('d', { [POD_CIDR_POOL_ANNOTATION]: 'default', [PROVIDED_NODE_IP_ANNOTATION]: '10.0.0.4' }),
    ].map((n) => slimNode(n).metadata.annotations!);
    expect(a).toEqual({ [POD_CIDR_POOL_ANNOTATION]: 'default' });
    expect(b).toBe(a);
    expect(c).toEqual({ [POD_CIDR_POOL_ANNOTATION]: 'gpu' });
    expect(c).not.toBe(a);
    expect(d).toEqual({ [POD_CIDR_POOL_ANNOTATION]: 'default', [PROVIDED_NODE_IP_ANNOTATION]: '10.0.0.4' });
    expect(Object.isFrozen(d)).toBe(false);
    // The node's own annotations, in the order CACHED_NODE_ANNOTATIONS names them.
    expect(Object.keys(d!)).toEqual([PROVIDED_NODE_IP_ANNOTATION, POD_CIDR_POOL_ANNOTATION]);
    const e = slimNode(withAnnotations('e', { [PROVIDED_NODE_IP_ANNOTATION]: '10.0.0.5' })).metadata.annotations!;
    expect(e).toEqual({ [PROVIDED_NODE_IP_ANNOTATION]: '10.0.0.5' });
    expect(Object.isFrozen(e)).toBe(false);
    // Shared, so frozen: changing it in place throws instead of changing every node's.
    expect(() => {
      a![POD_CIDR_POOL_ANNOTATION] = 'x';
    }).toThrow(TypeError);
  });

  it('an empty taint list is one shared frozen list; a node with taints keeps its own', () => {
    const a = slimNode<NodeObject>({ metadata: { name: 'a' }, spec: { taints: [] } });
    const b = slimNode<NodeObject>({ metadata: { name: 'b' }, spec: { taints: [] } });
    expect(a.spec!.taints).toEqual([]);
    expect(a.spec!.taints).toBe(b.spec!.taints);
    expect(() => a.spec!.taints!.push({ key: 'k', effect: 'NoSchedule' })).toThrow(TypeError);
    const taints = [{ key: 'k', effect: 'NoSchedule' }];
    expect(slimNode({ metadata: { name: 'c' }, spec: { taints } }).spec!.taints).toEqual(taints);
  });

  it('an annotation key present with an empty value stays present (the provided-node-ip rules tell absent from empty)', () => {
    const n: NodeObject = { metadata: { name: 'a', annotations: { [PROVIDED_NODE_IP_ANNOTATION]: '', other: 'x' } } };
    expect(slimNode(n).metadata.annotations).toEqual({ [PROVIDED_NODE_IP_ANNOTATION]: '' });
    expect(slimNode({ metadata: { name: 'b', annotations: { other: 'x' } } }).metadata.annotations).toBeUndefined();
    expect(CACHED_NODE_ANNOTATIONS).toContain(PROVIDED_NODE_IP_ANNOTATION);
  });
});

/** Wraps a node so that every property path read below metadata, spec and status is recorded. */
function recording(node: NodeObject, reads: Set<string>): NodeObject {
  const wrap = (value: unknown, path: string): unknown => {
    if (value === null || typeof value !== 'object') return value;
    return new Proxy(value as object, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver) as unknown;
        if (typeof key !== 'string' || (Array.isArray(target) && (key === 'length' || /^\d+$/.test(key)))) {
          return typeof key === 'string' && /^\d+$/.test(key) ? wrap(v, `${path}[]`) : v;
        }
        if (typeof v === 'function') return v;
        const p = path === '' ? key : `${path}.${key}`;
        reads.add(p);
        return wrap(v, p);
      },
      ownKeys(target) {
        reads.add(`${path}.*`);
        return Reflect.ownKeys(target);
      },
    });
  };
  return wrap(node, '') as NodeObject;
}

/** Whether reading `path` sees only data slimNode keeps (a deeper path under a kept field is fine). */
function keptByTransform(path: string, sample: NodeObject): boolean {
  const slim = slimNode(sample);
  const parts = path.split('.');
  // Reading a key that is absent in both the full and the slim node is harmless.
  let full: unknown = sample;
  let kept: unknown = slim;
  for (const part of parts) {
    const key = part.replace(/\[\]$/, '');
    if (key === '*') return JSON.stringify(full) === JSON.stringify(kept);
    full = (full as Record<string, unknown> | undefined)?.[key];
    kept = (kept as Record<string, unknown> | undefined)?.[key];
    if (part.endsWith('[]')) {
      full = (full as unknown[] | undefined)?.[0];
      kept = (kept as unknown[] | undefined)?.[0];
    }
    if (full === undefined) return true;
    if (kept === undefined) return false;
  }
  return true;
}

const cluster = useDouble();

describe('the controllers read nothing the node transform drops', () => {
  it('initialise, allocate, refresh and audit over full Nodes: every property read is one slimNode keeps', async () => {
    const reads = new Set<string>();
    const cloud = new FakeProvider();
    const names = ['fresh-1', 'fresh-2', 'held-1'];
    names.forEach((n, i) => cloud.setInstance(n, { addresses: [ip(`10.0.0.${i + 5}`), ip(`fd00::${i + 5}`)], zone: 'z1', region: 'r1', instanceType: 't1' }));
    const create = (n: NodeObject) => {
      // The API server sets these on create.
      delete n.metadata.resourceVersion;
      delete n.metadata.uid;
      delete n.metadata.creationTimestamp;
      cluster.api.store.create('nodes', n as never);
    };
    // Each its own instance (index): two Nodes with one providerID would be refused.
    create(realisticNode('fresh-1', { index: 1, nodeIP: '10.0.0.5', tainted: true }));
    create(realisticNode('fresh-2', { index: 2, tainted: false }));
    create(realisticNode('held-1', { index: 3, tainted: false, podCIDRs: ['10.244.9.0/24'] }));
    // The cloud answers with the instance each kubelet named (an answer about another instance is refused).
    for (const n of names) cloud.updateInstance(n, { providerID: (cluster.api.store.get('nodes', n) as unknown as NodeObject).spec!.providerID! });
    const options = resolveRunOptions({ cloudProvider: 'fake', controllers: '*,cloud-node-lifecycle', allocateNodeCidrs: true, clusterCidr: '10.244.0.0/16', leaderElect: 'false', nodeStatusUpdateFrequency: '300ms', nodeMonitorPeriod: '200ms' });
    const running = cluster.runManager(options, { provider: cloud, nodeTransform: (n) => recording(n, reads) as typeof n, auditIntervalMs: 200 });
    // Called at the start of each audit round, which then reads every cached node.
    let audits = 0;
    running.manager.beforeLargeAllocation = () => audits++;
    const stored = (name: string) => cluster.api.store.get('nodes', name) as unknown as NodeObject;
    await eventually(() => !hasUninitializedTaint(stored('fresh-1')) && nodePodCIDRs(stored('fresh-2')).length > 0, { timeoutMs: 10_000, what: 'nodes initialised and allocated' });
    // A refresh round with a changed cloud address, and an audit round.
    cloud.updateInstance('fresh-2', { addresses: [ip('10.0.0.66')], zone: 'z1' });
    await eventually(() => stored('fresh-2').status?.addresses?.some((a) => a.address === '10.0.0.66') === true, { timeoutMs: 10_000, what: 'refresh' });
    // Two audit rounds after the refresh: the second is sure to read the refreshed cache.
    const auditsBefore = audits;
    await eventually(() => audits >= auditsBefore + 2, { timeoutMs: 5000, what: 'two audit rounds' });
    const sample = realisticNode('sample', { nodeIP: '10.0.0.5', podCIDRs: ['10.244.1.0/24'], tainted: true });
    const dropped = [...reads].filter((p) => !keptByTransform(p, sample)).sort();
    expect(reads.size).toBeGreaterThan(5);
    expect(dropped).toEqual([]);
  });
});
