// Least privilege on kube-apiserver: the leader-election Role's rules, the system:auth-delegator
// binding and deploy/node-lifecycle's rule taken away in turn, and what breaks
// (test/realserver/support/rbac-breaks.ts). The ClusterRole's rules: rbac-rules-clusterrole.test.ts.
import { describeGrantRemovals } from './support/rbac-breaks.js';

describeGrantRemovals('least privilege on kube-apiserver: the Role, the bootstrap binding and deploy/node-lifecycle taken away', (g) => !(g.role.kind === 'ClusterRole' && g.role.name === 'node-address-ccm'));
