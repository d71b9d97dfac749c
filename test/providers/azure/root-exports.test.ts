import { describe, expect, it } from 'vitest';
import { azureNodeAddresses, formatAzureProviderID, parseAzureCloudConfig, parseAzureProviderID } from '../../../src/index.js';
import { knownProviders, providerInfo } from '../../../providers/index.js';

describe('package root: azure', () => {
  it('exports the pure mapping, the providerID parser and the config parser', () => {
    const nic = '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/n';
    expect(azureNodeAddresses({ nodeName: 'vm', nics: [{ id: nic }], interfaces: new Map([[nic.toLowerCase(), { ipConfigurations: [{ privateIPAddress: '10.0.0.4' }] }]]), publicIPs: new Map() }, { ipFamilies: [4] }))
      .toEqual([{ type: 'InternalIP', address: '10.0.0.4' }, { type: 'Hostname', address: 'vm' }]);
    expect(parseAzureProviderID(formatAzureProviderID('/subscriptions/s/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/vm'))).toEqual({ kind: 'vm', subscriptionId: 's', resourceGroup: 'rg', name: 'vm' });
    expect(parseAzureCloudConfig('{"subscriptionId": "s", "resourceGroup": "rg", "useManagedIdentityExtension": true}').credential).toEqual({ kind: 'managedIdentity' });
  });
  it('registers azure for --cloud-provider, with its config required and its SDK named', () => {
    expect(knownProviders()).toContain('azure');
    expect(providerInfo('azure')).toMatchObject({ cloudConfig: 'required', sdk: ['@azure/identity', '@azure/arm-compute', '@azure/arm-network'] });
  });
});
