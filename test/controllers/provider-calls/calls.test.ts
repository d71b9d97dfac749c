// ProviderCalls against the fake provider poisoned per node (a call holding the node rejects,
// answers a BatchError for all, or hangs past the CheckedProvider deadline a module gets): the
// others get their own answers in the same round, the bad node ends alone with its own failure, is
// remembered (by uid) and asked alone from then on, and every call is counted.
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { CheckedProvider } from '../../../providers/checked-provider.js';
import { FakeProvider } from '../../../providers/fake/fake.js';
import { BatchError, type InstanceResult } from '../../../providers/types.js';
import { ProviderCalls } from '../../../src/controllers/provider-calls/calls.js';
import type { NodeObject } from '../../../src/model/node.js';
import { makeNode } from '../../kit/nodes.js';

function cloudOf(n: number): { cloud: FakeProvider; nodes: NodeObject[] } {
  const cloud = new FakeProvider();
  const nodes: NodeObject[] = [];
  for (let i = 0; i < n; i++) {
    const name = `n${i}`;
    cloud.setInstance(name, { addresses: [{ type: 'InternalIP', address: `10.0.${i >> 8}.${i & 255}` }] });
    nodes.push(makeNode({ name, uid: `uid-${i}` }));
  }
  return { cloud, nodes };
}

const kinds = (answers: Map<string, InstanceResult<unknown>>): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const a of answers.values()) out[a.kind] = (out[a.kind] ?? 0) + 1;
  return out;
};

