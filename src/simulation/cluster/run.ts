// `simulate` (what `npm start` runs): the API server double, a seeded cluster, a static cloud from
// a temporary cloud-config file, and the real controller manager against it over HTTP. Shows
// progress while nodes converge, then a table of the outcome.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StaticProvider } from '../../../providers/static/provider.js';
import type { CloudProvider } from '../../../providers/types.js';
import { hasUninitializedTaint, nodePodCIDRs, type NodeObject } from '../../model/node.js';
import { kubeConfigFromString } from '../../kube/client.js';
import type { EventObject } from '../../kube/types.js';
import { silentLogger, type Logger } from '../../log.js';
import { ControllerManager } from '../../manager/manager.js';
import { resolveRunOptions, type RawRunFlags } from '../../manager/options.js';
import { describeStack } from '../../nodeip/stack.js';
import { parseFeatureGates } from '../../featuregates/index.js';
import { startApiServerDouble } from '../../double/server.js';
import { buildSimCluster, SIM_CLUSTER_CIDR, SIM_SERVICE_CIDR, staticCloudConfig, type SimNode } from './scenario.js';
import { SANDBOX_REFRESH, sandboxGuide, sandboxSpareNodes } from './sandbox.js';
import { LIFECYCLE_GONE, LIFECYCLE_STOPPED, lifecycleDemoNodes, runLifecycleDemo } from './lifecycle-demo.js';

export interface SimulationOptions {
  nodes: number;
  /** Where progress and the table go. */
  out: NodeJS.WritableStream;
  /** Progress lines (default true; off for tests that read only the table). */
  progress?: boolean;
  logger?: Logger;
  /** Give up after this long (default 60 s). */
  timeoutMs?: number;
  /** Extra run flags (e.g. featureGates). */
  flags?: RawRunFlags;
  /** Print every row even for large clusters (default: up to 40 rows, then a summary). */
  fullTable?: boolean;
  /** Port of the API server double on 127.0.0.1 (default 0: any free port, printed). */
  port?: number;
  /**
   * The sandbox (`simulate --keep`): after the summary the double and the manager keep running
   * until `until` aborts (Ctrl-C), with a kubeconfig written and things to try printed.
   */
  keep?: { until: AbortSignal; kubeconfigOut?: string };
  /**
   * The cloud the controllers ask, built over the simulation's cloud-config file (the static
   * format), and how the progress line names it. Default: the static provider reading the file.
   * `npm run start:webhook` puts the reference webhook in front of the same file.
   */
  cloud?: { describe: string; open(cloudConfigPath: string): Promise<CloudProvider> };
}

export interface SimRow {
  node: string;
  annotation: string;
  addresses: string;
  stack: string;
  podCIDRs: string;
  taint: 'removed' | 'present';
  reason: string;
  expected: boolean;
}

export interface SimulationResult {
  rows: SimRow[];
  converged: boolean;
  /** Every node ended as its case expects. */
  asExpected: boolean;
  elapsedMs: number;
  requests: { verb: string; resource: string; subresource: string; count: number }[];
  /** The node lifecycle demo (not in the sandbox): how long each edit of the cloud-config took to show. */
  lifecycle?: { deletedAfterMs?: number; taintedAfterMs?: number; podCIDRsReleased: boolean };
}

/** Nodes that already have their `Synced` event: the controller finished with them. */
function syncedNodes(events: EventObject[]): Set<string> {
  const names = new Set<string>();
  for (const e of events) {
    if (e.type === 'Normal' && e.reason === 'Synced' && e.involvedObject.kind === 'Node' && e.involvedObject.name) names.add(e.involvedObject.name);
  }
  return names;
}

function latestWarnings(events: EventObject[]): Map<string, EventObject> {
  const byNode = new Map<string, EventObject>();
  for (const e of events) {
    if (e.type !== 'Warning' || e.involvedObject.kind !== 'Node' || !e.involvedObject.name) continue;
    const prev = byNode.get(e.involvedObject.name);
    if (!prev || (e.lastTimestamp ?? '') >= (prev.lastTimestamp ?? '')) byNode.set(e.involvedObject.name, e);
  }
  return byNode;
}

