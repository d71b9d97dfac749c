// The controller's audit loop: the findings gauge per kind and severity, one event per conflict
// while it lasts (a new one after it cleared and came back), on a fake clock.
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { AuditLoop, AUDIT_FINDINGS_METRIC } from '../../../src/controllers/nodeipam/audit-loop.js';
import type { AuditInput, AuditNode, Finding } from '../../../src/audit/findings.js';
import { FakeClock } from '../../../src/kube/clock.js';

describe('AuditLoop', () => {
  it('exports the findings and records each conflict once while it lasts', async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const events: Finding[] = [];
    let input: AuditInput & { nodes: AuditNode[] } = {
      nodes: [{ name: 'a', podCIDRs: ['10.0.0.0/24'], addresses: [], allocatedFrom: 'p' }, { name: 'b', podCIDRs: ['10.0.0.0/24'], addresses: [] }],
      pools: [{ name: 'p', cidrs: ['10.0.0.0/16'], source: 'ClusterCIDR' }],
      serviceRanges: [],
    };
    const loop = new AuditLoop({ collect: () => input, event: (f) => events.push(f), intervalMs: 60_000, registry, clock });
    loop.start();
    clock.advance(0);
    expect(events.map((e) => e.kind)).toEqual(['PodCIDROverlap']);
    const text = await registry.getSingleMetricAsString(AUDIT_FINDINGS_METRIC);
    expect(text).toContain(`${AUDIT_FINDINGS_METRIC}{kind="PodCIDROverlap",severity="conflict"} 1`);
    expect(text).toContain(`${AUDIT_FINDINGS_METRIC}{kind="PodCIDRNotAllocated",severity="warning"} 1`);
    expect(text).toContain(`${AUDIT_FINDINGS_METRIC}{kind="PoolOverlap",severity="info"} 0`);
    clock.advance(60_000);
    expect(events).toHaveLength(1);
    input = { ...input, nodes: [input.nodes[0]!] };
    clock.advance(60_000);
    expect(await registry.getSingleMetricAsString(AUDIT_FINDINGS_METRIC)).toContain(`{kind="PodCIDROverlap",severity="conflict"} 0`);
    input = { ...input, nodes: [input.nodes[0]!, { name: 'b', podCIDRs: ['10.0.0.0/24'], addresses: [] }] };
    clock.advance(60_000);
    expect(events).toHaveLength(2);
    loop.stop();
    clock.advance(600_000);
    expect(events).toHaveLength(2);
  });

  it('calls afterRun after each round, once the round has read the caches, also when the round failed', () => {
    const clock = new FakeClock();
    const order: string[] = [];
    let fail = false;
    const loop = new AuditLoop({
      collect: () => {
        order.push('collect');
        if (fail) throw new Error('caches unreadable');
        return { nodes: [], pools: [], serviceRanges: [] };
      },
      event: () => {},
      afterRun: () => order.push('afterRun'),
      intervalMs: 1000,
      clock,
    });
    loop.start();
    clock.advance(0);
    fail = true;
    clock.advance(1000);
    loop.stop();
    clock.advance(5000);
    expect(order).toEqual(['collect', 'afterRun', 'collect', 'afterRun']);
  });
});
