// Public surface of the azure adapter. Loading it loads no SDK: @azure/identity and the ARM
// clients are imported when a provider is built.
export { azureNodeAddresses, orderedNics, orderedIPConfigurations, nicsUsed, selectIPConfigurations } from './addresses.js';
export type { AzureAddressInput, AzureAddressOptions, AzureIPConfiguration, AzureNetworkInterface, AzureNicReference, AzurePublicIP } from './addresses.js';
export { parseAzureProviderID, parseAzureVMResourceID, formatAzureProviderID, resourceIDOf, instanceKey, resourceGroupOf } from './provider-id.js';
export type { AzureInstanceRef } from './provider-id.js';
export { azureZone, azurePowerState, azureProvisioningState, azureIsShutdown, AZURE_SHUTDOWN_POWER_STATES } from './instance.js';
export { parseAzureCloudConfig, parseNodeIPFamilies, canonicalCloudName, AzureCloudConfigError, AZURE_VM_TYPES, AZURE_CLOUD_NAMES, AZURE_NODE_IP_CONFIGURATIONS } from './config.js';
export type { AzureCloudConfig, AzureCredentialConfig, AzureVMType, AzureCloudName, AzureConfigEnv, AzureNodeIPConfigurations } from './config.js';
export { resolveAzureEnvironment, metadataURL, AzureEnvironmentError, METADATA_API_VERSION, type EnvironmentInput, type ResolvedEnvironment } from './environment.js';
export { azureStackApiVersion, azureStackApiVersionPolicy, AZURE_STACK_API_VERSIONS } from './api-version.js';
export { readClientCertificate, ClientCertificateError, type ClientCertificate } from './client-certificate.js';
export { readPkcs12, Pkcs12Error, type Pkcs12Contents } from './pkcs12.js';
export { parseMsiDataPlaneIdentity, ReloadingMsiDataPlaneCredential, MsiDataPlaneError, MSI_DATA_PLANE_BACKSTOP_MS, type MsiDataPlaneIdentity } from './msi-dataplane.js';
export { AzureProvider, AZURE_LISTING_MAX_AGE_MS, AZURE_LIST_CONCURRENCY } from './provider.js';
export type { AzureArmSource, AzureVM, AzureScaleSetVM, AzureScaleSet, AzureInstanceView, AzureProviderConfig, AzureProviderOptions } from './provider.js';
export { ThrottleGate, retryAfterMs, armGatePolicy, type ArmCallStats, type ThrottleGateOptions } from './throttle.js';
export { SdkArmSource, createCredential, resolveEnvironment, sharedArmGate, AZURE_ENVIRONMENTS, type AzureEnvironment, type AzureArmOptions } from './arm.js';
export { createAzureProvider, type AzureFactoryOptions } from './factory.js';
