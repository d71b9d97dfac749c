// `run` through the built binary: flag forms and errors, and a real process against the API double.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../kit/cli.js';
import { storedNode, useDouble } from '../kit/double.js';
import { freePort } from '../kit/net.js';
import { ip } from '../kit/nodes.js';
import { STEADY_GROWING_PERCENT } from '../../src/manager/heap-budget.js';

describe('node-address-ccm run: flag errors exit 2', () => {
  it.each([
    [['run'], /--cloud-provider: required when the cloud-node controller runs/],
    [['run', '--cloud-provider=fake', '--concurrent-node-syncs=0'], /--concurrent-node-syncs: 0 is out of range/],
    [['run', '--cloud-provider', 'fake', '--leader-elect=maybe'], /--leader-elect: invalid boolean "maybe"/],
    [['run', '--cloud-provider', 'fake', '--controllers', 'route'], /--controllers: unknown controller "route"/],
    [['run', '--cloud-provider', 'fake', '--node-status-update-frequency', '5 minutes'], /--node-status-update-frequency: invalid duration "5 minutes"/],
    [['run', '--cloud-provider', 'fake', '--allocate-node-cidrs'], /--cluster-cidr: required when --allocate-node-cidrs is true/],
    [['run', '--cloud-provider', 'fake', '--allocate-node-cidrs', '--cluster-cidr', '10.0.0.0/33'], /--cluster-cidr: /],
    [['run', '--cloud-provider', 'fake', '--allocate-node-cidrs', '--cluster-cidr=10.0.0.0/16', '--node-cidr-mask-size=8'], /--node-cidr-mask-size: 8 must be between/],
    // As kube-controller-manager: a family's mask flag on a single-stack cluster of the other family.
    [['run', '--cloud-provider', 'fake', '--allocate-node-cidrs', '--cluster-cidr', 'fd00::/48', '--node-cidr-mask-size-ipv4', '24'], /--node-cidr-mask-size-ipv4: 24 cannot apply to a single-stack IPv6 cluster/],
    [['run', '--cloud-provider', 'fake', '--allocate-node-cidrs', '--cluster-cidr', '10.0.0.0/16', '--node-cidr-mask-size-ipv6', '64'], /--node-cidr-mask-size-ipv6: 64 cannot apply to a single-stack IPv4 cluster/],
    [
      ['run', '--cloud-provider', 'fake', '--allocate-node-cidrs', '--cidr-allocator-type', 'MultiCIDRRangeAllocator', '--cluster-cidr', 'fd00::/48', '--node-cidr-mask-size-ipv4', '24'],
      /--node-cidr-mask-size-ipv4: 24 cannot apply to a single-stack IPv6 cluster/,
    ],
    [['run', '--cloud-provider', 'fake', '--feature-gates', 'CloudDualStackNodeIPs=maybe'], /--feature-gates: invalid value/],
    [['run', '--cloud-provider', 'fake', '--log-level', 'loud'], /--log-level: unknown level "loud"/],
    [['run', '--cloud-provider', 'fake', '--no-such-flag'], /unknown option '--no-such-flag'/],
    // run is the default command.
    [['--cloud-provider', 'fake', '--secure-port', '99999'], /--secure-port: 99999 is out of range/],
  ])('%j', async (args, message) => {
    const r = await runCli(args);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
  });
});

