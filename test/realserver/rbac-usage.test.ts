// Least privilege on kube-apiserver, part one: with deploy/base and deploy/node-lifecycle applied by
// kubectl, the built controller manager runs as deploy/'s ServiceAccount with every controller
// (cloud-node, node-ipam as MultiCIDRRangeAllocator, cloud-node-lifecycle), leader election and
// /metrics behind delegated authentication, scraped by deploy/components/monitoring's
// Prometheus. kube-apiserver's audit log then shows that RBAC allowed every request it made, and
// that every (verb, resource) the ServiceAccount is granted was asked for: no unused verb.
//
// The grants that only rare paths use are driven here as they happen in a cluster:
//  - get nodes: a node re-read after a write conflict; its kubelet posts status back to back while
//    the controller initialises it, so the controller's guarded write meets a newer version (409);
//  - patch events: a node the controller cannot initialise is retried, and its repeated Warning
//    bumps the count of the Event it wrote;
//  - delete nodes (deploy/node-lifecycle): a node whose machine left the cloud;
//  - delete clustercidrs: a second run with another --cluster-cidr deletes the first run's
//    created-from-flags ClusterCIDR;
//  - create tokenreviews / subjectaccessreviews (system:auth-delegator): Prometheus scrapes /metrics.
// Part two, test/realserver/rbac-rules-*.test.ts, takes each rule away in turn.
import { describe, expect, it } from 'vitest';
import { NODES } from '../../src/kube/types.js';
import { controlPlaneUnavailable } from '../kit/controlplane.js';
import { DEPLOY_BASE, DEPLOY_NODE_LIFECYCLE, describeAuditEvent, readyConditionPatch, useRealServer } from '../kit/realserver.js';
import { eventually } from '../kit/wait.js';
import { E2E_POLL_MS } from '../e2e/support/assert.js';
import { hasTaint, podCIDRsOf, UNINITIALIZED_TAINT_KEY } from '../e2e/support/cluster.js';
import { allowed, ControllerRun, grantedOnServer, I, setUpScraper, usedKey } from './support/rbac.js';

const skip = controlPlaneUnavailable();
const HEARTBEAT = 'e2e.node-address-ccm.io/heartbeat';

