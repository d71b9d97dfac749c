// RBAC proof: the controller manager, run from the built binary with every controller, leader
// election on and MultiCIDRRangeAllocator pod CIDR allocation (flags mirrored as a ClusterCIDR), works against the API server double enforcing
// deploy/base/rbac.yaml as the node-address-ccm ServiceAccount: no request is refused, and every
// granted verb is used (or is in the commented allow-list below). And it cannot work without
// `patch nodes/status`. What the ServiceAccount asked for and what it was answered come from the
// double's own counters: detailedCounters() rows carry the authenticated user and the status code.
//
// The same proof runs again with cloud-node-lifecycle (`--controllers=*,cloud-node-lifecycle`)
// and deploy/base plus deploy/node-lifecycle, the grant the overlays that run it add: a node
// whose machine left the cloud-config is deleted with it, and the one verb it adds (delete nodes)
// is used. With the base alone, the controller gets a 403 on that DELETE, reports it (a Warning
// event, a log line) and keeps running; the node stays.
//
// The process serves /metrics over HTTPS with delegated authentication, as deployed: a scraper
// (the monitoring component's monitoring/prometheus-k8s, with its /metrics reader role) scrapes
// it, so the ServiceAccount creates a TokenReview and a SubjectAccessReview. The grants counted
// include the API server's bootstrap system:auth-delegator ClusterRole that rbac.yaml binds, so
// that binding must be used too.
//
// The kind overlay's ConfigMap Role is not loaded: it is for the kind provider's override
// ConfigMap, and this run uses the static provider, which reads no ConfigMap.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRbacYaml, withBootstrapRoles, type DetailedCounterRow, type FaultHandle, type RbacPolicy } from '../../src/double/index.js';
import type { NodeAddress } from '../../src/model/node-address.js';
import { E2E_POLL_MS } from '../e2e/support/assert.js';
import { E2ECluster, hasTaint, podCIDRsOf, UNINITIALIZED_TAINT_KEY } from '../e2e/support/cluster.js';
import { runPrefix } from '../e2e/support/target.js';
import { repoRoot } from '../kit/cli.js';
import { defaultRunArgs, startDoubleTarget, type DoubleTarget, type StaticNodeEntry } from '../kit/double.js';
import { freePort, get } from '../kit/net.js';
import type { CliProcess } from '../kit/processes.js';
import { consistently, eventually } from '../kit/wait.js';
import { grantKey, grantsFor, withoutVerb } from './support/grants.js';

const SA_USER = 'system:serviceaccount:kube-system:node-address-ccm';
const SA_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'];
const RBAC_FILE = path.join(repoRoot, 'deploy/base/rbac.yaml');
/** What deploy/node-lifecycle adds (the overlays that run cloud-node-lifecycle include it). */
const LIFECYCLE_RBAC_FILE = path.join(repoRoot, 'deploy/node-lifecycle/rbac.yaml');
const SHUTDOWN_TAINT_KEY = 'node.cloudprovider.kubernetes.io/shutdown';
/** Short, so a vanished node is acted on within a second or two. */
const LIFECYCLE_ARGS = ['--controllers=*,cloud-node-lifecycle', '--node-monitor-period=1s', '--node-startup-grace-period=0s'];
const SCRAPER_USER = 'system:serviceaccount:monitoring:prometheus-k8s';
/** The monitoring component's grant to its scraper: loaded into the double only, never counted as the ServiceAccount's. */
const SCRAPER_RBAC = parseRbacYaml(readFileSync(path.join(repoRoot, 'deploy/components/monitoring/rbac-prometheus.yaml'), 'utf8'), 'rbac-prometheus.yaml');

/**
 * Granted verbs this run does not exercise, each with the reason it is granted anyway. Anything
 * granted, unused and not listed here fails the test: drop it from deploy/base/rbac.yaml or
 * explain it here.
 */
const UNUSED_ALLOWED: Record<string, string> = {
  // The flags mirror: node-ipam deletes a created-from-flags-<hash> ClusterCIDR left over from an
  // earlier --cluster-cidr; a run with unchanged flags against a fresh store has none to delete.
  'delete clustercidrs.networking.x-k8s.io': 'flags mirror only: deletes a stale created-from-flags ClusterCIDR after --cluster-cidr changes',
};

/**
 * MultiCIDRRangeAllocator with flags one ClusterCIDR can express (equal host bits: /24 and /120),
 * so the run mirrors them: get (by name, 404), create, then the finalizer patch through the
 * ClusterCIDR informer (list, watch); ServiceCIDRs through their informer (list, watch).
 */
