// Options of the `run` process: Kubernetes flag value forms (Go durations, Go booleans), the
// --controllers list, and cross-flag validation. Pure: every problem is a RunOptionsError that
// names the flag and the value.

export class RunOptionsError extends Error {
  override name = 'RunOptionsError';
}

function fail(message: string): never {
  throw new RunOptionsError(message);
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a Go duration ("5m", "1h30m", "1.5s", "250ms", "0") into milliseconds. */
export function parseGoDuration(flag: string, value: string): number {
  const text = value.trim();
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let pos = 0;
  let total = 0;
  let negative = false;
  if (text.startsWith('-') || text.startsWith('+')) {
    negative = text.startsWith('-');
    pos = 1;
  }
  if (pos >= text.length) fail(`${flag}: invalid duration "${value}" (examples: 5m, 30s, 1h30m, 250ms)`);
  while (pos < text.length) {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) fail(`${flag}: invalid duration "${value}" (examples: 5m, 30s, 1h30m, 250ms)`);
    total += Number(m[1]) * (DURATION_UNITS[m[2] as string] as number);
    pos = re.lastIndex;
  }
  return negative ? -total : total;
}

/** Go's strconv.ParseBool forms, which is what Kubernetes boolean flags accept after `=`. */
export function parseGoBool(flag: string, value: string | boolean | undefined): boolean {
  if (value === undefined || value === true) return true;
  if (value === false) return false;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  fail(`${flag}: invalid boolean "${value}" (use true or false, e.g. ${flag}=false)`);
}

export function parseIntFlag(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^[+-]?\d+$/.test(value.trim())) fail(`${flag}: "${value}" is not an integer`);
  const n = Number(value);
  if (n < min || n > max) fail(`${flag}: ${n} is out of range (${min}..${max})`);
  return n;
}

export type ControllerName = 'cloud-node' | 'node-ipam' | 'cloud-node-lifecycle';

export const KNOWN_CONTROLLERS: readonly ControllerName[] = ['cloud-node', 'node-ipam', 'cloud-node-lifecycle'];

/**
 * Left out of `*`, run only when named (as kube-controller-manager's disabled-by-default
 * controllers): deleting Nodes must be asked for, since a provider CCM may already do it.
 */
export const DISABLED_BY_DEFAULT_CONTROLLERS: readonly ControllerName[] = ['cloud-node-lifecycle'];

const CONTROLLER_ALIASES: Record<string, ControllerName> = {
  'cloud-node': 'cloud-node',
  'cloud-node-controller': 'cloud-node',
  'node-ipam': 'node-ipam',
  'node-ipam-controller': 'node-ipam',
  'cloud-node-lifecycle': 'cloud-node-lifecycle',
  'cloud-node-lifecycle-controller': 'cloud-node-lifecycle',
};

/**
 * Resolves --controllers the way the controller managers do: `*` enables every default
 * controller (not DISABLED_BY_DEFAULT_CONTROLLERS), `name` enables one, `-name` disables one (a
 * disable wins).
 */
export function resolveControllers(value: string): Set<ControllerName> {
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) fail(`--controllers: empty item in "${value}"`);
  let star = false;
  const enabled = new Set<ControllerName>();
  const disabled = new Set<ControllerName>();
  for (const item of items) {
    if (item === '*') {
      star = true;
      continue;
    }
    const negated = item.startsWith('-');
    const name = negated ? item.slice(1) : item;
    const canonical = CONTROLLER_ALIASES[name];
    if (!canonical) {
      fail(`--controllers: unknown controller "${name}" (known: *, ${Object.keys(CONTROLLER_ALIASES).join(', ')})`);
    }
    (negated ? disabled : enabled).add(canonical);
  }
  const result = new Set<ControllerName>();
  for (const c of KNOWN_CONTROLLERS) {
    if (disabled.has(c)) continue;
    if (enabled.has(c) || (star && !DISABLED_BY_DEFAULT_CONTROLLERS.includes(c))) result.add(c);
  }
  return result;
}

