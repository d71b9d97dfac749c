// The cluster the e2e suite runs against, chosen here (useE2ETarget):
//
//   default                      the API server double, started by the suite from the test kit
//                                (test/kit/double.ts), with the controller manager run from the
//                                built binary and nodes registered by the kubelet simulator;
//   E2E_REAL_CLUSTER=1           the cluster of $KUBECONFIG's current context, which must be listed
//                                in E2E_ALLOWED_CONTEXTS (comma separated). deploy/kind/e2e.sh
//                                sets both and runs the controllers itself;
//   setup.server (the tier of    upstream's kube-apiserver (test/kit/realserver.ts), shared by the
//   test/realserver/)            test file: the built controller manager runs as deploy/'s
//                                ServiceAccount, the simulated kubelets as their nodes.
//
// Against a real cluster the suite only reads what it did not create, gives everything it
// creates a random prefix and the run label, taints fake nodes NoSchedule, and deletes only what
// it recorded creating.
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect } from 'vitest';
import { startDoubleTarget, type DoubleTarget, type StaticNodeEntry } from '../../kit/double.js';
import type { CliProcess } from '../../kit/processes.js';
import type { RealServerHandle } from '../../kit/realserver.js';
import { E2ECluster } from './cluster.js';

export { FAKE_NODE_TAINT_KEY, RUN_LABEL } from './cluster.js';

/** double: the API server double; real: an allow-listed cluster; controlplane: the tier's kube-apiserver. */
export type TargetKind = 'double' | 'real' | 'controlplane';

export class TargetRefusedError extends Error {
  override name = 'TargetRefusedError';
}

export function targetKind(env: NodeJS.ProcessEnv = process.env): TargetKind {
  const v = env.E2E_REAL_CLUSTER;
  if (v === undefined || v === '' || v === '0' || v === 'false') return 'double';
  if (v === '1' || v === 'true') return 'real';
  throw new TargetRefusedError(`E2E_REAL_CLUSTER must be 1/true or 0/false/unset, got ${JSON.stringify(v)}`);
}