const MULTI_ARGS = [
  '--cidr-allocator-type=MultiCIDRRangeAllocator',
  '--cluster-cidr=10.244.0.0/16,fd00:10:244::/112',
  '--node-cidr-mask-size-ipv4=24',
  '--node-cidr-mask-size-ipv6=120',
];

function readPolicy(...files: string[]): RbacPolicy {
  const parts = files.map((f) => parseRbacYaml(readFileSync(f, 'utf8'), f));
  return { roles: parts.flatMap((p) => p.roles), bindings: parts.flatMap((p) => p.bindings) };
}

const I = (address: string): NodeAddress => ({ type: 'InternalIP', address });
const DUAL: NodeAddress[] = [I('10.0.0.1'), I('fd00::1')];

/** A static cloud-config entry; `shutdown: true` is the machine powered off. */
type CloudEntry = StaticNodeEntry & { shutdown?: boolean };

interface Run {
  target: DoubleTarget;
  cluster: E2ECluster;
  ccm: CliProcess;
  prefix: string;
  /** https://127.0.0.1:<port> of the process's /metrics and health paths. */
  url: string;
  scraperToken: string;
  /** Rewrites the watched cloud-config (node ids without the run prefix). */
  writeCloud(nodes: Record<string, CloudEntry>): void;
}

async function startRun(policy: RbacPolicy, nodes: Record<string, CloudEntry>, extraArgs: string[] = []): Promise<Run> {
  const token = randomBytes(16).toString('hex');
  const scraperToken = randomBytes(16).toString('hex');
  const target = await startDoubleTarget({
    rbac: { roles: [...policy.roles, ...SCRAPER_RBAC.roles], bindings: [...policy.bindings, ...SCRAPER_RBAC.bindings] },
    users: [{ name: SA_USER, token }, { name: SCRAPER_USER, token: scraperToken }],
  });
  // The controller talks to the double directly, as the ServiceAccount.
  const kubeconfigPath = target.writeKubeconfigFor(SA_USER);
  const prefix = runPrefix();
  const writeCloud = (entries: Record<string, CloudEntry>): void => {
    const cloud: Record<string, CloudEntry> = {};
    for (const [id, entry] of Object.entries(entries)) cloud[`${prefix}-${id}`] = entry;
    target.writeCloudConfig(cloud);
  };
  writeCloud(nodes);
  const args = defaultRunArgs(kubeconfigPath, target.cloudConfigPath).filter((a) => !a.startsWith('--leader-elect') && !a.startsWith('--secure-port'));
  const port = await freePort();
  const ccm = target.start(['run',
    ...args,
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    '--leader-elect=true',
    '--leader-elect-lease-duration=4s',
    '--leader-elect-renew-deadline=3s',
    '--leader-elect-retry-period=1s',
    ...MULTI_ARGS,
    ...extraArgs,
  ]);
  const cluster = new E2ECluster(target.kubeConfig(), prefix);
  return { target, cluster, ccm, prefix, url: `https://127.0.0.1:${port}`, scraperToken, writeCloud };
}

async function stopRun(run: Run | undefined): Promise<void> {
  if (!run) return;
  await run.ccm.stop();
  await run.cluster.cleanup();
  await run.target.close();
}

/** The double's answered requests of the ServiceAccount (resource and non-resource rows). */
const saRows = (run: Run): DetailedCounterRow[] => run.target.api.detailedCounters().filter((r) => r.user === SA_USER);
/**
 * The kubelet of a node stops reporting: its Ready condition goes Unknown, as the node lifecycle
 * controller of kube-controller-manager sets it. Written into the double's store directly (no
 * request, so nothing is counted); get and update run synchronously, so nothing writes between.
 */