/** Raw flag values as commander hands them over (strings; booleans may be bare). */
export interface RawRunFlags {
  kubeconfig?: string;
  cloudProvider?: string;
  cloudProviderModule?: string;
  cloudConfig?: string;
  featureGates?: string;
  nodeAddressExcludeCidrs?: string;
  controllers?: string;
  nodeStatusUpdateFrequency?: string;
  nodeMonitorPeriod?: string;
  nodeStartupGracePeriod?: string;
  concurrentNodeSyncs?: string;
  kubeApiQps?: string;
  kubeApiBurst?: string;
  allocateNodeCidrs?: string | boolean;
  cidrAllocatorType?: string;
  clusterCidr?: string;
  nodeCidrMaskSize?: string;
  nodeCidrMaskSizeIpv4?: string;
  nodeCidrMaskSizeIpv6?: string;
  serviceClusterIpRange?: string;
  leaderElect?: string | boolean;
  leaderElectWarmStandby?: string | boolean;
  leaderElectLeaseDuration?: string;
  leaderElectRenewDeadline?: string;
  leaderElectRetryPeriod?: string;
  leaderElectResourceNamespace?: string;
  leaderElectResourceName?: string;
  bindAddress?: string;
  securePort?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  authorizationAlwaysAllowPaths?: string;
  insecurePlainHttp?: string | boolean;
  shutdownGracePeriod?: string;
  optimizeForMemory?: string | boolean;
  logLevel?: string;
}

export interface LeaderElectionOptions {
  enabled: boolean;
  /**
   * Followers keep node IPAM's pools and ledger current (warm standby), so a takeover allocates
   * without listing every node again; false: they keep only the node cache, and a takeover loads
   * the rest as a cold start does.
   */
  warmStandby: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  namespace: string;
  name: string;
}

/** The flags mode of the node IPAM loop, handed to the IPAM core as given (it validates ranges). */
export interface NodeIPAMFlags {
  allocateNodeCIDRs: boolean;
  cidrAllocatorType: CIDRAllocatorType;
  clusterCIDR?: string;
  nodeCIDRMaskSize?: number;
  nodeCIDRMaskSizeIPv4?: number;
  nodeCIDRMaskSizeIPv6?: number;
  serviceClusterIPRange?: string;
}

export interface RunOptions {
  kubeconfig?: string;
  cloudProvider?: string;
  /** --cloud-provider-module: a file path or package name whose default export defines the provider --cloud-provider names. */
  cloudProviderModule?: string;
  cloudConfig?: string;
  featureGates: string;
  /** --node-address-exclude-cidrs as given ('' = none); parsed by checkFlagValues. */
  nodeAddressExcludeCIDRs: string;
  controllers: Set<ControllerName>;
  nodeStatusUpdateFrequencyMs: number;
  /** --node-monitor-period: the cloud-node-lifecycle pass interval. */
  nodeMonitorPeriodMs: number;
  /** --node-startup-grace-period: cloud-node-lifecycle never deletes a younger Node. */
  nodeStartupGracePeriodMs: number;
  concurrentNodeSyncs: number;
  /** Client-side API request rate shared by the whole process; undefined: no limit (--kube-api-qps < 0). */
  kubeAPIRateLimit?: { qps: number; burst: number };
  ipam: NodeIPAMFlags;
  leaderElection: LeaderElectionOptions;
  bindAddress: string;
  /** 0 turns the health/metrics server off. */
  securePort: number;
  serving: ServingOptions;
  /** After SIGTERM/SIGINT the process exits 0 within this long, whatever is still pending. */
  shutdownGracePeriodMs: number;
  /** V8 collects garbage eagerly (--optimize-for-size): about half the RSS of a large node cache. */
  optimizeForMemory: boolean;
  logLevel: string;
}

/** How /metrics and the health paths are served on --secure-port (src/serving). */
export interface ServingOptions {
  /** PEM files; both absent: a self-signed certificate is made at start. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** Served without authentication or authorization (exact paths, or prefixes ending in *). */
  alwaysAllowPaths: string[];
  /** Plain HTTP, no TLS and no authentication: only when asked (the sandbox's simulate, tests). */
  plainHTTP: boolean;
}

export const RUN_DEFAULTS = {
  controllers: '*',
  nodeStatusUpdateFrequency: '5m',
  nodeMonitorPeriod: '5s',
  nodeStartupGracePeriod: '5m',
  concurrentNodeSyncs: '1',
  // kube-controller-manager's defaults.
  kubeApiQps: '20',
  kubeApiBurst: '30',
  cidrAllocatorType: 'RangeAllocator',
  leaderElect: true,
  leaderElectWarmStandby: true,
  leaderElectLeaseDuration: '15s',
  leaderElectRenewDeadline: '10s',
  leaderElectRetryPeriod: '2s',
  leaderElectResourceNamespace: 'kube-system',
  leaderElectResourceName: 'node-address-ccm',
  bindAddress: '127.0.0.1',
  securePort: '10268',
  authorizationAlwaysAllowPaths: '/healthz,/readyz,/livez',
  shutdownGracePeriod: '10s',
  optimizeForMemory: 'true',
  logLevel: 'info',
} as const;

