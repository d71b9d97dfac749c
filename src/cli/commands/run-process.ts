// The `run` process: the controller manager and its health server, started by `run`'s action.
// Kept apart from run.ts so that `run --help` and flag errors load no Kubernetes client.
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { performance } from 'node:perf_hooks';
import { runInNewContext } from 'node:vm';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../../log.js';
import { HealthServer } from '../../serving/health.js';
import { ControllerManager, type ManagerDeps } from '../../manager/manager.js';
import { loadCloudProvider } from '../../manager/cloud-provider.js';
import { HeapBudget, STEADY_GROWING_PERCENT } from '../../manager/heap-budget.js';
import { realClock } from '../../kube/clock.js';
import type { RunOptions } from '../../manager/options.js';
import { UsageError } from '../exit-codes.js';
import { secureServing, type SecureServingConfig } from '../../serving/server.js';

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

/**
 * A replica that lost the lease exits 1 this soon after, whatever is still pending: the README
 * promises 2 s, and a deposed replica must not linger beside the new leader.
 */
export const LOST_EXIT_MS = 1500;
/** /livez fails once a shutdown has been under way this long with work still pending. */
export const SHUTDOWN_STUCK_MS = 2000;

export interface RunningProcess {
  manager: ControllerManager;
  health: HealthServer | undefined;
  /** Resolves with the process exit code. */
  done: Promise<number>;
  stop(): void;
}

/**
 * --optimize-for-memory's budget: the heap may grow this far past what the last collection left.
 * At 32 MiB it fired before V8's own (concurrent) collections ever started: 28–46 blocking ones
 * in a LIST of 130,000 Nodes, against 13–17 at 40 MiB for 5–10 MiB more RSS.
 */
const HEAP_BUDGET_BYTES = 40 * 2 ** 20;

/** The budget once V8 collects on its own (HeapBudget.steady): a backstop past where V8 starts. */
const STEADY_HEAP_BUDGET_BYTES = 48 * 2 ** 20;

/** Before the audit's copy of every node: collect if more than this is garbage (a few MiB is not worth a collection). */
const SETTLE_MARGIN_BYTES = 8 * 2 ** 20;

