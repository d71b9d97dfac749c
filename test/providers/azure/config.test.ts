import { describe, expect, it } from 'vitest';
import { parseAzureCloudConfig } from '../../../providers/azure/config.js';
import { parseCloudConfig } from '../../../providers/cloud-config.js';

const SUB = '0b1f6471-1bf0-4dda-aec3-111122223333';
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const CLIENT = '11111111-2222-3333-4444-555555555555';

const base = { cloud: 'AzurePublicCloud', tenantId: TENANT, subscriptionId: SUB, resourceGroup: 'k8s-nodes' };
const json = (o: object) => JSON.stringify(o);

describe('parseAzureCloudConfig', () => {
  it('reads an AKS-style azure.json with a user-assigned identity and ignores the keys it does not use', () => {
    const c = parseAzureCloudConfig(json({
      ...base, location: 'WestEurope', vmType: 'vmss', useManagedIdentityExtension: true, userAssignedIdentityID: CLIENT,
      vnetName: 'aks-vnet', subnetName: 'aks-subnet', securityGroupName: 'aks-nsg', loadBalancerSku: 'standard', cloudProviderBackoff: true,
      cloudProviderRateLimitQPS: 10, useInstanceMetadata: true, excludeMasterFromStandardLB: true,
    }));
    expect(c).toEqual({
      cloud: 'AzurePublicCloud', cloudName: 'AzurePublicCloud', disableAzureStackCloud: false, tenantId: TENANT, subscriptionId: SUB, resourceGroup: 'k8s-nodes', location: 'westeurope', vmType: 'vmss',
      disableAvailabilitySetNodes: false, credential: { kind: 'managedIdentity', clientId: CLIENT }, nodeIPFamilies: [4], nodeIPConfigurations: 'primary',
      ignored: ['vnetName', 'subnetName', 'securityGroupName', 'loadBalancerSku', 'cloudProviderBackoff', 'cloudProviderRateLimitQPS', 'useInstanceMetadata', 'excludeMasterFromStandardLB'],
    });
  });

  it('reads YAML too, and key names whatever their case (as Go decodes azure.json)', () => {
    const c = parseAzureCloudConfig(`SubscriptionID: ${SUB}\nresourcegroup: rg\nVMTYPE: standard\nuseManagedIdentityExtension: true\nnodeIPFamilies: [IPv4, ipv6]\n`);
    expect(c).toMatchObject({ subscriptionId: SUB, resourceGroup: 'rg', vmType: 'standard', credential: { kind: 'managedIdentity' }, nodeIPFamilies: [4, 6] });
    expect(c.credential).toEqual({ kind: 'managedIdentity' });
  });

  it('workload identity from the file, and from the variables the webhook injects (which win)', () => {
    const file = { ...base, useFederatedWorkloadIdentityExtension: true, aadClientId: CLIENT, aadFederatedTokenFile: '/var/run/secrets/azure/tokens/azure-identity-token' };
    expect(parseAzureCloudConfig(json(file)).credential).toEqual({ kind: 'workloadIdentity', tenantId: TENANT, clientId: CLIENT, tokenFile: '/var/run/secrets/azure/tokens/azure-identity-token' });
    const env = { AZURE_CLIENT_ID: 'aaaaaaaa-0000-0000-0000-000000000000', AZURE_TENANT_ID: 'bbbbbbbb-0000-0000-0000-000000000000', AZURE_FEDERATED_TOKEN_FILE: '/token' };
    const c = parseAzureCloudConfig(json({ ...base, useManagedIdentityExtension: true }), env);
    expect(c.credential).toEqual({ kind: 'workloadIdentity', tenantId: env.AZURE_TENANT_ID, clientId: env.AZURE_CLIENT_ID, tokenFile: '/token' });
    expect(c.tenantId).toBe(env.AZURE_TENANT_ID);
  });

  it('managed identity by resource ID, system-assigned, and a client secret', () => {
    const rid = '/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/ccm';
    expect(parseAzureCloudConfig(json({ ...base, useManagedIdentityExtension: true, userAssignedIdentityID: rid })).credential).toEqual({ kind: 'managedIdentity', resourceId: rid });
    expect(parseAzureCloudConfig(json({ ...base, useManagedIdentityExtension: true })).credential).toEqual({ kind: 'managedIdentity' });
    expect(parseAzureCloudConfig(json({ ...base, aadClientId: CLIENT, aadClientSecret: 's3cret' })).credential).toEqual({ kind: 'clientSecret', tenantId: TENANT, clientId: CLIENT, clientSecret: 's3cret' });
  });

  it('cloud names as cloud-provider-azure spells them, and a custom ARM endpoint', () => {
    expect(parseAzureCloudConfig(json({ ...base, cloud: 'azurechinacloud', useManagedIdentityExtension: true })).cloud).toBe('AzureChinaCloud');
    expect(parseAzureCloudConfig(json({ ...base, cloud: 'AzureUSGovernment', useManagedIdentityExtension: true })).cloud).toBe('AzureUSGovernmentCloud');
    expect(parseAzureCloudConfig(json({ ...base, useManagedIdentityExtension: true, resourceManagerEndpoint: 'https://management.local.azurestack.external' })).resourceManagerEndpoint)
      .toBe('https://management.local.azurestack.external/');
  });

  it('a client certificate: path and password (as written, spaces kept); tenant and client from the webhook\'s variables win', () => {
    expect(parseAzureCloudConfig(json({ ...base, aadClientId: CLIENT, aadClientCertPath: ' /etc/kubernetes/cert.pfx ', aadClientCertPassword: ' p w ' })).credential)
      .toEqual({ kind: 'clientCertificate', tenantId: TENANT, clientId: CLIENT, certPath: '/etc/kubernetes/cert.pfx', certPassword: ' p w ' });
    expect(parseAzureCloudConfig(json({ ...base, aadClientId: CLIENT, aadClientCertPath: '/c.pem', aadClientCertPassword: '' })).credential)
      .toEqual({ kind: 'clientCertificate', tenantId: TENANT, clientId: CLIENT, certPath: '/c.pem' });
    const env = { AZURE_CLIENT_ID: 'aaaaaaaa-0000-0000-0000-000000000000', AZURE_TENANT_ID: 'bbbbbbbb-0000-0000-0000-000000000000' };
    expect(parseAzureCloudConfig(json({ ...base, aadClientCertPath: '/c.pem' }), env).credential)
      .toEqual({ kind: 'clientCertificate', tenantId: env.AZURE_TENANT_ID, clientId: env.AZURE_CLIENT_ID, certPath: '/c.pem' });
  });

  it('aadMSIDataPlaneIdentityPath: the identity file', () => {
    expect(parseAzureCloudConfig(json({ ...base, aadMSIDataPlaneIdentityPath: '/var/run/msi/identity.json' })).credential).toEqual({ kind: 'msiDataPlane', path: '/var/run/msi/identity.json' });
  });

  it("credentials in cloud-provider-azure's order: workload identity, managed identity, client secret, client certificate, MSI data plane identity", () => {
    const all = {
      ...base, useFederatedWorkloadIdentityExtension: true, aadFederatedTokenFile: '/t', useManagedIdentityExtension: true, aadClientId: CLIENT,
      aadClientSecret: 's', aadClientCertPath: '/c.pem', aadMSIDataPlaneIdentityPath: '/m.json',
    };
    const kinds: string[] = [];
    const drop = ['useFederatedWorkloadIdentityExtension', 'useManagedIdentityExtension', 'aadClientSecret', 'aadClientCertPath', 'aadMSIDataPlaneIdentityPath'];
    for (let i = 0; i < drop.length; i++) {
      const c = Object.fromEntries(Object.entries(all).filter(([k]) => !drop.slice(0, i).includes(k)));
      kinds.push(parseAzureCloudConfig(json(c)).credential.kind);
    }
    expect(kinds).toEqual(['workloadIdentity', 'managedIdentity', 'clientSecret', 'clientCertificate', 'msiDataPlane']);
  });

  it('AzureStackCloud, with resourceManagerEndpoint or AZURE_ENVIRONMENT_FILEPATH; the variable counts only for it', () => {
    const stack = parseAzureCloudConfig(json({ ...base, cloud: 'AzureStackCloud', resourceManagerEndpoint: 'https://management.local.azurestack.external', useManagedIdentityExtension: true }));
    expect(stack).toMatchObject({ cloud: 'AzureStackCloud', cloudName: 'AzureStackCloud', resourceManagerEndpoint: 'https://management.local.azurestack.external/', disableAzureStackCloud: false });
    expect(stack.environmentFile).toBeUndefined();
    const env = { AZURE_ENVIRONMENT_FILEPATH: '/etc/kubernetes/azurestackcloud.json' };
    expect(parseAzureCloudConfig(json({ ...base, cloud: 'azurestackcloud', useManagedIdentityExtension: true, disableAzureStackCloud: true }), env))
      .toMatchObject({ cloud: 'AzureStackCloud', cloudName: 'azurestackcloud', environmentFile: '/etc/kubernetes/azurestackcloud.json', disableAzureStackCloud: true });
    expect(parseAzureCloudConfig(json({ ...base, useManagedIdentityExtension: true }), env).environmentFile).toBeUndefined();
    // No cloud in the file: the public cloud, and the metadata's first entry is taken.
    expect(parseAzureCloudConfig(json({ ...base, cloud: undefined, useManagedIdentityExtension: true }))).toMatchObject({ cloud: 'AzurePublicCloud' });
    expect(parseAzureCloudConfig(json({ ...base, cloud: undefined, useManagedIdentityExtension: true })).cloudName).toBeUndefined();
  });

  it('disableAvailabilitySetNodes with vmss; nodeIPConfigurations primary (default) or all', () => {
    expect(parseAzureCloudConfig(json({ ...base, vmType: 'vmss', disableAvailabilitySetNodes: true, useManagedIdentityExtension: true })).disableAvailabilitySetNodes).toBe(true);
    expect(parseAzureCloudConfig(json({ ...base, useManagedIdentityExtension: true, nodeIPConfigurations: 'All' })).nodeIPConfigurations).toBe('all');
    expect(parseAzureCloudConfig(json({ ...base, useManagedIdentityExtension: true, nodeIPConfigurations: 'primary' })).nodeIPConfigurations).toBe('primary');
  });

  it.each([
    [{ ...base, subscriptionId: undefined, useManagedIdentityExtension: true }, 'subscriptionId: required'],
    [{ ...base, resourceGroup: '', useManagedIdentityExtension: true }, 'resourceGroup: required'],
    [{ ...base, resourceGroup: 'a/b', useManagedIdentityExtension: true }, 'resourceGroup: "a/b" is not a resource group name'],
    [{ ...base, vmType: 'vmas', useManagedIdentityExtension: true }, 'vmType: "vmas" is not one of standard, vmss, vmssflex'],
    [{ ...base, cloud: 'AzureGermanCloud', useManagedIdentityExtension: true }, 'cloud: "AzureGermanCloud" is not one of AzurePublicCloud, AzureChinaCloud, AzureUSGovernmentCloud, AzureStackCloud'],
    [{ ...base, useManagedIdentityExtension: 'true' }, 'useManagedIdentityExtension: expected true or false, got "true"'],
    [{ ...base, useManagedIdentityExtension: true, userAssignedIdentityID: 'ccm-identity' }, 'userAssignedIdentityID: "ccm-identity" is neither a client ID (a GUID) nor a resource ID (/subscriptions/…)'],
    [{ ...base, useFederatedWorkloadIdentityExtension: true, aadClientId: CLIENT }, 'useFederatedWorkloadIdentityExtension: workload identity needs aadFederatedTokenFile'],
    [{ ...base, tenantId: undefined, aadClientId: CLIENT, aadClientCertPath: '/etc/kubernetes/cert.pfx' }, 'aadClientCertPath: a client certificate needs tenantId and aadClientId'],
    [{ ...base, aadClientCertPath: '/etc/kubernetes/cert.pfx' }, 'aadClientCertPath: a client certificate needs tenantId and aadClientId'],
    [{ ...base, aadClientId: CLIENT, aadClientCertPath: '/etc/kubernetes/cert.pfx', aadClientCertPassword: 42 }, 'aadClientCertPassword: expected a string, got 42'],
    [{ ...base, vmType: 'standard', disableAvailabilitySetNodes: true, useManagedIdentityExtension: true }, "disableAvailabilitySetNodes: true is only supported when vmType is 'vmss' (it is 'standard')"],
    [{ ...base, vmType: 'vmssflex', disableAvailabilitySetNodes: true, useManagedIdentityExtension: true }, "disableAvailabilitySetNodes: true is only supported when vmType is 'vmss' (it is 'vmssflex')"],
    [{ ...base, cloud: 'AzureStackCloud', useManagedIdentityExtension: true }, 'cloud: AzureStackCloud needs resourceManagerEndpoint (its /metadata/endpoints names the cloud\'s endpoints) or the AZURE_ENVIRONMENT_FILEPATH environment variable (a file of them)'],
    [{ ...base, useManagedIdentityExtension: true, nodeIPConfigurations: 'secondary' }, 'nodeIPConfigurations: "secondary" is not one of primary, all'],
    [{ ...base, useManagedIdentityExtension: true, disableAzureStackCloud: 'yes' }, 'disableAzureStackCloud: expected true or false, got "yes"'],
    [base, 'no credential: set useFederatedWorkloadIdentityExtension'],
    [{ ...base, useManagedIdentityExtension: true, resourceManagerEndpoint: 'http://127.0.0.1:8443' }, 'resourceManagerEndpoint: "http://127.0.0.1:8443" must be an https:// URL'],
    [{ ...base, useManagedIdentityExtension: true, nodeIPFamilies: ['IPv4', 'IPv5'] }, 'nodeIPFamilies: "IPv5" is not IPv4 or IPv6'],
    [{ ...base, useManagedIdentityExtension: true, nodeIPFamilies: 'IPv4' }, 'nodeIPFamilies: expected a list of strings, got "IPv4"'],
    [{ ...base, useManagedIdentityExtension: true, ResourceGroup: 'other' }, 'ResourceGroup: given twice (also as resourceGroup)'],
  ])('%j → %s', (raw, message) => {
    expect(() => parseAzureCloudConfig(json(raw))).toThrow(`cloud-config: ${message}`);
  });

  it('a file that is no map, or no YAML', () => {
    expect(() => parseAzureCloudConfig('- a\n- b\n')).toThrow('cloud-config: expected a map of settings (azure.json), got a list');
    expect(() => parseAzureCloudConfig('{"subscriptionId": ')).toThrow(/cloud-config: not valid YAML or JSON/);
  });

  it('errors name the flag and the path when read through the registry\'s parser', () => {
    expect(() => parseCloudConfig({ path: '/etc/kubernetes/azure.json', text: json({ ...base }) }, (t) => parseAzureCloudConfig(t)))
      .toThrow(/^--cloud-config \/etc\/kubernetes\/azure\.json: no credential/);
  });
});
