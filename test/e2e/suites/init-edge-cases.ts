// The node-initialisation edge cases of issue 12, shared by both tiers: each decided as Kubernetes'
// cloud node controller decides it (or as a deviation the README lists), through the built
// controller manager (`run --cloud-provider=static`), with nodes registered by the kubelet
// simulator (or created as a client would, where kubelet cannot produce them). Expected outcomes
// are written out by hand from Kubernetes' behaviour, not computed by the code under test.
// test/e2e/init-edge-cases.test.ts runs them against the API server double,
// test/realserver/init-edge-cases.test.ts against kube-apiserver.
import { beforeAll, describe, expect, it } from 'vitest';
import { registrationNode, type KubeletConfig } from '../../../src/simulation/kubelet/index.js';
import type { StaticNodeEntry } from '../../kit/double.js';
import { eventually } from '../../kit/wait.js';
import { annotationOf, doubleCheckOptions, E2E_POLL_MS, expectNodeOutcome, warningEvent } from '../support/assert.js';
import { REASON_INVALID_NODE_IP } from '../support/cases.js';
import { addressesOf, hasTaint, UNINITIALIZED_TAINT_KEY, type WireNode } from '../support/cluster.js';
import { runPrefix, suiteServerName, suiteTargetSetup, useE2ETarget, type SuiteTarget } from '../support/target.js';

const I = (address: string) => ({ type: 'InternalIP' as const, address });
const H = (address: string) => ({ type: 'Hostname' as const, address });
const LONG_INSTANCE_TYPE = `x${'l'.repeat(68)}e`;