/** Whether the node should end initialised: its case says so, and with the gate off no dual-stack pair is accepted. */
export function expectInitialised(sim: SimNode, allowDualStack: boolean): boolean {
  return sim.case.expectInitialised && (allowDualStack || !(sim.annotation ?? '').includes(','));
}

function row(sim: SimNode, node: NodeObject | undefined, warning: EventObject | undefined, allowDualStack: boolean): SimRow {
  const addresses = node?.status?.addresses ?? [];
  const tainted = node ? hasUninitializedTaint(node) : true;
  const ips = addresses.filter((a) => a.type !== 'Hostname').map((a) => a.address);
  return {
    node: sim.name,
    annotation: sim.annotation === undefined ? '(none)' : JSON.stringify(sim.annotation),
    addresses: ips.join(', ') || '-',
    stack: tainted ? '-' : describeStack(addresses),
    podCIDRs: (node ? nodePodCIDRs(node) : []).join(', ') || '-',
    taint: tainted ? 'present' : 'removed',
    // The annotation has its own column: keep only what went wrong with it.
    reason: tainted ? (warning ? `${warning.reason ?? ''}: ${(warning.message ?? '').replace(/^provided node IP ".*?" is not usable: /, '')}` : 'waiting') : 'Synced',
    expected: tainted !== expectInitialised(sim, allowDualStack),
  };
}

/** Renders rows as an aligned text table. */
export function formatTable(rows: readonly SimRow[], maxReason = 110): string {
  const header = ['NODE', 'ANNOTATION', 'ADDRESSES', 'STACK', 'POD CIDRS', 'TAINT', 'REASON'];
  const cells = rows.map((r) => [r.node, r.annotation, r.addresses, r.stack, r.podCIDRs, r.taint,
    r.reason.length > maxReason ? `${r.reason.slice(0, maxReason - 1)}…` : r.reason]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] as string).length)));
  const line = (c: string[]): string => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] as number))).join('  ');
  return [line(header), ...cells.map(line)].join('\n') + '\n';
}

/** Writes the kubeconfig and the files to try, prints the guide, and waits for `until`. */
async function sandbox(
  keep: NonNullable<SimulationOptions['keep']>, kubeconfig: string, dir: string, cloudConfig: string,
  cluster: readonly SimNode[], spare: readonly SimNode[], out: NodeJS.WritableStream, leading: () => boolean,
): Promise<void> {
  const kubeconfigPath = path.resolve(keep.kubeconfigOut ?? path.join(dir, 'kubeconfig'));
  // It holds the admin token: readable by its owner only, also when the file already existed.
  await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });
  await chmod(kubeconfigPath, 0o600);
  const guide = sandboxGuide(cluster, spare, dir, kubeconfigPath, cloudConfig);
  for (const [name, text] of Object.entries(guide.files)) await writeFile(path.join(dir, name), text);
  out.write(`\n${guide.text}`);
  await new Promise<void>((resolve) => {
    if (keep.until.aborted) resolve();
    else keep.until.addEventListener('abort', () => resolve(), { once: true });
  });
  out.write(`stopping the controller manager${leading() ? ' (it releases its lease)' : ''} and the API server double` +
    `${keep.kubeconfigOut !== undefined ? `; ${kubeconfigPath} is left in place` : ''}\n`);
}

