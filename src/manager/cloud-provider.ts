// Builds the provider --cloud-provider names. Kept out of manager.ts so that `run` can build it
// (reading --cloud-config, loading the adapter) before the Kubernetes client loads: an unusable
// provider or file is then named at once.
import type { CloudProvider } from '../../providers/types.js';
import type { Logger } from '../log.js';
import { needsCloudProvider } from './flag-values.js';
import type { RunOptions } from './options.js';

/**
 * The cloud provider --cloud-provider names, when a controller that runs needs one (else
 * undefined). Errors name the flag ("--cloud-provider: …", "--cloud-config PATH: …").
 */
export async function loadCloudProvider(options: RunOptions, logger: Logger): Promise<CloudProvider | undefined> {
  if (!needsCloudProvider(options)) return undefined;
  // Loaded on demand: the adapters pull in cloud SDKs that a given process may never need.
  const { createProvider } = await import('../../providers/index.js');
  const log = logger.child({ provider: options.cloudProvider });
  if (options.cloudProviderModule !== undefined) {
    // Imported only when named: a process without the flag loads none of it.
    const { loadProviderModule } = await import('../../providers/module/load.js');
    await loadProviderModule(options.cloudProviderModule, options.cloudProvider as string, log);
  }
  return createProvider(options.cloudProvider as string, {
    ...(options.cloudConfig !== undefined ? { cloudConfig: options.cloudConfig } : {}),
    logger: log,
  });
}
