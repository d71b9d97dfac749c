// The double held to the real server: one probe (test/realserver/probe/steps.ts), the calls this
// project and kubectl make, run against the API server double and against upstream's
// kube-apiserver, the answers compared field by field. Every difference must be one documented in
// docs/apiserver-double.md ("What the probe finds"), and every documented one must still be found:
// a new difference fails this test, and so does one fixed without its row removed.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../kit/cli.js';
import { controlPlaneUnavailable, startControlPlane, type ControlPlane } from '../kit/controlplane.js';
import { compareRecordings, formatDifferences, parseKnownDifferences, reconcile, type Difference } from './probe/compare.js';
import { runProbe, type ProbeRecord } from './probe/runner.js';
import { PROBE } from './probe/steps.js';
import { doubleTarget, realTarget, type DoubleProbeTarget } from './probe/targets.js';

const skip = controlPlaneUnavailable();

describe.skipIf(skip !== undefined)(skip ?? 'the double held to the real kube-apiserver', () => {
  let cp: ControlPlane | undefined;
  let double: DoubleProbeTarget | undefined;
  let real: ProbeRecord[];
  let doubled: ProbeRecord[];
  let diffs: Difference[];

  beforeAll(async () => {
    cp = await startControlPlane();
    double = await doubleTarget();
    // One after the other: the real server's timing (watch cache, bookmarks) is its own.
    doubled = await runProbe(double, PROBE);
    real = await runProbe(await realTarget(cp), PROBE);
    diffs = compareRecordings(doubled, real, PROBE);
    // PROBE_DUMP=dir keeps both recordings and the differences, to read when a row must change.
    const dump = process.env.PROBE_DUMP;
    if (dump) {
      writeFileSync(path.join(dump, 'probe-double.json'), JSON.stringify(doubled, null, 2));
      writeFileSync(path.join(dump, 'probe-real.json'), JSON.stringify(real, null, 2));
      writeFileSync(path.join(dump, 'probe-differences.md'), formatDifferences(diffs) + '\n');
    }
  }, 15 * 60_000);
  afterAll(async () => {
    await double?.double.stop();
    await cp?.stop();
  });

  it('ran every step on both servers', () => {
    expect(real.map((r) => r.step)).toEqual(doubled.map((r) => r.step));
    // A watch that timed out waiting for its events is no comparison of events.
    expect(real.filter((r) => r.ended === 'timeout').map((r) => r.step)).toEqual(doubled.filter((r) => r.ended === 'timeout').map((r) => r.step));
  });

  it('finds exactly the differences docs/apiserver-double.md lists', () => {
    const known = parseKnownDifferences(readFileSync(path.join(repoRoot, 'docs/apiserver-double.md'), 'utf8'));
    const { unexplained, unused } = reconcile(diffs, known);
    expect(unexplained, `differences the docs do not list (step | path | double | real):\n${formatDifferences(unexplained)}`).toEqual([]);
    expect(unused, 'documented differences the probe no longer finds: remove their rows').toEqual([]);
  });
});
