// The ClusterCIDR CRD of deploy/base and the pools built on it, on kube-apiserver:
//
//  - the CRD as kubectl applies it (Established, its printer columns, deploy/examples created);
//  - its schema and CEL rules judged by kube-apiserver itself, case by case from the table the
//    offline evaluator is held to (test/deploy/clustercidr-cases.ts): creates as server-side dry
//    runs with fieldValidation=Strict (kubectl's default), updates against stored objects; an
//    object node-ipam-controller's CRD let in with 2 host bits still takes finalizer updates;
//  - the pool flows of the e2e suite (test/e2e/suites/clustercidr.ts: a pool's selector, a pool
//    deleted in use, a ServiceCIDR created live) through the built controller manager in
//    MultiCIDRRangeAllocator mode, as deploy/'s ServiceAccount.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { KubeClient } from '../../src/kube/client.js';
import { ApiError } from '../../src/kube/errors.js';
import { CLUSTERCIDRS } from '../../src/kube/types.js';
import { repoRoot } from '../kit/cli.js';
import { controlPlaneUnavailable } from '../kit/controlplane.js';
import { itRefusedNothing, useRealServer, type RealServer } from '../kit/realserver.js';
import { eventually } from '../kit/wait.js';
import { CREATE_CASES, UPDATE_CASES, clusterCIDR, serverErrorCode, serverErrorFragments } from '../deploy/clustercidr-cases.js';
import type { JsonObject } from '../deploy/kustomize.js';
import { clusterCIDRSuite } from '../e2e/suites/clustercidr.js';

const skip = controlPlaneUnavailable();
const CRD_FILE = path.join(repoRoot, 'deploy/base/crd-clustercidrs.yaml');
const CLUSTERCIDRS_PATH = '/apis/networking.x-k8s.io/v1/clustercidrs';

type Stored = JsonObject & { metadata: { name: string; resourceVersion: string; finalizers?: string[] } };

/** What kube-apiserver answered: 'accepted', or the 422's message. */
async function answer(fn: () => Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await fn();
    return { code: 200, message: 'accepted' };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, message: err.status?.message ?? err.message };
  }
}

function expectJudged(got: { code: number; message: string }, errors: string[]): void {
  if (errors.length === 0) {
    expect(got).toEqual({ code: 200, message: 'accepted' });
    return;
  }
  expect(got.code, got.message).toBe(serverErrorCode(errors));
  for (const e of errors) for (const fragment of serverErrorFragments(e)) expect(got.message, `for ${e}`).toContain(fragment);
}

/** The CRD without its create-only rule (perNodeHostBits >= 4), as node-ipam-controller's CRD was. */
function crdWithoutMinimum(): string {
  const crd = parseYaml(readFileSync(CRD_FILE, 'utf8')) as JsonObject;
  const version = ((crd.spec as JsonObject).versions as JsonObject[])[0]!;
  const spec = ((((version.schema as JsonObject).openAPIV3Schema as JsonObject).properties as JsonObject).spec as JsonObject).properties as JsonObject;
  const bits = spec.perNodeHostBits as JsonObject;
  bits['x-kubernetes-validations'] = (bits['x-kubernetes-validations'] as JsonObject[]).filter((r) => !r.optionalOldSelf);
  return toYaml(crd);
}

