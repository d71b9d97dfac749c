// Two replicas of the built controller manager on kube-apiserver, as deploy/base runs them: leader
// election on deploy/'s Lease (kube-system/node-address-ccm, the Role's resourceNames), both as
// deploy/'s ServiceAccount. The leader initialises the nodes while the follower keeps node IPAM's
// pools and ledger warm; the leader is SIGKILLed (no release: its Lease must expire); the follower
// takes the Lease once it expired, with no takeover delay and node IPAM already loaded, and
// initialises the nodes that joined meanwhile with blocks no other node holds. Then that leader is
// killed too, and a third replica takes over down the large-cluster path: its node cache brought
// up to a quorum read through the watch, with no second LIST.
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/kube/client.js';
import { LEASES, NODES } from '../../src/kube/types.js';
import { controlPlaneUnavailable } from '../kit/controlplane.js';
import type { CliProcess, LogLine } from '../kit/processes.js';
import { itRefusedNothing, SA_USER, useRealServer } from '../kit/realserver.js';
import { eventually } from '../kit/wait.js';
import { E2ECluster, hasTaint, podCIDRsOf, UNINITIALIZED_TAINT_KEY, cidrsOverlap } from '../e2e/support/cluster.js';
import { runPrefix } from '../e2e/support/target.js';
import { E2E_POLL_MS } from '../e2e/support/assert.js';

const skip = controlPlaneUnavailable();

interface LeaseObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number };
}

