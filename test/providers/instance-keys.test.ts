// Which providerIDs name one instance, per built-in adapter (CloudProvider.instanceKey), on the
// forms each cloud's own tooling writes: the controllers refuse an answer whose providerID names
// another instance than the node's own, and compare live Nodes' providerIDs with these keys.
import { describe, expect, it } from 'vitest';
import { awsInstanceKey } from '../../providers/aws/provider-id.js';
import { azureInstanceKey } from '../../providers/azure/provider-id.js';
import { CheckedProvider } from '../../providers/checked-provider.js';
import { gceInstanceKey } from '../../providers/gce/provider-id.js';
import { kindInstanceKey } from '../../providers/kind/provider-id.js';
import { createProvider } from '../../providers/registry.js';
import type { CloudProvider } from '../../providers/types.js';
import { FakeProvider } from '../../providers/fake/fake.js';

const same = (key: (id: string) => string | undefined, ...ids: string[]) => {
  const keys = ids.map(key);
  expect(keys[0]).toBeDefined();
  for (const k of keys) expect(k).toBe(keys[0]);
};

describe('instance keys of the built-in adapters', () => {
  it('aws: the zone segment is not part of the identity (cloud-provider-aws MapToAWSInstanceID)', () => {
    // What EKS kubelets write, the zone-less forms cloud-provider-aws accepts, and a bare ID.
    same(awsInstanceKey, 'aws:///us-east-1a/i-0123456789abcdef0', 'aws:///i-0123456789abcdef0', 'aws:////i-0123456789abcdef0', 'i-0123456789abcdef0', 'aws:///eu-west-1b/i-0123456789abcdef0');
    expect(awsInstanceKey('aws:///us-east-1a/i-0123456789abcdef0')).not.toBe(awsInstanceKey('aws:///us-east-1a/i-0123456789abcdef1'));
    for (const bad of ['', 'aws://123456789012/us-east-1a/i-0abc', 'aws:///us-east-1a/vol-0abc', 'gce://p/us-central1-a/n']) expect(awsInstanceKey(bad)).toBeUndefined();
  });

  it('azure: ARM resource IDs are case-insensitive', () => {
    const vm = 'azure:///subscriptions/0d1ea9c5-8a7b-4d6e-9f00-1a2b3c4d5e6f/resourceGroups/MC_rg_aks_westeurope/providers/Microsoft.Compute/virtualMachines/aks-nodepool1-12345678-vm0';
    same(azureInstanceKey, vm, vm.toLowerCase(), vm.replace('resourceGroups', 'resourcegroups').replace('MC_rg', 'mc_RG'), vm.toUpperCase().replace('AZURE://', 'azure://'));
    const vmss = 'azure:///subscriptions/0d1ea9c5-8a7b-4d6e-9f00-1a2b3c4d5e6f/resourceGroups/mc_rg_aks_westeurope/providers/Microsoft.Compute/virtualMachineScaleSets/aks-nodepool1-12345678-vmss/virtualMachines/3';
    same(azureInstanceKey, vmss, vmss.replace('aks-nodepool1', 'AKS-NODEPOOL1'));
    expect(azureInstanceKey(vmss)).not.toBe(azureInstanceKey(vmss.replace(/3$/, '4')));
    expect(azureInstanceKey(vmss)).not.toBe(azureInstanceKey(vm));
    for (const bad of ['', '/subscriptions/x/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm', 'azure:///subscriptions/x/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/nic']) expect(azureInstanceKey(bad)).toBeUndefined();
  });

  it('gce: project, zone and name, one spelling each', () => {
    same(gceInstanceKey, 'gce://my-project-123/us-central1-a/gke-pool-1-abcd', 'gce://my-project-123/us-central1-a/gke-pool-1-abcd');
    expect(gceInstanceKey('gce://my-project-123/us-central1-a/n1')).not.toBe(gceInstanceKey('gce://my-project-123/us-central1-b/n1'));
    for (const bad of ['', 'gce://My-Project/us-central1-a/n1', 'gce://p/us-central1-a', 'aws:///us-east-1a/i-0abc']) expect(gceInstanceKey(bad)).toBeUndefined();
  });

  it('kind: cluster and node container', () => {
    same(kindInstanceKey, 'kind://kind/kind/kind-worker');
    expect(kindInstanceKey('kind://kind/kind/kind-worker')).not.toBe(kindInstanceKey('kind://kind/kind/kind-worker2'));
    expect(kindInstanceKey('kind://kind/kind/kind-worker')).not.toBe(kindInstanceKey('kind://other/kind/kind-worker'));
    for (const bad of ['', 'kind://kind/docker', 'kind-worker']) expect(kindInstanceKey(bad)).toBeUndefined();
  });

  it('static: the file\'s spelling, compared as written', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const dir = await mkdtemp(path.join(tmpdir(), 'ccm-keys-'));
    try {
      await writeFile(path.join(dir, 'nodes.yaml'), 'nodes: {}\n');
      const p = await createProvider('static', { cloudConfig: path.join(dir, 'nodes.yaml') });
      expect(p.instanceKey?.('static://n1')).toBe('static://n1');
      expect(p.instanceKey?.('Static://n1')).not.toBe(p.instanceKey?.('static://n1'));
      expect(p.instanceKey?.('')).toBeUndefined();
      await p.close?.();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a module\'s instanceKey behind CheckedProvider', () => {
  const withKey = (instanceKey: (id: string) => unknown): CloudProvider => Object.assign(new FakeProvider({ name: 'm' }), { instanceKey }) as unknown as CloudProvider;

  it('is used when it answers a non-empty string; a throw or anything else means "compare as written"', () => {
    expect(new CheckedProvider(withKey((id) => id.toLowerCase()), { timeoutMs: 1000 }).instanceKey?.('M://X')).toBe('m://x');
    expect(new CheckedProvider(withKey(() => { throw new Error('no'); }), { timeoutMs: 1000 }).instanceKey?.('m://x')).toBeUndefined();
    expect(new CheckedProvider(withKey(() => 42), { timeoutMs: 1000 }).instanceKey?.('m://x')).toBeUndefined();
    expect(new CheckedProvider(withKey(() => ''), { timeoutMs: 1000 }).instanceKey?.('m://x')).toBeUndefined();
    expect(new CheckedProvider(new FakeProvider(), { timeoutMs: 1000 }).instanceKey).toBeUndefined();
  });
});
