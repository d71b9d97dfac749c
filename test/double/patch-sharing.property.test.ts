// The double's merge patches share the subtrees a patch leaves alone with the stored object, and
// its no-op check compares by identity first. Over random histories of PATCHes sent over HTTP
// (merge, strategic, JSON patch; main resource and status), these invariants must hold:
// - a stored object never changes once stored (every version seen stays as it was);
// - the result is what the same patch gives on an unshared deep copy;
// - a write gets a new resourceVersion exactly when it changes the object;
// - a refused write (422) leaves the stored object as it was.
import type { KObject } from '../../src/double/resource-def.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { KubeConfig } from '@kubernetes/client-node';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, DEFAULT_RESOURCES, kubeConfigFor, startApiServerDouble, type ApiServerDouble, type Json } from '../../src/double/index.js';
import { rawRequest } from './target.js';

const nodeSchema = DEFAULT_RESOURCES.find((r) => r.plural === 'nodes')!.smp;
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';

interface Step {
  contentType: string;
  status: boolean;
  body: Json;
}

const labelValue = fc.constantFrom<Json>('a', 'b', null);
const labels = fc.dictionary(fc.constantFrom('x', 'y', 'pool'), labelValue, { maxKeys: 2 });
const taint = fc.record({ key: fc.constantFrom('t1', 't2', 'node.cloudprovider.kubernetes.io/uninitialized'), effect: fc.constantFrom('NoSchedule', 'NoExecute') });
const address = fc.record({ type: fc.constantFrom('InternalIP', 'ExternalIP', 'Hostname'), address: fc.constantFrom('10.0.0.1', '10.0.0.2', 'fd00::1') });
const condition = fc.record({ type: fc.constantFrom('Ready', 'NetworkUnavailable'), status: fc.constantFrom('True', 'False') });

const step: fc.Arbitrary<Step> = fc.oneof(
  labels.map((l) => ({ contentType: MERGE, status: false, body: { metadata: { labels: l } } })),
  fc.option(fc.array(taint, { maxLength: 2 }), { nil: null }).map((t) => ({ contentType: MERGE, status: false, body: { spec: { taints: t } } })),
  fc.option(fc.constantFrom<string[]>(['10.1.0.0/24'], ['10.1.1.0/24', 'fd00:1::/64']), { nil: null }).map((c) => ({ contentType: MERGE, status: false, body: { spec: { podCIDRs: c } } })),
  fc.array(address, { maxLength: 3 }).map((a) => ({ contentType: MERGE, status: true, body: { status: { addresses: a } } })),
  fc.array(condition, { maxLength: 2 }).map((c) => ({ contentType: STRATEGIC, status: true, body: { status: { conditions: c } } })),
  fc.array(address, { maxLength: 2 }).map((a) => ({ contentType: STRATEGIC, status: true, body: { status: { addresses: a } } })),
  labels.map((l) => ({ contentType: STRATEGIC, status: false, body: { metadata: { labels: l } } })),
  fc.constantFrom('a', 'b').map((v) => ({ contentType: JSON_PATCH, status: false, body: [{ op: 'add', path: '/metadata/labels/json', value: v }] })),
  fc.constant({ contentType: MERGE, status: false, body: {} }),
  fc.constant({ contentType: MERGE, status: true, body: {} }),
);

/** The object without its resourceVersion, as comparable text (key order aside). */
function content(obj: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
    return v;
  };
  const copy = JSON.parse(JSON.stringify(obj)) as { metadata: Record<string, unknown> };
  delete copy.metadata.resourceVersion;
  return JSON.stringify(sorted(copy));
}

