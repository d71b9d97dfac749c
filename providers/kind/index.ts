// Public surface of the kind adapter.
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

