// `--cloud-provider aws`: the registry imports this module (and so the EC2 SDK) only when a process
// asks for aws.
import { readFile } from 'node:fs/promises';
import type { ProviderFactory } from '../types.js';
import { parseAWSCloudConfig, type AWSCloudConfig } from './config.js';
import { AWSCloudProvider } from './provider.js';

export const create: ProviderFactory = async (options) => {
  let config: AWSCloudConfig = { nodeIPFamilies: ['ipv4'], ignored: [] };
  if (options.cloudConfig) {
    const text = await readFile(options.cloudConfig, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new Error(`--cloud-config ${options.cloudConfig}: cannot read: ${err.message}`);
    });
    try {
      config = parseAWSCloudConfig(text);
    } catch (err) {
      throw new Error(`--cloud-config ${options.cloudConfig}: ${(err as Error).message}`, { cause: err });
    }
  }
  if (config.ignored.length > 0) options.logger?.info({ keys: config.ignored }, 'aws cloud-config: ignoring keys this controller does not use');
  if (!config.clusterID) {
    options.logger?.warn({}, 'aws cloud-config: no KubernetesClusterID; node-name lookups by private DNS name are not restricted to this cluster');
  }
  // Endpoint and credentials come from the SDK's default chain (AWS_ENDPOINT_URL_EC2, AWS_REGION, ...).
  return AWSCloudProvider.create({ config, logger: options.logger });
};
