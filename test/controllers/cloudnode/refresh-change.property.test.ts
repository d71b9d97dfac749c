// When the periodic refresh writes a node's addresses (issue 36).
//
// The invariant, named: after every refresh decision the node has exactly the decided addresses
// (each as often) and the same host IPs as the decided list, host IPs as Kubernetes reads them
// (GetNodeHostIPs: InternalIPs, then ExternalIPs; the first, and the first of the other family).
// KEP-3705's promise is that the annotation's IPs are the node's host IPs; a change that only
// reorders the list is written exactly when it moves a host IP.
//
// Held two ways over random nodes, clouds and annotations:
//  * the invariant itself, against this file's own reading of GetNodeHostIPs;
//  * against upstream's code, run for real (test/kit/oracle.ts: k8s.io/cloud-provider's
//    CloudNodeController.UpdateNodeStatus over a fake clientset, and k8s.io/kubernetes'
//    GetNodeHostIPs, at the release of the test control plane). Where the two decide differently
//    whether to write, it is one of the listed deviations, and never a difference in host IPs.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideAddressRefresh } from '../../../src/controllers/cloudnode/decide.js';
import { PROVIDED_NODE_IP_ANNOTATION, sameAddressSet } from '../../../src/model/node.js';
import type { NodeAddress } from '../../../src/model/node-address.js';
import { decideNodeAddresses, nodeStackIPs, parseIPSloppy } from '../../../src/nodeip/index.js';
import { controlPlaneUnavailable } from '../../kit/controlplane.js';
import { ip, makeMetadata, makeNode } from '../../kit/nodes.js';
import { startOracle, type Oracle, type OracleAnswer } from '../../kit/oracle.js';

const POLICY = { allowDualStack: true };

/** GetNodeHostIPs, written out once more for this file: canonical texts, primary first. */
function hostIPs(list: readonly NodeAddress[]): string[] {
  const ips = [...list.filter((a) => a.type === 'InternalIP'), ...list.filter((a) => a.type === 'ExternalIP')]
    .map((a) => parseIPSloppy(a.address))
    .filter((x) => x !== undefined);
  if (ips.length === 0) return [];
  const other = ips.find((x) => x.family !== ips[0].family);
  return other ? [ips[0].canonical, other.canonical] : [ips[0].canonical];
}

// A small pool so that lists share addresses, with both families, an IPv4-mapped IPv6 spelling
// and a non-canonical IPv6 one (ParseIPSloppy equality, not text equality, decides matches).
const ADDRESS_TEXTS = ['10.0.0.1', '10.0.0.2', '192.0.2.7', 'fd00::1', 'fd00::2', 'fd00:0::1', '::ffff:10.0.0.1', 'node-1'];
const address: fc.Arbitrary<NodeAddress> = fc.record({
  type: fc.constantFrom<NodeAddress['type']>('InternalIP', 'InternalIP', 'ExternalIP', 'Hostname'),
  address: fc.constantFrom(...ADDRESS_TEXTS),
});
const list = fc.array(address, { maxLength: 5 });
const annotation = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('10.0.0.1', 'fd00::1', '10.0.0.2', '192.0.2.7'),
  fc.constantFrom('10.0.0.1,fd00::1', 'fd00::1,10.0.0.1', '10.0.0.2,fd00::2', 'fd00::2,10.0.0.1', '10.0.0.1,10.0.0.2', ' 10.0.0.1', ''),
);

interface Case {
  node: NodeAddress[];
  cloud: NodeAddress[];
  annotation: string | undefined;
}
const caseArb: fc.Arbitrary<Case> = fc.record({ node: list, cloud: list, annotation });

function annotations(value: string | undefined): Record<string, string> {
  return value === undefined ? {} : { [PROVIDED_NODE_IP_ANNOTATION]: value };
}

/** The node's addresses after this project's refresh decision. */
function ours(c: Case): { addresses: NodeAddress[]; written: boolean; warned: boolean } {
  const node = makeNode({ tainted: false, nodeIP: c.annotation ?? null, addresses: c.node });
  const d = decideAddressRefresh(node, makeMetadata({ addresses: c.cloud }), POLICY);
  if (d.kind === 'replace') return { addresses: d.addresses, written: true, warned: false };
  return { addresses: c.node, written: false, warned: d.kind === 'warn' };
}

