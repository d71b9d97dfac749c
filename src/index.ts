// Public API of node-address-ccm, for embedding and tests, listed from the bottom layer up (the
// same layers docs/architecture.md draws). Adapters that load a cloud SDK are exported from
// their own entry points ('node-address-ccm/providers/aws', …) so importing this loads none.

// Pure rules: KEP-3705 addresses, feature gates, the Node model, pod-CIDR allocation, the audit.
export * from './nodeip/index.js';
export * from './featuregates/index.js';
export * from './model/node.js';
export * from './model/node-address.js';
export { slimNode, CACHED_NODE_ANNOTATIONS, CACHED_NODE_CONDITIONS } from './model/cached-node.js';
export * from './ipam/index.js';
export * from './audit/index.js';

// The client runtime and the serving of /metrics and the health paths.
export {
  realClock, FakeClock, type Clock, type ClockTimer,
  ItemExponentialRateLimiter, BucketRateLimiter, MaxOfRateLimiter, defaultControllerRateLimiter, Backoff, type RateLimiter, type BackoffOptions,
  WorkQueue, runWorkers, runBatchWorkers, workQueueMetrics, type WorkQueueOptions, type HandlerResult, type BatchResult, type WorkerPool,
  KubeClient, kubeConfigFromFile, kubeConfigFromString, kubeConfigInCluster, loadKubeConfig, jsonPatchWithResourceVersion, PATCH_CONTENT_TYPES,
  type KubeClientOptions, type WriteGate, type PatchType, type JsonPatchOp,
  ApiError as KubeApiError, TransportError, FencedError,
  isConflict, isNotFound, isInvalid, isGone, isTooManyRequests, isAlreadyExists, isFenced, isRetryable, isOutcomeUnknown, writeOutcome, type WriteOutcome,
  NODES, EVENTS, LEASES, CLUSTERCIDRS, SERVICECIDRS, SERVICECIDRS_V1BETA1, resourcePath, servedServiceCIDRResource,
  type ResourceType, type KubeObject, type KubeList, type WatchEvent, type LeaseObject, type EventObject, type ServiceCIDRObject,
  Watcher, type WatcherOptions, type WatcherEvents,
  LeaderElector, type LeaderElectionOptions, type LeaderCallbacks, type LeadershipEnd,
  formatMicroTime, formatTime,
  EventRecorder, EventCorrelator, nodeReference, type EventType as KubeEventType, type EventRecorderOptions,
} from './kube/index.js';
export { HealthServer, workersCheck, leaderElectionCheck, syncedCheck, type HealthCheck, type HealthServerOptions } from './serving/health.js';

// Cloud adapters without an SDK of their own.
export { FakeProvider, type FakeCall, type FakeInstanceInput, type FakeMethod } from '../providers/fake/fake.js';
export { parseStaticCloudConfig, StaticProvider, StaticConfigError, type StaticCloudConfig } from '../providers/static/index.js';
export { awsNodeAddresses, type AWSNodeIPFamiliesValue } from '../providers/aws/addresses.js';
export { awsPodCIDRs, type AWSPodCIDRs } from '../providers/aws/pod-cidrs.js';
export { parseAWSProviderID, type AWSProviderID } from '../providers/aws/provider-id.js';
export { parseAWSCloudConfig } from '../providers/aws/config.js';
export {
  gceNodeAddresses, gcePodCIDRs, parseGceProviderID, formatGceProviderID, parseGceConfig, GceProvider,
  type GceStackType, type GceInstance, type GceProviderID, type GceConfig,
} from '../providers/gce/index.js';
export {
  azureNodeAddresses, parseAzureProviderID, formatAzureProviderID, parseAzureCloudConfig, AzureProvider,
  type AzureInstanceRef, type AzureCloudConfig, type AzureNetworkInterface, type AzureArmSource,
} from '../providers/azure/index.js';
export {
  kindNodeAddresses, parseKindProviderID, formatKindProviderID, parseKindOverrides, parseKindConfig, KindProvider,
  type DockerContainerInspect, type KindAddressOverride, type KindOverrides, type KindProviderID, type KindConfig,
} from '../providers/kind/index.js';

// Adapters from outside: the contract for a module (--cloud-provider-module), and the webhook protocol.
export { defineProvider, type ProviderDefinition } from '../providers/module/define.js';
export { registerProvider, type RegisteredProviderInfo } from '../providers/registry.js';
export type { CloudProvider, InstanceMetadata, InstanceResult, NodeRef, ProviderContext, ProviderFactory, ProviderLogger } from '../providers/types.js';
export { found, notFound, retryableError } from '../providers/types.js';
export { REQUEST_SCHEMA as WEBHOOK_REQUEST_SCHEMA, RESPONSE_SCHEMA as WEBHOOK_RESPONSE_SCHEMA, WEBHOOK_API_VERSION } from '../providers/webhook/schema.js';

// The controllers and the `run` process that wires them.
export * from './controllers/index.js';
export * from './manager/index.js';

// The stand-ins: the API server double, the kubelet simulator and the `simulate` scenario.
export * from './double/index.js';
export {
  registerNode, restartKubelet, startKubelet, deleteNode, registrationNode, restartPatch, kubeletAddressSetter, KubeletStartError,
  type KubeletConfig, type KubeletTarget, type RegisterResult, type RestartResult, type AddressSetterResult,
} from './simulation/kubelet/index.js';
export { runSimulation, formatTable as formatSimulationTable, type SimulationOptions, type SimulationResult, type SimRow } from './simulation/cluster/run.js';
export { buildSimCluster, staticCloudConfig, SIM_CASES, type SimCase, type SimNode } from './simulation/cluster/scenario.js';
