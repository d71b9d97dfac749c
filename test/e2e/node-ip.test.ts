// End-to-end: for each kubelet --node-ip form, what the controller manager makes of the node
// (status.addresses, the uninitialized taint, pod CIDRs, events).
//
// Default target: the API server double, the built controller manager as a child process and
// nodes registered by the kubelet simulator (the suites are in suites/node-ip.ts, which the
// real-server tier runs against kube-apiserver too). With E2E_REAL_CLUSTER=1: the allow-listed cluster of
// $KUBECONFIG (deploy/kind/e2e.sh), whose nodes were registered by real kubelets.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { annotationOf, E2E_POLL_MS, expectNodeOutcome } from './support/assert.js';
import { kindNodeCases, REASON_INVALID_NODE_IP, realClusterExpectation } from './support/cases.js';
import { hasTaint, UNINITIALIZED_TAINT_KEY } from './support/cluster.js';
import { eventually } from '../kit/wait.js';
import { targetKind, useE2ETarget } from './support/target.js';
import { nodeIPSuites } from './suites/node-ip.js';

const TARGET = targetKind();

if (TARGET === 'double') {
  nodeIPSuites({ kind: 'double' });
} else {
  // A real cluster: nodes, cases and controllers come from deploy/kind/e2e.sh.
  const casesFile = process.env.E2E_NODE_CASES_FILE;
  const kindCluster = process.env.E2E_KIND_CLUSTER;
  const nodeCases: Record<string, string> = casesFile
    ? (JSON.parse(readFileSync(casesFile, 'utf8')) as Record<string, string>)
    : kindCluster
      ? kindNodeCases(kindCluster)
      : {};
  const clusterCIDRs = process.env.E2E_CLUSTER_CIDR ? process.env.E2E_CLUSTER_CIDR.split(',') : kindCluster ? ['10.244.0.0/16', 'fd00:10:244::/56'] : undefined;

  describe('--node-ip forms on a real cluster', () => {
    // Refuses (throws) unless the current context is allow-listed.
    const env = useE2ETarget();
    const opts = { timeoutMs: 120_000, clusterCIDRs, podCIDRsWhileTainted: true, noWarnings: false };

    it('knows which node has which --node-ip case', () => {
      expect(Object.keys(nodeCases).length, 'set E2E_NODE_CASES_FILE (JSON {node: case}) or E2E_KIND_CLUSTER').toBeGreaterThan(0);
    });

    for (const [name, caseName] of Object.entries(nodeCases)) {
      it(`${name}: ${caseName}`, { timeout: 180_000 }, async () => {
        const node = await env.cluster.getNode(name);
        const want = realClusterExpectation(caseName, annotationOf(node));
        await expectNodeOutcome(env.cluster, name, want, opts);
      });
    }

    it('a fake node the cloud does not know stays tainted with a Warning, and is removed afterwards', { timeout: 180_000 }, async () => {
      const name = env.cluster.name('unknown-instance');
      // TEST-NET-3: no instance has it.
      await env.cluster.registerFakeNode({ name, nodeIP: '203.0.113.10', cloudProviderExternal: true });
      const event = await eventually(async () => {
        const events = await env.cluster.nodeEvents(name);
        const w = events.find((e) => e.type === 'Warning');
        if (!w) throw new Error(`no Warning event for ${name} yet`);
        return w;
      }, { timeoutMs: 120_000, intervalMs: E2E_POLL_MS });
      expect(['InstanceNotFound', REASON_INVALID_NODE_IP]).toContain(event.reason);
      expect(hasTaint(await env.cluster.getNode(name), UNINITIALIZED_TAINT_KEY)).toBe(true);
    });
  });
}