describe('node-address-ccm run: a bad provider flag exits 2 before anything starts', () => {
  it.each([
    [['--cloud-provider', 'nope'], /--cloud-provider: unknown provider "nope"/],
    // Named before any kubeconfig is read or any connection tried: the flag slip is what to fix.
    [['--cloud-provider', 'nope', '--kubeconfig', '/nonexistent/kubeconfig'], /^error: --cloud-provider: unknown provider "nope" \(known: aws, azure, fake, gce, kind, static, webhook\)\n$/],
    [['--cloud-provider', 'fake', '--feature-gates', 'Nope=true', '--kubeconfig', '/nonexistent/kubeconfig'], /^error: --feature-gates: unrecognized feature gate "Nope"/],
    [['--cloud-provider', 'static', '--cloud-config', '/nonexistent/cloud.yaml', '--kubeconfig', '/nonexistent/kubeconfig'], /^error: --cloud-config \/nonexistent\/cloud.yaml: cannot read: no such file\n$/],
    [['--cloud-provider', 'static'], /--cloud-config: required by --cloud-provider static/],
    [['--cloud-provider', 'static', '--cloud-config', '/nonexistent/cloud.yaml'], /^error: --cloud-config \/nonexistent\/cloud.yaml: cannot read: no such file\n$/],
    [['--cloud-provider', 'static', '--cloud-config', '/'], /^error: --cloud-config \/: cannot read: it is a directory, not a file\n$/],
    [['--cloud-provider', 'kind', '--cloud-config', '/dev/null'], /^error: --cloud-config \/dev\/null: the file is empty; --cloud-provider kind needs YAML with at least "cluster"\n$/],
  ])('%j', async (flags, message) => {
    const tmp = await mkdtemp(path.join(tmpdir(), 'ccm-run-flags-'));
    try {
      const kubeconfig = path.join(tmp, 'kubeconfig');
      await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\ncurrent-context: c\n');
      const r = await runCli(['run', `--kubeconfig=${kubeconfig}`, '--secure-port=0', ...flags]);
      expect(r.stderr).toMatch(message);
      expect(r.code).toBe(2);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});

describe('node-address-ccm run against the API double', () => {
  const cluster = useDouble({ bookmarkIntervalMs: 500 });

  it('initialises nodes, serves /readyz and /metrics, and on SIGTERM releases the lease and exits 0', async () => {
    const port = await freePort();
    const run = await cluster.runStaticUntilInitialised({
      nodeIP: '10.0.0.1,fd00::1',
      cloud: { zone: 'z1', addresses: [ip('10.0.0.1'), ip('fd00::1')] },
      args: ['--allocate-node-cidrs', '--cluster-cidr', '10.244.0.0/16', '--secure-port', String(port), '--insecure-plain-http',
        '--leader-elect-lease-duration=3s', '--leader-elect-renew-deadline=2s', '--leader-elect-retry-period=500ms'],
      whileRunning: async () => {
        const node = storedNode(cluster.api, 'n1');
        expect(node.status?.addresses).toEqual([
          { type: 'InternalIP', address: '10.0.0.1' }, { type: 'InternalIP', address: 'fd00::1' }, { type: 'Hostname', address: 'n1' },
        ]);
        expect(node.spec?.podCIDRs).toEqual(['10.244.0.0/24']);
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
        expect(ready.status).toBe(200);
        expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).toBe(200);
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        expect(metrics).toMatch(/^node_controller_cloud_provider_taint_removal_delay_seconds_count 1$/m);
        expect(metrics).toMatch(/^node_controller_initial_node_sync_delay_seconds_count 1$/m);
        expect(metrics).toMatch(/^cloudprovider_requests_total\{provider="static",operation="instancesMetadata",result="success"\} \d+$/m);
        expect(metrics).toMatch(/^workqueue_adds_total\{name="cloud-node"\} \d+$/m);
        expect(metrics).toMatch(/^node_ipam_controller_cidrset_cidrs_allocations_total\{clusterCIDR="10.244.0.0\/16"\} 1$/m);
      },
    });
    expect(run.exitCode()).toBe(0);
    const lease = cluster.api.store.get('leases.coordination.k8s.io', 'node-address-ccm', 'kube-system') as { spec: { holderIdentity?: string } };
    expect(lease.spec.holderIdentity ?? '').toBe('');
    const logs = run.lines as Array<{ msg: string; node?: string; growingPercent?: number }>;
    // Every line of stdout is a JSON log line.
    expect(logs).toHaveLength(run.stdout.trim().split('\n').length);
    expect(logs.some((l) => l.msg === 'node initialised' && l.node === 'n1')).toBe(true);
    // --optimize-for-memory (the default) hands ordinary collections to V8 once the cache is filled, not before.
    const synced = logs.findIndex((l) => l.msg === 'node cache synced');
    const steady = logs.findIndex((l) => l.msg.startsWith('heap budget: caches filled'));
    expect(synced).toBeGreaterThanOrEqual(0);
    expect(steady).toBeGreaterThan(synced);
    expect(logs[steady]!.growingPercent).toBe(STEADY_GROWING_PERCENT);
    expect(run.stderr).toBe('');
  });
});
