// The cloud's endpoints, as cloud-provider-azure works them out (pkg/azclient/cloud.go). The
// metadata answers re-express the shapes of its own tests (pkg/azclient/cloud_test.go: ARM's
// `/metadata/endpoints?api-version=2019-05-01` list, with and without resourceManager; the
// AZURE_ENVIRONMENT_FILEPATH file) and of public ARM, which lists AzureCloud, AzureChinaCloud and
// AzureUSGovernment.
import { describe, expect, it } from 'vitest';
import { metadataURL, resolveAzureEnvironment, type EnvironmentInput } from '../../../providers/azure/environment.js';
import { AZURE_STACK_API_VERSIONS, azureStackApiVersion, azureStackApiVersionPolicy } from '../../../providers/azure/api-version.js';

const entry = (name: string, resourceManager: string | undefined, login: string, audiences: string[]) => ({
  portal: 'https://portal.example/', name, ...(resourceManager ? { resourceManager } : {}),
  authentication: { loginEndpoint: login, audiences, tenant: 'common', identityProvider: 'AAD' },
  suffixes: { storage: 'core.windows.net', acrLoginServer: 'azurecr.io', keyVaultDns: 'vault.azure.net' },
  graph: 'https://graph.windows.net/', gallery: 'https://gallery.azure.com/',
});
const publicArm = [
  entry('AzureCloud', 'https://management.azure.com/', 'https://login.microsoftonline.com/', ['https://management.core.windows.net/', 'https://management.azure.com/']),
  entry('AzureChinaCloud', 'https://management.chinacloudapi.cn', 'https://login.chinacloudapi.cn', ['https://management.core.chinacloudapi.cn', 'https://management.chinacloudapi.cn']),
  entry('AzureUSGovernment', 'https://management.usgovcloudapi.net', 'https://login.microsoftonline.us', ['https://management.core.usgovcloudapi.net', 'https://management.usgovcloudapi.net']),
];
const STACK = 'https://management.local.azurestack.external/';
const stackArm = [entry('AzureStackCloud', undefined, 'https://login.microsoftonline.com/', ['https://management.contoso.onmicrosoft.com/4de154de-f8a8-4017-af41-df619da68155'])];