describe.skipIf(skip !== undefined)(skip ?? 'ClusterCIDR on kube-apiserver', () => {
  const server = useRealServer();

  describe('the CRD of deploy/base, as kubectl applied it', () => {
    let client: KubeClient;
    const s = (): RealServer => server.get();
    const admin = (): KubeClient => (client ??= new KubeClient(s().adminKubeConfig(), { userAgent: 'realserver-crd' }));
    const create = (o: JsonObject, dryRun: boolean) => admin().request({ method: 'POST', path: CLUSTERCIDRS_PATH, query: { fieldValidation: 'Strict', ...(dryRun ? { dryRun: 'All' } : {}) }, body: o });

    it('is Established, and deploy/examples are created by kubectl apply and printed with their columns', async () => {
      const crd = JSON.parse(await s().kubectl('get', 'crd', 'clustercidrs.networking.x-k8s.io', '-o', 'json')) as { status: { conditions: { type: string; status: string }[] } };
      expect(crd.status.conditions.filter((c) => c.status === 'True').map((c) => c.type).sort()).toEqual(['Established', 'NamesAccepted']);
      await s().kubectl('apply', '-f', path.join(repoRoot, 'deploy/examples'));
      const table = await s().kubectl('get', 'clustercidrs');
      expect(table.split('\n')[0]?.split(/\s+/).filter((w) => w !== '')).toEqual(['NAME', 'PERNODEHOSTBITS', 'IPV4', 'IPV6', 'AGE']);
      // No controller runs yet: nothing holds them, they go at once (the pool suite below must not see them).
      await s().kubectl('delete', '-f', path.join(repoRoot, 'deploy/examples'), '--wait=true');
      expect(JSON.parse(await s().kubectl('get', 'clustercidrs', '-o', 'json')).items).toEqual([]);
    });

    it.each(CREATE_CASES.map((c) => [c.title, c] as const))('create: %s', async (_title, c) => {
      expectJudged(await answer(() => create(c.object, true)), c.errors);
    });

    it.each(UPDATE_CASES.filter((c) => !c.legacy).map((c) => [c.title, c] as const))('update: %s', async (_title, c) => {
      const name = `update-${UPDATE_CASES.indexOf(c)}`;
      const stored = await admin().create<Stored>(CLUSTERCIDRS, { ...c.old, metadata: { ...(c.old.metadata as JsonObject), name } } as never);
      try {
        const next = { ...c.new, metadata: { ...(c.new.metadata as JsonObject), name, resourceVersion: stored.metadata.resourceVersion } };
        expectJudged(await answer(() => admin().request({ method: 'PUT', path: `${CLUSTERCIDRS_PATH}/${name}`, query: { fieldValidation: 'Strict', dryRun: 'All' }, body: next })), c.errors);
      } finally {
        await admin().delete(CLUSTERCIDRS, name);
      }
    });

    it('an object with 2 host bits that node-ipam-controller\'s CRD let in still takes finalizer updates', { timeout: 60_000 }, async () => {
      const [add, remove] = UPDATE_CASES.filter((c) => c.legacy) as [typeof UPDATE_CASES[0], typeof UPDATE_CASES[0]];
      await s().applyText(crdWithoutMinimum());
      // The CRD's new rules apply once its handler is rebuilt: the legacy create goes through then.
      await eventually(async () => expect(await answer(() => create({ ...add.old, metadata: { name: 'legacy' } }, false))).toEqual({ code: 200, message: 'accepted' }), { timeoutMs: 20_000, intervalMs: 200 });
      try {
        await s().apply('deploy/base/crd-clustercidrs.yaml');
        await eventually(async () => expectJudged(await answer(() => create({ ...add.old, metadata: { name: 'legacy-2' } }, true)), ['.spec.perNodeHostBits: perNodeHostBits must be at least 4']), { timeoutMs: 20_000, intervalMs: 200 });
        for (const c of [add, remove]) {
          const current = await admin().get<Stored>(CLUSTERCIDRS, 'legacy');
          const next = { ...c.new, metadata: { ...(c.new.metadata as JsonObject), name: 'legacy', resourceVersion: current.metadata.resourceVersion } };
          expectJudged(await answer(() => admin().request({ method: 'PUT', path: `${CLUSTERCIDRS_PATH}/legacy`, query: { fieldValidation: 'Strict' }, body: next })), c.errors);
        }
        const stored = await admin().get<Stored>(CLUSTERCIDRS, 'legacy');
        expect([stored.spec, stored.metadata.finalizers ?? []]).toEqual([clusterCIDR({ perNodeHostBits: 2, ipv4: '10.0.0.0/24', ipv6: '' }).spec, []]);
      } finally {
        await admin().delete(CLUSTERCIDRS, 'legacy');
        client.close();
      }
    });
  });

  clusterCIDRSuite({ kind: 'controlplane', server });
  itRefusedNothing(server);
});
