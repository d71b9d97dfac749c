// End-to-end: the node-initialisation edge cases of issue 12 (test/e2e/suites/init-edge-cases.ts)
// through the built controller manager against the API server double; the real-server tier runs
// the same suite against kube-apiserver (test/realserver/init-edge-cases.test.ts).
import { initEdgeCaseSuite } from './suites/init-edge-cases.js';
import { targetKind } from './support/target.js';

if (targetKind() === 'double') initEdgeCaseSuite({ kind: 'double' });
