// The `run` process: wires the client runtime, the provider, leader election and the controllers
// (cloud node, node lifecycle, node IPAM). Controllers run only while leading. Followers keep the
// node cache warm, and (warm standby, the default) node IPAM's pools and ledger too, writing
// nothing: a takeover brings them current to a quorum read and allocates without a second LIST.
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { CloudProvider } from '../../providers/types.js';
import { CloudNodeController } from '../controllers/cloudnode/controller.js';
import { CloudNodeLifecycleController } from '../controllers/nodelifecycle/controller.js';
import { instanceKeyOf, ProviderIDIndex } from '../controllers/provider-ids/live-index.js';
import type { NodeObject } from '../model/node.js';
import type { CIDRAllocator, CIDRAllocatorOptions } from '../controllers/nodeipam/cidr-allocator.js';
import { CloudAllocator } from '../controllers/nodeipam/cloud-allocator.js';
import { RANGE_ALLOCATOR_WRITE_WORKERS, RangeAllocator } from '../controllers/nodeipam/range-allocator.js';
import { FlagsPoolSource, type PoolSource } from '../controllers/nodeipam/pool-source.js';
import { ClusterCIDRSource } from '../controllers/nodeipam/clustercidr-source.js';
import { ServiceCIDRSource } from '../controllers/nodeipam/servicecidr-source.js';
import { cloudRangesFromProvider } from '../controllers/nodeipam/cloud-ranges.js';
import { AuditLoop } from '../controllers/nodeipam/audit-loop.js';
import { AUDIT_EVENT_REASON } from '../controllers/nodeipam/audit-loop.js';
import { auditNode } from '../audit/objects.js';
import type { FlagsPool } from '../ipam/flags.js';
import { parseCIDRList } from '../ipam/cidr.js';
import { checkFlagValues } from './flag-values.js';
import type { AddressExclusion } from '../nodeip/exclude.js';
import { loadCloudProvider } from './cloud-provider.js';
import { KubeClient, loadKubeConfig } from '../kube/client.js';
import { LeaderElector } from '../kube/leader.js';
import { leaderElectionMetrics } from '../kube/leader-metrics.js';
import { abortable } from '../util/abort.js';
import { NODES, type KubeObject } from '../kube/types.js';
import { slimNode } from '../model/cached-node.js';
import { TokenBucket } from '../kube/token-bucket.js';
import { restClientMetrics } from '../kube/client-metrics.js';
import { registerUninitializedNodeMetrics } from './uninitialized-metrics.js';
import { nodeReference } from '../kube/events.js';
import { Watcher } from '../kube/watcher.js';
import { silentLogger, type Logger } from '../log.js';
import { nodeCacheFromWatcher, nodeDeleterFromClient, nodeWriterFromClient } from './adapters.js';
import { createNodeEventSink, type NodeEvents } from './events.js';
import { writeTimeoutMs, type RunOptions } from './options.js';

export const COMPONENT = 'node-address-ccm';

/** Longest wait for recorded events at shutdown. */
const EVENT_FLUSH_MS = 2000;
/**
 * How long a batch of joining nodes waits for the next one before its provider call, and the
 * longest it gathers. Nodes that join together (a node group scaling up by hundreds, at whatever
 * rate the API server delivers them) then share one call per 500 instead of one per few; a lone
 * node waits 250 ms, next to the tens of seconds a machine takes to boot, and a steady stream no
 * more than 2 s.
 */
const CLOUD_BATCH_GATHER_MS = 250;
/** Below this many nodes a second LIST costs less than waiting for the watch (≤ 10 pages). */
const CATCH_UP_MIN_NODES = 5_000;
/**
 * How long the watch may take to reach the quorum read before the nodes are listed instead. A
 * watch of thousands of nodes moves every second (status updates); an idle one waits for a
 * bookmark. At 100,000 nodes a LIST takes longer than this.
 */
const CATCH_UP_TIMEOUT_MS = 5_000;

/**
 * NODE_ADDRESS_CCM_CATCH_UP_MIN_NODES: for the chaos test and benchmarks, which run real
 * processes on small clusters and must take the catch-up path too. Not an operator setting.
 */