describe('refresh: the node ends with exactly the decided addresses and their host IPs', () => {
  it('whatever the node held, the cloud answered and the annotation says', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const node = makeNode({ tainted: false, nodeIP: c.annotation ?? null, addresses: c.node });
        const d = decideAddressRefresh(node, makeMetadata({ addresses: c.cloud }), POLICY);
        // The decided list, as KEP-3705's selection (src/nodeip/decide.ts) gives it.
        const decided = decideNodeAddresses({ annotation: c.annotation, cloudAddresses: c.cloud, nodeAddresses: c.node, allowDualStack: true }, 'refresh');
        if (decided.kind !== 'ok') {
          expect(d.kind).not.toBe('replace');
          return;
        }
        if (d.kind === 'replace') expect(d.addresses).toEqual(decided.addresses);
        else {
          // Left unwritten only when the node already has the decided addresses and host IPs.
          expect(d.kind).toBe('unchanged');
          expect(sameAddressSet(c.node, decided.addresses)).toBe(true);
          expect(hostIPs(c.node)).toEqual(hostIPs(decided.addresses));
        }
        // Decide again on the node as it is after: nothing more to write (no flapping).
        const after = d.kind === 'replace' ? d.addresses : c.node;
        const again = decideAddressRefresh(makeNode({ tainted: false, nodeIP: c.annotation ?? null, addresses: after }), makeMetadata({ addresses: c.cloud }), POLICY);
        expect(again.kind).toBe('unchanged');
      }),
      { numRuns: 5000 },
    );
  });

  it('nodeStackIPs is GetNodeHostIPs', () => {
    fc.assert(fc.property(list, (l) => {
      expect(nodeStackIPs(l).ips).toEqual(hostIPs(l));
    }), { numRuns: 3000 });
  });

  it("issue 36's two examples are written", () => {
    const hostname = ip('node-1', 'Hostname');
    // The annotation changed to IPv4 first on a node that is IPv6-primary.
    const v6first = makeNode({ tainted: false, nodeIP: '172.16.0.29,fd01::1d', addresses: [ip('fd01::1d'), ip('172.16.0.29'), hostname] });
    expect(decideAddressRefresh(v6first, makeMetadata({ addresses: [ip('fd01::1d'), ip('172.16.0.29')] }), POLICY)).toEqual({ kind: 'replace', addresses: [ip('172.16.0.29'), ip('fd01::1d'), hostname] });
    // The annotation removed; the cloud lists IPv6 first.
    const removed = makeNode({ tainted: false, nodeIP: null, addresses: [ip('172.16.0.98'), ip('fd01::62'), hostname] });
    expect(decideAddressRefresh(removed, makeMetadata({ addresses: [ip('fd01::62'), ip('172.16.0.98')] }), POLICY)).toEqual({ kind: 'replace', addresses: [ip('fd01::62'), ip('172.16.0.98'), hostname] });
    // A reordering of the ExternalIPs behind the InternalIPs moves no host IP: not written.
    const externals = makeNode({ tainted: false, nodeIP: null, addresses: [ip('10.0.0.1'), ip('192.0.2.1', 'ExternalIP'), ip('192.0.2.2', 'ExternalIP'), hostname] });
    expect(decideAddressRefresh(externals, makeMetadata({ addresses: [ip('10.0.0.1'), ip('192.0.2.2', 'ExternalIP'), ip('192.0.2.1', 'ExternalIP')] }), POLICY)).toEqual({ kind: 'unchanged' });
  });
});

const skip = controlPlaneUnavailable();

/** Where this project's refresh and upstream's differ, each listed in README's deviations. */
const LISTED = [
  'upstream misses a changed list (one address per type compared)',
  'upstream rewrites a reordering that keeps the host IPs',
  "upstream's strategic merge patch regroups a list with repeated types",
];

