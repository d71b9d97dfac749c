// Least privilege on kube-apiserver: each rule of deploy/base's ClusterRole node-address-ccm taken
// away in turn, and what breaks (test/realserver/support/rbac-breaks.ts). The Role, the
// system:auth-delegator binding and deploy/node-lifecycle's rule: rbac-rules-others.test.ts.
import { describeGrantRemovals } from './support/rbac-breaks.js';

describeGrantRemovals('least privilege on kube-apiserver: each rule of ClusterRole/node-address-ccm taken away', (g) => g.role.kind === 'ClusterRole' && g.role.name === 'node-address-ccm');
