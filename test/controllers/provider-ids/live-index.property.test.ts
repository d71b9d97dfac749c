// The index of live Nodes' providerIDs against a plain model, over random histories of a few
// Nodes (created, their providerID set or changed in another spelling, deleted, re-created under
// the same name with a new uid) and the claims of writes in flight: after every step, the holder
// the index names for any node and instance is exactly one the model has, and there is one
// exactly when the model has one. The model keys nothing: it scans every live Node and claim and
// compares with the provider's instanceKey.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { awsInstanceKey } from '../../../providers/aws/provider-id.js';
import { refuseAnswer } from '../../../src/controllers/provider-ids/decide.js';
import { instanceKeyOf, ProviderIDIndex } from '../../../src/controllers/provider-ids/live-index.js';
import type { NodeObject } from '../../../src/model/node.js';
import { makeNode } from '../../kit/nodes.js';
import { MemoryNodes } from '../memory-nodes.js';

// Two spellings of each of three instances, and one ID the provider does not know.
const IDS = ['aws:///z1/i-0a', 'i-0a', 'aws:///z2/i-0b', 'aws:////i-0b', 'aws:///z1/i-0c', 'i-0c', 'kubelet-made-this-up'];
const NAMES = ['a', 'b', 'c', 'd'];
const key = instanceKeyOf({ instanceKey: awsInstanceKey });

const step = fc.oneof(
  fc.record({ op: fc.constant('create' as const), name: fc.constantFrom(...NAMES), id: fc.option(fc.constantFrom(...IDS), { nil: undefined }) }),
  fc.record({ op: fc.constant('setID' as const), name: fc.constantFrom(...NAMES), id: fc.option(fc.constantFrom(...IDS), { nil: undefined }) }),
  fc.record({ op: fc.constant('delete' as const), name: fc.constantFrom(...NAMES) }),
  fc.record({ op: fc.constant('claim' as const), name: fc.constantFrom(...NAMES), id: fc.constantFrom(...IDS) }),
  fc.record({ op: fc.constant('release' as const), name: fc.constantFrom(...NAMES) }),
);

describe('ProviderIDIndex', () => {
  it('names a holder exactly when another live Node (by uid) or another node\'s claim has that instance', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
      const store = new MemoryNodes();
      const index = new ProviderIDIndex(key).attach(store);
      const claims = new Map<string, { node: NodeObject; id: string }>();
      let uids = 0;
      for (const s of steps) {
        const current = store.nodes.get(s.name);
        if (s.op === 'create') {
          if (current) continue;
          store.put(makeNode({ name: s.name, uid: `u${++uids}`, ...(s.id ? { providerID: s.id } : {}) }));
        } else if (s.op === 'setID') {
          if (!current) continue;
          const next = structuredClone(current);
          if (s.id) next.spec!.providerID = s.id;
          else delete next.spec!.providerID;
          store.put(next);
        } else if (s.op === 'delete') {
          if (!current) continue;
          store.remove(s.name);
          claims.delete(current.metadata.uid!);
        } else if (s.op === 'claim') {
          // As the controller claims: for a node without a providerID, when no one else has the instance.
          if (!current || current.spec?.providerID || index.otherHolder(current, s.id)) continue;
          index.claim(current, s.id);
          claims.set(current.metadata.uid!, { node: current, id: s.id });
        } else if (current) {
          index.release(current);
          claims.delete(current.metadata.uid!);
        }
        // A claim ends once the cache shows the node's providerID.
        for (const uid of claims.keys()) {
          const live = [...store.nodes.values()].find((n) => n.metadata.uid === uid);
          if (live?.spec?.providerID) claims.delete(uid);
        }
        for (const asker of [...store.nodes.values(), makeNode({ name: 'stranger', uid: 'u-stranger' })]) {
          for (const id of IDS) {
            const model = [
              ...[...store.nodes.values()].filter((n) => n.metadata.uid !== asker.metadata.uid && n.spec?.providerID && key(n.spec.providerID) === key(id)).map((n) => ({ name: n.metadata.name, providerID: n.spec!.providerID! })),
              ...[...claims.values()].filter((c) => c.node.metadata.uid !== asker.metadata.uid && key(c.id) === key(id)).map((c) => ({ name: c.node.metadata.name, providerID: c.id })),
            ];
            const got = index.otherHolder(asker, id);
            if (model.length === 0) expect(got).toBeUndefined();
            else expect(model).toContainEqual(got);
          }
        }
      }
    }), { numRuns: 300 });
  });

  it('an answer is refused exactly when it names another instance than the node\'s own, or one another holder has', () => {
    const store = new MemoryNodes();
    const index = new ProviderIDIndex(key).attach(store);
    store.put(makeNode({ name: 'holder', uid: 'u1', providerID: 'aws:///z1/i-0a', tainted: false }));
    const own = makeNode({ name: 'n', uid: 'u2', providerID: 'aws:///z2/i-0b' });
    const fresh = makeNode({ name: 'm', uid: 'u3' });
    store.put(own);
    store.put(fresh);
    // Another spelling of its own instance: its own.
    expect(refuseAnswer(own, 'i-0b', 'aws', index)).toBeUndefined();
    expect(refuseAnswer(own, 'aws:///z2/i-0c', 'aws', index)).toEqual({
      reason: 'ProviderIDMismatch',
      message: 'cloud provider aws answered for node "n" with providerID "aws:///z2/i-0c", another instance than the node\'s own "aws:///z2/i-0b"; nothing of that answer is written',
    });
    expect(refuseAnswer(fresh, 'aws:///z3/i-0a', 'aws', index)).toEqual({
      reason: 'ProviderIDInUse',
      message: 'cloud provider aws answered for node "m" with providerID "aws:///z3/i-0a", the instance node "holder" already has ("aws:///z1/i-0a"); two Nodes cannot be one instance, so nothing of the answer is written',
    });
    expect(refuseAnswer(fresh, '', 'aws', index)).toBeUndefined();
    // The holder is deleted and re-created under its name, without a providerID yet: free again.
    store.remove('holder');
    store.put(makeNode({ name: 'holder', uid: 'u9' }));
    expect(refuseAnswer(fresh, 'i-0a', 'aws', index)).toBeUndefined();
  });
});