describe.skipIf(skip !== undefined)(skip ?? "refresh against upstream's own controller (k8s.io/cloud-provider UpdateNodeStatus)", () => {
  let oracle: Oracle;
  beforeAll(() => {
    oracle = startOracle();
  }, 15 * 60_000);
  afterAll(async () => oracle?.stop());

  /** Upstream's answers for a batch of cases: the refresh, and GetNodeHostIPs of both lists. */
  async function upstream(cases: readonly Case[]): Promise<{ refresh: OracleAnswer; before: OracleAnswer; after: OracleAnswer }[]> {
    const refresh = await oracle.ask(cases.map((c) => ({
      op: 'refresh' as const,
      node: { metadata: { name: 'node-1', annotations: annotations(c.annotation) }, spec: { providerID: 'x://node-1' }, status: { addresses: c.node } },
      cloud: c.cloud,
    })));
    const hosts = await oracle.ask(cases.flatMap((c, i) => [{ op: 'hostIPs' as const, addresses: ours(c).addresses }, { op: 'hostIPs' as const, addresses: refresh[i].addresses ?? [] }]));
    return cases.map((_, i) => ({ refresh: refresh[i], before: hosts[2 * i], after: hosts[2 * i + 1] }));
  }

  it('host IPs after the refresh are always upstream\'s; whether to write differs only as listed', async () => {
    const cases = fc.sample(caseArb, { numRuns: 3000, seed: 3605 });
    const answers = await upstream(cases);
    const differences = new Map<string, number>();
    cases.forEach((c, i) => {
      const mine = ours(c);
      const theirs = answers[i];
      const theirAddresses = theirs.refresh.addresses ?? [];
      const where = `case ${JSON.stringify(c)}: ours ${JSON.stringify(mine)}, upstream ${JSON.stringify(theirs.refresh)}`;
      // An annotation the cloud cannot satisfy: neither writes (this project warns; upstream logs).
      if (mine.warned) {
        expect(theirs.refresh.patched, where).toBe(false);
        return;
      }
      // The promise: the node's host IPs after the refresh are the ones upstream's leave it with,
      // as GetNodeHostIPs itself reads both lists; except where upstream misses a change (below),
      // and keeps host IPs the cloud no longer reports.
      const sameHosts = JSON.stringify(theirs.before.ips ?? []) === JSON.stringify(theirs.after.ips ?? []);
      if (!(mine.written && !theirs.refresh.patched)) expect(sameHosts, where).toBe(true);
      let kind: string;
      if (mine.written === theirs.refresh.patched) {
        if (!mine.written || JSON.stringify(mine.addresses) === JSON.stringify(theirAddresses)) return;
        // Both write; upstream's PatchNodeStatus sends a strategic merge patch, whose merge key for
        // status.addresses is `type`: a list with two addresses of one type comes back regrouped by
        // type on the API server. The same addresses, and (the assertion above) the same host IPs.
        expect(sameAddressSet(mine.addresses, theirAddresses), where).toBe(true);
        kind = "upstream's strategic merge patch regroups a list with repeated types";
        differences.set(kind, (differences.get(kind) ?? 0) + 1);
        return;
      }
      // The listed deviations (README), nothing else:
      if (theirs.refresh.patched) {
        // Upstream rewrites a reordering that moves no host IP (its change check compares one
        // address per type, so a type with two addresses is always "changed").
        expect(sameAddressSet(c.node, theirAddresses), where).toBe(true);
        kind = 'upstream rewrites a reordering that keeps the host IPs';
      } else {
        // Upstream keeps a list the cloud no longer matches when a duplicate hides the change.
        expect(sameAddressSet(c.node, mine.addresses), where).toBe(false);
        kind = 'upstream misses a changed list (one address per type compared)';
      }
      differences.set(kind, (differences.get(kind) ?? 0) + 1);
    });
    // Every difference is one of the listed kinds (each branch above asserts its shape).
    for (const kind of differences.keys()) expect(LISTED).toContain(kind);
    expect(differences.size).toBeGreaterThan(0);
  }, 120_000);

  it.each<[string, Case]>([
    ['upstream rewrites a reordering that keeps the host IPs', { annotation: undefined, node: [ip('10.0.0.1'), ip('fd00::1'), ip('10.0.0.2')], cloud: [ip('10.0.0.1'), ip('10.0.0.2'), ip('fd00::1')] }],
    ['upstream misses a changed list (one address per type compared)', { annotation: undefined, node: [ip('10.0.0.2'), ip('10.0.0.1')], cloud: [ip('10.0.0.1'), ip('10.0.0.1')] }],
    ["upstream's strategic merge patch regroups a list with repeated types", { annotation: undefined, node: [ip('10.0.0.9')], cloud: [ip('10.0.0.1'), ip('node-1', 'Hostname'), ip('fd00::1')] }],
  ])('each listed difference, on one case: %s', async (kind, c) => {
    const [theirs] = await upstream([c]);
    const mine = ours(c);
    expect(LISTED).toContain(kind);
    if (kind.startsWith('upstream rewrites')) {
      expect([mine.written, theirs.refresh.patched]).toEqual([false, true]);
      expect(theirs.before.ips).toEqual(theirs.after.ips);
    } else if (kind.startsWith('upstream misses')) {
      expect([mine.written, theirs.refresh.patched]).toEqual([true, false]);
      // Upstream's node keeps 10.0.0.2, which the cloud no longer reports, as its primary IP.
      expect([theirs.before.ips, theirs.after.ips]).toEqual([['10.0.0.1'], ['10.0.0.2']]);
    } else {
      expect(theirs.before.ips).toEqual(theirs.after.ips);
      expect([mine.written, theirs.refresh.patched]).toEqual([true, true]);
      expect(theirs.refresh.addresses).toEqual([ip('10.0.0.1'), ip('fd00::1'), ip('node-1', 'Hostname')]);
      expect(mine.addresses).toEqual(c.cloud);
    }
  });

  it('nodeStackIPs is upstream\'s GetNodeHostIPs', async () => {
    const lists = fc.sample(list, { numRuns: 3000, seed: 3606 });
    const answers = await oracle.ask(lists.map((addresses) => ({ op: 'hostIPs' as const, addresses })));
    lists.forEach((l, i) => expect(nodeStackIPs(l).ips, JSON.stringify(l)).toEqual(answers[i].ips ?? []));
  }, 60_000);
});