describe('resolveAzureEnvironment', () => {
  it('the built-in clouds without resourceManagerEndpoint', () => {
    expect(resolveAzureEnvironment({ cloud: 'AzureChinaCloud' }).environment).toEqual({
      resourceManager: 'https://management.chinacloudapi.cn/', authorityHost: 'https://login.chinacloudapi.cn/', audience: 'https://management.core.chinacloudapi.cn/', custom: false, stackApiVersions: false,
    });
  });

  it.each([
    ['reference (cloud_test: the url is valid): the entry named as the file names the cloud', { cloud: 'AzurePublicCloud', cloudName: 'AzureCloud' }, publicArm, {
      resourceManager: 'https://management.azure.com/', authorityHost: 'https://login.microsoftonline.com/', audience: 'https://management.core.windows.net/',
    }],
    ['a spelling of the same cloud (AzurePublicCloud names the AzureCloud entry)', { cloud: 'AzurePublicCloud', cloudName: 'AzurePublicCloud' }, publicArm, {
      resourceManager: 'https://management.azure.com/', audience: 'https://management.core.windows.net/',
    }],
    ['another cloud of the same list', { cloud: 'AzureUSGovernmentCloud', cloudName: 'AzureUSGovernment' }, publicArm, {
      resourceManager: 'https://management.usgovcloudapi.net/', authorityHost: 'https://login.microsoftonline.us/', audience: 'https://management.core.usgovcloudapi.net',
    }],
    ['no cloud in the file: the first entry', { cloud: 'AzurePublicCloud' }, publicArm.slice(1), {
      resourceManager: 'https://management.chinacloudapi.cn/', audience: 'https://management.core.chinacloudapi.cn',
    }],
    ['reference (cloud_test: resourceManager not returned): the endpoint asked is ARM', { cloud: 'AzureStackCloud', cloudName: 'AzureStackCloud' }, stackArm, {
      resourceManager: STACK, authorityHost: 'https://login.microsoftonline.com/', audience: 'https://management.contoso.onmicrosoft.com/4de154de-f8a8-4017-af41-df619da68155', custom: true, stackApiVersions: true,
    }],
    ['Azure Stack with disableAzureStackCloud: the SDK\'s own API versions', { cloud: 'AzureStackCloud', cloudName: 'azurestackcloud', disableAzureStackCloud: true }, stackArm, { resourceManager: STACK, stackApiVersions: false }],
  ] as const)('%s', (_name, config, metadata, want) => {
    const { environment, notes } = resolveAzureEnvironment({ ...config, resourceManagerEndpoint: STACK, metadata } as EnvironmentInput);
    expect(environment).toMatchObject({ custom: true, ...want });
    expect(notes).toEqual([]);
  });

  it('a public cloud the metadata has no entry for: its built-in endpoints, as upstream, with a note', () => {
    const { environment, notes } = resolveAzureEnvironment({ cloud: 'AzureChinaCloud', cloudName: 'AzureChinaCloud', resourceManagerEndpoint: STACK, metadata: stackArm });
    expect(environment).toMatchObject({ resourceManager: 'https://management.chinacloudapi.cn/', custom: false });
    expect(notes).toEqual([`resourceManagerEndpoint: ${metadataURL(STACK)} names no cloud "AzureChinaCloud" (it names "AzureStackCloud"); its endpoints are not used`]);
  });

  it('reference (cloud_test: the environment file): AzureStackCloud with AZURE_ENVIRONMENT_FILEPATH, field names whatever their case', () => {
    const file = { path: '/etc/kubernetes/azurestackcloud.json', contents: { name: 'AzureStackCloud', ResourceManagerEndpoint: STACK, activeDirectoryEndpoint: 'https://adfs.local.azurestack.external/adfs/', tokenaudience: 'https://management.adfs.azurestack.local/0000' } };
    expect(resolveAzureEnvironment({ cloud: 'AzureStackCloud', cloudName: 'AzureStackCloud', environmentFile: file }).environment).toEqual({
      resourceManager: STACK, authorityHost: 'https://adfs.local.azurestack.external/adfs/', audience: 'https://management.adfs.azurestack.local/0000', custom: true, stackApiVersions: true,
    });
    // The file wins over the metadata, field by field; ARM and audience only together.
    const partial = { path: '/e.json', contents: { resourceManagerEndpoint: 'https://elsewhere.example/', activeDirectoryEndpoint: 'https://adfs.example/adfs/' } };
    expect(resolveAzureEnvironment({ cloud: 'AzureStackCloud', cloudName: 'AzureStackCloud', resourceManagerEndpoint: STACK, metadata: stackArm, environmentFile: partial }).environment)
      .toMatchObject({ resourceManager: STACK, authorityHost: 'https://adfs.example/adfs/' });
  });

  it.each([
    ['Azure Stack whose metadata names no AzureStackCloud (upstream would use the public cloud\'s endpoints)', { cloud: 'AzureStackCloud', cloudName: 'AzureStackCloud', resourceManagerEndpoint: STACK, metadata: publicArm },
      `azure: cloud AzureStackCloud: the metadata of ${STACK} names its resourceManager, authorityHost, audience (resourceManagerEndpoint: ${metadataURL(STACK)} names no cloud "AzureStackCloud" (it names "AzureCloud", "AzureChinaCloud", "AzureUSGovernment"); its endpoints are not used)`],
    ['an environment file without tokenAudience', { cloud: 'AzureStackCloud', environmentFile: { path: '/e.json', contents: { resourceManagerEndpoint: STACK, activeDirectoryEndpoint: 'https://login.microsoftonline.com/' } } },
      'azure: cloud AzureStackCloud: AZURE_ENVIRONMENT_FILEPATH /e.json names its resourceManager, audience'],
    ['an entry without audiences (upstream indexes past the end)', { cloud: 'AzureStackCloud', cloudName: 'AzureStackCloud', resourceManagerEndpoint: STACK, metadata: [{ name: 'AzureStackCloud', authentication: { loginEndpoint: 'https://login.microsoftonline.com/', audiences: [] } }] },
      `azure: resourceManagerEndpoint: ${metadataURL(STACK)}: cloud "AzureStackCloud" names no authentication.audiences`],
    ['an answer that is no list', { cloud: 'AzurePublicCloud', resourceManagerEndpoint: STACK, metadata: publicArm[0] },
      `azure: resourceManagerEndpoint: ${metadataURL(STACK)}: expected a JSON list of clouds, got object`],
    ['a plain-http login endpoint', { cloud: 'AzureStackCloud', cloudName: 'AzureStackCloud', resourceManagerEndpoint: STACK, metadata: [entry('AzureStackCloud', undefined, 'http://login.example/', ['a'])] },
      `azure: resourceManagerEndpoint: ${metadataURL(STACK)}: cloud "AzureStackCloud" authentication.loginEndpoint: "http://login.example/" must be an https:// URL`],
    ['an environment file that is no object', { cloud: 'AzureStackCloud', environmentFile: { path: '/e.json', contents: ['x'] } }, 'azure: AZURE_ENVIRONMENT_FILEPATH /e.json: expected a JSON object of endpoints'],
  ] as const)('%s is an error', (_name, input, message) => {
    expect(() => resolveAzureEnvironment(input as EnvironmentInput)).toThrow(message);
  });

  it('the metadata URL as upstream builds it', () => {
    expect(metadataURL('https://management.local.azurestack.external//')).toBe('https://management.local.azurestack.external/metadata/endpoints?api-version=2019-05-01');
  });
});

