// How large the simulated cluster is and what address plan it has room for, known without
// loading the cluster (simulate checks --nodes before it imports anything heavy).
// Room for SIM_MAX_NODES: 16,384 /24 blocks, minus the Service range that lies inside (excluded),
// and 65,536 /64 blocks.
export const SIM_CLUSTER_CIDR = '10.64.0.0/10,fd00:10:244::/48';
export const SIM_SERVICE_CIDR = '10.96.0.0/16,fd00:10:96::/112';
/** Every node gets pod CIDRs up to this size (the IPv4 side of the cluster CIDR is the limit). */
export const SIM_MAX_NODES = 16_000;