/** The edge cases, one controller run. */
export function initEdgeCaseSuite(on: SuiteTarget): void {
  describe(`node initialisation edge cases (issue 12) through the real process, against ${suiteServerName(on)}`, () => {
    const prefix = runPrefix();
    const name = (id: string): string => `${prefix}-${id}`;
    const cloud: Record<string, StaticNodeEntry> = {};
    const kubelets: KubeletConfig[] = [];
    const kubelet = (id: string, config: Omit<KubeletConfig, 'name' | 'cloudProviderExternal'>, entry: StaticNodeEntry): void => {
      kubelets.push({ name: name(id), cloudProviderExternal: true, ...config });
      cloud[name(id)] = entry;
    };

    // 1. The annotation is present and the cloud reports no addresses.
    kubelet('empty-v4', { nodeIP: '10.0.0.1', hostIPs: ['10.0.0.1'] }, { addresses: [] });
    kubelet('empty-v6', { nodeIP: 'fd00::1', hostIPs: ['fd00::1'] }, { addresses: [] });
    kubelet('empty-none', {}, { addresses: [] });
    // 2. --hostname-override=10.0.0.5 --node-ip=10.0.0.5; the cloud reports 10.0.0.1.
    kubelet('hostname-ip', { nodeIP: '10.0.0.5', hostname: '10.0.0.5', hostIPs: ['10.0.0.5'] }, { addresses: [I('10.0.0.1')] });
    // 3. No providerID from the cloud, none on the node.
    kubelet('no-provider-id', {}, { providerID: '', addresses: [I('10.0.0.7')] });
    // 4. Label values the API server would refuse.
    kubelet('bad-labels', {}, { addresses: [I('10.0.0.8')], instanceType: LONG_INSTANCE_TYPE, zone: 'z/1', region: 'region-1' });
    // 5. Reserved label keys: kubernetes.io / k8s.io and their subdomains are dropped (the rule since
    // kubernetes#126772; see README), look-alikes are applied.
    kubelet('reserved', {}, {
      addresses: [I('10.0.0.9')],
      labels: { 'examplek8s.io/a': 'a', 'k8s-io/b': 'b', 'mykubernetes.io/f': 'f', 'a.k8s.io/c': 'c', 'kubernetes.io/d': 'd' },
    });
    // 6. kubelet trims --node-ip items as Go's strings.TrimSpace: U+0085 is space, U+FEFF is not.
    kubelet('trim-nel', { nodeIP: '\u008510.0.0.10\u0085', hostIPs: ['10.0.0.10'] }, { addresses: [I('10.0.0.10'), I('10.0.0.11')] });
    kubelet('trim-bom', { nodeIP: '\ufeff10.0.0.12', hostIPs: ['10.0.0.12'] }, { addresses: [I('10.0.0.12'), I('10.0.0.13')] });
    // 6. Error texts quote as Go's %q (annotations written by a client, not kubelet).
    cloud[name('quote-ctl')] = { addresses: [I('10.0.0.14')] };
    cloud[name('quote-nel')] = { addresses: [I('10.0.0.15')] };

    const env = useE2ETarget({ ...suiteTargetSetup(on), prefix, cloud });
    const log = (): string => env.log();
    const opts = (noWarnings: boolean) => doubleCheckOptions(log, noWarnings);

    beforeAll(async () => {
      for (const k of kubelets) {
        const r = await env.cluster.registerFakeNode(k);
        expect(r.addressError, `kubelet address setter for ${k.name}`).toBeUndefined();
      }
      for (const [id, annotation] of [['quote-ctl', '10.0.0.14\u0001'], ['quote-nel', '10.0.0.15\u0085\u007f']] as const) {
        const { node } = registrationNode({ name: name(id), cloudProviderExternal: true });
        node.metadata.annotations = { ...node.metadata.annotations, 'alpha.kubernetes.io/provided-node-ip': annotation };
        await env.cluster.createNodeObject(node as WireNode);
      }
      // The process's start-up is not what is measured here: on a loaded machine it can take longer
      // than one case's wait.
      await env.ccm.waitFor((l) => l.msg === 'node cache synced', 60_000, 'node cache synced');
    }, 90_000);

    it.each([
      ['empty-v4', '10.0.0.1'],
      ['empty-v6', 'fd00::1'],
    ])('annotation present, cloud reports no addresses (%s): stays tainted with a Warning', async (id, ip) => {
      await expectNodeOutcome(env.cluster, name(id), {
        initialised: false,
        reason: REASON_INVALID_NODE_IP,
        messageIncludes: [`provided node IP "${ip}"`, `failed to get node address from cloud provider that matches ip: ${ip}`],
      }, opts(true));
    });

    it('no annotation, cloud reports no addresses: initialised, the addresses kubelet set are left alone', async () => {
      const node = await expectNodeOutcome(env.cluster, name('empty-none'), { initialised: true, addresses: (h) => [H(h)] }, opts(true));
      expect(annotationOf(node)).toBeUndefined();
    });

    it("only kubelet's Hostname equals the annotated IP: stays tainted (the annotation is checked against the cloud's list)", async () => {
      const registered = await env.cluster.getNode(name('hostname-ip'));
      expect(addressesOf(registered)).toEqual([I('10.0.0.5'), H('10.0.0.5')]);
      await expectNodeOutcome(env.cluster, name('hostname-ip'), {
        initialised: false,
        reason: REASON_INVALID_NODE_IP,
        messageIncludes: ['failed to get node address from cloud provider that matches ip: 10.0.0.5'],
      }, opts(true));
    });

    it('no providerID from the cloud and none on the node: stays tainted with a Warning', async () => {
      const node = await expectNodeOutcome(env.cluster, name('no-provider-id'), {
        initialised: false,
        reason: 'ProviderIDMissing',
        messageIncludes: [`cloud provider does not set node provider ID for node "${name('no-provider-id')}"`],
      }, opts(true));
      expect(node.spec?.providerID).toBeUndefined();
    });

    it('label values the API would refuse: left out with a Warning naming label and value, node initialised (deliberate deviation)', async () => {
      const node = await expectNodeOutcome(env.cluster, name('bad-labels'), { initialised: true, addresses: (h) => [I('10.0.0.8'), H(h)] }, opts(false));
      const labels = node.metadata.labels ?? {};
      for (const key of ['node.kubernetes.io/instance-type', 'beta.kubernetes.io/instance-type', 'topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/zone']) {
        expect(labels[key], key).toBeUndefined();
      }
      expect(labels['topology.kubernetes.io/region']).toBe('region-1');
      for (const [key, value] of [
        ['node.kubernetes.io/instance-type', LONG_INSTANCE_TYPE],
        ['beta.kubernetes.io/instance-type', LONG_INSTANCE_TYPE],
        ['topology.kubernetes.io/zone', 'z/1'],
        ['failure-domain.beta.kubernetes.io/zone', 'z/1'],
      ]) {
        await eventually(() => warningEvent(env.cluster, name('bad-labels'), 'CloudLabelInvalid', [`"${key}"="${value}"`]), { timeoutMs: 5_000, intervalMs: E2E_POLL_MS, describe: log });
      }
    });

    it('reserved label keys: kubernetes.io / k8s.io and their subdomains dropped, look-alikes applied', async () => {
      const node = await expectNodeOutcome(env.cluster, name('reserved'), { initialised: true }, opts(true));
      const labels = node.metadata.labels ?? {};
      expect(labels['examplek8s.io/a']).toBe('a');
      expect(labels['k8s-io/b']).toBe('b');
      expect(labels['mykubernetes.io/f']).toBe('f');
      expect(labels['a.k8s.io/c']).toBeUndefined();
      expect(labels['kubernetes.io/d']).toBeUndefined();
    });

    it('kubelet --node-ip trimmed as strings.TrimSpace: U+0085 is space (annotation written, one address kept)', async () => {
      const registered = await env.cluster.getNode(name('trim-nel'));
      expect(annotationOf(registered)).toBe('10.0.0.10');
      await expectNodeOutcome(env.cluster, name('trim-nel'), { initialised: true, addresses: (h) => [I('10.0.0.10'), H(h)] }, opts(true));
    });

    it('kubelet --node-ip trimmed as strings.TrimSpace: U+FEFF is not space (the item is ignored, no annotation, the whole cloud list)', async () => {
      const registered = await env.cluster.getNode(name('trim-bom'));
      expect(annotationOf(registered)).toBeUndefined();
      await expectNodeOutcome(env.cluster, name('trim-bom'), { initialised: true, addresses: (h) => [I('10.0.0.12'), I('10.0.0.13'), H(h)] }, opts(true));
    });

    it.each([
      ['quote-ctl', '"10.0.0.14\\x01"'],
      ['quote-nel', '"10.0.0.15\\u0085\\x7f"'],
    ])('error texts quote the annotation as Go does (%s), in the event and the log', async (id, quoted) => {
      await expectNodeOutcome(env.cluster, name(id), {
        initialised: false,
        reason: REASON_INVALID_NODE_IP,
        messageIncludes: [`provided node IP ${quoted} is not usable: failed to parse node IP ${quoted}: could not parse ${quoted}`],
      }, opts(true));
      // The JSON log line carries the same text, JSON-escaped once more.
      expect(env.ccm.output()).toContain(JSON.stringify(`provided node IP ${quoted}`).slice(1, -1));
      expect(hasTaint(await env.cluster.getNode(name(id)), UNINITIALIZED_TAINT_KEY)).toBe(true);
    });
  });
}
