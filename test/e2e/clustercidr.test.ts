// End-to-end ClusterCIDR flows of the node IPAM controller's MultiCIDRRangeAllocator mode:
// adding a pool hands its blocks to the nodes its selector matches; deleting a pool in use keeps
// it (deletionTimestamp set) until its last node goes, then it disappears.
//
// The suite is test/e2e/suites/clustercidr.ts (the real-server tier runs it against kube-apiserver
// too).
import { clusterCIDRSuite } from './suites/clustercidr.js';
import { targetKind } from './support/target.js';

const TARGET = targetKind();
clusterCIDRSuite(TARGET === 'double' ? { kind: 'double' } : { kind: 'real' });
