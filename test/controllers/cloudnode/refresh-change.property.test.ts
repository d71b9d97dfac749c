// When a refreshed address list counts as changed. Kubernetes' cloud node controller compares one
// address per type and ignores order (nodeAddressesChangeDetected); this project writes when the
// addresses themselves differ, as a multiset, whatever their order. Held against a transcription
// of upstream's function over random lists:
//  * with at most one address of each type (nearly every node), both rules agree;
//  * where they differ, it is one of the two documented cases: a pure reordering, which upstream
//    writes when a type has several addresses and this project does not (so the primary IP never
//    flips on a reorder), or a real change upstream misses (a duplicate hiding a stale address).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decideAddressRefresh } from '../../../src/controllers/cloudnode/decide.js';
import { sameAddressSet } from '../../../src/model/node.js';
import type { NodeAddress } from '../../../src/model/node-address.js';
import { ip, makeMetadata, makeNode } from '../../kit/nodes.js';

/** Upstream's change detection, transcribed: lengths, then each entry of `b` against the last address of its type in `a`. */
function upstreamChanged(a: readonly NodeAddress[], b: readonly NodeAddress[]): boolean {
  if (a.length !== b.length) return true;
  const lastOfType = new Map<string, string>();
  for (const x of a) lastOfType.set(x.type, x.address);
  return b.some((x) => (lastOfType.get(x.type) ?? '') !== x.address);
}

const address: fc.Arbitrary<NodeAddress> = fc.record({
  type: fc.constantFrom('InternalIP' as const, 'ExternalIP' as const, 'Hostname' as const),
  address: fc.constantFrom('10.0.0.1', '10.0.0.2', 'fd00::1', 'node-1'),
});
const list = fc.array(address, { maxLength: 4 });
const oneOfEachType = (l: readonly NodeAddress[]): boolean => new Set(l.map((a) => a.type)).size === l.length;
const sorted = (l: readonly NodeAddress[]): string[] => l.map((a) => `${a.type} ${a.address}`).sort();

describe('refresh: when the address list counts as changed', () => {
  it('agrees with upstream whenever no type has two addresses', () => {
    fc.assert(
      fc.property(list, list, (node, decided) => {
        fc.pre(oneOfEachType(node) && oneOfEachType(decided));
        expect(!sameAddressSet(node, decided)).toBe(upstreamChanged(node, decided));
      }),
      { numRuns: 5000 },
    );
  });

  it('differs from upstream only on a pure reordering (kept) or a change upstream misses (written)', () => {
    fc.assert(
      fc.property(list, list, (node, decided) => {
        const ours = !sameAddressSet(node, decided);
        const theirs = upstreamChanged(node, decided);
        if (ours === theirs) return;
        if (!ours) expect(sorted(node)).toEqual(sorted(decided));
        else expect(sorted(node)).not.toEqual(sorted(decided));
      }),
      { numRuns: 5000 },
    );
  });

  it('a cloud that only reorders never rewrites the node, so its primary IP stays', () => {
    const cloudAndReordered = fc.array(address, { minLength: 1, maxLength: 5 }).chain((cloud) =>
      fc.tuple(fc.constant(cloud), fc.shuffledSubarray(cloud, { minLength: cloud.length, maxLength: cloud.length })));
    fc.assert(
      fc.property(cloudAndReordered, ([cloud, reordered]) => {
        const first = decideAddressRefresh(makeNode({ tainted: false, nodeIP: null, addresses: [] }), makeMetadata({ addresses: cloud }), { allowDualStack: true });
        if (first.kind !== 'replace') return;
        // The node holds the addresses in the order they were first written; the cloud now lists them in another.
        const again = decideAddressRefresh(makeNode({ tainted: false, nodeIP: null, addresses: first.addresses }), makeMetadata({ addresses: reordered }), { allowDualStack: true });
        expect(again.kind).toBe('unchanged');
      }),
      { numRuns: 2000 },
    );
  });

  it("the issue's two examples", () => {
    const hostname = { type: 'Hostname' as const, address: 'node-1' };
    // The cloud reports no Hostname: the node's is kept, after the cloud's list. Same addresses: nothing to write.
    expect(decideAddressRefresh(makeNode({ tainted: false, nodeIP: null, addresses: [hostname, ip('10.0.0.1')] }), makeMetadata({ addresses: [ip('10.0.0.1')] }), { allowDualStack: true })).toEqual({ kind: 'unchanged' });
    // A duplicate in the cloud's list hides that 10.0.0.2 is gone: upstream keeps the node's list, this writes the cloud's.
    const node = makeNode({ tainted: false, nodeIP: null, addresses: [ip('10.0.0.2'), ip('10.0.0.1')] });
    expect(upstreamChanged([ip('10.0.0.2'), ip('10.0.0.1')], [ip('10.0.0.1'), ip('10.0.0.1')])).toBe(false);
    expect(decideAddressRefresh(node, makeMetadata({ addresses: [ip('10.0.0.1'), ip('10.0.0.1')] }), { allowDualStack: true })).toEqual({ kind: 'replace', addresses: [ip('10.0.0.1'), ip('10.0.0.1')] });
  });
});
