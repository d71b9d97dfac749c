// The node lifecycle part of the simulated cluster (`npm start`): after the KEP-3705 nodes
// converge, one machine leaves the static cloud-config and its Node is deleted (pod CIDRs
// released), another is marked shut down and its Node tainted; the KEP table is unchanged.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseStaticCloudConfig } from '../../providers/static/config.js';
import { runSimulation } from '../../src/simulation/cluster/run.js';
import { LIFECYCLE_GONE, LIFECYCLE_STOPPED, lifecycleDemoAfterEdit, lifecycleDemoNodes } from '../../src/simulation/cluster/lifecycle-demo.js';
import { readyStatus } from '../../src/controllers/nodelifecycle/decide.js';
import { buildSimCluster, staticCloudConfig } from '../../src/simulation/cluster/scenario.js';

describe('lifecycle demo builders', () => {
  it('two initialised nodes whose kubelets stopped reporting; the edit removes one and shuts the other down', () => {
    const demo = lifecycleDemoNodes();
    expect(demo.map((d) => [d.name, readyStatus(d.node), d.node.spec?.taints ?? []])).toEqual([[LIFECYCLE_GONE, 'Unknown', []], [LIFECYCLE_STOPPED, 'Unknown', []]]);
    const after = parseStaticCloudConfig(staticCloudConfig(lifecycleDemoAfterEdit(demo)));
    expect([...after.nodes.keys()]).toEqual([LIFECYCLE_STOPPED]);
    expect(after.nodes.get(LIFECYCLE_STOPPED)!.shutdown).toBe(true);
  });

  it('the KEP-3705 nodes report Ready, so the lifecycle controller never asks about them', () => {
    expect(buildSimCluster(12).every((n) => readyStatus(n.node) === 'True')).toBe(true);
  });
});

describe('runSimulation with cloud-node-lifecycle', () => {
  it('deletes the decommissioned node, taints the powered-off one, and the KEP table still ends as expected', async () => {
    let text = '';
    const out = new Writable({ write(chunk, _enc, cb) { text += String(chunk); cb(); } });
    const r = await runSimulation({ nodes: 12, out, progress: false, timeoutMs: 60_000 });
    expect(r.converged).toBe(true);
    expect(r.asExpected).toBe(true);
    expect(r.rows).toHaveLength(12);
    expect(r.lifecycle).toMatchObject({ podCIDRsReleased: true });
    // A missing instance is trusted on the second answer, one --node-monitor-period (500 ms) after
    // the first: at most two periods after the provider read the edit, plus the passes themselves.
    expect(r.lifecycle!.deletedAfterMs).toBeLessThanOrEqual(1500);
    expect(r.lifecycle!.taintedAfterMs).toBeLessThanOrEqual(1000);
    expect(text).toMatch(new RegExp(`node lifecycle: ${LIFECYCLE_GONE} left the cloud-config → Node deleted in [\\d.]+ s \\(DeletingNode event, pod CIDRs released\\); ` +
      `${LIFECYCLE_STOPPED} marked shutdown: true → tainted node.cloudprovider.kubernetes.io/shutdown:NoSchedule in [\\d.]+ s`));
    expect(r.requests.find((q) => q.verb === 'delete' && q.resource === 'nodes')?.count).toBe(1);
    // The not-in-cloud KEP node is Ready, hence never deleted.
    expect(r.rows.find((row) => row.node.endsWith('not-in-cloud'))!.taint).toBe('present');
    console.info(text.split('\n').filter((l) => /converged|lifecycle/.test(l)).join('\n'));
  }, 90_000);
});
