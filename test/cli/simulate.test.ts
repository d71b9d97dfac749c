// `simulate` (npm start) through the built binary.
import { describe, expect, it } from 'vitest';
import { runCli } from '../kit/cli.js';
import { parseStaticCloudConfig } from '../../providers/static/config.js';
import { buildSimCluster, simAddresses, SIM_CASES, staticCloudConfig } from '../../src/simulation/cluster/scenario.js';

describe('simulated cluster scenario', () => {
  it('node 0 has the KEP-3705 example addresses; every index gives valid, distinct addresses', () => {
    expect(simAddresses(0)).toEqual({ v4a: '1.2.3.4', v4b: '5.6.7.8', v6a: 'abcd::1234', v6b: 'abcd::5678' });
    const seen = new Set<string>();
    // Checked by hand, the failures collected for one expect: 125,000 expect calls cost seconds.
    const invalid: string[] = [];
    for (let i = 0; i < 250 * 250; i++) {
      const a = simAddresses(i);
      for (const v4 of [a.v4a, a.v4b]) if (!v4.split('.').every((o) => Number(o) <= 255)) invalid.push(`${i}: ${v4}`);
      for (const v of Object.values(a)) seen.add(v);
    }
    expect(invalid).toEqual([]);
    expect(seen.size).toBe(4 * 250 * 250);
  });

  it('cycles through every case and writes a cloud-config the static provider accepts', () => {
    const cluster = buildSimCluster(SIM_CASES.length * 2);
    expect(new Set(cluster.map((n) => n.case.id)).size).toBe(SIM_CASES.length);
    const config = parseStaticCloudConfig(staticCloudConfig(cluster));
    expect(config.nodes.size).toBe(cluster.filter((n) => n.case.inCloud).length);
    expect(() => buildSimCluster(0)).toThrow(/--nodes: must be an integer from 1/);
  });
});

function tableRows(stdout: string): string[][] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => l.startsWith('NODE '));
  const rows: string[][] = [];
  for (const l of lines.slice(start + 1)) {
    if (!l.startsWith('sim-')) break;
    rows.push(l.split(/ {2,}/));
  }
  return rows;
}

describe('node-address-ccm simulate', () => {
  it('converges the default cluster, prints the table and exits 0', async () => {
    const r = await runCli(['simulate'], { timeoutMs: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^API server double at http:\/\/127\.0\.0\.1:\d+; 12 tainted nodes and 2 not-Ready ones for the node lifecycle demo; static cloud with the KEP-3705 example addresses\n/);
    const rows = tableRows(r.stdout);
    expect(rows).toHaveLength(12);
    const byCase = new Map(rows.map((c) => [c[0]!.replace(/^sim-\d+-/, ''), c]));
    expect(byCase.get('none')!.slice(2, 4)).toEqual(['1.2.3.4, 5.6.7.8, abcd::1234, abcd::5678', 'dual-stack IPv4-primary']);
    expect(byCase.get('v6primary')![3]).toBe('dual-stack IPv6-primary');
    expect(byCase.get('unknown-ip')!.slice(5)).toEqual(['present', 'ProvidedNodeIPInvalid: failed to get node address from cloud provider that matches ip: 9.10.11.12']);
    expect(byCase.get('not-in-cloud')![6]).toMatch(/^InstanceNotFound: /);
    for (const c of rows.filter((x) => x[5] === 'removed')) expect(c[4]).toMatch(/^10\.\d+\.\d+\.0\/24, fd00:10:244:/);
    // 14 writes and 12 events for the KEP-3705 nodes; the lifecycle demo adds the pod CIDRs of its
    // two nodes, the shutdown taint, and the DeletingNode event.
    expect(r.stdout).toMatch(/converged in [\d.]+ s: 7 of 12 nodes initialised, 5 left tainted with a reason; 17 node writes, 14 events created; every node ended as its case expects/);
    expect(r.stdout).toMatch(/node lifecycle: sim-lc-decommissioned left the cloud-config → Node deleted in [\d.]+ s \(DeletingNode event, pod CIDRs released\); sim-lc-powered-off marked shutdown: true → tainted node.cloudprovider.kubernetes.io\/shutdown:NoSchedule in [\d.]+ s/);
  });

  it('--nodes scales it and the gate off leaves dual-stack pairs tainted', async () => {
    const r = await runCli(['simulate', '--nodes', '30', '--feature-gates', 'CloudDualStackNodeIPs=false'], { timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('; 30 tainted nodes and 2 not-Ready ones for the node lifecycle demo;');
    const rows = tableRows(r.stdout);
    expect(rows).toHaveLength(30);
    for (const c of rows.filter((x) => /-(dual|v6primary)$/.test(x[0]!))) {
      expect(c[5]).toBe('present');
      expect(c[6]).toMatch(/dual-stack not supported/);
    }
    expect(r.stdout).toContain('every node ended as its case expects');
  });

  it.each([
    [['--nodes', '0'], /--nodes: 0 is out of range/],
    [['--nodes', '16001'], /--nodes: 16001 is out of range \(1..16000\)/],
    [['--nodes', 'many'], /--nodes: "many" is not an integer/],
    [['--feature-gates', 'Nope=true'], /unrecognized feature gate "Nope"/],
    [['--timeout', 'soon'], /--timeout: invalid duration "soon"/],
  ])('bad input %j exits 2 with a clear message', async (args, message) => {
    const r = await runCli(['simulate', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
