// The controllers: the cloud node controller, the node IPAM loop, and the pure plans they run.
export { CloudNodeController, CLOUD_NODE_QUEUE, type CloudNodeControllerOptions } from './cloudnode/controller.js';
export {
  planInitialization, planAddressRefresh, decideAddresses, initializationPatch, addressesPatch, EventReason, SYNCED_MESSAGE,
  type InitPlan, type InitWrite, type InitBlocked, type RefreshPlan, type AddressDecision, type MetaSpecPatch, type SkippedLabel,
} from './cloudnode/plan.js';
export { CloudNodeLifecycleController, type CloudNodeLifecycleControllerOptions, type MonitorStats } from './nodelifecycle/controller.js';
export {
  decideLifecycle, readyStatus, hasShutdownTaint, shutdownTaints, taintPatch, SHUTDOWN_TAINT, SHUTDOWN_TAINT_KEY, LIFECYCLE_EXCLUDE_LABEL,
  LifecycleEventReason, type LifecycleDecision, type LifecycleAnswers, type ReadyStatus,
} from './nodelifecycle/plan.js';
export { NodeIPAMController, NODE_IPAM_QUEUE, IPAMEventReason, type NodeIPAMControllerOptions } from './nodeipam/controller.js';
export type { PodCIDRClaims, PodCIDRClaimRequest, PodCIDRClaimResult } from './nodeipam/claims.js';
export { FlagsPoolSource, SERVICE_RANGE_EXCLUSION, type PoolSource, type FlagsSourceInput } from './nodeipam/pool-source.js';
export { ipamMetricsSink } from './nodeipam/metrics.js';
export type { PoolSourceHooks, EventObjectRef } from './nodeipam/pool-source.js';
export { ClusterCIDRSource, CLUSTER_CIDR_FINALIZER, ClusterCIDREventReason, type ClusterCIDRSourceOptions, type ClusterCIDRObject } from './nodeipam/clustercidr-source.js';
export { ServiceCIDRSource, SERVICE_OVERLAP_METRIC, ServiceCIDREventReason, type ServiceCIDRSourceOptions } from './nodeipam/servicecidr-source.js';
export { planFlagsMirror, CREATED_FROM_FLAGS_PREFIX, type MirrorPlan } from './nodeipam/flags-mirror.js';
export { CloudRangeIndex, cloudRangesFromProvider, recordCloudRanges, networkAvailablePatch, NETWORK_UNAVAILABLE, ROUTE_CREATED, type CloudRanges, type CloudRangeResult, type CloudClash } from './nodeipam/cloud-allocator.js';
export { AuditLoop, AUDIT_FINDINGS_METRIC, AUDIT_EVENT_REASON, type AuditLoopOptions } from './nodeipam/audit-loop.js';
export { cloudNodeMetrics, type CloudNodeMetrics } from './metrics.js';
export { betaToGALabelUpdates, isReservedLabelKey, labelKeyProblem, labelValueProblem, BETA_TO_GA_LABELS } from './labels.js';
export type { NodeCache, NodeHandlers, NodeEventSink, NodeWriter, NodeDeleter } from './seams.js';