describe('ProviderCalls', () => {
  it.each(['reject', 'batch-error'] as const)('one node whose batches fail (%s) among 500: 499 found, the bad one its own error; at most 19 calls', async (how) => {
    const { cloud, nodes } = cloudOf(500);
    cloud.poisonBatches('n321', how, 'the inventory chokes on n321');
    const registry = new Registry();
    const calls = new ProviderCalls({ provider: cloud, registry });
    const answers = await calls.ask('instancesMetadata', nodes);
    expect(kinds(answers)).toEqual({ found: 499, error: 1 });
    const bad = answers.get('n321');
    expect(bad?.kind === 'error' && bad.error.message).toBe('the inventory chokes on n321');
    expect(cloud.callCount()).toBeLessThanOrEqual(19);
    // No healthy node was asked more than ceil(log2 500) + 1 times.
    expect(Math.max(...nodes.filter((n) => n.metadata.name !== 'n321').map((n) => cloud.lookupsOf(n.metadata.name)))).toBeLessThanOrEqual(10);
    expect(calls.aloneCount()).toBe(1);
    const text = await registry.metrics();
    expect(text).toContain(`cloudprovider_requests_total{provider="fake",operation="instancesMetadata",result="error"} 10`);
  });

  it('a node found failing alone is asked alone afterwards: the rest of its batch is one call, and does not wait for it', async () => {
    const { cloud, nodes } = cloudOf(6);
    cloud.poisonBatches('n2', 'reject');
    const calls = new ProviderCalls({ provider: cloud });
    await calls.ask('instancesMetadata', nodes.slice(0, 4));
    cloud.resetCalls();
    cloud.poisonBatches('n2', 'hang');
    const asked = await calls.askApart('instancesMetadata', nodes, AbortSignal.timeout(300));
    expect([...asked.answers.keys()].sort()).toEqual(['n0', 'n1', 'n3', 'n4', 'n5']);
    expect([...asked.alone.keys()]).toEqual(['n2']);
    expect(cloud.calls.map((c) => c.nodes)).toEqual([['n2'], ['n0', 'n1', 'n3', 'n4', 'n5']]);
    // Once it answers, it rejoins batches.
    cloud.clearFailures();
    expect((await asked.alone.get('n2'))?.kind).toBe('error');
    expect((await calls.ask('instancesMetadata', [nodes[2]!])).get('n2')?.kind).toBe('found');
    expect(calls.aloneCount()).toBe(0);
    cloud.resetCalls();
    await calls.ask('instancesMetadata', nodes);
    expect(cloud.nodesPerCall()).toEqual([6]);
  });

  it('remembers the node by uid: a new Node of the same name is asked with its batch', async () => {
    const { cloud, nodes } = cloudOf(4);
    cloud.poisonBatches('n1', 'reject');
    const calls = new ProviderCalls({ provider: cloud });
    await calls.ask('instancesExist', nodes);
    cloud.clearFailures();
    cloud.resetCalls();
    const recreated = makeNode({ name: 'n1', uid: 'uid-new' });
    await calls.ask('instancesExist', [nodes[0]!, recreated, nodes[2]!]);
    expect(cloud.nodesPerCall()).toEqual([3]);
  });

  it('a hang past the deadline is split too; the healthy half is heard as soon as its call returns', async () => {
    const { cloud, nodes } = cloudOf(8);
    cloud.poisonBatches('n7', 'hang');
    const checked = new CheckedProvider(cloud, { timeoutMs: 200 });
    const calls = new ProviderCalls({ provider: checked });
    const heard: [string, number][] = [];
    const started = Date.now();
    const asked = await calls.askApart('instancesMetadata', nodes, undefined, (node) => heard.push([node.metadata.name, Date.now() - started]));
    expect(kinds(asked.answers)).toEqual({ found: 7, error: 1 });
    expect(asked.answers.get('n7')).toMatchObject({ kind: 'error', error: { message: 'provider fake did not answer instancesMetadata within 0.2s' } });
    // Rounds: 8 (times out), 4+4 (n0..n3 answer), 2+2 (n4, n5), 1+1 (n6; n7 times out): each
    // half is heard when its own call returns, before the rounds of the other half.
    const at = new Map(heard);
    expect(heard.slice(0, 4).map(([n]) => n).sort()).toEqual(['n0', 'n1', 'n2', 'n3']);
    expect(heard.slice(4, 6).map(([n]) => n).sort()).toEqual(['n4', 'n5']);
    expect(heard.slice(6).map(([n]) => n)).toEqual(['n6', 'n7']);
    expect(at.get('n0')!).toBeGreaterThanOrEqual(200);
    expect(at.get('n6')!).toBeGreaterThanOrEqual(600);
    expect(at.get('n6')! - at.get('n0')!).toBeGreaterThanOrEqual(350);
  });

  it('a provider that fails every call: 15 calls for a batch of 500, every node an error that says the batch failed', async () => {
    const { cloud, nodes } = cloudOf(500);
    cloud.rejectNext(Infinity, 'the cloud API is down');
    const calls = new ProviderCalls({ provider: cloud });
    const answers = await calls.ask('instancesShutdown', nodes);
    expect(cloud.callCount()).toBe(15);
    expect(kinds(answers)).toEqual({ error: 500 });
    const a = answers.get('n0');
    expect(a?.kind === 'error' && a.error.message).toMatch(/^the cloud API is down \(the provider failed for every node of its batch of \d+\)$/);
    // Nobody answered: no node is blamed, none is asked alone next time.
    expect(calls.aloneCount()).toBe(0);
  });

  it('a node that fails alone in a batch of its own is not remembered (no one else was answered)', async () => {
    const { cloud, nodes } = cloudOf(1);
    cloud.rejectNext(1, 'throttled');
    const calls = new ProviderCalls({ provider: cloud });
    expect((await calls.ask('instancesExist', nodes)).get('n0')).toMatchObject({ kind: 'error', error: { message: 'throttled' } });
    expect(calls.aloneCount()).toBe(0);
  });

  it('per-node errors are answers: not split', async () => {
    const { cloud, nodes } = cloudOf(10);
    cloud.failNode('n3', 'its own problem');
    const calls = new ProviderCalls({ provider: cloud });
    const answers = await calls.ask('instancesMetadata', nodes);
    expect(kinds(answers)).toEqual({ found: 9, error: 1 });
    expect(cloud.callCount()).toBe(1);
  });

  it('several BatchErrors in one answer (several requests of a webhook failing) are split each on its own', async () => {
    const { cloud, nodes } = cloudOf(8);
    const calls = new ProviderCalls({ provider: {
      name: 'shards',
      // Two "requests" of four nodes; a request holding n1 or n6 fails as a whole.
      async instancesMetadata(refs) {
        const out = new Map<string, InstanceResult<never>>();
        for (let i = 0; i < refs.length; i += 4) {
          const part = refs.slice(i, i + 4);
          const bad = part.find((r) => r.name === 'n1' || r.name === 'n6');
          const error = new BatchError(`request failed because of ${bad?.name}`);
          for (const r of part) out.set(r.name, bad ? { kind: 'error', error, retryable: true } : (await cloud.instancesMetadata([r])).get(r.name) as never);
        }
        return out;
      },
      instancesExist: () => Promise.resolve(new Map()),
      instancesShutdown: () => Promise.resolve(new Map()),
    } });
    const answers = await calls.ask('instancesMetadata', nodes);
    expect(kinds(answers)).toEqual({ found: 6, error: 2 });
    expect(answers.get('n1')).toMatchObject({ kind: 'error', error: { message: 'request failed because of n1' } });
    expect(answers.get('n6')).toMatchObject({ kind: 'error', error: { message: 'request failed because of n6' } });
  });

  it('once the signal aborts, nothing is split or asked again', async () => {
    const { cloud, nodes } = cloudOf(16);
    cloud.poisonBatches('n0', 'hang');
    const abort = new AbortController();
    const calls = new ProviderCalls({ provider: cloud });
    const pending = calls.ask('instancesMetadata', nodes, abort.signal);
    await new Promise((r) => setTimeout(r, 20));
    abort.abort(new Error('stopping'));
    const answers = await pending;
    expect(kinds(answers)).toEqual({ error: 16 });
    expect(cloud.callCount()).toBe(1);
  });
});
