// Leader-election metrics on the process's registry. leader_election_master_status is client-go's
// (component-base's leaderelection adapter): 1 while this process holds the lease, 0 otherwise, so
// alerts written for kube-controller-manager work unchanged. client-go has no transitions metric;
// leader_election_lease_transitions mirrors the Lease's spec.leaseTransitions as last observed, on
// every replica (a rising value is a failover, whichever replica is scraped).
import { Gauge, type Registry } from 'prom-client';
import type { LeaderMetrics } from './leader.js';

function getOrCreate<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

/** The elector's metrics for the lease `name` (the `name` label, as client-go's LeaderElectionConfig.Name). */
export function leaderElectionMetrics(registry: Registry, name: string): LeaderMetrics {
  const registers = [registry];
  const status = getOrCreate(registry, 'leader_election_master_status', () => new Gauge({
    name: 'leader_election_master_status',
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ['name'] as const, registers,
  }));
  const transitions = getOrCreate(registry, 'leader_election_lease_transitions', () => new Gauge({
    name: 'leader_election_lease_transitions',
    help: "spec.leaseTransitions of the lease as last observed by this process: how many times its holder changed. 'name' identifies the lease.",
    labelNames: ['name'] as const, registers,
  }));
  // Present from the start: a follower reports 0, not nothing.
  status.set({ name }, 0);
  return {
    leading: (on) => status.set({ name }, on ? 1 : 0),
    observedTransitions: (n) => transitions.set({ name }, n),
  };
}
