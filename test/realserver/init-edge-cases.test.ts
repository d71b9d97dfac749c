// The node-initialisation edge cases of issue 12 (test/e2e/suites/init-edge-cases.ts) against
// kube-apiserver: the label values and keys it would refuse, the Go-quoted error texts in its
// Events, the nodes kubelet registers as themselves; the controller as deploy/'s ServiceAccount.
// And the rules the controller judges cloud labels by (src/controllers/labels.ts: a label it
// would send is left out with a Warning instead) held to kube-apiserver's own validation: a table
// of edge cases and random keys and values, each sent as a server-side dry run.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/kube/client.js';
import { ApiError } from '../../src/kube/errors.js';
import { NODES } from '../../src/kube/types.js';
import { labelKeyProblem, labelValueProblem } from '../../src/controllers/labels.js';
import { controlPlaneUnavailable } from '../kit/controlplane.js';
import { itRefusedNothing, useRealServer } from '../kit/realserver.js';
import { initEdgeCaseSuite } from '../e2e/suites/init-edge-cases.js';

const skip = controlPlaneUnavailable();

const x = (n: number, c = 'a'): string => c.repeat(n);
/** [key, value]: the edges of Kubernetes' qualified names and label values. */
const LABELS: Array<[string, string]> = [
  ['zone', 'a'], ['zone', ''], ['zone', x(63)], ['zone', x(64)], ['zone', 'z/1'], ['zone', '-a'], ['zone', 'a-'], ['zone', '_a'], ['zone', 'a_b.c-d'],
  ['zone', 'A.B'], ['zone', 'a b'], ['zone', 'ä'], ['zone', '1'], ['zone', '.a'],
  [x(63), 'v'], [x(64), 'v'], ['example.com/a', 'v'], ['Example.com/a', 'v'], ['example.com/', 'v'], ['/a', 'v'], ['a/b/c', 'v'],
  [`${x(253)}/a`, 'v'], [`${x(254)}/a`, 'v'], ['a..b/c', 'v'], ['-a.com/b', 'v'], ['a_b.com/c', 'v'], ['example.com/A_b.C', 'v'], ['example.com/_a', 'v'],
  ['topology.kubernetes.io/zone', x(68)],
];

describe.skipIf(skip !== undefined)(skip ?? 'node initialisation edge cases on kube-apiserver', () => {
  const server = useRealServer();
  initEdgeCaseSuite({ kind: 'controlplane', server });

  describe('label keys and values: what the controller leaves out is what kube-apiserver refuses', () => {
    let client: KubeClient;
    /** Whether kube-apiserver takes the label on a node (a server-side dry run): undefined, or its 422 message. */
    const serverSays = async (key: string, value: string): Promise<string | undefined> => {
      try {
        await client.request({ method: 'PATCH', path: '/api/v1/nodes/labels', query: { dryRun: 'All' }, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [key]: value } } } });
        return undefined;
      } catch (err) {
        if (err instanceof ApiError && err.code === 422) return err.message;
        throw err;
      }
    };
    const ours = (key: string, value: string): string | undefined => labelKeyProblem(key) ?? labelValueProblem(key, value);

    beforeAll(async () => {
      client = new KubeClient(server.get().adminKubeConfig(), { userAgent: 'realserver-labels' });
      await client.create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'labels' } });
    });
    afterAll(async () => {
      await client?.delete(NODES, 'labels');
      client?.close();
    });

    it.each(LABELS.map(([k, v]) => [`${k.length > 20 ? `${k.slice(0, 8)}…(${k.length})` : JSON.stringify(k)}=${v.length > 20 ? `…(${v.length})` : JSON.stringify(v)}`, k, v]))('%s', async (_title, key, value) => {
      const theirs = await serverSays(key, value);
      expect(ours(key, value) === undefined, `ours: ${ours(key, value)}; kube-apiserver: ${theirs}`).toBe(theirs === undefined);
    });

    it('random keys and values agree too (fast-check, 150 runs)', { timeout: 60_000 }, async () => {
      const chars = fc.constantFrom('a', 'Z', '0', '-', '_', '.', '/', ' ', 'é');
      await fc.assert(fc.asyncProperty(fc.string({ unit: chars, maxLength: 12 }), fc.string({ unit: chars, maxLength: 12 }), async (k, v) => {
        fc.pre(k !== '');
        const theirs = await serverSays(k, v);
        expect(ours(k, v) === undefined, `${JSON.stringify(k)}=${JSON.stringify(v)}: ours ${ours(k, v)}; kube-apiserver ${theirs}`).toBe(theirs === undefined);
      }), { numRuns: 150, seed: 37 });
    });
  });

  itRefusedNothing(server);
});