function catchUpMinNodesFromEnv(): number | undefined {
  const v = process.env.NODE_ADDRESS_CCM_CATCH_UP_MIN_NODES;
  return v !== undefined && /^[0-9]+$/.test(v) ? Number(v) : undefined;
}
const CLOUD_BATCH_GATHER_MAX_MS = 2000;

export interface ManagerDeps {
  logger?: Logger;
  /** Use this config instead of --kubeconfig / in-cluster. */
  kubeConfig?: KubeConfig;
  /** Use this provider instead of building --cloud-provider (simulate, tests, benchmarks). */
  provider?: CloudProvider;
  /** Leader-election identity (default hostname_random). */
  identity?: string;
  /** Metrics registry (default: a new one with process metrics). */
  registry?: Registry;
  /** Node watch staleness limit (default 90 s: well above the API server's bookmark interval). */
  watchStaleAfterMs?: number;
  /** Node count from which a takeover catches the cache up to a quorum read instead of listing (default 5,000). */
  catchUpMinNodes?: number;
  /** User-Agent of API requests. */
  userAgent?: string;
  /** Period of the node IPAM audit (findings gauge and conflict events; default 60 s). */
  auditIntervalMs?: number;
  /** Process-wide event write limit (default EVENT_RATE; null: none, for benchmarks counting events per node). */
  eventRate?: { qps: number; burst: number } | null;
  /** What the node cache keeps of each Node (default slimNode: only what the controllers read). */
  nodeTransform?: <T extends NodeObject>(node: T) => T;
  /** Called the moment leadership is lost (not on a release): the process should exit 1 soon. */
  onLeadershipLost?: () => void;
}

export type ManagerExit = 'cancelled' | 'lost';

/** Node IPAM loaded on a follower (warm standby), with the signal that ends its calls. */
interface Standby {
  ipam: CIDRAllocator;
  serviceCIDRs: ServiceCIDRSource | undefined;
  term: AbortController;
  /** Could not load: the term starts node IPAM cold. */
  failed: boolean;
  /** The term took it over (its stop is the term's). */
  taken: boolean;
}

/** host[:port] of the API server, the `host` label of the rest_client_* metrics. */
function apiServerHost(kc: KubeConfig): string {
  try {
    return new URL(kc.getCurrentCluster()?.server ?? '').host;
  } catch {
    return '';
  }
}

export class ControllerManager {
  readonly registry: Registry;
  readonly identity: string;
  readonly client: KubeClient;
  readonly watcher: Watcher<NodeObject & KubeObject>;
  /** Called before work that copies every cached node at once (the IP range audit); the run process sets it to its heap budget's settle. */
  beforeLargeAllocation: (() => void) | undefined;
  /**
   * Called after that work, once its copy is garbage: the run process sets it to the same settle,
   * so the copy does not wait in the old generation for V8's next full collection (at 130,000
   * nodes it held the RSS ~20 MiB up until a refresh round set one off).
   */
  afterLargeAllocation: (() => void) | undefined;
  /** Called once, when the node cache has first been filled; the run process hands ordinary collections back to V8 then. */
  afterCacheFilled: (() => void) | undefined;
  /** Called after each page of a node LIST is cached; the run process checks its heap budget there. */
  afterListPage: (() => void) | undefined;
  readonly #o: RunOptions;
  readonly #deps: ManagerDeps;
  readonly #log: Logger;
  readonly #allowDualStack: boolean;
  readonly #excludeAddresses: AddressExclusion | undefined;
  #provider: CloudProvider | undefined;
  #elector: LeaderElector | undefined;
  #cloudNode: CloudNodeController | undefined;
  #ipam: CIDRAllocator | undefined;
  #lifecycle: CloudNodeLifecycleController | undefined;
  #running: Promise<void> | undefined;
  #events: NodeEvents | undefined;
  #leading = false;
  #started = false;
  readonly #sources: PoolSource[] = [];
  /** MultiCIDRRangeAllocator / CloudAllocator: the validated flags pool, if --cluster-cidr is set. */
  #flagsPool: FlagsPool | undefined;
  #audit: AuditLoop | undefined;
  /** Node IPAM kept warm while following (warm standby); taken over by the term, or stopped at exit. */
  #standby: Standby | undefined;
  #providerIDs: ProviderIDIndex | undefined;
  #stopping: Promise<void> | undefined;
  /** Shutdown steps under way, by name, with when each began (pending()). */
  readonly #pending = new Map<string, number>();

