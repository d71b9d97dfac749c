// `--cloud-provider gce`: the registry imports this module only when a process asks for gce; the
// Compute client itself is imported when the provider is built.
import { parseCloudConfig, requiredCloudConfig } from '../cloud-config.js';
import type { ProviderContext, ProviderFactory } from '../types.js';
import { ComputeInstanceSource, createInstancesClient, type GceClientOptions } from './client.js';
import { parseGceConfig } from './config.js';
import { GceProvider } from './provider.js';

/** `create` with the client's options open, so that tests can hand it an auth client. */
export async function createGceProvider(context: ProviderContext, client: GceClientOptions = {}): Promise<GceProvider> {
  const config = parseCloudConfig(requiredCloudConfig(context, 'gce'), parseGceConfig);
  const instances = await createInstancesClient(config, client);
  return new GceProvider(config, new ComputeInstanceSource(instances, config, context.logger), { logger: context.logger });
}

export const create: ProviderFactory = (context) => createGceProvider(context);
