// Least privilege on kube-apiserver, part two: each rule of deploy/'s RBAC (deploy/base/rbac.yaml,
// deploy/node-lifecycle/rbac.yaml) and each binding of the ServiceAccount to a bootstrap role is
// taken away alone (kubectl apply of the file without it; kubectl delete of the binding), the built
// controller manager runs as deploy/'s ServiceAccount with every controller, and the test shows
// the 403 kube-apiserver answered (audit log) and what an operator sees break. The list of grants
// is read from the files: one added to deploy/ without an entry in BREAKS fails. Two test files
// run these (rbac-rules-*.test.ts), each on its own control plane, so they run side by side; part
// one (rbac-usage.test.ts) shows every granted verb is asked for and allowed.
import { describe, expect, it } from 'vitest';
import { NODES } from '../../../src/kube/types.js';
import { controlPlaneUnavailable } from '../../kit/controlplane.js';
import { DEPLOY_BASE, DEPLOY_NODE_LIFECYCLE, readyConditionPatch, SA_USER, useRealServer, type AuditEvent, type RealServer } from '../../kit/realserver.js';
import { consistently, eventually } from '../../kit/wait.js';
import { E2E_POLL_MS } from '../../e2e/support/assert.js';
import { hasTaint, podCIDRsOf, UNINITIALIZED_TAINT_KEY } from '../../e2e/support/cluster.js';
import { ControllerRun, deployGrants, I, RBAC_FILES, setUpScraper, usedKey, withoutGrant, type DeployGrant } from './rbac.js';

/** Node a: kubelet sets one address, the cloud has two: its initialisation needs a status write too. */
const A = { addresses: [I('10.0.0.1'), I('fd00::1')] };

interface Breaks {
  /** What kube-apiserver's authorizer must now refuse the ServiceAccount (a SubjectAccessReview). */
  cannot: Parameters<RealServer['allows']>[1];
  /** The refused request, as usedKey words it. */
  refused: string;
  /** Runs the controller without the grant and shows what breaks. */
  run(s: RealServer, prefix: string, scraper: string): Promise<void>;
}

const wait = (run: ControllerRun) => ({ timeoutMs: 20_000, intervalMs: E2E_POLL_MS, describe: () => run.log() });

/** The first refused request of the run with this key, once it came. */
async function refusedRequest(run: ControllerRun, key: string): Promise<AuditEvent> {
  return eventually(() => {
    const hit = run.forbidden().find((e) => usedKey(e) === key);
    if (!hit) throw new Error(`no 403 for ${key} yet; refused so far: ${JSON.stringify([...new Set(run.forbidden().map(usedKey))])}`);
    return hit;
  }, wait(run));
}

/** The node stays tainted (for a while after the refusal was seen), without pod CIDRs. */
async function staysTainted(run: ControllerRun, name: string): Promise<void> {
  await consistently(async () => {
    const n = await run.cluster.getNode(name);
    expect(hasTaint(n, UNINITIALIZED_TAINT_KEY), `${name} tainted`).toBe(true);
    expect(podCIDRsOf(n)).toEqual([]);
  }, 1_000);
}

async function initialised(run: ControllerRun, name: string): Promise<void> {
  await eventually(async () => {
    const n = await run.cluster.getNode(name);
    expect(hasTaint(n, UNINITIALIZED_TAINT_KEY), `${name} initialised`).toBe(false);
    expect(podCIDRsOf(n)).toHaveLength(2);
  }, wait(run));
}

/** A warn-or-error log line whose message is `msg` and whose error mentions `text`. */
async function logged(run: ControllerRun, msg: string, text: string): Promise<void> {
  // pino: 40 warn, 50 error.
  await run.ccm.waitFor((l) => l.msg === msg && Number(l.level) >= 40 && JSON.stringify(l.err ?? '').includes(text), 10_000, `warning "${msg}" about ${text}`);
}

