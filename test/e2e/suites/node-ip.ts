// The KEP-3705 suite shared by both tiers: for each kubelet --node-ip form, what the built
// controller manager makes of the node (status.addresses, the uninitialized taint, pod CIDRs,
// events), with the CloudDualStackNodeIPs gate on and off. test/e2e/node-ip.test.ts runs it against
// the API server double, test/realserver/node-ip.test.ts against kube-apiserver (there the
// simulated kubelets register and restart as their nodes, the controller runs as deploy/'s
// ServiceAccount).
import { beforeAll, describe, expect, it } from 'vitest';
import type { NodeAddress } from '../../../src/model/node-address.js';
import { KubeletStartError, registerNode, registrationNode, restartKubelet, type KubeletConfig } from '../../../src/simulation/kubelet/index.js';
import { annotationOf, checkPodCIDRs, doubleCheckOptions, E2E_POLL_MS, expectNodeOutcome, warningEvent } from '../support/assert.js';
import { DOUBLE_CASES, KEP_DUAL, MALFORMED_NODE_IPS, REASON_INVALID_NODE_IP, type NodeIPCase } from '../support/cases.js';
import { addressesOf, cidrsOverlap, hasTaint, podCIDRsOf, UNINITIALIZED_TAINT_KEY, type WireNode } from '../support/cluster.js';
import { DOUBLE_CLUSTER_CIDRS, type StaticNodeEntry } from '../../kit/double.js';
import { eventually } from '../../kit/wait.js';
import { FAKE_NODE_TAINT_KEY, runPrefix, suiteServerName, suiteTargetSetup, useE2ETarget, type SuiteTarget } from '../support/target.js';

export function ipsOf(addresses: NodeAddress[]): string[] {
  return addresses.filter((a) => a.type === 'InternalIP' || a.type === 'ExternalIP').map((a) => a.address);
}

export function kubeletConfigFor(name: string, c: Pick<NodeIPCase, 'nodeIP' | 'cloud' | 'extraHostIPs'>): KubeletConfig {
  return { name, nodeIP: c.nodeIP, cloudProviderExternal: true, hostIPs: [...ipsOf(c.cloud), ...(c.extraHostIPs ?? [])] };
}

