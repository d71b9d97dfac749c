// Public surface of the gce adapter. Loading it loads no SDK: the Compute client is imported when
// a client is created.
export { gceNodeAddresses, gcePodCIDRs, gcePodRanges, gceInterfaceIPv6, GCE_STACK_TYPES } from './addresses.js';
export type { GceStackType, GceInstance, GceNetworkInterface, GceAccessConfig, GceAliasIpRange, GceAddressOptions, GcePodRanges } from './addresses.js';
export { parseGceProviderID, formatGceProviderID, gceInstanceNameForNode, gceRegionOfZone } from './provider-id.js';
export type { GceProviderID } from './provider-id.js';
export { parseGceConfig, parseIni } from './config.js';
export type { GceConfig } from './config.js';
export { GceProvider, GCE_PAGE_SIZE, GCE_LISTING_MAX_AGE_MS } from './provider.js';
export type { GceInstanceSource, ListedInstance, GceProviderOptions } from './provider.js';
export { ComputeInstanceSource, createInstancesClient, type GceClientOptions } from './client.js';
export { createGceProvider } from './factory.js';