const BREAKS: Record<string, Breaks> = {
  'ClusterRole/node-address-ccm nodes [get list watch patch]': {
    cannot: { verb: 'list', resource: 'nodes' },
    refused: 'list nodes',
    // The node informer cannot list: nothing is ever initialised, and the log says why.
    async run(s, prefix) {
      const run = await ControllerRun.start(s, prefix, { a: A });
      try {
        const a = await run.register('a');
        await refusedRequest(run, 'list nodes');
        await logged(run, 'list/watch failed, retrying', 'cannot list resource \\"nodes\\"');
        await staysTainted(run, a);
      } finally {
        await run.stop();
      }
    },
  },
  'ClusterRole/node-address-ccm nodes/status [patch]': {
    cannot: { verb: 'patch', resource: 'nodes', subresource: 'status' },
    refused: 'patch nodes/status',
    // The addresses cannot be written: the node stays tainted with a Warning saying so.
    async run(s, prefix) {
      const run = await ControllerRun.start(s, prefix, { a: A });
      try {
        const a = await run.register('a');
        await refusedRequest(run, 'patch nodes/status');
        await eventually(async () => {
          const failed = (await run.cluster.nodeEvents(a)).filter((e) => e.reason === 'NodeUpdateFailed');
          expect(failed.map((e) => [e.type, /cannot patch resource "nodes\/status"/.test(e.message ?? '')])).toContainEqual(['Warning', true]);
        }, wait(run));
        await staysTainted(run, a);
        expect((await run.cluster.getNode(a)).status?.addresses?.map((x) => x.address)).not.toContain('fd00::1');
      } finally {
        await run.stop();
      }
    },
  },
  'ClusterRole/node-address-ccm events [create patch]': {
    cannot: { verb: 'create', resource: 'events', namespace: 'default' },
    refused: 'create events in default',
    // The node is initialised, but nothing of it is told: no Event, only the log.
    async run(s, prefix) {
      const run = await ControllerRun.start(s, prefix, { a: A });
      try {
        const a = await run.register('a');
        await initialised(run, a);
        await refusedRequest(run, 'create events in default');
        await logged(run, 'cannot write event', 'cannot create resource \\"events\\"');
        expect(await run.cluster.nodeEvents(a)).toEqual([]);
      } finally {
        await run.stop();
      }
    },
  },
  'ClusterRole/node-address-ccm clustercidrs [get list watch create patch delete]': {
    cannot: { verb: 'list', resource: 'clustercidrs', group: 'networking.x-k8s.io' },
    refused: 'list clustercidrs.networking.x-k8s.io',
    // MultiCIDRRangeAllocator cannot load its pools: the leader exits (a Deployment restarts it
    // into CrashLoopBackOff) and no node is initialised.
    async run(s, prefix) {
      const run = await ControllerRun.start(s, prefix, { a: A });
      try {
        const a = await run.register('a');
        await refusedRequest(run, 'list clustercidrs.networking.x-k8s.io');
        await logged(run, 'controllers failed to start: releasing the lease and exiting', 'cannot list resource \\"clustercidrs\\"');
        expect(await run.ccm.exitWithin(10_000)).not.toBe(0);
        await staysTainted(run, a);
      } finally {
        await run.stop();
      }
    },
  },
  'ClusterRole/node-address-ccm servicecidrs [list watch]': {
    cannot: { verb: 'list', resource: 'servicecidrs', group: 'networking.k8s.io' },
    refused: 'list servicecidrs.networking.k8s.io',
    // Node IPAM cannot know the Service ranges, so it hands out nothing: the nodes stay tainted.
    async run(s, prefix) {
      const run = await ControllerRun.start(s, prefix, { a: A });
      try {
        const a = await run.register('a');
        await refusedRequest(run, 'list servicecidrs.networking.k8s.io');
        await logged(run, 'list/watch failed, retrying', 'cannot list resource \\"servicecidrs\\"');
        await staysTainted(run, a);
      } finally {
        await run.stop();
      }
    },
  },
  'Role/node-address-ccm-leader-election leases [create]': {
    cannot: { verb: 'create', resource: 'leases', group: 'coordination.k8s.io', namespace: 'kube-system' },
    refused: 'create leases.coordination.k8s.io in kube-system',
    // A new cluster has no Lease yet: it cannot be created, so no replica ever leads.
    async run(s, prefix) {
      const run = await ControllerRun.start(s, prefix, { a: A });
      try {
        const a = await run.register('a');
        await refusedRequest(run, 'create leases.coordination.k8s.io in kube-system');
        await logged(run, 'cannot create the lease', 'cannot create resource \\"leases\\"');
        await staysTainted(run, a);
        expect(run.ccm.lines.filter((l) => l.msg === 'acquired the lease')).toEqual([]);
      } finally {
        await run.stop();
      }
    },
  },
  'Role/node-address-ccm-leader-election leases(node-address-ccm) [get update]': {
    cannot: { verb: 'get', resource: 'leases', group: 'coordination.k8s.io', namespace: 'kube-system', name: 'node-address-ccm' },
    refused: 'get leases.coordination.k8s.io in kube-system',
    async run(s, prefix) {
      const run = await ControllerRun.start(s, prefix, { a: A });
      try {
        const a = await run.register('a');
        await refusedRequest(run, 'get leases.coordination.k8s.io in kube-system');
        await logged(run, 'cannot read the lease', 'cannot get resource \\"leases\\"');
        await staysTainted(run, a);
        expect(run.ccm.lines.filter((l) => l.msg === 'acquired the lease')).toEqual([]);
      } finally {
        await run.stop();
      }
    },
  },
  'ClusterRoleBinding/node-address-ccm:auth-delegator -> ClusterRole/system:auth-delegator': {
    cannot: { verb: 'create', resource: 'tokenreviews', group: 'authentication.k8s.io' },
    refused: 'create tokenreviews.authentication.k8s.io',
    // The controllers work; Prometheus cannot scrape /metrics: its token cannot be reviewed.
    async run(s, prefix, scraper) {
      const run = await ControllerRun.start(s, prefix, { a: A });
      try {
        const a = await run.register('a');
        await initialised(run, a);
        const scrape = await run.scrape(scraper);
        expect(scrape.status, scrape.body).toBe(401);
        await refusedRequest(run, 'create tokenreviews.authentication.k8s.io');
      } finally {
        await run.stop();
      }
    },
  },
  'ClusterRole/node-address-ccm-node-lifecycle nodes [delete]': {
    cannot: { verb: 'delete', resource: 'nodes' },
    refused: 'delete nodes',
    // A node whose machine left the cloud is not deleted: a Warning, a log line, retried.
    async run(s, prefix) {
      const run = await ControllerRun.start(s, prefix, { a: A, gone: { addresses: [I('10.0.0.4')] } });
      try {
        const gone = await run.register('gone');
        await initialised(run, gone);
        await run.cluster.client.patch(NODES, gone, readyConditionPatch('Unknown'), 'strategic', { subresource: 'status' });
        run.writeCloud({ a: A });
        await refusedRequest(run, 'delete nodes');
        await eventually(async () => {
          const failed = (await run.cluster.nodeEvents(gone)).filter((e) => e.reason === 'DeletingNodeFailed');
          expect(failed.map((e) => [e.type, /cannot delete resource "nodes"/.test(e.message ?? '')])).toContainEqual(['Warning', true]);
        }, wait(run));
        // The event can be read before the process's log line reaches this one's pipe.
        await eventually(() => expect(run.ccm.output()).toContain('failed to delete node; retrying next period'), wait(run));
        await consistently(async () => expect(await run.cluster.nodeExists(gone)).toBe(true), 1_000);
        expect(run.ccm.exitCode()).toBeUndefined();
      } finally {
        await run.stop();
      }
    },
  },
};