  /** Throws (FeatureGateError, FlagsError, …) on option values only checkable with the libraries. */
  constructor(options: RunOptions, deps: ManagerDeps = {}) {
    this.#o = options;
    const checked = checkFlagValues(options);
    const ipam = options.ipam;
    // The sources are built per leadership term; the flags pool is validated now, with its flag's name.
    this.#flagsPool = checked.flagsPool;
    if (ipam.allocateNodeCIDRs && ipam.cidrAllocatorType === 'RangeAllocator') {
      this.#sources.push(new FlagsPoolSource({
        clusterCIDR: ipam.clusterCIDR as string,
        ...(ipam.nodeCIDRMaskSize !== undefined ? { nodeCIDRMaskSize: ipam.nodeCIDRMaskSize } : {}),
        ...(ipam.nodeCIDRMaskSizeIPv4 !== undefined ? { nodeCIDRMaskSizeIPv4: ipam.nodeCIDRMaskSizeIPv4 } : {}),
        ...(ipam.nodeCIDRMaskSizeIPv6 !== undefined ? { nodeCIDRMaskSizeIPv6: ipam.nodeCIDRMaskSizeIPv6 } : {}),
        ...(ipam.serviceClusterIPRange !== undefined ? { serviceClusterIPRange: ipam.serviceClusterIPRange } : {}),
      }));
    }
    this.#deps = deps;
    this.#log = deps.logger ?? silentLogger;
    for (const w of checked.gateWarnings) this.#log.warn({ featureGates: checked.gates.toString() }, w);
    this.#allowDualStack = checked.gates.enabled('CloudDualStackNodeIPs');
    this.#excludeAddresses = checked.excludeAddresses;
    if (checked.excludeAddresses) this.#log.info({ excluded: checked.excludeAddresses.cidrs }, 'cloud addresses inside --node-address-exclude-cidrs are never node addresses');
    this.identity = deps.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
    this.registry = deps.registry ?? ((): Registry => {
      const r = new Registry();
      collectDefaultMetrics({ register: r });
      return r;
    })();
    const kc = deps.kubeConfig ?? loadKubeConfig(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {});
    this.client = new KubeClient(kc, {
      writeTimeoutMs: writeTimeoutMs(options.leaderElection), userAgent: deps.userAgent ?? COMPONENT, fieldManager: COMPONENT,
      // One bucket for the process: every controller's requests count against --kube-api-qps.
      ...(options.kubeAPIRateLimit ? { rateLimiter: new TokenBucket(options.kubeAPIRateLimit.qps, options.kubeAPIRateLimit.burst) } : {}),
      ...restClientMetrics(this.registry, apiServerHost(kc)),
    });
    this.watcher = new Watcher<NodeObject & KubeObject>({
      client: this.client, resource: NODES, logger: this.#log, staleAfterMs: deps.watchStaleAfterMs ?? 90_000,
      transform: deps.nodeTransform ?? slimNode,
      afterListPage: () => this.afterListPage?.(),
    });
    if (options.controllers.has('cloud-node')) registerUninitializedNodeMetrics(this.registry, () => this.watcher.list());
  }

  /** The controllers run (leading, or leader election off). */
  isLeading(): boolean {
    return this.#leading;
  }

  /** /readyz: why the process is not ready yet, or undefined when it is (a connected leader or follower). */
  notReadyReason(): string | undefined {
    if (!this.watcher.hasSynced()) return 'node cache not synced';
    const problem = this.watcher.connectionProblem();
    if (problem !== undefined) return `not connected to the API server: ${problem}`;
    if (this.#o.leaderElection.enabled && this.#elector && !this.#elector.isLeader() && this.#elector.leader() === '') return 'no leader observed yet';
    return undefined;
  }

  /** /livez: why the process is not live, or undefined: while leading, every controller still has its workers. */
  notLiveReason(): string | undefined {
    if (!this.#leading) return undefined;
    const expected = this.#o.concurrentNodeSyncs;
    const cn = this.#cloudNode;
    if (cn && !cn.queue.isShuttingDown() && cn.aliveWorkers() < expected) return `cloud-node: ${cn.aliveWorkers()} of ${expected} workers running`;
    const ipam = this.#ipam;
    if (ipam?.ready() && !ipam.queue.isShuttingDown() && ipam.aliveWorkers() < expected) return `node-ipam: ${ipam.aliveWorkers()} of ${expected} workers running`;
    return undefined;
  }

  /** What run() is still waiting for (a stuck shutdown's log line and /livez), oldest first. */
  pending(): string[] {
    const now = Date.now();
    return [...this.#pending].map(([what, since]) => `${what} (${((now - since) / 1000).toFixed(1)} s)`);
  }

  /** `p`, named in pending() until it settles. */
  async #track<T>(what: string, p: Promise<T>): Promise<T> {
    this.#pending.set(what, Date.now());
    try {
      return await p;
    } finally {
      this.#pending.delete(what);
    }
  }

  /** The running controllers (for simulate's progress display and tests). */
  controllers(): { cloudNode?: CloudNodeController; ipam?: CIDRAllocator; lifecycle?: CloudNodeLifecycleController } {
    return {
      ...(this.#cloudNode ? { cloudNode: this.#cloudNode } : {}), ...(this.#ipam ? { ipam: this.#ipam } : {}),
      ...(this.#lifecycle ? { lifecycle: this.#lifecycle } : {}),
    };
  }

  /**
   * Builds the cloud provider when a running controller needs one (idempotent; run() calls it).
   * Called first, it turns a bad --cloud-provider or --cloud-config into an error before anything
   * starts; such errors name the flag ("--cloud-provider: …").
   */
  async loadProvider(): Promise<void> {
    if (this.#provider) return;
    this.#provider = this.#deps.provider ?? await loadCloudProvider(this.#o, this.#log);
  }

  /**
   * Runs until `signal` aborts ('cancelled': lease released) or leadership is lost ('lost': the
   * caller exits non-zero). Controllers run only while leading.
   */
  async run(signal: AbortSignal): Promise<ManagerExit> {
    if (this.#started) throw new Error('ControllerManager.run: already running');
    this.#started = true;
    await this.loadProvider();
    const listStarted = Date.now();
    this.watcher.on('synced', ({ initial, count }) => {
      if (!initial) return;
      this.#log.info({ nodes: count, ms: Date.now() - listStarted }, 'node cache synced');
      this.afterCacheFilled?.();
    });
    this.watcher.start();
    try {
      if (!this.#o.leaderElection.enabled) {
        try {
          await this.#track('controller start-up', this.#startControllers(signal));
        } catch (err) {
          // What did start (pool watches, workers) stops before the error ends the process.
          await this.#track('stopping the controllers', this.#stopControllers());
          if (signal.aborted) return 'cancelled';
          throw err;
        }
        await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
        await this.#track('stopping the controllers', this.#stopControllers());
        return 'cancelled';
      }
      const le = this.#o.leaderElection;
      // SIGTERM ends the term's work first (start-up, in-flight calls), stops the controllers while
      // still leading, then releases the lease.
      const electorAbort = new AbortController();
      // Controllers that cannot start (a CRD not served, a bad pool) end the term: the lease is
      // released for a replica that may do better and the process exits non-zero, rather than
      // holding the lease with nothing running.
      let startError: { err: unknown } | undefined;
      this.#elector = new LeaderElector({
        client: this.client,
        namespace: le.namespace,
        name: le.name,
        identity: this.identity,
        leaseDurationMs: le.leaseDurationMs,
        renewDeadlineMs: le.renewDeadlineMs,
        retryPeriodMs: le.retryPeriodMs,
        releaseOnCancel: true,
        logger: this.#log,
        metrics: leaderElectionMetrics(this.registry, le.name),
        callbacks: {
          onStartedLeading: (leaderSignal) => {
            // One signal per term: it aborts when leadership ends or the process is told to stop.
            const term = AbortSignal.any([leaderSignal, signal]);
            this.#running = this.#startControllers(term).catch((err: unknown) => {
              if (term.aborted) return;
              this.#log.error({ err }, 'controllers failed to start: releasing the lease and exiting');
              startError ??= { err };
              electorAbort.abort();
            });
          },
          onStoppedLeading: () => {
            if (!electorAbort.signal.aborted && !signal.aborted) this.#deps.onLeadershipLost?.();
            // Writes are already fenced by the gate and the term's calls aborted; stop the loops now.
            void this.#stopControllers();
          },
        },
      });
      this.client.setWriteGate(this.#elector.writeGate);
      if (le.warmStandby && this.#o.controllers.has('node-ipam') && this.#o.ipam.allocateNodeCIDRs) this.#startStandby(signal);
      // The index of live Nodes' instances is built while following too: at 100,000 nodes it
      // takes a fifth of a second, which a takeover should not spend.
      if (le.warmStandby) void abortable(this.watcher.synced, signal).then(() => this.#providerIDIndex()).catch(() => undefined);
      const onAbort = (): void => {
        void (async () => {
          await this.#track('controller start-up', this.#running ?? Promise.resolve());
          await this.#track('stopping the controllers', this.#stopControllers());
          electorAbort.abort();
        })();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      const end = await this.#track('leader election (lease release)', this.#elector.run(electorAbort.signal));
      signal.removeEventListener('abort', onAbort);
      await this.#track('controller start-up', this.#running ?? Promise.resolve());
      await this.#track('stopping the controllers', this.#stopControllers());
      if (startError) throw startError.err;
      return end;
    } finally {
      const standby = this.#standby;
      if (standby && !standby.taken) await this.#track('stopping the warm standby', this.#stopStandby(standby));
      await this.#track('stopping the node watch', this.watcher.stop());
      await this.#track('closing the cloud provider', Promise.resolve(this.#provider?.close?.()));
      this.client.close();
    }
  }

  /**
   * Before node IPAM's first allocation the node cache must hold every write made before this
   * term began (a previous leader's blocks above all). Without leader election the cache's own
   * LIST was that read. A small cache is simply listed again. A large one (a second LIST at 100,000
   * nodes costs seconds) is instead brought up to a quorum read: a LIST of one node gives the
   * store's current resourceVersion, and the watch's events or bookmarks must reach it; when they
   * do not in time, or the versions cannot be compared, it is listed again after all.
   */
  async #nodeCacheCurrent(client: KubeClient, signal?: AbortSignal): Promise<void> {
    if (!this.#o.leaderElection.enabled) return;
    if (this.watcher.size() < (this.#deps.catchUpMinNodes ?? catchUpMinNodesFromEnv() ?? CATCH_UP_MIN_NODES)) return this.watcher.relist('starting node IPAM', signal);
    const started = Date.now();
    let rv = '';
    try {
      rv = (await client.list(NODES, { limit: 1, ...(signal ? { signal } : {}) })).metadata?.resourceVersion ?? '';
    } catch (err) {
      signal?.throwIfAborted();
      this.#log.info({ err }, 'node IPAM: the quorum read failed; listing the nodes again instead');
    }
    if (rv !== '' && await this.watcher.waitForResourceVersion(rv, CATCH_UP_TIMEOUT_MS, signal)) {
      this.#log.info({ resourceVersion: rv, cacheResourceVersion: this.watcher.resourceVersion, ms: Date.now() - started }, 'node IPAM: the node cache is current to a quorum read taken after the lease; no second LIST');
      return;
    }
    signal?.throwIfAborted();
    return this.watcher.relist('starting node IPAM (the cache did not reach the quorum read in time)', signal);
  }

  async #startControllers(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    // Waits all over the term listen on its signal at once; more than 10 is expected, not a leak.
    setMaxListeners(0, signal);
    this.#leading = true;
    this.#log.info({ identity: this.identity, controllers: [...this.#o.controllers] }, 'starting controllers');
    // The term's client: ending the term aborts every call the controllers have in flight or queued.
    const client = this.client.withSignal(signal);
    const nodes = nodeCacheFromWatcher(this.watcher);
    const writer = nodeWriterFromClient(client, this.#deps.nodeTransform ?? slimNode);
    const events = this.#eventSink();
    await abortable(this.watcher.synced, signal);
    if (this.#o.controllers.has('node-ipam') && this.#o.ipam.allocateNodeCIDRs) {
      const standby = this.#standby;
      let serviceCIDRs: ServiceCIDRSource | undefined;
      if (standby && !standby.failed) {
        // The warm standby's calls end with this term, as the other controllers' do.
        signal.addEventListener('abort', () => standby.term.abort(), { once: true });
        standby.taken = true;
        this.#ipam = standby.ipam;
        serviceCIDRs = standby.serviceCIDRs;
        // Already following once the cache synced; if not yet, it follows now and takes over after.
        void standby.ipam.follow(signal).catch(() => undefined);
      } else {
        if (standby) await this.#stopStandby(standby);
        ({ ipam: this.#ipam, serviceCIDRs } = this.#buildIPAM(client, signal, events));
      }
      const ipamCtl = this.#ipam;
      await ipamCtl.start(signal);
      // Leadership ended while the allocator loaded: #stopControllers already ran.
      if (signal.aborted) return;
      this.#audit = new AuditLoop({
        intervalMs: this.#deps.auditIntervalMs ?? 60_000,
        afterRun: () => this.afterLargeAllocation?.(),
        registry: this.registry,
        logger: this.#log,
        collect: () => {
          // The audit holds a copy of every node at once: first let the heap budget (if any) clear
          // the garbage it allows, so the copy is not stacked on it (the process's peak RSS).
          this.beforeLargeAllocation?.();
          // A view of the cache, not a copy: each node's audit form is made when the audit reads it.
          const list = nodes.list();
          return {
            nodes: { length: list.length, at: (i: number) => (i < list.length ? auditNode(list[i]!) : undefined) },
            pools: ipamCtl.ledger.stats().map((p) => ({ name: p.name, cidrs: p.families.map((f) => f.clusterCIDR), terminating: p.terminating, source: p.fromFlags ? 'flags' as const : 'ClusterCIDR' as const })),
            serviceRanges: serviceCIDRs?.serviceRanges() ?? (this.#o.ipam.serviceClusterIPRange !== undefined
              ? [{ name: '--service-cluster-ip-range', cidrs: parseCIDRList(this.#o.ipam.serviceClusterIPRange).map((c) => c.text), source: 'flags' as const }]
              : []),
          };
        },
        event: (f) => {
          const first = f.objects[0];
          if (!first) return;
          const ref = first.kind === 'Node' ? nodeReference({ metadata: { name: first.name, uid: nodes.get(first.name)?.metadata.uid ?? first.name } })
            : { kind: first.kind === 'ClusterCIDR' ? 'ClusterCIDR' : first.kind === 'ServiceCIDR' ? 'ServiceCIDR' : 'Node', apiVersion: first.kind === 'ClusterCIDR' ? 'networking.x-k8s.io/v1' : 'networking.k8s.io/v1', name: first.name, uid: first.name };
          events.recorder.event(ref, 'Warning', AUDIT_EVENT_REASON, `${f.kind}: ${f.message}`);
        },
      });
      this.#audit.start();
    } else if (this.#o.controllers.has('node-ipam')) {
      this.#log.info('node-ipam idles: --allocate-node-cidrs is off');
    }
    if (signal.aborted) return;
    const providerIDs = this.#providerIDIndex();
    if (this.#o.controllers.has('cloud-node') && this.#provider) {
      this.#cloudNode = new CloudNodeController({
        nodes, writer, events, provider: this.#provider, providerIDs,
        ...(this.#ipam instanceof RangeAllocator ? { claims: this.#ipam } : {}),
        allowDualStack: this.#allowDualStack,
        ...(this.#excludeAddresses ? { excludeAddresses: this.#excludeAddresses } : {}),
        workers: this.#o.concurrentNodeSyncs,
        gatherMs: CLOUD_BATCH_GATHER_MS,
        gatherMaxMs: CLOUD_BATCH_GATHER_MAX_MS,
        statusUpdateFrequencyMs: this.#o.nodeStatusUpdateFrequencyMs,
        registry: this.registry,
        logger: this.#log,
      });
      this.#cloudNode.start();
    }
    if (this.#o.controllers.has('cloud-node-lifecycle') && this.#provider) {
      // Deleted Nodes release their pod CIDRs through the node-IPAM loop's watch (delete handler).
      this.#lifecycle = new CloudNodeLifecycleController({
        // The term's client, as the writer: ending the term aborts a DELETE in flight.
        nodes, writer, deleter: nodeDeleterFromClient(client), events, provider: this.#provider, providerIDs,
        monitorPeriodMs: this.#o.nodeMonitorPeriodMs,
        startupGraceMs: this.#o.nodeStartupGracePeriodMs,
        registry: this.registry,
        logger: this.#log,
      });
      this.#lifecycle.start();
    }
  }

  /**
   * One index of the live Nodes' instances for both controllers that judge answers by it (made
   * when first needed: by a follower once its cache synced, or by the term), when one of them runs.
   */
  #providerIDIndex(): ProviderIDIndex | undefined {
    if (!this.#provider || !(this.#o.controllers.has('cloud-node') || this.#o.controllers.has('cloud-node-lifecycle'))) return undefined;
    this.#providerIDs ??= new ProviderIDIndex(instanceKeyOf(this.#provider)).attach(nodeCacheFromWatcher(this.watcher));
    return this.#providerIDs;
  }

  /** The process's event sink (one, made when first needed: by the warm standby or the term). */
  #eventSink(): NodeEvents {
    this.#events ??= createNodeEventSink(this.client, { component: COMPONENT, host: this.identity, logger: this.#log, registry: this.registry, ...(this.#deps.eventRate !== undefined ? { rate: this.#deps.eventRate } : {}) });
    return this.#events;
  }

  /**
   * The node IPAM loop by --cidr-allocator-type, its writes and calls through `client` and
   * `signal` (the term's, or the warm standby's that the term takes over).
   */
  #buildIPAM(client: KubeClient, signal: AbortSignal, events: NodeEvents): { ipam: CIDRAllocator; serviceCIDRs: ServiceCIDRSource | undefined } {
    const mode = this.#o.ipam.cidrAllocatorType;
    const { sources, serviceCIDRs } = this.#ipamSources(client);
    const common: CIDRAllocatorOptions = {
      nodes: nodeCacheFromWatcher(this.watcher),
      writer: nodeWriterFromClient(client, this.#deps.nodeTransform ?? slimNode),
      events, sources,
      objectEvents: (ref, type, reason, message) => events.recorder.event({ ...ref, uid: ref.uid ?? ref.name }, type, reason, message),
      // With leader election the elector already waited out any write of an old leader before
      // starting us; the IPAM loop still brings the node cache current before it allocates.
      fenceMs: 0,
      relist: (relistSignal) => this.#nodeCacheCurrent(client, relistSignal),
      workers: this.#o.concurrentNodeSyncs,
      registry: this.registry,
      logger: this.#log,
    };
    const ipam = mode === 'CloudAllocator' && this.#provider
      ? new CloudAllocator({
        ...common,
        ranges: cloudRangesFromProvider(this.#provider, { registry: this.registry, signal, logger: this.#log }),
        serviceRanges: () => serviceCIDRs?.serviceRanges().flatMap((r) => r.cidrs) ?? [],
        patchStatus: (name: string, patch: unknown) => client.patch(NODES, name, patch, 'strategic', { subresource: 'status' }),
        gatherMs: CLOUD_BATCH_GATHER_MS,
        gatherMaxMs: CLOUD_BATCH_GATHER_MAX_MS,
        identity: this.identity,
      })
      // While the cloud node controller runs, it claims a tainted node's blocks in its own write.
      // Its writes run as kube-controller-manager's do (cidrUpdateWorkers: 30 at once): each is one
      // PATCH of a node's own blocks, chosen synchronously from the ledger before it is sent, so
      // running them side by side changes no decision, only how long 10,000 nodes wait for theirs.
      // More when --concurrent-node-syncs asks for more.
      : new RangeAllocator({ ...common, workers: Math.max(this.#o.concurrentNodeSyncs, RANGE_ALLOCATOR_WRITE_WORKERS), leaveTaintedNodes: this.#o.controllers.has('cloud-node') && mode !== 'CloudAllocator' });
    return { ipam, serviceCIDRs };
  }

  /**
   * Warm standby: node IPAM loads on the follower once the node cache has synced and follows it,
   * writing nothing (and the write gate fences it anyway). A follower that cannot load it (a CRD
   * not served, the API server away) logs why and starts node IPAM cold if it ever leads.
   */
  #startStandby(signal: AbortSignal): void {
    const term = new AbortController();
    const standbySignal = AbortSignal.any([term.signal, signal]);
    setMaxListeners(0, standbySignal);
    const built = this.#buildIPAM(this.client.withSignal(standbySignal), standbySignal, this.#eventSink());
    const standby = { ...built, term, failed: false, taken: false };
    this.#standby = standby;
    void abortable(this.watcher.synced, standbySignal).then(() => built.ipam.follow(standbySignal)).then(() => {
      // The load's garbage (sorted copies of every node) goes now: a standby that waits for hours
      // should hold what a leader holds, not that too.
      this.beforeLargeAllocation?.();
    }).catch((err: unknown) => {
      if (standbySignal.aborted) return;
      standby.failed = true;
      this.#log.warn({ err }, 'warm standby: node IPAM could not load on this follower; it starts cold if this replica leads');
      if (!standby.taken) void this.#stopStandby(standby);
    });
  }

  async #stopStandby(standby: Standby): Promise<void> {
    standby.term.abort();
    await standby.ipam.stop().catch(() => undefined);
  }

  /** The pool sources of one leadership term, by --cidr-allocator-type. */
  #ipamSources(client: KubeClient): { sources: PoolSource[]; serviceCIDRs?: ServiceCIDRSource } {
    const ipam = this.#o.ipam;
    if (ipam.cidrAllocatorType === 'RangeAllocator') return { sources: this.#sources };
    const serviceCIDRs = new ServiceCIDRSource({
      client, registry: this.registry, watchStaleAfterMs: this.#deps.watchStaleAfterMs ?? 90_000,
      ...(ipam.serviceClusterIPRange !== undefined ? { serviceClusterIPRange: ipam.serviceClusterIPRange } : {}),
    });
    if (ipam.cidrAllocatorType === 'MultiCIDRRangeAllocator') {
      const clusterCIDRs = new ClusterCIDRSource({ client, watchStaleAfterMs: this.#deps.watchStaleAfterMs ?? 90_000, ...(this.#flagsPool ? { flags: this.#flagsPool } : {}) });
      return { sources: [clusterCIDRs, serviceCIDRs], serviceCIDRs };
    }
    // CloudAllocator: the flags pool (if any) only so a cloud range clashing with it is reported.
    const sources: PoolSource[] = [serviceCIDRs];
    if (ipam.clusterCIDR !== undefined) {
      sources.unshift(new FlagsPoolSource({
        clusterCIDR: ipam.clusterCIDR,
        ...(ipam.nodeCIDRMaskSize !== undefined ? { nodeCIDRMaskSize: ipam.nodeCIDRMaskSize } : {}),
        ...(ipam.nodeCIDRMaskSizeIPv4 !== undefined ? { nodeCIDRMaskSizeIPv4: ipam.nodeCIDRMaskSizeIPv4 } : {}),
        ...(ipam.nodeCIDRMaskSizeIPv6 !== undefined ? { nodeCIDRMaskSizeIPv6: ipam.nodeCIDRMaskSizeIPv6 } : {}),
      }));
    }
    return { sources, serviceCIDRs };
  }

  /**
   * Stops the running controllers. Calls are serialised, so a caller (the end of run()) also
   * waits for a stop already under way (onStoppedLeading's) before the client is closed.
   */
  #stopControllers(): Promise<void> {
    const next = (this.#stopping ?? Promise.resolve()).catch(() => undefined).then(() => this.#stopNow());
    this.#stopping = next;
    return next;
  }

  async #stopNow(): Promise<void> {
    const cloudNode = this.#cloudNode;
    const ipam = this.#ipam;
    const lifecycle = this.#lifecycle;
    this.#cloudNode = undefined;
    this.#ipam = undefined;
    this.#lifecycle = undefined;
    this.#audit?.stop();
    this.#audit = undefined;
    this.#leading = false;
    await cloudNode?.stop();
    await lifecycle?.stop();
    await ipam?.stop();
    // Events already recorded still go out (unless the write gate is closed: then they fail
    // fast), but shutdown never waits more than a moment for them.
    const recorder = this.#events?.recorder;
    this.#events = undefined;
    if (recorder) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([recorder.stop(), new Promise<void>((r) => (timer = setTimeout(r, EVENT_FLUSH_MS)))]);
      clearTimeout(timer);
    }
  }
}
