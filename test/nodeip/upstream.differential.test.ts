// The KEP-3705 annotation decision against upstream's own functions, run for real (issue 40): over
// the inputs of properties.test.ts (arbitraries.ts), this project's parseNodeIPAnnotation and
// nodeAddressesFromNodeIP answer exactly as k8s.io/component-helpers' ParseNodeIPAnnotation and
// k8s.io/cloud-provider's GetNodeAddressesFromNodeIP do at the release of the test control plane
// (test/kit/oracle.ts, v0.35.4): the same IPs or addresses in the same order, or an error with the
// same message. Dual-stack annotations are on (CloudDualStackNodeIPs is GA and locked in 1.35).
// Skipped without Go, like the real-server tier.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeAddress } from '../../src/model/node-address.js';
import { NodeIPError, nodeAddressesFromNodeIP, parseNodeIPAnnotation } from '../../src/nodeip/index.js';
import { controlPlaneUnavailable } from '../kit/controlplane.js';
import { startOracle, type Oracle } from '../kit/oracle.js';
import { annotationText, cloudList } from './arbitraries.js';

const skip = controlPlaneUnavailable();
const DUAL = { allowDualStack: true };
const RUNS = 3000;

/** What one side answered: a value, or the message of the error it returned. */
type Outcome<T> = { value: T } | { error: string };

function ours<T>(f: () => T): Outcome<T> {
  try {
    return { value: f() };
  } catch (err) {
    if (!(err instanceof NodeIPError)) throw err;
    return { error: err.message };
  }
}

describe.skipIf(skip !== undefined)(skip ?? 'the annotation decision against upstream\'s own functions (component-helpers, cloud-provider v0.35.4)', () => {
  let oracle: Oracle;
  beforeAll(() => {
    oracle = startOracle();
  }, 15 * 60_000);
  afterAll(async () => oracle?.stop());

  it('parseNodeIPAnnotation answers as ParseNodeIPAnnotation: the same IPs, or the same error', async () => {
    const values = fc.sample(annotationText, { numRuns: RUNS, seed: 4003 });
    const answers = await oracle.ask(values.map((annotation) => ({ op: 'parseAnnotation' as const, annotation })));
    values.forEach((value, i) => {
      const theirs: Outcome<string[]> = answers[i]!.error !== undefined ? { error: answers[i]!.error } : { value: answers[i]!.ips ?? [] };
      expect(ours(() => parseNodeIPAnnotation(value, DUAL)), JSON.stringify(value)).toEqual(theirs);
    });
  }, 120_000);

  it('nodeAddressesFromNodeIP answers as GetNodeAddressesFromNodeIP: the same addresses in the same order, or the same error', async () => {
    const cases = fc.sample(fc.tuple(annotationText, cloudList), { numRuns: RUNS, seed: 4004 });
    const answers = await oracle.ask(cases.map(([annotation, cloud]) => ({ op: 'fromNodeIP' as const, annotation, cloud })));
    cases.forEach(([annotation, cloud], i) => {
      const theirs: Outcome<NodeAddress[]> = answers[i]!.error !== undefined ? { error: answers[i]!.error } : { value: answers[i]!.addresses ?? [] };
      expect(ours(() => nodeAddressesFromNodeIP(annotation, cloud, DUAL)), JSON.stringify({ annotation, cloud })).toEqual(theirs);
    });
  }, 120_000);

  it('and where the annotation names cloud addresses, as most do in a cluster', async () => {
    // Annotations built from the cloud list itself (one or two of its entries, in either order,
    // with the spellings of the pool), so most cases select rather than fail.
    const arb = cloudList.chain((cloud) => {
      const texts = cloud.map((a) => a.address);
      const pick = texts.length === 0 ? fc.constant('10.0.0.1') : fc.constantFrom(...texts);
      return fc.tuple(fc.oneof(pick, fc.tuple(pick, pick).map(([a, b]) => `${a},${b}`)), fc.constant(cloud));
    });
    const cases = fc.sample(arb, { numRuns: RUNS, seed: 4005 });
    const answers = await oracle.ask(cases.map(([annotation, cloud]) => ({ op: 'fromNodeIP' as const, annotation, cloud })));
    let selected = 0;
    cases.forEach(([annotation, cloud], i) => {
      const theirs: Outcome<NodeAddress[]> = answers[i]!.error !== undefined ? { error: answers[i]!.error } : { value: answers[i]!.addresses ?? [] };
      if ('value' in theirs) selected++;
      expect(ours(() => nodeAddressesFromNodeIP(annotation, cloud, DUAL)), JSON.stringify({ annotation, cloud })).toEqual(theirs);
    });
    // The sample selects in most cases, so the comparison is of selections, not only of errors.
    expect(selected).toBeGreaterThan(RUNS / 3);
  }, 120_000);
});
