import { describe, it, expect } from 'vitest';
import { FakeProvider } from '../../providers/fake/fake.js';
import { createProvider } from '../../providers/index.js';

const addr = (address: string) => [{ type: 'InternalIP' as const, address }];

describe('FakeProvider', () => {
  it('answers from programmed instances with defaults and copies', async () => {
    const fake = new FakeProvider({ instances: { a: { addresses: addr('10.0.0.1'), zone: 'z1' } } });
    fake.setInstance('b', { providerID: 'aws:///z/i-1', addresses: addr('10.0.0.2'), shutdown: true });
    const md = await fake.instancesMetadata([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    expect(md.get('a')).toEqual({ kind: 'found', value: { providerID: 'fake://a', zone: 'z1', addresses: addr('10.0.0.1') } });
    expect(md.get('b')).toEqual({ kind: 'found', value: { providerID: 'aws:///z/i-1', addresses: addr('10.0.0.2') } });
    expect(md.get('c')?.kind).toBe('notFound');
    const a = md.get('a');
    if (a?.kind === 'found') a.value.addresses[0]!.address = 'mutated';
    expect(fake.getInstance('a')?.addresses).toEqual(addr('10.0.0.1'));
    expect([...(await fake.instancesExist([{ name: 'a' }, { name: 'c' }])).values()]).toEqual([
      { kind: 'found', value: true },
      { kind: 'found', value: false },
    ]);
    const down = await fake.instancesShutdown([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    expect(down.get('a')).toEqual({ kind: 'found', value: false });
    expect(down.get('b')).toEqual({ kind: 'found', value: true });
    expect(down.get('c')?.kind).toBe('notFound');
  });

  it('updates, shuts down and removes instances', async () => {
    const fake = new FakeProvider().setInstance('a', { addresses: addr('10.0.0.1') });
    fake.updateInstance('a', { addresses: addr('10.0.0.9') }).setShutdown('a');
    expect((await fake.instancesMetadata([{ name: 'a' }])).get('a')).toEqual({ kind: 'found', value: { providerID: 'fake://a', addresses: addr('10.0.0.9') } });
    expect((await fake.instancesShutdown([{ name: 'a' }])).get('a')).toEqual({ kind: 'found', value: true });
    fake.setNotFound('a');
    expect((await fake.instancesMetadata([{ name: 'a' }])).get('a')?.kind).toBe('notFound');
    expect(() => fake.updateInstance('a', {})).toThrow(/no instance for node "a"/);
    expect(fake.instanceNames()).toEqual([]);
  });

  it('fails whole calls N times, per-node until cleared, and by rejection', async () => {
    const fake = new FakeProvider().setInstance('a', { addresses: addr('10.0.0.1') }).setInstance('b', { addresses: addr('10.0.0.2') });
    const kinds = async () => [...(await fake.instancesMetadata([{ name: 'a' }, { name: 'b' }])).values()].map((r) => r.kind);

    fake.failNext(2, 'throttled');
    expect(await kinds()).toEqual(['error', 'error']);
    const second = (await fake.instancesMetadata([{ name: 'a' }])).get('a');
    expect(second).toMatchObject({ kind: 'error', retryable: true });
    expect(second?.kind === 'error' && second.error.message).toBe('throttled');
    expect(await kinds()).toEqual(['found', 'found']);

    fake.failNode('b');
    expect(await kinds()).toEqual(['found', 'error']);
    expect(await kinds()).toEqual(['found', 'error']);
    fake.clearFailures('b');
    expect(await kinds()).toEqual(['found', 'found']);

    fake.failNode('a', new Error('once'), 1);
    expect(await kinds()).toEqual(['error', 'found']);
    expect(await kinds()).toEqual(['found', 'found']);

    fake.rejectNext(1, new Error('connection reset'));
    await expect(fake.instancesExist([{ name: 'a' }])).rejects.toThrow('connection reset');
    expect(await kinds()).toEqual(['found', 'found']);

    fake.failNext(5).failNode('a');
    fake.clearFailures();
    expect(await kinds()).toEqual(['found', 'found']);
  });

  it('counts calls per method and nodes per call', async () => {
    const fake = new FakeProvider().setInstance('a', { addresses: [] });
    await fake.instancesMetadata([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    await fake.instancesMetadata([{ name: 'a' }]);
    await fake.instancesExist([{ name: 'a' }, { name: 'b' }]);
    expect(fake.callCount()).toBe(3);
    expect(fake.callCount('instancesMetadata')).toBe(2);
    expect(fake.callCount('instancesShutdown')).toBe(0);
    expect(fake.nodesPerCall('instancesMetadata')).toEqual([3, 1]);
    expect(fake.nodesPerCall()).toEqual([3, 1, 2]);
    expect(fake.lookupsOf('a')).toBe(3);
    expect(fake.lookupsOf('b', 'instancesMetadata')).toBe(1);
    expect(fake.calls[2]).toEqual({ method: 'instancesExist', nodes: ['a', 'b'] });
    fake.resetCalls();
    expect(fake.callCount()).toBe(0);
  });

  it('adds latency and honours abort signals', async () => {
    const fake = new FakeProvider({ latencyMs: 30 }).setInstance('a', { addresses: [] });
    const started = Date.now();
    const pending = fake.instancesMetadata([{ name: 'a' }]);
    let settled = false;
    void pending.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 5));
    expect(settled).toBe(false);
    expect((await pending).get('a')?.kind).toBe('found');
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);

    fake.latencyMs = 10_000;
    const ac = new AbortController();
    const aborted = fake.instancesMetadata([{ name: 'a' }], ac.signal);
    ac.abort(new Error('shutting down'));
    await expect(aborted).rejects.toThrow('shutting down');
    await expect(fake.instancesMetadata([{ name: 'a' }], ac.signal)).rejects.toThrow('shutting down');
  });

  it('is registered as --cloud-provider fake and resets fully', async () => {
    const p = await createProvider('fake', {});
    expect(p).toBeInstanceOf(FakeProvider);
    const fake = p as FakeProvider;
    fake.setInstance('a', { addresses: [] }).failNext(1);
    await fake.instancesExist([{ name: 'a' }]);
    fake.reset();
    expect(fake.callCount()).toBe(0);
    expect((await fake.instancesExist([{ name: 'a' }])).get('a')).toEqual({ kind: 'found', value: false });
    await fake.close();
    expect(fake.closed).toBe(true);
  });
});
