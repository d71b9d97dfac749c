// Public surface of the gce adapter.
import { readFile } from 'node:fs/promises';
import type { CloudProvider, ProviderOptions } from '../types.js';
import { parseGceConfig } from './config.js';
import { ComputeInstanceSource, createInstancesClient, type GceClientOptions } from './client.js';
import { GceProvider } from './provider.js';

export { gceNodeAddresses, gcePodCIDRs, gceInterfaceIPv6, GCE_STACK_TYPES } from './addresses.js';
export type { GceStackType, GceInstance, GceNetworkInterface, GceAccessConfig, GceAliasIpRange, GceAddressOptions } from './addresses.js';
export { parseGceProviderID, formatGceProviderID, gceInstanceNameForNode, gceRegionOfZone } from './provider-id.js';
export type { GceProviderID } from './provider-id.js';
export { parseGceConfig, parseIni } from './config.js';
export type { GceConfig } from './config.js';
export { GceProvider, GCE_PAGE_SIZE, GCE_LISTING_MAX_AGE_MS } from './provider.js';
export type { GceInstanceSource, ListedInstance, GceProviderOptions } from './provider.js';
export { ComputeInstanceSource, createInstancesClient } from './client.js';

/** Builds the gce provider from --cloud-config (gce.conf INI). */
export async function createGceProvider(options: ProviderOptions, client: GceClientOptions = {}): Promise<CloudProvider> {
  if (!options.cloudConfig) throw new Error('--cloud-config: required for --cloud-provider gce (gce.conf with [global] project-id)');
  const text = await readFile(options.cloudConfig, 'utf8');
  let config;
  try {
    config = parseGceConfig(text);
  } catch (err) {
    throw new Error(`${options.cloudConfig}: ${(err as Error).message}`, { cause: err });
  }
  const instances = await createInstancesClient(config, client);
  return new GceProvider(config, new ComputeInstanceSource(instances, config, options.logger), { logger: options.logger });
}
