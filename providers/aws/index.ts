// Registers `--cloud-provider aws`. Importing this module has that side effect.
import { readFile } from 'node:fs/promises';
import { registerProvider } from '../registry.js';
import { parseAWSCloudConfig, type AWSCloudConfig } from './config.js';
import { AWSCloudProvider } from './provider.js';

export { AWSCloudProvider, idsNamedInMessage, INSTANCE_ID_BATCH, DNS_NAME_BATCH, type AWSProviderOptions } from './provider.js';
export { awsNodeAddresses, validateNodeIPFamilies, AWS_IP_FAMILIES, type AWSIPFamily, type AWSNodeAddressOptions } from './addresses.js';
export { parseAWSProviderID, formatAWSProviderID, instanceIDFromNodeName, AWSProviderIDError, type AWSProviderID } from './provider-id.js';
export { parseAWSCloudConfig, AWSCloudConfigError, type AWSCloudConfig } from './config.js';
export { BackoffGate, sharedEC2Gate, type BackoffGateOptions } from './backoff.js';

registerProvider('aws', async (options) => {
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
});
