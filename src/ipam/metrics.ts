// Metric names (node-ipam-controller's, typo-fixed) and the sink the allocator reports through.
// The pure library does not import prom-client; the controller feeds its registry from the sink.

export const MULTICIDRSET_ALLOCATIONS_TOTAL = 'node_ipam_controller_multicidrset_cidrs_allocations_total';
export const MULTICIDRSET_RELEASES_TOTAL = 'node_ipam_controller_multicidrset_cidrs_releases_total';
export const MULTICIDRSET_USAGE_CIDRS = 'node_ipam_controller_multicidrset_usage_cidrs';
export const MULTICIDRSET_ALLOCATION_TRIES_PER_REQUEST = 'node_ipam_controller_multicidrset_allocation_tries_per_request';
export const MULTICIDRSET_MAX_CIDRS = 'node_ipam_controller_multicidrset_max_cidrs';
/** Labels of the multicidrset family: pools may share a CIDR, so both are given. */
export const MULTICIDRSET_LABELS = ['clusterCIDR', 'clusterCIDRName'] as const;

export const CIDRSET_ALLOCATIONS_TOTAL = 'node_ipam_controller_cidrset_cidrs_allocations_total';
export const CIDRSET_RELEASES_TOTAL = 'node_ipam_controller_cidrset_cidrs_releases_total';
export const CIDRSET_USAGE_CIDRS = 'node_ipam_controller_cidrset_usage_cidrs';
export const CIDRSET_ALLOCATION_TRIES_PER_REQUEST = 'node_ipam_controller_cidrset_allocation_tries_per_request';
export const CIDRSET_MAX_CIDRS = 'node_ipam_controller_cidrset_max_cidrs';
/** Labels of the cidrset family (flags pool in RangeAllocator mode). */
export const CIDRSET_LABELS = ['clusterCIDR'] as const;

export interface PoolCIDREvent {
  /** Pool (ClusterCIDR) name: the clusterCIDRName label. */
  pool: string;
  /** The pool's range in this family: the clusterCIDR label. */
  clusterCIDR: string;
  /** True for the flags pool: report under the cidrset_* names in RangeAllocator mode. */
  fromFlags: boolean;
}

export interface IPAMMetricsSink {
  /** One pod CIDR handed out; `tries` counts candidate blocks examined. */
  allocated?(e: PoolCIDREvent & { podCIDR: string; tries: number }): void;
  released?(e: PoolCIDREvent & { podCIDR: string }): void;
  /** Usage after any change: `used` and `max` in node-size blocks, `usage` in 0..1. */
  usage?(e: PoolCIDREvent & { used: bigint; max: bigint; usage: number }): void;
}