function kubeletStopped(run: Run, name: string): void {
  const node = run.target.api.store.get('nodes', name) as unknown as { status: { conditions?: Array<{ type: string }> } };
  const others = (node.status.conditions ?? []).filter((c) => c.type !== 'Ready');
  node.status.conditions = [...others, { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' } as { type: string }];
  run.target.api.store.update('nodes', node, { subresource: 'status' });
}

const describeRow = (r: DetailedCounterRow): string => `${r.code} ${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''}${r.group ? `.${r.group}` : ''} ×${r.count}`;

interface Setup {
  /** The RBAC files loaded, relative to the repository. */
  files: string[];
  args: string[];
  /** Runs cloud-node-lifecycle: a node whose machine leaves the cloud-config is deleted, a powered-off one tainted. */
  lifecycle: boolean;
}

const SETUPS: Array<[string, Setup]> = [
  ['deploy/base, --controllers=*', { files: [RBAC_FILE], args: [], lifecycle: false }],
  ['deploy/base + deploy/node-lifecycle, --controllers=*,cloud-node-lifecycle', { files: [RBAC_FILE, LIFECYCLE_RBAC_FILE], args: LIFECYCLE_ARGS, lifecycle: true }],
];

describe.each(SETUPS)('RBAC of %s, as the node-address-ccm ServiceAccount', (_title, setup) => {
  const policy = readPolicy(...setup.files);
  let run: Run;
  let conflict: FaultHandle;
  const log = (): string => `controller manager output (tail):\n${run?.ccm.tail(60) ?? ''}`;
  const wait = { timeoutMs: 30_000, intervalMs: E2E_POLL_MS, describe: log };

  beforeAll(async () => {
    // With cloud-node-lifecycle, two more machines: `gone` leaves the cloud-config, `off` is powered off.
    const lifecycleNodes: Record<string, CloudEntry> = setup.lifecycle ? { gone: { addresses: [I('10.0.0.20')] }, off: { addresses: [I('10.0.0.21')] } } : {};
    run = await startRun(policy, { a: { addresses: DUAL }, b: { addresses: DUAL }, stuck: { addresses: DUAL }, ...lifecycleNodes }, setup.args);
    // One write conflict on a node patch: the controller re-reads the node (get nodes) and re-plans.
    conflict = run.target.api.faults.inject({ verb: 'patch', resource: 'nodes', subresource: '', status: 409, count: 1 });
    await run.cluster.registerFakeNode({ name: `${run.prefix}-a`, cloudProviderExternal: true, hostIPs: ['10.0.0.1', 'fd00::1'] });
    await run.cluster.registerFakeNode({ name: `${run.prefix}-b`, nodeIP: 'fd00::1,10.0.0.1', cloudProviderExternal: true, hostIPs: ['10.0.0.1', 'fd00::1'] });
    // Its --node-ip is not the cloud's: repeated Warning events exercise the event aggregation (patch).
    await run.cluster.registerFakeNode({ name: `${run.prefix}-stuck`, nodeIP: '10.0.0.9', cloudProviderExternal: true, hostIPs: ['10.0.0.9'] });
    for (const id of Object.keys(lifecycleNodes)) {
      await run.cluster.registerFakeNode({ name: `${run.prefix}-${id}`, cloudProviderExternal: true, hostIPs: [lifecycleNodes[id]!.addresses[0]!.address] });
    }
  }, 60_000);

  afterAll(() => stopRun(run));

  it('initialises the nodes with no request refused, then uses every granted verb (MultiCIDRRangeAllocator)', { timeout: 120_000 }, async () => {
    for (const id of ['a', 'b']) {
      await eventually(async () => {
        const n = await run.cluster.getNode(`${run.prefix}-${id}`);
        expect(hasTaint(n, UNINITIALIZED_TAINT_KEY)).toBe(false);
        expect(podCIDRsOf(n).length).toBe(2);
      }, wait);
    }
    if (setup.lifecycle) {
      const gone = `${run.prefix}-gone`;
      const off = `${run.prefix}-off`;
      for (const name of [gone, off]) {
        await eventually(async () => expect(podCIDRsOf(await run.cluster.getNode(name)).length).toBeGreaterThan(0), wait);
      }
      // Their kubelets stop reporting; one machine is decommissioned (its entry leaves the
      // watched file), the other powered off.
      kubeletStopped(run, gone);
      kubeletStopped(run, off);
      run.writeCloud({ a: { addresses: DUAL }, b: { addresses: DUAL }, stuck: { addresses: DUAL }, off: { addresses: [I('10.0.0.21')], shutdown: true } });
      await eventually(async () => expect(await run.cluster.nodeExists(gone)).toBe(false), wait);
      await eventually(async () => expect(hasTaint(await run.cluster.getNode(off), SHUTDOWN_TAINT_KEY)).toBe(true), wait);
      // The event is posted once the DELETE's answer is back, which the watch may beat.
      await eventually(async () => expect((await run.cluster.nodeEvents(gone)).map((e) => e.reason)).toContain('DeletingNode'), wait);
      expect(run.target.api.count({ user: SA_USER, verb: 'delete', resource: 'nodes', code: 200 })).toBe(1);
    }
    // The lease was renewed at least once, and a repeated event was aggregated.
    await eventually(() => expect(saRows(run).some((r) => r.verb === 'update' && r.resource === 'leases' && r.code < 300)).toBe(true), wait);
    await eventually(() => expect(saRows(run).some((r) => r.verb === 'patch' && r.resource === 'events' && r.code < 300)).toBe(true), { ...wait, timeoutMs: 60_000 });
    expect(hasTaint(await run.cluster.getNode(`${run.prefix}-stuck`), UNINITIALIZED_TAINT_KEY)).toBe(true);
    // Prometheus scrapes: the ServiceAccount reviews the scraper's token and access (system:auth-delegator).
    await eventually(async () => expect((await get(`${run.url}/metrics`, { token: run.scraperToken })).status).toBe(200), wait);
    await run.ccm.stop();
    expect(conflict.fired, 'the injected 409 on a node patch').toBe(1);

    // Every request the controller sent is answered and attributed to the ServiceAccount: the
    // double's plain counters (counted on arrival, no user) and its detailed rows for the
    // ServiceAccount (counted when answered) agree, once nothing is in flight any more. The suite's
    // own clients (admin) are left out by user agent.
    const byKey = (rows: { verb: string; group: string; resource: string; subresource: string; count: number }[]): Record<string, number> => {
      const m = new Map<string, number>();
      for (const r of rows) m.set(grantKey(r), (m.get(grantKey(r)) ?? 0) + r.count);
      return Object.fromEntries([...m].sort());
    };
    const arrived = (): Record<string, number> =>
      byKey(run.target.api.counters().filter((r) => r.resource !== '' && r.userAgent !== 'e2e-suite' && r.userAgent !== 'kubelet-simulator'));
    await eventually(() => expect(byKey(saRows(run).filter((r) => r.resource !== ''))).toEqual(arrived()), { timeoutMs: 5_000, intervalMs: E2E_POLL_MS, describe: log });

    const rows = saRows(run);
    expect(run.target.api.count({ user: SA_USER })).toBeGreaterThan(0);
    // 403 is what the double answers an RBAC denial with (recorded for the authenticated user);
    // a 401 is never counted (an unknown token has no user), and the ServiceAccount's token is the
    // double's own, so 401 is listed for completeness only.
    const refused = rows.filter((r) => r.code === 401 || r.code === 403).map(describeRow);
    expect(refused, 'requests refused by RBAC').toEqual([]);
    expect(run.target.api.count({ user: SA_USER, code: 403 }) + run.target.api.count({ user: SA_USER, code: 401 })).toBe(0);

    // With the bootstrap ClusterRoles rbac.yaml binds (system:auth-delegator), as the double authorizes.
    const grants = grantsFor(withBootstrapRoles(policy), SA_USER, SA_GROUPS);
    const granted = new Set(grants.map(grantKey));
    const used = new Set(rows.filter((r) => r.resource !== '').map(grantKey));
    const notGranted = [...used].filter((k) => !granted.has(k));
    expect(notGranted, 'used but not granted (should have been refused)').toEqual([]);

    const allowed: Record<string, string> = { ...UNUSED_ALLOWED };
    const unused = [...granted].filter((k) => !used.has(k)).sort();
    console.info(
      `RBAC: ${granted.size} granted (verb, resource) pairs, ${used.size} used.\n` +
        `granted but unused:\n${unused.map((k) => `  ${k}${allowed[k] ? `  (allowed: ${allowed[k]})` : '  (NOT ALLOWED)'}`).join('\n') || '  (none)'}`,
    );
    expect(unused.filter((k) => !(k in allowed)), `granted verbs the controllers never used: remove them from ${setup.files.map((f) => path.relative(repoRoot, f)).join(' or ')} or explain them in UNUSED_ALLOWED`).toEqual([]);
    // The allow-lists must not go stale: everything in them is granted.
    expect(Object.keys(UNUSED_ALLOWED).filter((k) => !granted.has(k))).toEqual([]);
  });
});

describe('cloud-node-lifecycle with deploy/base alone (no deploy/node-lifecycle)', () => {
  const policy = readPolicy(RBAC_FILE);
  let run: Run;
  const log = (): string => `controller manager output (tail):\n${run?.ccm.tail(60) ?? ''}`;
  const wait = { timeoutMs: 30_000, intervalMs: E2E_POLL_MS, describe: log };

  beforeAll(async () => {
    run = await startRun(policy, { a: { addresses: DUAL }, gone: { addresses: [I('10.0.0.20')] } }, LIFECYCLE_ARGS);
    await run.cluster.registerFakeNode({ name: `${run.prefix}-a`, cloudProviderExternal: true, hostIPs: ['10.0.0.1', 'fd00::1'] });
    await run.cluster.registerFakeNode({ name: `${run.prefix}-gone`, cloudProviderExternal: true, hostIPs: ['10.0.0.20'] });
  }, 60_000);

  afterAll(() => stopRun(run));

  it('the base grants no delete on nodes', () => {
    const keys = grantsFor(withBootstrapRoles(policy), SA_USER, SA_GROUPS).map(grantKey);
    expect(keys).toContain('patch nodes');
    expect(keys).not.toContain('delete nodes');
    expect(grantsFor(readPolicy(LIFECYCLE_RBAC_FILE), SA_USER, SA_GROUPS).map(grantKey)).toEqual(['delete nodes']);
  });

  it('a vanished node: 403 on its DELETE, reported as a Warning event and a log line; the node stays, the process keeps running', { timeout: 90_000 }, async () => {
    const gone = `${run.prefix}-gone`;
    await eventually(async () => expect(podCIDRsOf(await run.cluster.getNode(gone)).length).toBeGreaterThan(0), wait);
    kubeletStopped(run, gone);
    run.writeCloud({ a: { addresses: DUAL } });
    await eventually(() => expect(run.target.api.count({ user: SA_USER, verb: 'delete', resource: 'nodes', code: 403 })).toBeGreaterThan(0), wait);
    await eventually(async () => {
      const failed = (await run.cluster.nodeEvents(gone)).filter((e) => e.reason === 'DeletingNodeFailed');
      expect(failed.length).toBeGreaterThan(0);
      for (const e of failed) {
        expect(e.type).toBe('Warning');
        expect(e.message).toMatch(/forbidden/i);
      }
    }, wait);
    expect(run.ccm.output()).toContain('failed to delete node; retrying next period');
    // Retried every period, never deleted, never a crash.
    await consistently(async () => {
      expect(await run.cluster.nodeExists(gone)).toBe(true);
      expect(run.ccm.exitCode()).toBeUndefined();
    }, 2_500);
    expect(run.target.api.count({ user: SA_USER, verb: 'delete', resource: 'nodes', code: 403 })).toBeGreaterThan(1);
    // That DELETE is the only request the base refuses the controllers.
    expect([...new Set(saRows(run).filter((r) => r.code === 403).map(grantKey))]).toEqual(['delete nodes']);
  });
});

describe('without patch on nodes/status', () => {
  const policy = withoutVerb(parseRbacYaml(readFileSync(RBAC_FILE, 'utf8'), RBAC_FILE), 'patch', 'nodes/status');
  let run: Run;
  const log = (): string => `controller manager output (tail):\n${run?.ccm.tail(60) ?? ''}`;

  beforeAll(async () => {
    run = await startRun(policy, { a: { addresses: DUAL } });
    await run.cluster.registerFakeNode({ name: `${run.prefix}-a`, cloudProviderExternal: true, hostIPs: ['10.0.0.1', 'fd00::1'] });
  }, 60_000);

  afterAll(() => stopRun(run));

  it('the policy copy really lacks it', () => {
    expect(grantsFor(policy, SA_USER, SA_GROUPS).map(grantKey)).not.toContain('patch nodes/status');
  });

  it('cannot initialise: 403 on patch nodes/status, the node stays tainted', { timeout: 90_000 }, async () => {
    await eventually(
      () => {
        const refused = saRows(run).filter((r) => r.code === 403);
        expect(refused.map((r) => `${r.verb} ${r.resource}/${r.subresource}`)).toContain('patch nodes/status');
        expect(run.target.api.count({ user: SA_USER, verb: 'patch', resource: 'nodes', subresource: 'status', code: 403 })).toBeGreaterThan(0);
      },
      { timeoutMs: 30_000, intervalMs: E2E_POLL_MS, describe: log },
    );
    await consistently(async () => {
      const n = await run.cluster.getNode(`${run.prefix}-a`);
      expect(hasTaint(n, UNINITIALIZED_TAINT_KEY)).toBe(true);
    }, 2_000);
  });
});
