// `--cloud-provider static` (needs --cloud-config, checked by the registry before this loads).
import type { ProviderFactory } from '../types.js';
import { StaticCloudProvider } from './provider.js';

export const create: ProviderFactory = async (options) => {
  if (!options.cloudConfig) {
    throw new Error('--cloud-config: required by --cloud-provider static (a YAML file listing the nodes)');
  }
  return StaticCloudProvider.open({ path: options.cloudConfig, logger: options.logger });
};
