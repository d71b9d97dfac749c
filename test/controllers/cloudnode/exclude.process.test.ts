// --node-address-exclude-cidrs through a real `run` process (the built binary) against the API
// server double and the static cloud: a node on a storage network gets the right InternalIP; an
// annotation that names a storage address leaves the node tainted with an event saying why;
// without the flag, Kubernetes' behaviour is unchanged (the storage address comes first).
import { describe, expect, it } from 'vitest';
import type { NodeObject } from '../../../src/model/node.js';
import { createNode, isInitialised, storedNode, useDouble, type StaticNodeEntry } from '../../kit/double.js';
import { eventually } from '../../kit/wait.js';

const cluster = useDouble();

const I = (address: string) => ({ type: 'InternalIP' as const, address });
const CLOUD: Record<string, StaticNodeEntry> = {
  'storage-a': { providerID: 'static://storage-a', addresses: [I('192.168.50.7'), I('10.0.0.7'), I('fd00:50::7'), I('fd00:1::7')] },
  'storage-b': { providerID: 'static://storage-b', addresses: [I('192.168.50.8'), I('10.0.0.8')] },
};

function eventsFor(name: string): { reason: string; message: string; type: string }[] {
  return (cluster.api.store.list('events', { namespace: 'default' }) as unknown as { involvedObject: { name: string }; reason: string; message: string; type: string }[])
    .filter((e) => e.involvedObject.name === name);
}

const addressesOf = (n: NodeObject) => (n.status?.addresses ?? []).map((a) => `${a.type}=${a.address}`);

describe('--node-address-exclude-cidrs (real run process)', () => {
  it('excluded networks never reach status.addresses; an annotation naming one keeps the node tainted with a Warning', async () => {
    cluster.writeCloudConfig(CLOUD);
    createNode(cluster.api, { name: 'storage-a', nodeIP: null });
    createNode(cluster.api, { name: 'storage-b', nodeIP: '192.168.50.8' });
    const run = cluster.startRun(['--node-address-exclude-cidrs=192.168.50.0/24,fd00:50::/64', '--controllers=cloud-node']);
    await eventually(() => isInitialised(cluster.api, 'storage-a'), { timeoutMs: 15_000, what: 'storage-a initialised', describe: () => run.tail(20) });
    expect(addressesOf(storedNode(cluster.api, 'storage-a'))).toEqual(['InternalIP=10.0.0.7', 'InternalIP=fd00:1::7', 'Hostname=storage-a']);

    await eventually(() => eventsFor('storage-b').some((e) => e.reason === 'ProvidedNodeIPInvalid'), { timeoutMs: 15_000, what: 'the Warning on storage-b' });
    const event = eventsFor('storage-b').find((e) => e.reason === 'ProvidedNodeIPInvalid');
    expect(event).toMatchObject({ type: 'Warning', message: 'provided node IP "192.168.50.8" is not usable: node IP 192.168.50.8 is inside 192.168.50.0/24, which --node-address-exclude-cidrs excludes' });
    expect(isInitialised(cluster.api, 'storage-b')).toBe(false);
  });

  it('without the flag nothing is excluded (Kubernetes\' behaviour): the storage address comes first', async () => {
    cluster.writeCloudConfig(CLOUD);
    createNode(cluster.api, { name: 'storage-a', nodeIP: null });
    const run = cluster.startRun(['--controllers=cloud-node']);
    await eventually(() => isInitialised(cluster.api, 'storage-a'), { timeoutMs: 15_000, what: 'storage-a initialised', describe: () => run.tail(20) });
    expect(addressesOf(storedNode(cluster.api, 'storage-a'))[0]).toBe('InternalIP=192.168.50.7');
  });

  it('a bad list is one line naming the flag and the entry, exit 2', async () => {
    const run = cluster.startRun(['--node-address-exclude-cidrs=192.168.50.0/24,storage']);
    expect(await run.exited).toBe(2);
    expect(run.stderr).toBe('error: --node-address-exclude-cidrs: "storage" is not a CIDR (e.g. 192.168.50.0/24 or fd00:50::/64)\n');
  });
});
