// The controllers: the cloud node controller, node lifecycle, node IPAM, and the pure decisions they act on.
export { CloudNodeController, CLOUD_NODE_QUEUE, type CloudNodeControllerOptions } from './cloudnode/controller.js';
export {
  decideInitialization, decideAddressRefresh, initializationPatch, addressesPatch, EventReason, SYNCED_MESSAGE,
  type InitDecision, type InitWrite, type InitBlocked, type RefreshDecision, type AddressDecision, type MetaSpecPatch, type SkippedLabel,
} from './cloudnode/decide.js';
export { CloudNodeLifecycleController, type CloudNodeLifecycleControllerOptions, type MonitorStats } from './nodelifecycle/controller.js';
export {
  decideLifecycle, readyStatus, hasShutdownTaint, shutdownTaints, taintPatch, SHUTDOWN_TAINT, SHUTDOWN_TAINT_KEY, LIFECYCLE_EXCLUDE_LABEL,
  LifecycleEventReason, type LifecycleDecision, type LifecycleAnswers, type ReadyStatus,
} from './nodelifecycle/decide.js';
export { CIDRAllocatorLoop, NODE_IPAM_QUEUE, IPAMEventReason, type CIDRAllocator, type CIDRAllocatorOptions, type Blocks } from './nodeipam/cidr-allocator.js';
export { RangeAllocator, type RangeAllocatorOptions } from './nodeipam/range-allocator.js';
export { CloudAllocator, type CloudAllocatorOptions } from './nodeipam/cloud-allocator.js';
export type { PodCIDRClaims, PodCIDRClaimRequest, PodCIDRClaimResult } from './nodeipam/claims.js';
export { FlagsPoolSource, SERVICE_RANGE_EXCLUSION, type PoolSource, type FlagsSourceInput } from './nodeipam/pool-source.js';
export { ipamMetricsSink } from './nodeipam/metrics.js';
export type { PoolSourceHooks, EventObjectRef } from './nodeipam/pool-source.js';
export { ClusterCIDRSource, CLUSTER_CIDR_FINALIZER, ClusterCIDREventReason, type ClusterCIDRSourceOptions, type ClusterCIDRObject } from './nodeipam/clustercidr-source.js';
export { ServiceCIDRSource, SERVICE_OVERLAP_METRIC, ServiceCIDREventReason, type ServiceCIDRSourceOptions } from './nodeipam/servicecidr-source.js';
export { planFlagsMirror, CREATED_FROM_FLAGS_PREFIX, type MirrorPlan } from './nodeipam/flags-mirror.js';
export { CloudRangeIndex, cloudRangesFromProvider, recordCloudRanges, networkAvailablePatch, NETWORK_UNAVAILABLE, ROUTE_CREATED, type CloudRanges, type CloudRangeResult, type CloudClash } from './nodeipam/cloud-ranges.js';
export { AuditLoop, AUDIT_FINDINGS_METRIC, AUDIT_EVENT_REASON, type AuditLoopOptions } from './nodeipam/audit-loop.js';
export { cloudNodeMetrics, type CloudNodeMetrics } from './metrics.js';
export { betaToGALabelUpdates, isReservedLabelKey, labelKeyProblem, labelValueProblem, BETA_TO_GA_LABELS } from './labels.js';
export type { NodeCache, NodeHandlers, NodeEventSink, NodeWriter, NodeDeleter } from './seams.js';