describe.skipIf(skip !== undefined)(skip ?? 'leader election on kube-apiserver', () => {
  const server = useRealServer();

  it('the leader is SIGKILLed: the warm follower takes the expired Lease at once and initialises the nodes that joined; killed in turn, a third catches up through a quorum read, no second LIST', { timeout: 120_000 }, async () => {
    const s = server.get();
    const prefix = runPrefix();
    const names = ['a1', 'a2', 'b1', 'b2', 'b3', 'c1'].map((id) => `${prefix}-${id}`);
    s.writeCloudConfig(Object.fromEntries(names.map((n, i) => [n, { addresses: [{ type: 'InternalIP' as const, address: `10.2.0.${i + 1}` }, { type: 'InternalIP' as const, address: `fd00:2::${i + 1}` }] }])));
    const cluster = new E2ECluster(s.adminKubeConfig(), prefix, { kubeletKubeConfig: (n) => s.nodeKubeConfig(n) });
    const admin = new KubeClient(s.adminKubeConfig(), { userAgent: 'realserver-leader' });
    const register = (name: string, i: number) => cluster.registerFakeNode({ name, cloudProviderExternal: true, hostIPs: [`10.2.0.${i + 1}`, `fd00:2::${i + 1}`] });
    const initialised = (name: string, replica: CliProcess) => eventually(async () => {
      const n = await cluster.getNode(name);
      expect(hasTaint(n, UNINITIALIZED_TAINT_KEY), `${name} initialised`).toBe(false);
      expect(podCIDRsOf(n)).toHaveLength(2);
      return n;
    }, { timeoutMs: 20_000, intervalMs: E2E_POLL_MS, describe: () => replica.tail(30) });
    const lease = () => admin.get<LeaseObject & { metadata: { name: string } }>(LEASES, 'node-address-ccm', { namespace: 'kube-system' });
    const identity = (p: CliProcess, l: LogLine) => {
      expect(typeof l.identity, p.tail(10)).toBe('string');
      return l.identity as string;
    };
    try {
      const kubeconfig = await s.serviceAccountKubeconfig();
      const a = s.startRun(kubeconfig);
      const aLeads = await a.waitFor((l) => l.msg === 'acquired the lease', 20_000, 'a leads');
      const b = s.startRun(kubeconfig);
      await b.waitFor((l) => l.msg === 'new leader observed', 20_000, 'b follows');
      await b.waitFor((l) => l.msg.startsWith('warm standby: allocator loaded'), 20_000, 'b is warm');
      for (const [i, n] of names.slice(0, 2).entries()) await register(n, i);
      const early = await Promise.all(names.slice(0, 2).map((n) => initialised(n, a)));

      const held = await lease();
      expect(held.spec.holderIdentity).toBe(identity(a, aLeads));
      expect(held.spec.leaseDurationSeconds).toBe(4);
      expect(held.spec.leaseTransitions ?? 0).toBe(0);

      a.kill('SIGKILL');
      const killedAt = Date.now();
      await a.exited;
      for (const [i, n] of names.slice(2, 5).entries()) await register(n, i + 2);
      const bLeads = await b.waitFor((l) => l.msg === 'acquired the lease', 20_000, 'b takes over');
      // The killed leader never released the Lease: b waited for it to expire, then took it with no
      // further delay.
      expect([bLeads.from, bLeads.takeoverDelayMs]).toEqual(['expired', 0]);
      expect(bLeads.seenAt - killedAt, 'the takeover waited out the 4 s lease').toBeGreaterThan(2_000);
      const loaded = await b.waitFor((l) => l.msg === 'allocator loaded from existing nodes', 20_000, 'b loads node IPAM');
      expect(loaded.warmStandby, 'node IPAM was loaded while following').toBe(true);
      const late = await Promise.all(names.slice(2, 5).map((n) => initialised(n, b)));

      const taken = await lease();
      expect(taken.spec.holderIdentity).toBe(identity(b, bLeads));
      expect(taken.spec.leaseTransitions).toBe(1);
      // No block handed out twice, across both terms.
      const blocks = [...early, ...late].flatMap((n) => podCIDRsOf(n).map((c) => ({ node: n.metadata.name, c })));
      for (let i = 0; i < blocks.length; i++) {
        for (let j = i + 1; j < blocks.length; j++) expect(cidrsOverlap(blocks[i]!.c, blocks[j]!.c), `${blocks[i]!.node} ${blocks[i]!.c} / ${blocks[j]!.node} ${blocks[j]!.c}`).toBe(false);
      }
      // Nothing but b wrote after the kill: its Lease and node writes were all allowed.
      const afterKill = s.audit().filter((e) => e.user.username === SA_USER && Date.parse(e.requestReceivedTimestamp) > killedAt);
      expect(afterKill.filter((e) => e.verb === 'update' && e.objectRef?.resource === 'leases' && e.responseStatus?.code === 200).length).toBeGreaterThan(0);
      expect(b.exitCode()).toBeUndefined();

      // A second takeover, down the path of a cluster of 5,000 nodes or more (forced here with
      // NODE_ADDRESS_CCM_CATCH_UP_MIN_NODES=0): the new leader brings its node cache up to a quorum
      // read (a LIST of one node) through its watch instead of listing every node again. On
      // kube-apiserver a watch gets a bookmark only about once a minute, so an idle watch never
      // reaches the read in the 5 s it is given (measured: 5.0 s, then the LIST); in such a cluster
      // the kubelets' status posts move it, as one kubelet posting every 100 ms does here.
      const c = s.startRun(kubeconfig, [], { env: { NODE_ADDRESS_CCM_CATCH_UP_MIN_NODES: '0' } });
      await c.waitFor((l) => l.msg.startsWith('warm standby: allocator loaded'), 20_000, 'c is warm');
      const kubelet = cluster.kubelet(names[0]!);
      let beating = true;
      let beats = 0;
      const heartbeat = (async () => {
        while (beating) {
          await kubelet.patch(NODES, names[0]!, { metadata: { annotations: { 'e2e.node-address-ccm.io/heartbeat': String(++beats) } } }, 'merge', { subresource: 'status' });
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      b.kill('SIGKILL');
      const bKilledAt = Date.now();
      try {
        const cLeads = await c.waitFor((l) => l.msg === 'acquired the lease', 20_000, 'c takes over');
        expect(cLeads.from).toBe('expired');
        const current = await c.waitFor((l) => l.msg.startsWith('node IPAM: the node cache is current to a quorum read'), 20_000, 'c catches up through its watch');
        expect(Number(current.ms), 'the watch reached the quorum read well within its 5 s').toBeLessThan(2_000);
      } finally {
        beating = false;
        await heartbeat;
      }
      const nodeLists = s.audit().filter((e) => e.user.username === SA_USER && e.verb === 'list' && e.objectRef?.resource === 'nodes' && Date.parse(e.requestReceivedTimestamp) > bKilledAt);
      expect(nodeLists.map((e) => new URL(e.requestURI, 'https://x').searchParams.get('limit')), 'node LISTs after the takeover').toEqual(['1']);
      await register(names[5]!, 5);
      await initialised(names[5]!, c);
    } finally {
      await s.stopProcesses();
      admin.close();
      expect(await cluster.cleanup()).toEqual([]);
    }
  });

  itRefusedNothing(server);
});