describe('Azure Stack Hub API versions (AzureStackCloudAPIVersion of each upstream client)', () => {
  const rg = '/subscriptions/s/resourceGroups/rg/providers';
  it.each([
    [`${rg}/Microsoft.Compute/virtualMachines`, AZURE_STACK_API_VERSIONS.virtualMachines],
    ['/subscriptions/s/providers/Microsoft.Compute/virtualMachines', AZURE_STACK_API_VERSIONS.virtualMachines],
    [`${rg}/Microsoft.Compute/virtualMachineScaleSets`, AZURE_STACK_API_VERSIONS.virtualMachineScaleSets],
    [`${rg}/Microsoft.Compute/virtualMachineScaleSets/ss/virtualMachines`, AZURE_STACK_API_VERSIONS.virtualMachineScaleSets],
    [`${rg}/microsoft.compute/virtualmachinescalesets/ss/networkInterfaces`, AZURE_STACK_API_VERSIONS.network],
    [`${rg}/Microsoft.Compute/virtualMachineScaleSets/ss/publicIPAddresses`, AZURE_STACK_API_VERSIONS.network],
    [`${rg}/Microsoft.Network/networkInterfaces`, AZURE_STACK_API_VERSIONS.network],
    [`${rg}/Microsoft.Network/publicIPAddresses`, AZURE_STACK_API_VERSIONS.network],
    ['/metadata/endpoints', undefined],
  ])('%s → %s', (p, want) => {
    expect(azureStackApiVersion(p)).toBe(want);
  });

  it('the policy rewrites api-version and keeps every other parameter', async () => {
    const seen: string[] = [];
    const policy = azureStackApiVersionPolicy();
    await policy.sendRequest({ url: `https://arm.example${rg}/Microsoft.Compute/virtualMachineScaleSets/ss/virtualMachines?api-version=2026-03-01&$expand=instanceView` }, async (r) => {
      seen.push(r.url);
      return r;
    });
    expect(seen).toEqual([`https://arm.example${rg}/Microsoft.Compute/virtualMachineScaleSets/ss/virtualMachines?api-version=2019-07-01&$expand=instanceView`]);
  });
});
