// `node-address-ccm run` (the default command): the external cloud-controller-manager process.
// Flags use cloud-controller-manager's names and Kubernetes' value forms.
import type { Command } from 'commander';
import { UsageError } from '../exit-codes.js';
import { createLogger, type Logger } from '../../log.js';
import { HealthServer } from '../../kube/health.js';
import { ControllerManager, type ManagerDeps } from '../../manager/manager.js';
import { resolveRunOptions, RUN_DEFAULTS, type RawRunFlags, type RunOptions } from '../../manager/options.js';

/** Adds the `run` flags to a command (shared with `simulate`, which passes some of them through). */
export function addRunFlags(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <path>', 'kubeconfig file (in-cluster config when absent)')
    .option('--cloud-provider <name>', 'cloud provider (static, fake, aws, gce, kind); needed when cloud-node runs')
    .option('--cloud-config <path>', "the cloud provider's configuration file")
    .option('--feature-gates <list>', 'feature gates, e.g. CloudDualStackNodeIPs=true')
    .option('--controllers <list>', "controllers to run: '*' (cloud-node, node-ipam), 'name', '-name' disables", RUN_DEFAULTS.controllers)
    .option('--node-status-update-frequency <duration>', 'period of the node address refresh', RUN_DEFAULTS.nodeStatusUpdateFrequency)
    .option('--concurrent-node-syncs <n>', 'workers per controller', RUN_DEFAULTS.concurrentNodeSyncs)
    .option('--allocate-node-cidrs [bool]', 'allocate pod CIDRs to nodes')
    .option('--cidr-allocator-type <type>', 'pod CIDR allocator: RangeAllocator, MultiCIDRRangeAllocator (ClusterCIDR pools) or CloudAllocator', RUN_DEFAULTS.cidrAllocatorType)
    .option('--cluster-cidr <cidrs>', 'pod CIDR range(s): one CIDR or a dual-stack pair')
    .option('--node-cidr-mask-size <n>', 'pod CIDR mask size per node (single-stack)')
    .option('--node-cidr-mask-size-ipv4 <n>', 'IPv4 pod CIDR mask size per node (default 24)')
    .option('--node-cidr-mask-size-ipv6 <n>', 'IPv6 pod CIDR mask size per node (default 64)')
    .option('--service-cluster-ip-range <cidrs>', 'Service range(s), never handed out as pod CIDRs')
    .option('--leader-elect [bool]', 'run leader election (default true)')
    .option('--leader-elect-lease-duration <duration>', 'lease duration', RUN_DEFAULTS.leaderElectLeaseDuration)
    .option('--leader-elect-renew-deadline <duration>', 'renew deadline', RUN_DEFAULTS.leaderElectRenewDeadline)
    .option('--leader-elect-retry-period <duration>', 'retry period', RUN_DEFAULTS.leaderElectRetryPeriod)
    .option('--leader-elect-resource-namespace <ns>', 'namespace of the lease', RUN_DEFAULTS.leaderElectResourceNamespace)
    .option('--leader-elect-resource-name <name>', 'name of the lease', RUN_DEFAULTS.leaderElectResourceName)
    .option('--bind-address <ip>', 'address of the /metrics and health server', RUN_DEFAULTS.bindAddress)
    .option('--secure-port <port>', 'port of the /metrics and health server (0: off)', RUN_DEFAULTS.securePort)
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', RUN_DEFAULTS.logLevel);
}

/** Commander's parsed values → validated options; every problem is a UsageError (exit 2). */
export function runOptionsFromCommand(opts: RawRunFlags): RunOptions {
  try {
    return resolveRunOptions(opts);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Builds the manager; option values the libraries reject (gates, CIDRs) are usage errors. */
export function buildManager(options: RunOptions, deps: ManagerDeps): ControllerManager {
  try {
    return new ControllerManager(options, deps);
  } catch (err) {
    // Library validation errors name the flag first ("--feature-gates: …", "--cluster-cidr: …").
    if (err instanceof Error && err.message.startsWith('--')) throw new UsageError(err.message);
    throw err;
  }
}

export interface RunningProcess {
  manager: ControllerManager;
  health: HealthServer | undefined;
  /** Resolves with the process exit code. */
  done: Promise<number>;
  stop(): void;
}

/** Starts the manager and its health server; SIGTERM/SIGINT stop it and release the lease. */
export async function startProcess(options: RunOptions, logger: Logger, deps: ManagerDeps = {}, signals = true): Promise<RunningProcess> {
  const manager = buildManager(options, { logger, ...deps });
  try {
    // An unknown --cloud-provider or an unusable --cloud-config is a usage error (exit 2).
    await manager.loadProvider();
  } catch (err) {
    manager.client.close();
    if (err instanceof Error && err.message.startsWith('--')) throw new UsageError(err.message);
    throw err;
  }
  const health = await HealthServer.start({
    address: options.bindAddress,
    port: options.securePort,
    registry: manager.registry,
    logger,
    livez: [{ name: 'controllers', check: () => manager.notLiveReason() }],
    readyz: [{ name: 'connected', check: () => manager.notReadyReason() }],
  });
  if (health) logger.info({ url: health.url }, 'serving /metrics, /livez, /readyz, /healthz');
  const abort = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => {
    logger.info({ signal: sig }, 'shutting down');
    abort.abort();
  };
  if (signals) {
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  const done = manager.run(abort.signal).then(
    (end) => {
      if (end === 'lost') logger.error('leader election lost: exiting');
      return end === 'lost' ? 1 : 0;
    },
    (err: unknown) => {
      logger.error({ err }, 'controller manager failed');
      return 1;
    },
  ).finally(async () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await health?.close();
  });
  return { manager, health, done, stop: () => abort.abort() };
}

export function register(program: Command): void {
  const cmd = program
    .command('run', { isDefault: true })
    .description('run the cloud node and node IPAM controllers (the external cloud-controller-manager)');
  addRunFlags(cmd).action(async (opts: RawRunFlags) => {
    const options = runOptionsFromCommand(opts);
    let logger: Logger;
    try {
      logger = createLogger({ level: options.logLevel });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const proc = await startProcess(options, logger);
    process.exitCode = await proc.done;
  });
}