/**
 * Allocator types of the node IPAM loop: RangeAllocator (the flags pool only),
 * MultiCIDRRangeAllocator (ClusterCIDR objects plus the flags pool, KEP-2593) and CloudAllocator
 * (the cloud provider's per-node pod ranges).
 */
export const CIDR_ALLOCATOR_TYPES = ['RangeAllocator', 'MultiCIDRRangeAllocator', 'CloudAllocator'] as const;
export type CIDRAllocatorType = (typeof CIDR_ALLOCATOR_TYPES)[number];

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function isIPAddress(s: string): boolean {
  if (IPV4.test(s)) return true;
  // A loose IPv6 check: hex groups and colons, at most one "::"; the socket layer does the rest.
  return /^[0-9A-Fa-f:.]+$/.test(s) && s.includes(':') && (s.match(/::/g) ?? []).length <= 1;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** --kube-api-qps / --kube-api-burst as client-go reads them: a negative QPS turns the limit off. */
function parseRateLimit(qpsText: string, burstText: string): { qps: number; burst: number } | undefined {
  const qps = Number(qpsText.trim());
  if (qpsText.trim() === '' || !Number.isFinite(qps)) fail(`--kube-api-qps: "${qpsText}" is not a number`);
  if (qps === 0) fail('--kube-api-qps: 0 would allow no request; use a positive rate, or a negative value to turn the limit off');
  const burst = parseIntFlag('--kube-api-burst', burstText, 1, 1_000_000);
  return qps < 0 ? undefined : { qps, burst };
}

/** --tls-*, --authorization-always-allow-paths and --insecure-plain-http. */
function resolveServing(raw: RawRunFlags): ServingOptions {
  const plainHTTP = parseGoBool('--insecure-plain-http', raw.insecurePlainHttp ?? false);
  const file = (flag: string, v: string | undefined): string | undefined => {
    if (v === undefined) return undefined;
    if (v.trim() === '') fail(`${flag}: must not be empty`);
    return v;
  };
  const tlsCertFile = file('--tls-cert-file', raw.tlsCertFile);
  const tlsPrivateKeyFile = file('--tls-private-key-file', raw.tlsPrivateKeyFile);
  if (tlsCertFile !== undefined && tlsPrivateKeyFile === undefined) fail(`--tls-private-key-file: required with --tls-cert-file "${tlsCertFile}"`);
  if (tlsPrivateKeyFile !== undefined && tlsCertFile === undefined) fail(`--tls-cert-file: required with --tls-private-key-file "${tlsPrivateKeyFile}"`);
  if (plainHTTP && tlsCertFile !== undefined) fail('--insecure-plain-http: cannot be combined with --tls-cert-file (plain HTTP has no certificate)');
  const pathsText = raw.authorizationAlwaysAllowPaths ?? RUN_DEFAULTS.authorizationAlwaysAllowPaths;
  const alwaysAllowPaths = pathsText.split(',').map((p) => p.trim()).filter((p) => p !== '');
  for (const p of alwaysAllowPaths) {
    if (!p.startsWith('/')) fail(`--authorization-always-allow-paths: "${p}" is not an absolute path (it must start with /)`);
    if (p.slice(0, -1).includes('*')) fail(`--authorization-always-allow-paths: "${p}": * is only allowed as the last character`);
  }
  return { alwaysAllowPaths, plainHTTP, ...(tlsCertFile !== undefined ? { tlsCertFile } : {}), ...(tlsPrivateKeyFile !== undefined ? { tlsPrivateKeyFile } : {}) };
}

/** Validates and converts every flag. Throws RunOptionsError naming the flag and the value. */
export function resolveRunOptions(raw: RawRunFlags): RunOptions {
  const controllers = resolveControllers(raw.controllers ?? RUN_DEFAULTS.controllers);

  const nodeStatusUpdateFrequencyMs = parseGoDuration('--node-status-update-frequency', raw.nodeStatusUpdateFrequency ?? RUN_DEFAULTS.nodeStatusUpdateFrequency);
  if (nodeStatusUpdateFrequencyMs <= 0) fail(`--node-status-update-frequency: must be positive, got "${raw.nodeStatusUpdateFrequency}"`);
  const nodeMonitorPeriodMs = parseGoDuration('--node-monitor-period', raw.nodeMonitorPeriod ?? RUN_DEFAULTS.nodeMonitorPeriod);
  if (nodeMonitorPeriodMs <= 0) fail(`--node-monitor-period: must be positive, got "${raw.nodeMonitorPeriod}"`);
  const nodeStartupGracePeriodMs = parseGoDuration('--node-startup-grace-period', raw.nodeStartupGracePeriod ?? RUN_DEFAULTS.nodeStartupGracePeriod);
  const concurrentNodeSyncs = parseIntFlag('--concurrent-node-syncs', raw.concurrentNodeSyncs ?? RUN_DEFAULTS.concurrentNodeSyncs, 1, 1000);
  const kubeAPIRateLimit = parseRateLimit(raw.kubeApiQps ?? RUN_DEFAULTS.kubeApiQps, raw.kubeApiBurst ?? RUN_DEFAULTS.kubeApiBurst);

  const allocateNodeCIDRs = parseGoBool('--allocate-node-cidrs', raw.allocateNodeCidrs ?? false);
  const allocatorText = raw.cidrAllocatorType ?? RUN_DEFAULTS.cidrAllocatorType;
  if (!(CIDR_ALLOCATOR_TYPES as readonly string[]).includes(allocatorText)) {
    fail(`--cidr-allocator-type: unsupported type "${allocatorText}" (supported: ${CIDR_ALLOCATOR_TYPES.join(', ')})`);
  }
  const cidrAllocatorType = allocatorText as CIDRAllocatorType;
  const mask = (flag: string, v: string | undefined): number | undefined => (v === undefined ? undefined : parseIntFlag(flag, v, 1, 128));
  const ipam: NodeIPAMFlags = { allocateNodeCIDRs, cidrAllocatorType };
  if (raw.clusterCidr !== undefined) {
    if (raw.clusterCidr.trim() === '') fail('--cluster-cidr: must not be empty');
    ipam.clusterCIDR = raw.clusterCidr;
  }
  const m = mask('--node-cidr-mask-size', raw.nodeCidrMaskSize);
  const m4 = mask('--node-cidr-mask-size-ipv4', raw.nodeCidrMaskSizeIpv4);
  const m6 = mask('--node-cidr-mask-size-ipv6', raw.nodeCidrMaskSizeIpv6);
  if (m !== undefined) ipam.nodeCIDRMaskSize = m;
  if (m4 !== undefined) ipam.nodeCIDRMaskSizeIPv4 = m4;
  if (m6 !== undefined) ipam.nodeCIDRMaskSizeIPv6 = m6;
  if (raw.serviceClusterIpRange !== undefined) {
    if (raw.serviceClusterIpRange.trim() === '') fail('--service-cluster-ip-range: must not be empty');
    ipam.serviceClusterIPRange = raw.serviceClusterIpRange;
  }
  // Only RangeAllocator needs --cluster-cidr: ClusterCIDR objects and the cloud provide the others' ranges.
  if (allocateNodeCIDRs && cidrAllocatorType === 'RangeAllocator' && ipam.clusterCIDR === undefined) {
    fail('--cluster-cidr: required when --allocate-node-cidrs is true with --cidr-allocator-type=RangeAllocator');
  }

  const leaderElection: LeaderElectionOptions = {
    enabled: parseGoBool('--leader-elect', raw.leaderElect ?? RUN_DEFAULTS.leaderElect),
    warmStandby: parseGoBool('--leader-elect-warm-standby', raw.leaderElectWarmStandby ?? RUN_DEFAULTS.leaderElectWarmStandby),
    leaseDurationMs: parseGoDuration('--leader-elect-lease-duration', raw.leaderElectLeaseDuration ?? RUN_DEFAULTS.leaderElectLeaseDuration),
    renewDeadlineMs: parseGoDuration('--leader-elect-renew-deadline', raw.leaderElectRenewDeadline ?? RUN_DEFAULTS.leaderElectRenewDeadline),
    retryPeriodMs: parseGoDuration('--leader-elect-retry-period', raw.leaderElectRetryPeriod ?? RUN_DEFAULTS.leaderElectRetryPeriod),
    namespace: raw.leaderElectResourceNamespace ?? RUN_DEFAULTS.leaderElectResourceNamespace,
    name: raw.leaderElectResourceName ?? RUN_DEFAULTS.leaderElectResourceName,
  };
  if (leaderElection.enabled) {
    const le = leaderElection;
    if (le.retryPeriodMs <= 0) fail(`--leader-elect-retry-period: must be positive, got "${raw.leaderElectRetryPeriod}"`);
    // client-go: leaseDuration > renewDeadline > retryPeriod × 1.2 (its jitter factor).
    if (le.leaseDurationMs <= le.renewDeadlineMs) {
      fail(`--leader-elect-lease-duration: must be greater than --leader-elect-renew-deadline (${le.leaseDurationMs}ms <= ${le.renewDeadlineMs}ms)`);
    }
    if (le.renewDeadlineMs <= le.retryPeriodMs * 1.2) {
      fail(`--leader-elect-renew-deadline: must be greater than 1.2 × --leader-elect-retry-period (${le.renewDeadlineMs}ms <= ${le.retryPeriodMs * 1.2}ms)`);
    }
    if (!DNS1123_LABEL.test(le.namespace)) fail(`--leader-elect-resource-namespace: "${le.namespace}" is not a valid namespace name`);
    if (!DNS1123_SUBDOMAIN.test(le.name) || le.name.length > 253) fail(`--leader-elect-resource-name: "${le.name}" is not a valid object name`);
  }

  const bindAddress = raw.bindAddress ?? RUN_DEFAULTS.bindAddress;
  if (!isIPAddress(bindAddress)) fail(`--bind-address: "${bindAddress}" is not an IP address`);
  const securePort = parseIntFlag('--secure-port', raw.securePort ?? RUN_DEFAULTS.securePort, 0, 65535);
  const serving = resolveServing(raw);
  const shutdownGracePeriodMs = parseGoDuration('--shutdown-grace-period', raw.shutdownGracePeriod ?? RUN_DEFAULTS.shutdownGracePeriod);
  if (!(shutdownGracePeriodMs > 0)) fail(`--shutdown-grace-period: must be positive, got "${raw.shutdownGracePeriod}"`);

  const options: RunOptions = {
    featureGates: raw.featureGates ?? '',
    nodeAddressExcludeCIDRs: raw.nodeAddressExcludeCidrs ?? '',
    controllers,
    nodeStatusUpdateFrequencyMs,
    nodeMonitorPeriodMs,
    nodeStartupGracePeriodMs,
    concurrentNodeSyncs,
    ...(kubeAPIRateLimit ? { kubeAPIRateLimit } : {}),
    ipam,
    leaderElection,
    bindAddress,
    securePort,
    serving,
    shutdownGracePeriodMs,
    optimizeForMemory: parseGoBool('--optimize-for-memory', raw.optimizeForMemory ?? RUN_DEFAULTS.optimizeForMemory),
    logLevel: raw.logLevel ?? RUN_DEFAULTS.logLevel,
  };
  if (raw.kubeconfig !== undefined) {
    if (raw.kubeconfig === '') fail('--kubeconfig: must not be empty (omit it for the in-cluster config)');
    options.kubeconfig = raw.kubeconfig;
  }
  if (raw.cloudProvider !== undefined && raw.cloudProvider !== '') options.cloudProvider = raw.cloudProvider;
  if (raw.cloudConfig !== undefined && raw.cloudConfig !== '') options.cloudConfig = raw.cloudConfig;
  if (raw.cloudProviderModule !== undefined) {
    if (raw.cloudProviderModule.trim() === '') fail('--cloud-provider-module: must not be empty');
    if (options.cloudProvider === undefined) fail(`--cloud-provider-module ${raw.cloudProviderModule}: needs --cloud-provider NAME, the name the module's provider has`);
    options.cloudProviderModule = raw.cloudProviderModule;
  }
  if (controllers.has('cloud-node') && options.cloudProvider === undefined) {
    fail('--cloud-provider: required when the cloud-node controller runs (disable it with --controllers=-cloud-node)');
  }
  if (controllers.has('cloud-node-lifecycle') && options.cloudProvider === undefined) {
    fail('--cloud-provider: required when the cloud-node-lifecycle controller runs (it asks the cloud whether instances exist)');
  }
  if (allocateNodeCIDRs && controllers.has('node-ipam') && cidrAllocatorType === 'CloudAllocator' && options.cloudProvider === undefined) {
    fail('--cloud-provider: required with --cidr-allocator-type=CloudAllocator (the pod ranges come from the cloud)');
  }
  return options;
}

/** The per-request timeout for API writes: well inside the gap a lost lease leaves (client-go fencing). */
export function writeTimeoutMs(le: LeaderElectionOptions): number {
  if (!le.enabled) return 10_000;
  return Math.max(100, Math.floor((le.leaseDurationMs - le.renewDeadlineMs) * 0.8));
}
