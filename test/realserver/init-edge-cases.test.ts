// The node-initialisation edge cases of issue 12 (test/e2e/suites/init-edge-cases.ts) against
// kube-apiserver: the label values and keys it would refuse, the Go-quoted error texts in its
// Events, the nodes kubelet registers as themselves; the controller as deploy/'s ServiceAccount.
import { describe } from 'vitest';
import { controlPlaneUnavailable } from '../kit/controlplane.js';
import { itRefusedNothing, useRealServer } from '../kit/realserver.js';
import { initEdgeCaseSuite } from '../e2e/suites/init-edge-cases.js';

const skip = controlPlaneUnavailable();

describe.skipIf(skip !== undefined)(skip ?? 'node initialisation edge cases on kube-apiserver', () => {
  const server = useRealServer();
  initEdgeCaseSuite({ kind: 'controlplane', server });
  itRefusedNothing(server);
});