describe.skipIf(skip !== undefined)(skip ?? 'least privilege on kube-apiserver: every request allowed, every granted verb used', () => {
  const server = useRealServer({ manifests: [...DEPLOY_BASE, DEPLOY_NODE_LIFECYCLE] });
  const runs: ControllerRun[] = [];
  let scraper = '';

  it('run 1: nodes initialised (one re-read after a conflict), a repeated Warning, a node deleted, /metrics scraped', { timeout: 120_000 }, async () => {
    const s = server.get();
    scraper = await setUpScraper(s);
    const run = await ControllerRun.start(s, 'rbac-1', {
      a: { addresses: [I('10.0.0.1'), I('fd00::1')] },
      busy: { addresses: [I('10.0.0.2'), I('fd00::2')] },
      stuck: { addresses: [I('10.0.0.3')] },
      gone: { addresses: [I('10.0.0.4')] },
    });
    runs.push(run);
    const wait = { timeoutMs: 30_000, intervalMs: E2E_POLL_MS, describe: () => run.log() };
    const initialised = (name: string) => eventually(async () => {
      const n = await run.cluster.getNode(name);
      expect(hasTaint(n, UNINITIALIZED_TAINT_KEY), `${name} initialised`).toBe(false);
      expect(podCIDRsOf(n)).toHaveLength(2);
    }, wait);
    try {
      await run.ccm.waitFor((l) => l.msg === 'acquired the lease', 20_000, 'leads');
      const a = await run.register('a');
      const gone = await run.register('gone');
      // Its --node-ip is not the cloud's: it stays tainted, and its Warning repeats.
      const stuck = await run.register('stuck', '10.0.0.9');

      // busy's kubelet posts status back to back (an annotation it bumps: a write that changes the
      // object) from its registration until the controller had to read it again.
      const busy = run.name('busy');
      let beating = true;
      let beats = 0;
      const kubelet = run.cluster.kubelet(busy);
      const heartbeat = (async () => {
        await eventually(() => run.cluster.nodeExists(busy), { timeoutMs: 10_000, intervalMs: 5 });
        while (beating) await kubelet.patch(NODES, busy, { metadata: { annotations: { [HEARTBEAT]: String(++beats) } } }, 'merge', { subresource: 'status' });
      })();
      await run.register('busy');
      try {
        await eventually(() => expect(run.audit().filter((e) => e.verb === 'get' && e.objectRef?.resource === 'nodes' && allowed(e)).map((e) => e.objectRef?.name)).toContain(busy), wait);
      } finally {
        beating = false;
        await heartbeat;
      }
      expect(run.audit().filter((e) => e.objectRef?.resource === 'nodes' && e.objectRef.name === busy && e.responseStatus?.code === 409).length, 'write conflicts on busy').toBeGreaterThan(0);
      for (const name of [a, busy, gone]) await initialised(name);

      await run.cluster.client.patch(NODES, gone, readyConditionPatch('Unknown'), 'strategic', { subresource: 'status' });
      run.writeCloud({ a: { addresses: [I('10.0.0.1'), I('fd00::1')] }, busy: { addresses: [I('10.0.0.2'), I('fd00::2')] }, stuck: { addresses: [I('10.0.0.3')] } });
      await eventually(async () => expect(await run.cluster.nodeExists(gone)).toBe(false), wait);

      await eventually(async () => expect((await run.scrape(scraper)).status).toBe(200), wait);
      await eventually(() => expect(run.audit().filter((e) => e.verb === 'patch' && e.objectRef?.resource === 'events' && allowed(e)).length, 'a repeated event bumped').toBeGreaterThan(0), { ...wait, timeoutMs: 60_000 });
      expect(hasTaint(await run.cluster.getNode(stuck), UNINITIALIZED_TAINT_KEY)).toBe(true);
      expect(run.ccm.exitCode()).toBeUndefined();
    } finally {
      await run.stop();
    }
  });

  it('run 2: another --cluster-cidr: the first run\'s created-from-flags ClusterCIDR is deleted', { timeout: 60_000 }, async () => {
    const s = server.get();
    const mirrors = async (): Promise<string[]> => (JSON.parse(await s.kubectl('get', 'clustercidrs', '-o', 'json')) as { items: { metadata: { name: string } }[] }).items.map((o) => o.metadata.name).filter((n) => n.startsWith('created-from-flags-')).sort();
    const before = await mirrors();
    expect(before).toHaveLength(1);
    const run = await ControllerRun.start(s, 'rbac-2', { c: { addresses: [I('10.0.1.1'), I('fd00:1::1')] } }, ['--cluster-cidr=10.245.0.0/16,fd00:10:245::/112']);
    runs.push(run);
    try {
      const c = await run.register('c');
      await eventually(async () => {
        expect(podCIDRsOf(await run.cluster.getNode(c))).toHaveLength(2);
        expect(run.audit().filter((e) => e.verb === 'delete' && e.objectRef?.resource === 'clustercidrs' && allowed(e)).map((e) => e.objectRef?.name)).toEqual(before);
      }, { timeoutMs: 30_000, intervalMs: E2E_POLL_MS, describe: () => run.log() });
    } finally {
      await run.stop();
    }
  });

  it('RBAC allowed every request of both runs, and every (verb, resource) granted was asked for', async () => {
    const requests = runs.flatMap((r) => r.audit());
    expect(requests.filter((e) => !allowed(e)).map(describeAuditEvent), 'requests RBAC refused').toEqual([]);
    expect(requests.filter((e) => e.responseStatus?.code === 401 || e.responseStatus?.code === 403).map(describeAuditEvent)).toEqual([]);
    const granted = await grantedOnServer(server.get());
    const used = [...new Set(requests.filter((e) => e.objectRef !== undefined).map(usedKey))].sort();
    // A Role's grant covers its namespace only: ` in <ns>` on both sides. A ClusterRole's covers
    // every namespace: the events in default.
    const covers = (grant: string, use: string): boolean => grant === use || (!grant.includes(' in ') && use.startsWith(`${grant} in `));
    console.info(`RBAC on kube-apiserver: ${granted.length} granted (verb, resource) pairs, ${used.length} used:\n${used.map((u) => `  ${u}`).join('\n')}`);
    expect(granted.filter((g) => !used.some((u) => covers(g, u))), 'granted but never asked for').toEqual([]);
    expect(used.filter((u) => !granted.some((g) => covers(g, u))), 'asked for and allowed by something other than deploy/\'s grants').toEqual([]);
  });
});
