// providerIDs, zones, power states and ARM's Retry-After. Rows marked "reference" re-express
// cases of kubernetes-sigs/cloud-provider-azure's tests:
//   pkg/provider/azure_instances_test.go, TestInstanceShutdownByProviderID (power and provisioning
//     states) and TestInstanceExistsByProviderID (providerIDs of VMs and scale-set instances);
//   pkg/provider/azure_standard.go, GetZoneByNodeName (`<location>-<zone>`, else the fault domain).
import { describe, expect, it } from 'vitest';
import { formatAzureProviderID, instanceKey, parseAzureProviderID, resourceGroupOf } from '../../../providers/azure/provider-id.js';
import { azureIsShutdown, azurePowerState, azureProvisioningState, azureZone } from '../../../providers/azure/instance.js';
import { retryAfterMs, ThrottleGate } from '../../../providers/azure/throttle.js';

describe('azure providerIDs', () => {
  it('reference: a VM and a scale-set instance', () => {
    expect(parseAzureProviderID('azure:///subscriptions/subscription/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm2'))
      .toEqual({ kind: 'vm', subscriptionId: 'subscription', resourceGroup: 'rg', name: 'vm2' });
    expect(parseAzureProviderID('azure:///subscriptions/script/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmssee6c2/virtualMachines/0'))
      .toEqual({ kind: 'vmss', subscriptionId: 'script', resourceGroup: 'rg', scaleSet: 'vmssee6c2', instanceId: '0' });
  });

  it.each([
    ['/subscriptions/subscription/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1', /does not start with azure:\/\//], // reference: an unmanaged node's ID
    ['azure:///subscriptions/subscription/resourceGroups/rg/providers/Microsoft.Compute/VM/vm9', /is neither/], // reference: "error splitting providerID"
    ['azure:///subscriptions/subscription/resourceGroups/rg/providers/Microsoft.Compute/virtualMachine/vm3', /is neither/], // reference
    ['azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/ss/virtualMachines/x', /is neither/],
    ['azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm/extra', /is neither/],
    ['aws:///eu-west-1a/i-0123', /does not start with azure:\/\//],
  ])('%s is refused', (id, message) => {
    expect(() => parseAzureProviderID(id)).toThrow(message);
  });

  it('matches whatever the case, and is written with the resource group in lower case', () => {
    const a = parseAzureProviderID('azure:///subscriptions/S/resourcegroups/MC_RG_Aks/providers/microsoft.compute/virtualmachinescalesets/AKS-pool/virtualmachines/3');
    const b = parseAzureProviderID('azure:///subscriptions/s/resourceGroups/mc_rg_aks/providers/Microsoft.Compute/virtualMachineScaleSets/aks-pool/virtualMachines/3');
    expect(instanceKey(a)).toBe(instanceKey(b));
    expect(formatAzureProviderID('/subscriptions/Sub/resourceGroups/MC_RG/providers/Microsoft.Compute/virtualMachines/Node-1'))
      .toBe('azure:///subscriptions/Sub/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachines/Node-1');
    expect(resourceGroupOf('/subscriptions/s/resourceGroups/Net-RG/providers/Microsoft.Network/networkInterfaces/n')).toBe('Net-RG');
  });
});

// Rows marked "reference" re-express TestGetZoneByNodeName (pkg/provider/azure_vmss_test.go);
// the others follow GetZoneByNodeName of azure_standard.go (standalone VMs) and azure_vmssflex.go.
describe('zones (reference: GetZoneByNodeName)', () => {
  it.each([
    ['reference: a zoned scale-set instance', 'westus', ['2'], 3, true, 'westus-2'],
    ['reference: in lower case', 'WestUS', ['2'], 3, true, 'westus-2'],
    ['reference: a scale-set instance without zone: its fault domain', 'westus', undefined, 3, true, '3'],
    ['a zoned standalone VM', 'WestEurope', ['3'], undefined, false, 'westeurope-3'],
    ['a standalone VM without zone: its fault domain', 'eastus', undefined, 2, false, '2'],
    ['fault domain 0', 'eastus', [], 0, true, '0'],
    ['a standalone VM with neither: 0 (azure_standard.go)', 'eastus', undefined, undefined, false, '0'],
  ] as const)('%s', (_name, location, zones, fd, inScaleSet, want) => {
    expect(azureZone(location, zones as string[] | undefined, fd, inScaleSet)).toBe(want);
  });

  it('a scale-set instance (uniform or flexible) with neither zone nor fault domain is an error: the node is retried', () => {
    expect(() => azureZone('westus', undefined, undefined, true)).toThrow(/^failed to get zone info/);
    expect(() => azureZone('westus', [], undefined, true)).toThrow(/^failed to get zone info/);
  });

  it('a zone that is no number is an error', () => {
    expect(() => azureZone('westus', ['a'], 1, false)).toThrow(/zones: "a" is not a zone number/);
  });
});

describe('shut down (reference: TestInstanceShutdownByProviderID)', () => {
  it.each([
    ['PowerState/Running', 'Succeeded', false],
    ['PowerState/Deallocated', 'Succeeded', true],
    ['PowerState/Deallocating', 'Succeeded', true],
    ['PowerState/Starting', 'Succeeded', false],
    ['PowerState/Stopped', 'Succeeded', true],
    ['PowerState/Stopped', 'Creating', false],
    ['PowerState/Stopping', 'Succeeded', false],
    ['PowerState/Unknown', 'Succeeded', false],
  ])('%s with provisioning state %s → %s', (power, provisioning, want) => {
    const statuses = [{ code: `ProvisioningState/${provisioning.toLowerCase()}` }, { code: power }];
    expect(azureIsShutdown(azurePowerState(statuses), provisioning)).toBe(want);
    expect(azureIsShutdown(azurePowerState(statuses), azureProvisioningState(statuses))).toBe(want);
  });
  it('no instance view: not shut down', () => {
    expect(azureIsShutdown(azurePowerState(undefined), 'Succeeded')).toBe(false);
  });
});

describe('Retry-After', () => {
  const headers = (h: Record<string, string>) => (n: string) => h[n];
  it.each([
    [{ 'retry-after': '17' }, 17_000],
    [{ 'retry-after': '0' }, 0],
    [{ 'retry-after-ms': '250' }, 250],
    [{ 'x-ms-retry-after-ms': '1200', 'retry-after': '9' }, 1200],
    [{ 'retry-after': new Date(1_000_000 + 5_000).toUTCString() }, 5_000],
    [{ 'retry-after': 'soon' }, undefined],
    [{}, undefined],
  ])('%j → %s ms', (h, want) => {
    expect(retryAfterMs(headers(h), 1_000_000)).toBe(want);
  });

  it('the gate holds every caller until Retry-After has passed, capped', async () => {
    let now = 0;
    const gate = new ThrottleGate({ now: () => now, maxWaitMs: 10_000 });
    expect(gate.waitMs()).toBe(0);
    gate.throttled(3_000);
    expect(gate.waitMs()).toBe(3_000);
    gate.throttled(1_000); // a shorter answer never reopens it early
    expect(gate.waitMs()).toBe(3_000);
    gate.throttled(120_000);
    expect(gate.waitMs()).toBe(10_000);
    now += 10_000;
    expect(gate.waitMs()).toBe(0);
    await gate.wait();
    expect(gate.throttles).toBe(3);
  });
});
