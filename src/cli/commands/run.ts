// `node-address-ccm run` (the default command): the external cloud-controller-manager process.
// Flags use cloud-controller-manager's names and Kubernetes' value forms. The process itself
// (manager, client, logger) is imported when the command runs, so --help stays light.
import type { Command } from 'commander';
import { UsageError } from '../exit-codes.js';
import type { Logger } from '../../log.js';
import { resolveRunOptions, RUN_DEFAULTS, type RawRunFlags, type RunOptions } from '../../manager/options.js';
import { knownProviders } from '../../../providers/registry.js';

/** Adds the `run` flags to a command (shared with `simulate`, which passes some of them through). */
export function addRunFlags(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <path>', 'kubeconfig file (in-cluster config when absent)')
    .option('--cloud-provider <name>', `cloud provider (${knownProviders().join(', ')}); needed when cloud-node runs`)
    .option('--cloud-provider-module <path-or-package>', 'an ES module whose default export defines the provider --cloud-provider names (defineProvider); a path (./x.mjs, /plugins/x.mjs) or an installed package')
    .option('--cloud-config <path>', "the cloud provider's configuration file")
    .option('--feature-gates <list>', 'feature gates, e.g. CloudDualStackNodeIPs=true')
    .option('--node-address-exclude-cidrs <cidrs>', 'cloud addresses inside these CIDRs (either family, comma-separated) are never node addresses; off by default (a deviation from Kubernetes)')
    .option('--controllers <list>', "controllers to run: '*' (cloud-node, node-ipam; cloud-node-lifecycle only when named), 'name', '-name' disables", RUN_DEFAULTS.controllers)
    .option('--node-status-update-frequency <duration>', 'period of the node address refresh', RUN_DEFAULTS.nodeStatusUpdateFrequency)
    .option('--node-monitor-period <duration>', 'period of the cloud-node-lifecycle pass (delete Nodes whose instance is gone, taint shut-down ones)', RUN_DEFAULTS.nodeMonitorPeriod)
    .option('--node-startup-grace-period <duration>', 'cloud-node-lifecycle never deletes a Node younger than this, whatever the cloud says (a new instance can be missing from its listings for a while)', RUN_DEFAULTS.nodeStartupGracePeriod)
    .option('--concurrent-node-syncs <n>', 'workers per controller', RUN_DEFAULTS.concurrentNodeSyncs)
    .option('--kube-api-qps <qps>', 'API requests per second shared by every controller (negative: no limit)', RUN_DEFAULTS.kubeApiQps)
    .option('--kube-api-burst <n>', 'API requests allowed at once above --kube-api-qps', RUN_DEFAULTS.kubeApiBurst)
    .option('--allocate-node-cidrs [bool]', 'allocate pod CIDRs to nodes')
    .option('--cidr-allocator-type <type>', 'pod CIDR allocator: RangeAllocator, MultiCIDRRangeAllocator (ClusterCIDR pools) or CloudAllocator', RUN_DEFAULTS.cidrAllocatorType)
    .option('--cluster-cidr <cidrs>', 'pod CIDR range(s): one CIDR or a dual-stack pair')
    .option('--node-cidr-mask-size <n>', 'pod CIDR mask size per node (single-stack)')
    .option('--node-cidr-mask-size-ipv4 <n>', 'IPv4 pod CIDR mask size per node (default 24)')
    .option('--node-cidr-mask-size-ipv6 <n>', 'IPv6 pod CIDR mask size per node (default 64)')
    .option('--service-cluster-ip-range <cidrs>', 'Service range(s), never handed out as pod CIDRs')
    .option('--leader-elect [bool]', 'run leader election (default true)')
    .option('--leader-elect-warm-standby [bool]', 'followers keep node IPAM\'s pools and ledger current, so a takeover allocates within about a second instead of listing every node again; costs each follower the leader\'s memory for the ledger and one watch per ClusterCIDR/ServiceCIDR resource (default true)')
    .option('--leader-elect-lease-duration <duration>', 'lease duration', RUN_DEFAULTS.leaderElectLeaseDuration)
    .option('--leader-elect-renew-deadline <duration>', 'renew deadline', RUN_DEFAULTS.leaderElectRenewDeadline)
    .option('--leader-elect-retry-period <duration>', 'retry period', RUN_DEFAULTS.leaderElectRetryPeriod)
    .option('--leader-elect-resource-namespace <ns>', 'namespace of the lease', RUN_DEFAULTS.leaderElectResourceNamespace)
    .option('--leader-elect-resource-name <name>', 'name of the lease', RUN_DEFAULTS.leaderElectResourceName)
    .option('--bind-address <ip>', 'address of --secure-port (0.0.0.0: every interface)', RUN_DEFAULTS.bindAddress)
    .option('--secure-port <port>', 'HTTPS port of /metrics and the health paths (0: off)', RUN_DEFAULTS.securePort)
    .option('--tls-cert-file <path>', 'PEM serving certificate (chain) for --secure-port (default: self-signed, made at start)')
    .option('--tls-private-key-file <path>', 'PEM private key of --tls-cert-file')
    .option('--authorization-always-allow-paths <paths>', 'paths served without authentication or authorization (a trailing * matches a prefix)', RUN_DEFAULTS.authorizationAlwaysAllowPaths)
    .option('--insecure-plain-http [bool]', 'serve --secure-port over plain HTTP with no authentication (sandboxes and tests only)')
    .option('--shutdown-grace-period <duration>', 'after SIGTERM/SIGINT, exit 0 within this long even if work is still pending', RUN_DEFAULTS.shutdownGracePeriod)
    .option('--optimize-for-memory [bool]', 'a full garbage collection whenever the heap grows 40 MiB past what was live while the node cache fills, then V8 collecting at 10% growth with a 48 MiB backstop: about half the peak RSS with a large node cache (false: V8 sizes the heap alone)', RUN_DEFAULTS.optimizeForMemory)
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

export function register(program: Command): void {
  const cmd = program
    .command('run', { isDefault: true })
    .description('run the cloud node and node IPAM controllers (the external cloud-controller-manager)');
  addRunFlags(cmd).action(async (opts: RawRunFlags) => {
    const options = runOptionsFromCommand(opts);
    // Every flag value is judged before the process loads its client, reads a kubeconfig or
    // connects anywhere: a slip is named first, in one line.
    const [{ createLogger }, { checkFlagValues }] = await Promise.all([import('../../log.js'), import('../../manager/flag-values.js')]);
    let logger: Logger;
    try {
      checkFlagValues(options);
      logger = createLogger({ level: options.logLevel });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    // The provider too (its --cloud-config read, its adapter loaded) before the Kubernetes client.
    const { loadCloudProvider } = await import('../../manager/cloud-provider.js');
    let provider;
    try {
      provider = await loadCloudProvider(options, logger);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('--')) throw new UsageError(err.message);
      throw err;
    }
    const { startProcess } = await import('./run-process.js');
    const proc = await startProcess(options, logger, provider ? { provider } : {});
    // Exits at once: a shutdown that gave up at its deadline may leave calls or timers behind.
    process.exit(await proc.done);
  });
}