/** A heap budget on V8's own gc() (exposed at run time), with its collections counted. */
function startHeapBudget(registry: Registry, logger: Logger): HeapBudget | undefined {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as unknown;
  if (typeof gc !== 'function') {
    logger.warn('--optimize-for-memory: this Node does not expose gc() at run time; V8 sizes the heap alone');
    return undefined;
  }
  let elu = performance.eventLoopUtilization();
  const collections = new Counter({
    name: 'node_address_ccm_heap_budget_collections_total', labelNames: ['reason'], registers: [registry],
    help: 'Full garbage collections --optimize-for-memory ran: the heap outgrew its budget (budget), before or after a copy of every node (settle), or to shrink the young generation in a quiet spell (quiet).',
  });
  const seconds = new Counter({ name: 'node_address_ccm_heap_budget_collection_seconds_total', help: 'Time spent in those collections.', labelNames: ['reason'], registers: [registry] });
  const budget = new HeapBudget({
    budgetBytes: HEAP_BUDGET_BYTES, steadyBudgetBytes: STEADY_HEAP_BUDGET_BYTES, intervalMs: 250, clock: realClock, collect: gc as () => void,
    // V8's gc() takes the kind of collection: a scavenge alone is a few milliseconds.
    collectYoung: () => (gc as (options: { type: 'minor' }) => void)({ type: 'minor' }),
    heapUsed: () => getHeapStatistics().used_heap_size,
    setGrowingPercent: (percent) => setFlagsFromString(`--heap-growing-percent=${percent}`),
    youngBytes: () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0,
    // V8 reads its growth factor each time it grows the young generation: 1 keeps the size, 2 is
    // V8's own default (checked under Node 20 and 22: docs/benchmarks.md, "Where the memory goes").
    setYoungGrowth: (grow) => setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`),
    busyFraction: () => {
      const now = performance.eventLoopUtilization();
      const since = performance.eventLoopUtilization(now, elu);
      elu = now;
      return since.utilization;
    },
    onCollect: ({ beforeBytes, afterBytes, ms, reason }) => {
      collections.inc({ reason });
      seconds.inc({ reason }, ms / 1000);
      logger.debug({ beforeMiB: Math.round(beforeBytes / 2 ** 20), afterMiB: Math.round(afterBytes / 2 ** 20), ms, reason }, 'heap budget: collected');
    },
  });
  budget.start();
  return budget;
}

/**
 * Starts the manager and its health server; SIGTERM/SIGINT stop it and release the lease. `done`
 * resolves 0 within --shutdown-grace-period of SIGTERM and 1 within LOST_EXIT_MS of a lost lease,
 * even if the manager is still waiting for something (then named in a log line): the caller exits.
 */
export async function startProcess(options: RunOptions, logger: Logger, deps: ManagerDeps = {}, signals = true): Promise<RunningProcess> {
  // When the process began to stop (SIGTERM, SIGINT, a lost lease), and the deadline that ends it.
  let stoppingSince: number | undefined;
  let deadline: NodeJS.Timeout | undefined;
  let forceExit!: (code: number) => void;
  const forced = new Promise<number>((resolve) => (forceExit = resolve));
  // The provider before the kubeconfig: an unknown --cloud-provider or an unusable --cloud-config
  // is a usage error (exit 2), named before a missing in-cluster config would be.
  let provider = deps.provider;
  try {
    provider ??= await loadCloudProvider(options, logger);
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('--')) throw new UsageError(err.message);
    throw err;
  }
  let manager: ControllerManager;
  try {
    manager = buildManager(options, {
      logger, ...deps, ...(provider ? { provider } : {}),
      onLeadershipLost: () => {
        deps.onLeadershipLost?.();
        stopWithin(LOST_EXIT_MS, 1, 'leader election lost');
      },
    });
  } catch (err) {
    await provider?.close?.();
    throw err;
  }
  function stopWithin(ms: number, code: number, why: string): void {
    stoppingSince ??= Date.now();
    if (deadline) return;
    deadline = setTimeout(() => {
      (code === 0 ? logger.warn : logger.error).call(logger, { why, waitedMs: ms, pending: manager.pending() }, `still stopping after ${ms} ms: exiting ${code} with work pending`);
      forceExit(code);
    }, ms);
  }
  let serving: SecureServingConfig = { selfSigned: false };
  if (options.securePort !== 0) {
    try {
      serving = await secureServing(options, manager.client, logger);
    } catch (err) {
      manager.client.close();
      if (err instanceof Error && err.message.startsWith('--')) throw new UsageError(err.message);
      throw err;
    }
  }
  const health = await HealthServer.start({
    ...(serving.tls ? { tls: serving.tls } : {}),
    ...(serving.guard ? { guard: serving.guard } : {}),
    address: options.bindAddress,
    port: options.securePort,
    registry: manager.registry,
    logger,
    livez: [
      { name: 'controllers', check: () => manager.notLiveReason() },
      {
        name: 'shutdown',
        check: () => {
          if (stoppingSince === undefined || Date.now() - stoppingSince < SHUTDOWN_STUCK_MS) return undefined;
          return `shutting down for ${((Date.now() - stoppingSince) / 1000).toFixed(1)} s; pending: ${manager.pending().join(', ') || 'nothing named'}`;
        },
      },
    ],
    readyz: [{ name: 'connected', check: () => manager.notReadyReason() }],
  });
  if (health) {
    logger.info({ url: health.url, selfSignedCertificate: serving.selfSigned, alwaysAllowPaths: options.serving.alwaysAllowPaths },
      serving.tls ? 'serving /metrics (TokenReview + SubjectAccessReview), /livez, /readyz, /healthz over HTTPS' : 'serving /metrics, /livez, /readyz, /healthz over plain HTTP (--insecure-plain-http): no authentication');
  }
  // Started before the caches fill: the first LIST is where V8 alone would let the heap balloon.
  const heapBudget = options.optimizeForMemory ? startHeapBudget(manager.registry, logger) : undefined;
  if (heapBudget) {
    manager.beforeLargeAllocation = () => heapBudget.settle(SETTLE_MARGIN_BYTES);
    // After each LIST page: a scavenge (the page is garbage, see HeapBudget.listPage), and the
    // budget's check, since a page parsed on a fast machine comes sooner than its timer can fire.
    manager.afterListPage = () => heapBudget.listPage();
    manager.afterLargeAllocation = () => heapBudget.settle(SETTLE_MARGIN_BYTES);
    manager.afterCacheFilled = () => {
      // The last pages' garbage goes before node IPAM's restore builds the ledger on top of it.
      heapBudget.settle(SETTLE_MARGIN_BYTES);
      if (heapBudget.steady()) logger.info({ growingPercent: STEADY_GROWING_PERCENT, budgetMiB: STEADY_HEAP_BUDGET_BYTES / 2 ** 20 }, `heap budget: caches filled; V8 now starts its own collections at ${STEADY_GROWING_PERCENT}% growth, the budget stays the backstop`);
    };
  }
  const abort = new AbortController();
  const shutDown = (cause: string, fields: object): void => {
    if (abort.signal.aborted) return;
    logger.info({ ...fields, gracePeriodMs: options.shutdownGracePeriodMs }, 'shutting down');
    stopWithin(options.shutdownGracePeriodMs, 0, `${cause}: --shutdown-grace-period`);
    abort.abort();
  };
  const onSignal = (sig: NodeJS.Signals): void => shutDown(sig, { signal: sig });
  if (signals) {
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  const run = manager.run(abort.signal).then(
    (end) => {
      if (end === 'lost') logger.error('leader election lost: exiting');
      return end === 'lost' ? 1 : 0;
    },
    (err: unknown) => {
      logger.error({ err }, 'controller manager failed');
      return 1;
    },
  );
  const done = Promise.race([run, forced]).finally(async () => {
    clearTimeout(deadline);
    heapBudget?.stop();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await health?.close();
  });
  return { manager, health, done, stop: () => shutDown('stop()', {}) };
}