export async function runSimulation(options: SimulationOptions): Promise<SimulationResult> {
  const log = options.logger ?? silentLogger;
  const out = options.out;
  const started = Date.now();
  const cluster = buildSimCluster(options.nodes);
  const keep = options.keep;
  // The sandbox's cloud also knows two instances the cluster does not have yet, for kubectl to add.
  const spare = keep ? sandboxSpareNodes(cluster.length) : [];
  // Two nodes whose kubelets stopped reporting, for cloud-node-lifecycle to act on (not in the sandbox).
  const demo = keep ? [] : lifecycleDemoNodes();
  const api = await startApiServerDouble({ logger: log, port: options.port ?? 0 }).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'EADDRINUSE' ? new Error(`--port: ${options.port} is already in use on 127.0.0.1`, { cause: err }) : err;
  });
  const dir = await mkdtemp(path.join(tmpdir(), 'node-address-ccm-sim-'));
  let provider: CloudProvider | undefined;
  const abort = new AbortController();
  let done: Promise<unknown> | undefined;
  try {
    const cloudConfig = path.join(dir, 'cloud-config.yaml');
    await writeFile(cloudConfig, staticCloudConfig([...cluster, ...spare, ...demo]));
    // The sandbox watches the file, so instances can be added while it runs.
    provider = options.cloud
      ? await options.cloud.open(cloudConfig)
      : await StaticProvider.open({ path: cloudConfig, logger: log, watch: keep !== undefined, pollMs: keep ? 2000 : 0 });
    api.store.createMany('nodes', [...cluster, ...demo].map((c) => c.node));
    const expectedDone = cluster.length;
    if (options.progress !== false) {
      // The lifecycle demo's nodes are initialised already, but their kubelets stopped reporting.
      const demoNodes = demo.length > 0 ? ` and ${demo.length} not-Ready ones for the node lifecycle demo` : '';
      out.write(`API server double at ${api.url}; ${cluster.length} tainted nodes${demoNodes}; ${options.cloud?.describe ?? 'static cloud'} with the KEP-3705 example addresses\n`);
      out.write(`cluster CIDR ${SIM_CLUSTER_CIDR}, Service CIDR ${SIM_SERVICE_CIDR}\n`);
    }
    const runOptions = resolveRunOptions({
      cloudProvider: 'static', cloudConfig,
      allocateNodeCidrs: true, clusterCidr: SIM_CLUSTER_CIDR, serviceClusterIpRange: SIM_SERVICE_CIDR,
      nodeCidrMaskSizeIpv4: '24', nodeCidrMaskSizeIpv6: '64',
      concurrentNodeSyncs: '4',
      leaderElectLeaseDuration: '3s', leaderElectRenewDeadline: '2s', leaderElectRetryPeriod: '500ms',
      securePort: '0',
      // The sandbox: ClusterCIDR objects take effect (the flags pool stays the default), and an
      // annotation change shows within seconds.
      ...(keep ? { cidrAllocatorType: 'MultiCIDRRangeAllocator', nodeStatusUpdateFrequency: SANDBOX_REFRESH } : {}),
      // The demo's machines are seconds old: no start-up grace period, or a deletion would wait
      // five minutes (a missing instance is still confirmed by a second answer a period later).
      ...(demo.length > 0 ? { controllers: '*,cloud-node-lifecycle', nodeMonitorPeriod: '500ms', nodeStartupGracePeriod: '0s' } : {}),
      ...options.flags,
    });
    const manager = new ControllerManager(runOptions, {
      kubeConfig: kubeConfigFromString(api.kubeconfig), provider, logger: log, identity: 'simulate', userAgent: 'node-address-ccm-simulate',
    });
    done = manager.run(abort.signal);
    const allowDualStack = parseFeatureGates(runOptions.featureGates).enabled('CloudDualStackNodeIPs');

    const timeoutMs = options.timeoutMs ?? 60_000;
    let rows: SimRow[] = [];
    let converged = false;
    let lastLine = '';
    for (;;) {
      const nodes = new Map((api.store.list('nodes') as unknown as NodeObject[]).map((n) => [n.metadata.name, n]));
      const nodeEvents = api.store.list('events', { namespace: 'default' }) as unknown as EventObject[];
      const warnings = latestWarnings(nodeEvents);
      const synced = syncedNodes(nodeEvents);
      rows = cluster.map((c) => row(c, nodes.get(c.name), warnings.get(c.name), allowDualStack));
      const initialised = rows.filter((r) => r.taint === 'removed').length;
      const withPods = rows.filter((r) => r.taint === 'removed' && r.podCIDRs !== '-').length;
      const explained = rows.filter((r) => r.taint === 'present' && r.reason !== 'waiting').length;
      // The store shows the untainting write before the controller has seen its response and
      // recorded `Synced`; stopping then would abort that sync, so wait for the event too.
      const reported = rows.filter((r) => r.taint === 'removed' && synced.has(r.node)).length;
      const settled = initialised === withPods && reported === initialised && initialised + explained === expectedDone;
      if (options.progress !== false) {
        const lineText = `  ${manager.isLeading() ? 'leading' : 'waiting for the lease'}: ${initialised}/${expectedDone} initialised, ${withPods} with pod CIDRs, ${explained} tainted with a reason`;
        if (lineText !== lastLine) out.write(`${lineText}\n`);
        lastLine = lineText;
      }
      if (settled) {
        converged = true;
        break;
      }
      if (Date.now() - started > timeoutMs || keep?.until.aborted) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    let lifecycle: SimulationResult['lifecycle'];
    if (converged && demo.length > 0 && runOptions.controllers.has('cloud-node-lifecycle')) {
      lifecycle = await runLifecycleDemo({ api, ...(provider instanceof StaticProvider ? { reload: () => (provider as StaticProvider).reload() } : {}), cloudConfig, others: [...cluster, ...spare], demo, allocatedNodes: () => manager.controllers().ipam?.ledger.stats()[0]?.nodes });
    }
    // Stop the manager before counting: it flushes the events it recorded (Synced comes last).
    // The sandbox keeps it running: convergence already waited for every Synced event.
    if (!keep) {
      abort.abort();
      await done;
    }
    const requests = api.counters().filter((c) => c.userAgent.includes('simulate')).map((c) => ({ verb: c.verb, resource: c.resource, subresource: c.subresource, count: c.count }));
    const elapsedMs = Date.now() - started;
    const shown = options.fullTable || rows.length <= 40 ? rows : rows.slice(0, 40);
    out.write('\n' + formatTable(shown));
    if (shown.length < rows.length) out.write(`… ${rows.length - shown.length} more rows (use --full-table)\n`);
    const asExpected = rows.every((r) => r.expected) && (lifecycle === undefined || (lifecycle.deletedAfterMs !== undefined && lifecycle.taintedAfterMs !== undefined));
    const initialised = rows.filter((r) => r.taint === 'removed').length;
    const writes = requests.filter((r) => r.resource === 'nodes' && ['patch', 'update'].includes(r.verb)).reduce((s, r) => s + r.count, 0);
    const events = requests.filter((r) => r.resource === 'events' && r.verb === 'create').reduce((s, r) => s + r.count, 0);
    out.write(`\n${converged ? 'converged' : 'NOT converged'} in ${(elapsedMs / 1000).toFixed(1)} s: ${initialised} of ${rows.length} nodes initialised, ` +
      `${rows.length - initialised} left tainted with a reason; ${writes} node writes, ${events} events created` +
      `${asExpected ? '; every node ended as its case expects' : '; SOME NODES DID NOT END AS EXPECTED'}\n`);
    if (lifecycle) {
      const s = (ms: number | undefined): string => (ms === undefined ? 'NOT within 10 s' : `in ${(ms / 1000).toFixed(1)} s`);
      out.write(`node lifecycle: ${LIFECYCLE_GONE} left the cloud-config → Node deleted ${s(lifecycle.deletedAfterMs)} (DeletingNode event` +
        `${lifecycle.podCIDRsReleased ? ', pod CIDRs released' : ''}); ${LIFECYCLE_STOPPED} marked shutdown: true → tainted ` +
        `node.cloudprovider.kubernetes.io/shutdown:NoSchedule ${s(lifecycle.taintedAfterMs)}\n`);
    }
    if (keep && !keep.until.aborted) await sandbox(keep, api.kubeconfig, dir, cloudConfig, cluster, spare, out, () => manager.isLeading());
    return { rows, converged, asExpected, elapsedMs, requests, ...(lifecycle ? { lifecycle } : {}) };
  } finally {
    abort.abort();
    await done;
    await provider?.close?.();
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
