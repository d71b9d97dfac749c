// Pod field selectors against a plain reference: over random pods and random selectors of one to
// four requirements (=, ==, !=) on every field kube-apiserver lets a pod selector name, a LIST
// returns exactly the pods the reference picks. The reference builds each pod's set of
// selectable fields the way kube-apiserver does (absent strings are "", hostNetwork is "false"
// unless true, status.podIP is the first of podIPs) and checks every requirement against it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { kubeConfigFor, startApiServerDouble, Store, type ApiServerDouble, type KObject } from '../../src/double/index.js';
import { rawRequest } from './target.js';

type Fields = Record<string, string>;

function referenceFields(pod: KObject): Fields {
  const spec = (pod.spec ?? {}) as Record<string, unknown>;
  const status = (pod.status ?? {}) as { phase?: string; podIP?: string; podIPs?: { ip: string }[]; nominatedNodeName?: string };
  const s = (v: unknown): string => (typeof v === 'string' ? v : '');
  return {
    'metadata.name': s(pod.metadata?.name),
    'metadata.namespace': s(pod.metadata?.namespace),
    'spec.nodeName': s(spec.nodeName),
    'spec.restartPolicy': s(spec.restartPolicy),
    'spec.schedulerName': s(spec.schedulerName),
    'spec.serviceAccountName': s(spec.serviceAccountName),
    'spec.hostNetwork': spec.hostNetwork === true ? 'true' : 'false',
    'status.phase': s(status.phase),
    'status.podIP': status.podIPs && status.podIPs.length > 0 ? status.podIPs[0].ip : s(status.podIP),
    'status.nominatedNodeName': s(status.nominatedNodeName),
  };
}

type Term = [field: string, op: '=' | '==' | '!=', value: string];

function referenceMatches(pod: KObject, terms: Term[]): boolean {
  const f = referenceFields(pod);
  return terms.every(([field, op, value]) => (op === '!=' ? f[field] !== value : f[field] === value));
}

const NAMESPACES = ['default', 'kube-system'];
const IPS = ['10.244.1.5', '10.244.2.7', 'fd00::5'];
const pick = <T>(...values: T[]): fc.Arbitrary<T> => fc.constantFrom(...values);

interface PodInput {
  namespace: string;
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
}

const podInput: fc.Arbitrary<PodInput> = fc.record({
  namespace: pick(...NAMESPACES),
  spec: fc.record(
    {
      nodeName: pick('n1', 'n2'),
      restartPolicy: pick('Always', 'OnFailure', 'Never'),
      schedulerName: pick('default-scheduler', 'custom'),
      serviceAccountName: pick('default', 'agent'),
      hostNetwork: fc.boolean(),
    },
    { requiredKeys: [] },
  ),
  status: fc.option(
    fc.record(
      {
        phase: pick('Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'),
        nominatedNodeName: pick('n2', 'n3'),
        // The IPs as kubelets write them: both fields (podIP = podIPs[0]), the list only, or the old singular field only.
        ips: fc.tuple(fc.subarray(IPS, { minLength: 1, maxLength: 2 }), pick('both', 'list', 'single')),
      },
      { requiredKeys: [] },
    ).map(({ ips, ...rest }) => {
      if (!ips) return rest;
      const [list, how] = ips;
      return { ...rest, ...(how !== 'list' ? { podIP: list[0] } : {}), ...(how !== 'single' ? { podIPs: list.map((ip) => ({ ip })) } : {}) };
    }),
    { nil: undefined },
  ),
});

const VALUES: Record<string, string[]> = {
  'metadata.name': ['p0', 'p1', 'p3'],
  'metadata.namespace': [...NAMESPACES],
  'spec.nodeName': ['n1', 'n2'],
  'spec.restartPolicy': ['Always', 'OnFailure', 'Never'],
  'spec.schedulerName': ['default-scheduler', 'custom'],
  'spec.serviceAccountName': ['default', 'agent'],
  'spec.hostNetwork': ['true', 'false'],
  'status.phase': ['Pending', 'Running', 'Succeeded', 'Failed'],
  'status.podIP': [...IPS],
  'status.nominatedNodeName': ['n2', 'n3'],
};
// Every field can be compared with "" too (unset), and with a value no pod has.
const term: fc.Arbitrary<Term> = fc.constantFrom(...Object.keys(VALUES)).chain((field) => fc.tuple(fc.constant(field), pick<Term[1]>('=', '==', '!='), pick(...VALUES[field], '', 'none')));
const selector = fc.array(term, { minLength: 1, maxLength: 4 });

/** Stores the pods as a client would: create, then status through /status. */
function seed(store: Store, pods: PodInput[], namespaceOf: (p: PodInput) => string): KObject[] {
  return pods.map((p, i) => {
    const ns = namespaceOf(p);
    store.create('pods', { metadata: { name: `p${i}` }, spec: { containers: [{ name: 'c', image: 'i' }], ...p.spec } }, ns);
    if (p.status) store.update('pods', { ...store.get('pods', `p${i}`, ns), status: p.status }, { subresource: 'status' });
    return store.get('pods', `p${i}`, ns);
  });
}

const key = (p: KObject): string => `${p.metadata?.namespace}/${p.metadata?.name}`;
const render = (terms: Term[]): string => terms.map(([f, op, v]) => `${f}${op}${v}`).join(',');

describe('pod field selectors against the reference', () => {
  it('the store lists exactly the pods the reference picks', () => {
    fc.assert(
      fc.property(fc.array(podInput, { maxLength: 10 }), fc.array(selector, { minLength: 1, maxLength: 8 }), (pods, selectors) => {
        const store = new Store({ namespaces: NAMESPACES });
        const stored = seed(store, pods, (p) => p.namespace);
        for (const terms of selectors) {
          const got = store.list('pods', { fieldSelector: render(terms) }).map(key);
          expect(got).toEqual(stored.filter((p) => referenceMatches(p, terms)).map(key).sort());
        }
      }),
      { numRuns: 300 },
    );
  });

  describe('over HTTP (the selector URL-encoded, as kubectl sends it)', () => {
    let s: ApiServerDouble;
    let run = 0;
    beforeAll(async () => {
      s = await startApiServerDouble();
    });
    afterAll(async () => {
      await s?.stop();
    });

    it('LIST /api/v1/namespaces/<ns>/pods?fieldSelector=… returns the reference\'s pods', async () => {
      const kc = kubeConfigFor(s);
      await fc.assert(
        fc.asyncProperty(fc.array(podInput, { maxLength: 6 }), fc.array(selector, { minLength: 1, maxLength: 4 }), async (pods, selectors) => {
          // A namespace per run keeps runs apart on the one double.
          const ns = `run-${run++}`;
          s.store.create('namespaces', { metadata: { name: ns } });
          const stored = seed(s.store, pods, () => ns);
          for (const terms of selectors) {
            const res = await rawRequest(kc, 'GET', `/api/v1/namespaces/${ns}/pods?fieldSelector=${encodeURIComponent(render(terms))}`);
            expect(res.status).toBe(200);
            const got = (JSON.parse(res.body) as { items: KObject[] }).items.map(key);
            expect(got).toEqual(stored.filter((p) => referenceMatches(p, terms)).map(key).sort());
          }
        }),
        { numRuns: 40 },
      );
    });
  });
});
