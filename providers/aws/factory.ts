// `--cloud-provider aws`: the registry imports this module (and so the EC2 SDK) only when a process
// asks for aws.
import { parseCloudConfig } from '../cloud-config.js';
import type { ProviderFactory } from '../types.js';
import { parseAWSCloudConfig, type AWSCloudConfig } from './config.js';
import { AwsProvider } from './provider.js';

export const create: ProviderFactory = async ({ cloudConfig, logger }) => {
  const config: AWSCloudConfig = cloudConfig ? parseCloudConfig(cloudConfig, parseAWSCloudConfig) : { nodeIPFamilies: ['ipv4'], ignored: [] };
  if (config.ignored.length > 0) logger?.info({ keys: config.ignored }, 'aws cloud-config: ignoring keys this controller does not use');
  if (!config.clusterID) {
    logger?.warn({}, 'aws cloud-config: no KubernetesClusterID; node-name lookups by private DNS name are not restricted to this cluster');
  }
  // Endpoint and credentials come from the SDK's default chain (AWS_ENDPOINT_URL_EC2, AWS_REGION, ...).
  return AwsProvider.create({ config, logger });
};