/** What the patch gives on an unshared copy, the store's own steps aside (checked by content). */
function expected(current: unknown, s: Step): Json {
  const copy = JSON.parse(JSON.stringify(current)) as Json;
  if (s.contentType === MERGE) return applyMergePatch(copy, s.body);
  if (s.contentType === STRATEGIC) return applyStrategicMergePatch(copy, s.body, nodeSchema);
  return applyJsonPatch(copy, s.body);
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

let api: ApiServerDouble;
let kc: KubeConfig;
let serial = 0;

beforeAll(async () => {
  api = await startApiServerDouble();
  kc = kubeConfigFor(api);
});
afterAll(() => api.stop());

describe('patches over shared structure', () => {
  it('the pure merge patches never write to the document they are given', () => {
    const doc = fc.record({ metadata: fc.record({ name: fc.constant('n'), labels }), spec: fc.record({ taints: fc.array(taint, { maxLength: 2 }) }), status: fc.record({ addresses: fc.array(address, { maxLength: 2 }), conditions: fc.array(condition, { maxLength: 2 }) }) });
    fc.assert(
      fc.property(doc, fc.array(step, { minLength: 1, maxLength: 6 }), (d, steps) => {
        let current = deepFreeze(JSON.parse(JSON.stringify(d)) as Json);
        for (const s of steps.filter((x) => x.contentType !== JSON_PATCH)) {
          // A frozen input throws on any write (ES modules are strict).
          const out = s.contentType === MERGE ? applyMergePatch(current, s.body) : applyStrategicMergePatch(current, s.body, nodeSchema);
          expect(out).toEqual(expected(current, s));
          current = deepFreeze(out);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never change a stored object, give what an unshared copy gives, and bump resourceVersion only on a change', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        const name = `share-${serial++}`;
        const created = await rawRequest(kc, 'POST', '/api/v1/nodes', JSON.stringify({ metadata: { name, labels: { x: 'a' } }, spec: { podCIDRs: ['10.0.0.0/24'] } }));
        expect(created.status).toBe(201);
        const seen: { ref: unknown; text: string }[] = [];
        const remember = () => {
          const ref = api.store.peek('nodes', name);
          seen.push({ ref, text: JSON.stringify(ref) });
          return ref as { metadata: { resourceVersion: string } };
        };
        let before = remember();
        for (const s of steps) {
          const path = `/api/v1/nodes/${name}${s.status ? '/status' : ''}`;
          const res = await rawRequest(kc, 'PATCH', path, JSON.stringify(s.body), s.contentType);
          const after = remember();
          if (res.status === 422) {
            // Refused (e.g. a duplicate taint): nothing changed.
            expect(after).toBe(before);
            continue;
          }
          expect(res.status, res.body).toBe(200);
          for (const v of seen) expect(JSON.stringify(v.ref), 'a stored version changed after it was stored').toBe(v.text);
          // The store's own rules: status writes keep spec and metadata; main writes keep status;
          // podCIDR follows podCIDRs unless they disagree, when podCIDR wins; Go's encoding of a
          // Node (empty omitempty fields dropped, zero-valued structs present).
          const want = expected(before, s) as { spec?: Record<string, unknown>; status?: unknown; metadata?: unknown };
          const b = before as unknown as { spec?: unknown; status?: unknown; metadata?: unknown };
          const model = s.status ? { ...b, status: want.status } : { ...want, status: b.status };
          const spec = (model as { spec?: { podCIDRs?: string[]; podCIDR?: string } }).spec;
          if (spec && !s.status) {
            if (spec.podCIDR && spec.podCIDRs?.[0] !== spec.podCIDR) spec.podCIDRs = [spec.podCIDR];
            if (spec.podCIDRs?.length) spec.podCIDR = spec.podCIDRs[0];
          }
          api.store.resource('nodes').encodeAsGo?.(model as KObject);
          expect(content(after)).toBe(content(model));
          const changed = content(after) !== content(before);
          expect(after.metadata.resourceVersion !== before.metadata.resourceVersion, `changed=${changed}`).toBe(changed);
          expect(changed || after === before).toBe(true);
          before = after;
        }
      }),
      { numRuns: 150 },
    );
  });
});
