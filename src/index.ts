// Public API of node-address-ccm. Each module adds its exports here.
export * from './nodeip/index.js';
export { FakeCloudProvider, type FakeCall, type FakeInstanceInput, type FakeMethod } from '../providers/fake/fake.js';
export { parseStaticCloudConfig, StaticCloudProvider, StaticConfigError, type StaticCloudConfig } from '../providers/static/index.js';
export * from './featuregates/index.js';
// AWSCloudProvider loads the EC2 SDK, so it is exported from 'node-address-ccm/providers/aws' only.
export { awsNodeAddresses, type AWSIPFamily } from '../providers/aws/addresses.js';
export { parseAWSProviderID, type AWSProviderID } from '../providers/aws/provider-id.js';
export { parseAWSCloudConfig } from '../providers/aws/config.js';
export * from './ipam/index.js';
export * from './sim/apiserver/index.js';
export { gceNodeAddresses, gcePodCIDRs, parseGceProviderID, formatGceProviderID, parseGceConfig, GceProvider, type GceStackType, type GceInstance, type GceProviderID, type GceConfig } from '../providers/gce/index.js';
export { kindNodeAddresses, parseKindProviderID, formatKindProviderID, parseKindOverrides, parseKindConfig, KindProvider, type DockerContainerInspect, type KindAddressOverride, type KindOverrides, type KindProviderID, type KindConfig } from '../providers/kind/index.js';
export { realClock, FakeClock, type Clock, type ClockTimer, ItemExponentialRateLimiter, BucketRateLimiter, MaxOfRateLimiter, defaultControllerRateLimiter, Backoff, type RateLimiter, type BackoffOptions, WorkQueue, runWorkers, runBatchWorkers, workQueueMetrics, type WorkQueueOptions, type HandlerResult, type BatchResult, type WorkerPool, KubeClient, kubeConfigFromFile, kubeConfigFromString, kubeConfigInCluster, loadKubeConfig, jsonPatchWithResourceVersion, PATCH_CONTENT_TYPES, type KubeClientOptions, type WriteGate, type PatchType, type JsonPatchOp, ApiError as KubeApiError, TransportError, FencedError, isConflict, isNotFound, isInvalid, isGone, isTooManyRequests, isAlreadyExists, isFenced, isRetryable, isOutcomeUnknown, writeOutcome, type WriteOutcome, NODES, EVENTS, LEASES, CLUSTERCIDRS, SERVICECIDRS, resourcePath, type ResourceType, type KubeObject, type KubeList, type WatchEvent, type LeaseObject, type EventObject, Watcher, type WatcherOptions, type WatcherEvents, LeaderElector, type LeaderElectionOptions, type LeaderCallbacks, type LeadershipEnd, formatMicroTime, formatTime, EventRecorder, EventCorrelator, nodeReference, type EventType as KubeEventType, type EventRecorderOptions, HealthServer, workersCheck, leaderElectionCheck, syncedCheck, type HealthCheck, type HealthServerOptions } from './kube/index.js';
export { registerNode, restartKubelet, startKubelet, deleteNode, registrationNode, restartPatch, kubeletAddressSetter, KubeletStartError, type KubeletConfig, type KubeletTarget, type RegisterResult, type RestartResult, type AddressSetterResult } from './sim/kubelet/index.js';
export * from './controllers/index.js';
export * from './audit/index.js';
export * from './manager/index.js';
export { runSimulation, formatTable as formatSimulationTable, type SimulationOptions, type SimulationResult, type SimRow } from './sim/cluster/run.js';
export { buildSimCluster, staticCloudConfig, SIM_CASES, type SimCase, type SimNode } from './sim/cluster/scenario.js';
