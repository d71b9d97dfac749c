// The `run` process: the controller manager and its health server, started by `run`'s action.
// Kept apart from run.ts so that `run --help` and flag errors load no Kubernetes client.
import type { Logger } from '../../log.js';
import { HealthServer } from '../../kube/health.js';
import { ControllerManager, type ManagerDeps } from '../../manager/manager.js';
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
    livez: [{ name: 'controllers', check: () => manager.notLiveReason() }],
    readyz: [{ name: 'connected', check: () => manager.notReadyReason() }],
  });
  if (health) {
    logger.info({ url: health.url, selfSignedCertificate: serving.selfSigned, alwaysAllowPaths: options.serving.alwaysAllowPaths },
      serving.tls ? 'serving /metrics (TokenReview + SubjectAccessReview), /livez, /readyz, /healthz over HTTPS' : 'serving /metrics, /livez, /readyz, /healthz over plain HTTP (--insecure-plain-http): no authentication');
  }
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
