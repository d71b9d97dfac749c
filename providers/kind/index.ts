// Public surface of the kind adapter.
import { readFile } from 'node:fs/promises';
import type { CloudProvider, ProviderOptions } from '../types.js';
import { parseKindConfig } from './config.js';
import { DockerClient } from './docker.js';
import { KindProvider, overridesLoaderFor } from './provider.js';

export { kindNodeAddresses, kindContainerName, KIND_CLUSTER_LABEL, KIND_NETWORK } from './addresses.js';
export type { DockerContainerInspect, DockerEndpoint, KindAddressOptions } from './addresses.js';
export { parseKindOverrides } from './overrides.js';
export type { KindAddressOverride, KindOverrides, KindOverrideMode } from './overrides.js';
export { parseKindProviderID, formatKindProviderID } from './provider-id.js';
export type { KindProviderID } from './provider-id.js';
export { parseKindConfig, defaultDockerSocket, DEFAULT_DOCKER_SOCKET } from './config.js';
export type { KindConfig, KindConfigMapRef } from './config.js';
export { DockerClient, DockerApiError } from './docker.js';
export type { DockerContainerSummary } from './docker.js';
export { KindProvider, fileOverridesLoader, configMapOverridesLoader, overridesLoaderFor } from './provider.js';
export type { OverridesLoader } from './provider.js';
export type { ConfigMapReader } from './configmap-client.js';

/** Builds the kind provider from --cloud-config (YAML, see config.ts). */
export async function createKindProvider(options: ProviderOptions): Promise<CloudProvider> {
  if (!options.cloudConfig) throw new Error('--cloud-config: required for --cloud-provider kind (YAML with at least "cluster")');
  const config = parseKindConfig(await readFile(options.cloudConfig, 'utf8'), options.cloudConfig);
  const loader = await overridesLoaderFor(config, options.logger);
  return new KindProvider(config, new DockerClient({ socketPath: config.dockerSocket }), loader, options.logger);
}
