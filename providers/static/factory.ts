// `--cloud-provider static`: nodes listed in the --cloud-config file, which the provider then
// watches for edits.
import { requiredCloudConfig } from '../cloud-config.js';
import type { ProviderFactory } from '../types.js';
import { StaticProvider } from './provider.js';

export const create: ProviderFactory = async (context) => {
  const { path, text } = requiredCloudConfig(context, 'static');
  return StaticProvider.open({ path, text, logger: context.logger });
};
