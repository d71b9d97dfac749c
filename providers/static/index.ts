// Registers `--cloud-provider static` (needs --cloud-config). Importing this module has that
// side effect.
import { registerProvider } from '../registry.js';
import { StaticCloudProvider } from './provider.js';

export { StaticCloudProvider, type StaticProviderOptions } from './provider.js';
export { parseStaticCloudConfig, StaticConfigError, type StaticCloudConfig, type StaticNode } from './config.js';
export { canonicalIP, canonicalCIDR, ipFamily, type IPFamily } from './ip.js';

registerProvider('static', async (options) => {
  if (!options.cloudConfig) {
    throw new Error('--cloud-config: required by --cloud-provider static (a YAML file listing the nodes)');
  }
  return StaticCloudProvider.open({ path: options.cloudConfig, logger: options.logger });
});