/** Every --node-ip case with the gate on (one controller run), then the gate off (another). */
export function nodeIPSuites(on: SuiteTarget): void {
  describe(`--node-ip forms against ${suiteServerName(on)}`, () => {
    const prefix = runPrefix();
    const nodeName = (id: string): string => `${prefix}-${id}`;
    const cloud: Record<string, StaticNodeEntry> = {};
    for (const c of DOUBLE_CASES) cloud[nodeName(c.id)] = { addresses: c.cloud, instanceType: 'e2e.small', zone: 'zone-a', region: 'region-1' };
    for (const id of ['foreign-annotation', 'restart']) cloud[nodeName(id)] = { addresses: KEP_DUAL };
    const env = useE2ETarget({ ...suiteTargetSetup(on), prefix, cloud });
    const log = (): string => env.log();
    const opts = doubleCheckOptions(log);
    const wait = { timeoutMs: 20_000, intervalMs: E2E_POLL_MS, describe: log };

    beforeAll(async () => {
      for (const c of DOUBLE_CASES) {
        const r = await env.cluster.registerFakeNode(kubeletConfigFor(nodeName(c.id), c));
        expect(r.addressError, `kubelet address setter for ${c.id}`).toBeUndefined();
      }
    });

    it('the controller manager keeps running', async () => {
      await eventually(() => expect(env.ccm.exitCode(), log()).toBeUndefined(), { timeoutMs: 1_000, intervalMs: E2E_POLL_MS });
    });

    for (const c of DOUBLE_CASES) {
      it(c.title, async () => {
        const name = nodeName(c.id);
        const registered = await env.cluster.getNode(name);
        // What kubelet wrote: the annotation for a specific --node-ip only.
        expect(annotationOf(registered)).toBe(c.annotation);
        const node = await expectNodeOutcome(env.cluster, name, c.expect, opts);
        // Other taints survive initialisation.
        expect(hasTaint(node, FAKE_NODE_TAINT_KEY)).toBe(true);
        if (c.expect.initialised) {
          expect(node.metadata.labels?.['node.kubernetes.io/instance-type']).toBe('e2e.small');
          expect(node.metadata.labels?.['topology.kubernetes.io/zone']).toBe('zone-a');
        }
      });
    }

    it('gives every initialised node its own pod CIDRs', async () => {
      const nodes = await Promise.all(DOUBLE_CASES.filter((c) => c.expect.initialised).map((c) => eventually(async () => {
        const n = await env.cluster.getNode(nodeName(c.id));
        expect(podCIDRsOf(n).length).toBe(2);
        return n;
      }, wait)));
      const all = nodes.flatMap((n) => podCIDRsOf(n).map((cidr) => ({ node: n.metadata.name, cidr })));
      for (let i = 0; i < all.length; i++) {
        for (let j = i + 1; j < all.length; j++) {
          expect(cidrsOverlap(all[i]!.cidr, all[j]!.cidr), `${all[i]!.node} ${all[i]!.cidr} vs ${all[j]!.node} ${all[j]!.cidr}`).toBe(false);
        }
      }
    });

    describe('malformed --node-ip: kubelet refuses to start, no Node is registered', () => {
      for (const m of MALFORMED_NODE_IPS) {
        it(`${JSON.stringify(m.value)} (${m.why})`, async () => {
          const name = nodeName(`malformed-${MALFORMED_NODE_IPS.indexOf(m)}`);
          await expect(registerNode(env.cluster.kubelet(name), { name, nodeIP: m.value, cloudProviderExternal: true })).rejects.toBeInstanceOf(KubeletStartError);
          expect(await env.cluster.nodeExists(name)).toBe(false);
        });
      }
    });

    it('an annotation the controller cannot parse (not written by kubelet): Warning, node stays tainted', async () => {
      const name = nodeName('foreign-annotation');
      const { node } = registrationNode({ name, nodeIP: '1.2.3.4', cloudProviderExternal: true });
      // A stray space: kubelet would have trimmed it; the controller reads the annotation strictly.
      node.metadata.annotations = { ...node.metadata.annotations, 'alpha.kubernetes.io/provided-node-ip': '1.2.3.4 ' };
      await env.cluster.createNodeObject(node as WireNode);
      await expectNodeOutcome(env.cluster, name, { initialised: false, reason: REASON_INVALID_NODE_IP, messageIncludes: ['1.2.3.4 '] }, opts);
    });

    it('kubelet restarted with a new --node-ip: the annotation changes and the addresses follow; never re-tainted', async () => {
      const name = nodeName('restart');
      const base = { name, cloudProviderExternal: true as const, hostIPs: [...ipsOf(KEP_DUAL), '9.10.11.12'] };
      await env.cluster.registerFakeNode(base);
      const all = [...KEP_DUAL, { type: 'Hostname' as const, address: name }];
      await expectNodeOutcome(env.cluster, name, { initialised: true, addresses: () => all }, opts);

      // --node-ip 5.6.7.8: kubelet writes the annotation; the periodic refresh narrows the addresses.
      const r1 = await restartKubelet(env.cluster.kubelet(name), { ...base, nodeIP: '5.6.7.8' });
      expect(r1.registered).toBe(false);
      expect(annotationOf(r1.node as WireNode)).toBe('5.6.7.8');
      await eventually(async () => expect(addressesOf(await env.cluster.getNode(name))).toEqual([{ type: 'InternalIP', address: '5.6.7.8' }, { type: 'Hostname', address: name }]), wait);

      // --node-ip removed: kubelet deletes the annotation; every cloud address comes back.
      const r2 = await restartKubelet(env.cluster.kubelet(name), base);
      expect(annotationOf(r2.node as WireNode)).toBeUndefined();
      await eventually(async () => expect(addressesOf(await env.cluster.getNode(name))).toEqual(all), wait);

      // --node-ip the cloud does not know: a Warning, addresses kept, and the node is not re-tainted.
      await restartKubelet(env.cluster.kubelet(name), { ...base, nodeIP: '9.10.11.12' });
      await eventually(() => warningEvent(env.cluster, name, REASON_INVALID_NODE_IP, ['9.10.11.12']), wait);
      const after = await env.cluster.getNode(name);
      expect(hasTaint(after, UNINITIALIZED_TAINT_KEY)).toBe(false);
      expect(addressesOf(after)).toEqual(all);
      checkPodCIDRs(after, DOUBLE_CLUSTER_CIDRS);
    });
  });

  describe(`CloudDualStackNodeIPs=false (the gate off), against ${suiteServerName(on)}`, () => {
    const prefix = runPrefix();
    const env = useE2ETarget({
      ...suiteTargetSetup(on),
      prefix,
      cloud: { [`${prefix}-dual`]: { addresses: KEP_DUAL }, [`${prefix}-single`]: { addresses: KEP_DUAL } },
      runArgs: ['--feature-gates=CloudDualStackNodeIPs=false'],
    });
    const opts = doubleCheckOptions(() => env.log());
    const dual = { nodeIP: '1.2.3.4,abcd::1234', cloud: KEP_DUAL };
    const single = { nodeIP: '1.2.3.4', cloud: KEP_DUAL };

    beforeAll(async () => {
      await env.cluster.registerFakeNode(kubeletConfigFor(`${prefix}-dual`, dual));
      await env.cluster.registerFakeNode(kubeletConfigFor(`${prefix}-single`, single));
    });

    it('a dual-stack annotation is refused: Warning, node stays tainted', async () => {
      await expectNodeOutcome(env.cluster, `${prefix}-dual`, { initialised: false, reason: REASON_INVALID_NODE_IP, messageIncludes: ['1.2.3.4,abcd::1234', 'dual-stack not supported'] }, opts);
    });

    it('a single-IP annotation still works', async () => {
      await expectNodeOutcome(env.cluster, `${prefix}-single`, { initialised: true, addresses: (h) => [{ type: 'InternalIP', address: '1.2.3.4' }, { type: 'Hostname', address: h }] }, opts);
    });
  });
}
