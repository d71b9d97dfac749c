// KEP-3705 against kube-apiserver: every --node-ip row of the e2e suite (test/e2e/suites/node-ip.ts)
// with the CloudDualStackNodeIPs gate on, then off, through the built controller manager running
// as deploy/'s ServiceAccount with deploy/'s RBAC; the simulated kubelets register and restart as
// their own nodes (Node authorizer, NodeRestriction).
import { describe } from 'vitest';
import { controlPlaneUnavailable } from '../kit/controlplane.js';
import { itRefusedNothing, useRealServer } from '../kit/realserver.js';
import { nodeIPSuites } from '../e2e/suites/node-ip.js';

const skip = controlPlaneUnavailable();

describe.skipIf(skip !== undefined)(skip ?? 'KEP-3705 --node-ip rows on kube-apiserver', () => {
  const server = useRealServer();
  nodeIPSuites({ kind: 'controlplane', server });
  itRefusedNothing(server);
});
