// One API server double per test, and the controller-manager processes a test starts against it,
// all stopped after the test (whether it passed or not).
import { afterEach, beforeEach } from 'vitest';
import { kubeConfigFromString } from '../../src/kube/client.js';
import { ControllerManager, type ManagerDeps, type ManagerExit } from '../../src/manager/manager.js';
import type { RunOptions } from '../../src/manager/options.js';
import { startApiServerDouble, type ApiServerDouble, type ApiServerDoubleOptions } from '../../src/sim/apiserver/server.js';

export interface RunningManager {
  manager: ControllerManager;
  abort: AbortController;
  done: Promise<ManagerExit>;
}

export interface ManagerCluster {
  /** The double of the current test. */
  readonly api: ApiServerDouble;
  /** Runs a controller manager against the double (its kubeconfig unless deps gives one). */
  run(options: RunOptions, deps?: ManagerDeps): RunningManager;
  /** Replaces the test's double with one started with other options (e.g. fewer resources). */
  replaceApi(options: ApiServerDoubleOptions): Promise<ApiServerDouble>;
}

/** Registers the hooks; call once at the top of a test file. */
export function useManagerCluster(): ManagerCluster {
  let api: ApiServerDouble | undefined;
  let running: RunningManager[] = [];
  const start = (options: ApiServerDoubleOptions = {}) => startApiServerDouble({ bookmarkIntervalMs: 200, ...options });
  beforeEach(async () => {
    api = await start();
  });
  afterEach(async () => {
    for (const r of running) r.abort.abort();
    await Promise.allSettled(running.map((r) => r.done));
    running = [];
    await api?.stop();
    api = undefined;
  });
  const current = (): ApiServerDouble => {
    if (!api) throw new Error('useManagerCluster: the double runs only inside a test');
    return api;
  };
  return {
    get api() {
      return current();
    },
    run(options, deps = {}) {
      const manager = new ControllerManager(options, { kubeConfig: kubeConfigFromString(current().kubeconfig), ...deps });
      const abort = new AbortController();
      const r = { manager, abort, done: manager.run(abort.signal) };
      running.push(r);
      return r;
    },
    async replaceApi(options) {
      await current().stop();
      api = await start(options);
      return api;
    },
  };
}
