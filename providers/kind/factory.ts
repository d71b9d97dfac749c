// `--cloud-provider kind`: the registry imports this module only when a process asks for kind.
import { parseCloudConfig, requiredCloudConfig } from '../cloud-config.js';
import type { ProviderFactory } from '../types.js';
import { parseKindConfig } from './config.js';
import { DockerClient } from './docker.js';
import { KindProvider, overridesLoaderFor } from './provider.js';

export const create: ProviderFactory = async (context) => {
  const config = parseCloudConfig(requiredCloudConfig(context, 'kind'), parseKindConfig);
  const loader = await overridesLoaderFor(config, context.logger);
  return new KindProvider(config, new DockerClient({ socketPath: config.dockerSocket }), loader, context.logger);
};
