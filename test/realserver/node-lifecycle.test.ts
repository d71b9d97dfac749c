// cloud-node-lifecycle on kube-apiserver, with the grant the overlays that run it add
// (deploy/node-lifecycle) on top of deploy/base: the built controller manager
// (--controllers=*,cloud-node-lifecycle) as deploy/'s ServiceAccount. A node whose kubelet stopped
// reporting and whose machine left the cloud is deleted (a DELETE guarded by its uid) with a
// DeletingNode event; one whose machine is powered off gets the shutdown taint, which goes once
// the kubelet reports Ready again. The Ready condition turns Unknown as kube-controller-manager's
// node lifecycle controller turns it (written here as the admin: that controller does not run).
import { describe, expect, it } from 'vitest';
import type { NodeAddress } from '../../src/model/node-address.js';
import { NODES } from '../../src/kube/types.js';
import { controlPlaneUnavailable } from '../kit/controlplane.js';
import { DEPLOY_BASE, DEPLOY_NODE_LIFECYCLE, itRefusedNothing, LIFECYCLE_RUN_ARGS, readyConditionPatch, SA_USER, useRealServer } from '../kit/realserver.js';
import { eventually } from '../kit/wait.js';
import { E2ECluster, hasTaint, podCIDRsOf, UNINITIALIZED_TAINT_KEY } from '../e2e/support/cluster.js';
import { E2E_POLL_MS } from '../e2e/support/assert.js';
import { runPrefix } from '../e2e/support/target.js';

const skip = controlPlaneUnavailable();
const SHUTDOWN_TAINT_KEY = 'node.cloudprovider.kubernetes.io/shutdown';
const I = (address: string): NodeAddress => ({ type: 'InternalIP', address });

describe.skipIf(skip !== undefined)(skip ?? 'cloud-node-lifecycle on kube-apiserver', () => {
  const server = useRealServer({ manifests: [...DEPLOY_BASE, DEPLOY_NODE_LIFECYCLE] });

  it('deletes a node whose machine left the cloud, taints one powered off and untaints it once Ready', { timeout: 90_000 }, async () => {
    const s = server.get();
    const prefix = runPrefix();
    const [keep, gone, off] = ['keep', 'gone', 'off'].map((id) => `${prefix}-${id}`) as [string, string, string];
    const machines = { [keep]: { addresses: [I('10.3.0.1')] }, [gone]: { addresses: [I('10.3.0.2')] }, [off]: { addresses: [I('10.3.0.3')] } };
    s.writeCloudConfig(machines);
    const cluster = new E2ECluster(s.adminKubeConfig(), prefix, { kubeletKubeConfig: (n) => s.nodeKubeConfig(n) });
    const ccm = s.startRun(await s.serviceAccountKubeconfig(), LIFECYCLE_RUN_ARGS);
    const wait = { timeoutMs: 20_000, intervalMs: E2E_POLL_MS, describe: () => ccm.tail(40) };
    try {
      for (const [i, name] of [keep, gone, off].entries()) await cluster.registerFakeNode({ name, cloudProviderExternal: true, hostIPs: [`10.3.0.${i + 1}`] });
      for (const name of [keep, gone, off]) {
        await eventually(async () => {
          const n = await cluster.getNode(name);
          expect(hasTaint(n, UNINITIALIZED_TAINT_KEY)).toBe(false);
          expect(podCIDRsOf(n)).toHaveLength(2);
        }, wait);
      }
      const goneUID = (await cluster.getNode(gone)).metadata.uid;
      for (const name of [gone, off]) await cluster.client.patch(NODES, name, readyConditionPatch('Unknown'), 'strategic', { subresource: 'status' });
      s.writeCloudConfig({ [keep]: machines[keep], [off]: { ...machines[off], shutdown: true } });

      await eventually(async () => expect(await cluster.nodeExists(gone)).toBe(false), wait);
      await eventually(async () => expect(hasTaint(await cluster.getNode(off), SHUTDOWN_TAINT_KEY)).toBe(true), wait);
      await eventually(async () => expect((await cluster.nodeEvents(gone)).map((e) => e.reason)).toContain('DeletingNode'), wait);
      // One DELETE, guarded by the uid it looked at (kube-apiserver checks the precondition).
      const deletes = s.audit().filter((e) => e.user.username === SA_USER && e.verb === 'delete' && e.objectRef?.resource === 'nodes');
      expect(deletes.map((e) => [e.objectRef?.name, e.responseStatus?.code, e.requestObject?.preconditions?.uid])).toEqual([[gone, 200, goneUID]]);

      // The machine is powered on and its kubelet reports Ready again (as itself): the taint goes.
      s.writeCloudConfig({ [keep]: machines[keep], [off]: machines[off] });
      await cluster.kubelet(off).patch(NODES, off, readyConditionPatch('True'), 'strategic', { subresource: 'status' });
      await eventually(async () => expect(hasTaint(await cluster.getNode(off), SHUTDOWN_TAINT_KEY)).toBe(false), wait);
      expect(await cluster.nodeExists(keep)).toBe(true);
      expect(ccm.exitCode()).toBeUndefined();
    } finally {
      await s.stopProcesses();
      expect(await cluster.cleanup()).toEqual([]);
    }
  });

  itRefusedNothing(server);
});