/**
 * Registers the describe block: a control plane with deploy/base and deploy/node-lifecycle, the
 * check that every grant of deploy/ has its entry in BREAKS, and the removal of each grant
 * `select` picks, one after another.
 */
export function describeGrantRemovals(title: string, select: (g: DeployGrant) => boolean): void {
  const skip = controlPlaneUnavailable();
  describe.skipIf(skip !== undefined)(skip ?? title, () => {
    const server = useRealServer({ manifests: [...DEPLOY_BASE, DEPLOY_NODE_LIFECYCLE] });
    const grants = deployGrants();
    let scraper = '';

    it('every rule and bootstrap binding of deploy/\'s RBAC has its test', () => {
      expect(grants.map((g) => g.key).sort()).toEqual(Object.keys(BREAKS).sort());
    });

    for (const g of grants.filter(select)) {
      const breaks = BREAKS[g.key];
      it.runIf(breaks !== undefined)(`without ${g.key}: ${breaks?.refused} refused`, { timeout: 90_000 }, async () => {
        const s = server.get();
        scraper ||= await setUpScraper(s);
        const allowed = () => s.allows(SA_USER, breaks!.cannot);
        expect(await allowed(), `before: ${JSON.stringify(breaks!.cannot)}`).toBe(true);
        await takeAway(s, g);
        try {
          await eventually(async () => expect(await allowed()).toBe(false), { timeoutMs: 10_000, intervalMs: 100 });
          await breaks!.run(s, `rule-${grants.indexOf(g)}`, scraper);
        } finally {
          await s.apply(...RBAC_FILES);
          await eventually(async () => expect(await allowed()).toBe(true), { timeoutMs: 10_000, intervalMs: 100 });
        }
      });
    }
  });
}

async function takeAway(s: RealServer, g: DeployGrant): Promise<void> {
  if (g.kind === 'binding') await s.kubectl('delete', g.role.kind.toLowerCase(), g.role.name);
  else await s.applyText(withoutGrant(g));
}
