// The sandbox's pure parts (spare nodes, the annotation to try, the guide) and the flag errors of
// `simulate --keep`; the sandbox itself is driven with kubectl in test/kubectl/sandbox.test.ts.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseStaticCloudConfig } from '../../providers/static/config.js';
import { annotationTarget, SANDBOX_CLUSTER_CIDR, sandboxGuide, sandboxSpareNodes } from '../../src/simulation/cluster/sandbox.js';
import { buildSimCluster, staticCloudConfig } from '../../src/simulation/cluster/scenario.js';
import { runCli } from '../kit/cli.js';

describe('sandbox guide', () => {
  it.each([
    [1, 'sim-01-none', '1.2.3.4'],
    [2, 'sim-02-ipv4', '5.6.8.8'],
    [12, 'sim-02-ipv4', '5.6.8.8'],
  ])('with %i nodes it moves %s to %s, another IPv4 of its own instance', (n, node, ip) => {
    const cluster = buildSimCluster(n);
    expect(annotationTarget(cluster)).toEqual({ node, ip });
    const instance = cluster.find((c) => c.name === node)?.cloud;
    expect(instance?.addresses.map((a) => a.address)).toContain(ip);
  });

  it('spare instances are in the cloud, not in the cluster, with addresses no cluster node has', () => {
    const cluster = buildSimCluster(12);
    const spare = sandboxSpareNodes(cluster.length);
    const config = parseStaticCloudConfig(staticCloudConfig([...cluster, ...spare]));
    for (const s of spare) expect(config.nodes.has(s.name)).toBe(true);
    const used = new Set(cluster.flatMap((c) => c.cloud?.addresses.map((a) => a.address) ?? []));
    for (const s of spare) for (const a of s.cloud?.addresses ?? []) expect(used.has(a.address)).toBe(false);
  });

  it('writes tainted Node YAML, a ClusterCIDR selecting the labelled one, and commands naming those files', () => {
    const cluster = buildSimCluster(3);
    const spare = sandboxSpareNodes(3);
    const g = sandboxGuide(cluster, spare, '/sb', '/sb/kubeconfig', '/sb/cloud-config.yaml');
    expect(Object.keys(g.files).sort()).toEqual(['blue-node-1.yaml', 'clustercidr-blue.yaml', 'new-node-1.yaml']);
    const pool = parseYaml(g.files['blue-node-1.yaml'] as string) as { metadata: { labels: Record<string, string> }; spec: { taints: { key: string }[] } };
    expect(pool.metadata.labels.pool).toBe('blue');
    expect(pool.spec.taints.map((t) => t.key)).toEqual(['node.cloudprovider.kubernetes.io/uninitialized']);
    const cc = parseYaml(g.files['clustercidr-blue.yaml'] as string) as { spec: Record<string, unknown> };
    expect(cc.spec).toMatchObject({ ipv4: SANDBOX_CLUSTER_CIDR.ipv4, ipv6: SANDBOX_CLUSTER_CIDR.ipv6, perNodeHostBits: 8 });
    expect(g.text).toContain('  export KUBECONFIG=/sb/kubeconfig\n');
    expect(g.text).toContain('kubectl apply -f /sb/new-node-1.yaml');
    expect(g.text).toContain('kubectl apply -f /sb/clustercidr-blue.yaml -f /sb/blue-node-1.yaml');
    expect(g.text).toContain('kubectl annotate node sim-02-ipv4 --overwrite alpha.kubernetes.io/provided-node-ip=5.6.8.8');
  });
});

describe('simulate --keep flags', () => {
  it.each([
    [['--kubeconfig-out', '/tmp/x'], /--kubeconfig-out: only with --keep \(got "\/tmp\/x"\)/],
    [['--keep', '--kubeconfig-out', ' '], /--kubeconfig-out: must not be empty/],
    [['--keep', '--port', 'high'], /--port: "high" is not an integer/],
    [['--keep', '--port', '70000'], /--port: 70000 is out of range \(0..65535\)/],
  ])('%j exits 2 with a clear message', async (args, message) => {
    const r = await runCli(['simulate', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('a port already in use exits 2 naming it', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const r = await runCli(['simulate', '--keep', '--port', String(port)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`--port: ${port} is already in use on 127\\.0\\.0\\.1`));
    } finally {
      busy.close();
    }
  });
});