/** The allow-listed contexts; empty entries are ignored. */
export function allowedContexts(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.E2E_ALLOWED_CONTEXTS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * Refuses (throws TargetRefusedError) unless `current` is exactly one of the allowed contexts.
 * An empty allow-list refuses everything: there is no default cluster the suite may touch.
 */
export function checkAllowedContext(current: string | undefined, allowed: readonly string[]): string {
  if (allowed.length === 0) {
    throw new TargetRefusedError('E2E_REAL_CLUSTER=1 but E2E_ALLOWED_CONTEXTS is empty: name the kubeconfig context(s) this suite may modify');
  }
  if (!current) throw new TargetRefusedError('the kubeconfig has no current-context; refusing to guess a cluster');
  if (!allowed.includes(current)) {
    throw new TargetRefusedError(`kubeconfig current-context ${JSON.stringify(current)} is not in E2E_ALLOWED_CONTEXTS (${allowed.map((c) => JSON.stringify(c)).join(', ')}); refusing to run against it`);
  }
  return current;
}

/** Loads $KUBECONFIG (or ~/.kube/config) and checks its current context against the allow-list. */
export function loadRealClusterConfig(env: NodeJS.ProcessEnv = process.env): { kubeConfig: KubeConfig; context: string } {
  const kc = new KubeConfig();
  if (env.KUBECONFIG) kc.loadFromFile(env.KUBECONFIG.split(':')[0] as string);
  else kc.loadFromDefault();
  const context = checkAllowedContext(kc.getCurrentContext(), allowedContexts(env));
  return { kubeConfig: kc, context };
}

/** A DNS-label-safe random prefix for this run: `e2e-` and 8 hex digits. */
export function runPrefix(): string {
  return `e2e-${randomBytes(4).toString('hex')}`;
}

export interface E2ETargetSetup {
  /** Which cluster (default: targetKind(), from the environment). */
  kind?: TargetKind;
  /** The run prefix of every name the suite creates (default: runPrefix()). */
  prefix?: string;
  /** Double and control plane: the static cloud-config entries, by node name. */
  cloud?: Record<string, StaticNodeEntry>;
  /** Double and control plane: `run` flags after the defaults (they override them). */
  runArgs?: string[];
  /** The real control plane of the test file (kind controlplane): the suite runs `run` against it. */
  server?: RealServerHandle;
  /** false: start nothing (the suite's tests are skipped). */
  enabled?: boolean;
}

/** What a describe block runs against, once its beforeAll has run. */
export interface E2ETarget {
  readonly kind: TargetKind;
  readonly prefix: string;
  /** The suite's client, and the ledger of what it created (deleted after the suite). */
  readonly cluster: E2ECluster;
  /** The double (double target only). */
  readonly double: DoubleTarget | undefined;
  /** The controller manager the suite started (double and control plane: throws on a real cluster). */
  readonly ccm: CliProcess;
  /** `<prefix>-<id>`. */
  name(id: string): string;
  /** The controller manager's output tail, for failure messages ('' when the suite runs none). */
  log(): string;
}

/**
 * Registers the describe block's beforeAll and afterAll: on the double, starts it with the cloud
 * entries and `run`; on a real cluster, loads the allow-listed kubeconfig (or refuses). Afterwards
 * deletes what the suite created, stops what it started, and fails if a deletion failed.
 */
export function useE2ETarget(setup: E2ETargetSetup = {}): E2ETarget {
  const kind = setup.server ? 'controlplane' : (setup.kind ?? targetKind());
  const prefix = setup.prefix ?? runPrefix();
  let cluster: E2ECluster | undefined;
  let double: DoubleTarget | undefined;
  let ccm: CliProcess | undefined;
  beforeAll(async () => {
    if (setup.enabled === false) return;
    if (kind === 'real') {
      cluster = new E2ECluster(loadRealClusterConfig().kubeConfig, prefix);
      return;
    }
    if (setup.server) {
      const server = setup.server.get();
      cluster = new E2ECluster(server.adminKubeConfig(), prefix, { kubeletKubeConfig: (node) => server.nodeKubeConfig(node) });
      server.writeCloudConfig(setup.cloud ?? {});
      ccm = server.startRun(await server.serviceAccountKubeconfig(), setup.runArgs ?? []);
      return;
    }
    double = await startDoubleTarget();
    cluster = new E2ECluster(double.kubeConfig(), prefix);
    double.writeCloudConfig(setup.cloud ?? {});
    ccm = double.startRun(setup.runArgs ?? []);
  });
  afterAll(async () => {
    const failures = cluster ? await cluster.cleanup() : [];
    await double?.close();
    // On the control plane the file's next suite runs its own controller: this one stops here.
    if (setup.server) await ccm?.stop();
    expect(failures).toEqual([]);
  });
  return {
    kind,
    prefix,
    get cluster() {
      if (!cluster) throw new Error('useE2ETarget: the cluster is there once beforeAll has run');
      return cluster;
    },
    get double() {
      return double;
    },
    get ccm() {
      if (!ccm) throw new Error(kind === 'real' ? 'useE2ETarget: on a real cluster the suite runs no controller manager' : 'useE2ETarget: the controller manager is there once beforeAll has run');
      return ccm;
    },
    name: (id) => `${prefix}-${id}`,
    log: () => (ccm ? `controller manager output (tail):\n${ccm.tail(60)}` : ''),
  };
}

/**
 * Where a suite shared by both tiers runs: the API server double (test/e2e/) or the test file's
 * real control plane (test/realserver/). The suites in test/e2e/suites/ take one.
 */
export type SuiteTarget = { kind: 'double' } | { kind: 'controlplane'; server: RealServerHandle };

/** What useE2ETarget needs to run a shared suite on `on`. */
export function suiteTargetSetup(on: SuiteTarget): Pick<E2ETargetSetup, 'kind' | 'server'> {
  return on.kind === 'controlplane' ? { server: on.server } : { kind: 'double' };
}

/** How a suite's title names its server. */
export function suiteServerName(on: SuiteTarget): string {
  return on.kind === 'controlplane' ? 'kube-apiserver' : 'the API server double';
}
