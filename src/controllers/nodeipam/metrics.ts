// Feeds the allocator's metric sink into prom-client, under node-ipam-controller's names: the
// flags pool reports as cidrset_* (RangeAllocator), other pools as multicidrset_*.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import {
  CIDRSET_ALLOCATION_TRIES_PER_REQUEST, CIDRSET_ALLOCATIONS_TOTAL, CIDRSET_MAX_CIDRS, CIDRSET_RELEASES_TOTAL, CIDRSET_USAGE_CIDRS,
  MULTICIDRSET_ALLOCATION_TRIES_PER_REQUEST, MULTICIDRSET_ALLOCATIONS_TOTAL, MULTICIDRSET_MAX_CIDRS, MULTICIDRSET_RELEASES_TOTAL,
  MULTICIDRSET_USAGE_CIDRS, type IPAMMetricsSink, type PoolCIDREvent,
} from '../../ipam/index.js';

function getOrCreate<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

const TRIES_BUCKETS = [1, 5, 25, 125, 625];

interface Family {
  allocations: Counter<string>;
  releases: Counter<string>;
  usage: Gauge<string>;
  max: Gauge<string>;
  tries: Histogram<string>;
  labels: (e: PoolCIDREvent) => Record<string, string>;
}

function family(registry: Registry, names: [string, string, string, string, string], labelNames: string[], labels: Family['labels']): Family {
  const registers = [registry];
  const [alloc, rel, usage, tries, max] = names;
  return {
    allocations: getOrCreate(registry, alloc, () => new Counter({ name: alloc, help: 'Counter measuring total number of CIDR allocations.', labelNames, registers })),
    releases: getOrCreate(registry, rel, () => new Counter({ name: rel, help: 'Counter measuring total number of CIDR releases.', labelNames, registers })),
    usage: getOrCreate(registry, usage, () => new Gauge({ name: usage, help: 'Gauge measuring percentage of allocated CIDRs.', labelNames, registers })),
    tries: getOrCreate(registry, tries, () => new Histogram({ name: tries, help: 'Histogram measuring CIDR allocation tries per request.', labelNames, buckets: TRIES_BUCKETS, registers })),
    max: getOrCreate(registry, max, () => new Gauge({ name: max, help: 'Maximum number of CIDRs that can be allocated.', labelNames, registers })),
    labels,
  };
}

export function ipamMetricsSink(registry: Registry): IPAMMetricsSink {
  const cidrset = family(registry, [CIDRSET_ALLOCATIONS_TOTAL, CIDRSET_RELEASES_TOTAL, CIDRSET_USAGE_CIDRS, CIDRSET_ALLOCATION_TRIES_PER_REQUEST, CIDRSET_MAX_CIDRS],
    ['clusterCIDR'], (e) => ({ clusterCIDR: e.clusterCIDR }));
  const multi = family(registry, [MULTICIDRSET_ALLOCATIONS_TOTAL, MULTICIDRSET_RELEASES_TOTAL, MULTICIDRSET_USAGE_CIDRS, MULTICIDRSET_ALLOCATION_TRIES_PER_REQUEST, MULTICIDRSET_MAX_CIDRS],
    ['clusterCIDR', 'clusterCIDRName'], (e) => ({ clusterCIDR: e.clusterCIDR, clusterCIDRName: e.pool }));
  const pick = (e: PoolCIDREvent): Family => (e.fromFlags ? cidrset : multi);
  return {
    allocated(e) {
      const f = pick(e);
      f.allocations.inc(f.labels(e));
      f.tries.observe(f.labels(e), e.tries);
    },
    released(e) {
      const f = pick(e);
      f.releases.inc(f.labels(e));
    },
    usage(e) {
      const f = pick(e);
      f.usage.set(f.labels(e), e.usage);
      f.max.set(f.labels(e), Number(e.max));
    },
  };
}
