// The one way a test starts the API server double, and what it runs against it:
//
//   useDouble()          a fresh double for each test of a file (beforeEach/afterEach);
//   startDoubleTarget()  one the caller stops (beforeAll/afterAll suites: e2e, kubectl, RBAC);
//
// both a DoubleTarget: the double, its admin kubeconfig and a static cloud-config on disk (written
// when first asked for), what runs against it (a ControllerManager in this process: runManager;
// the `run` command in this process: startRunProcess; the built CLI as child processes: start,
// startRun) and cleanups, all stopped with it, whether the test passed or not. connect/createNode/storedNode are the reads and writes tests make on its store.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { NODES, type KubeObject } from '../../src/kube/types.js';
import { Watcher } from '../../src/kube/watcher.js';
import { nodeCacheFromWatcher, nodeWriterFromClient } from '../../src/manager/adapters.js';
import { startProcess, type RunningProcess } from '../../src/cli/commands/run-process.js';
import { silentLogger } from '../../src/log.js';
import { ControllerManager, type ManagerDeps, type ManagerExit } from '../../src/manager/manager.js';
import type { RunOptions } from '../../src/manager/options.js';
import type { NodeCache, NodeWriter } from '../../src/controllers/seams.js';
import type { NodeAddress } from '../../src/model/node-address.js';
import { hasUninitializedTaint, type NodeObject } from '../../src/model/node.js';
import { startApiServerDouble, type ApiServerDouble, type ApiServerDoubleOptions } from '../../src/double/server.js';
import { newNode, type MakeNodeOptions } from './nodes.js';
import { Processes, type CliProcess, type StartOptions } from './processes.js';
import { eventually } from './wait.js';

/** Starts a double with the tests' default: a bookmark every 200 ms, so resumed watches catch up fast. */
export function startDouble(options: ApiServerDoubleOptions = {}): Promise<ApiServerDouble> {
  return startApiServerDouble({ bookmarkIntervalMs: 200, ...options });
}

/** A static provider's cloud-config entry. */
export interface StaticNodeEntry {
  providerID?: string;
  instanceType?: string;
  zone?: string;
  region?: string;
  addresses: NodeAddress[];
  labels?: Record<string, string>;
}

/** Pod and service ranges of startRun (kind's defaults, dual-stack). */
export const DOUBLE_CLUSTER_CIDRS = ['10.244.0.0/16', 'fd00:10:244::/56'];
export const DOUBLE_SERVICE_CIDRS = ['10.96.0.0/16', 'fd00:10:96::/112'];

/** Flags of startRun: static provider, flags-mode dual-stack IPAM, fast refresh, no leader election, no health port. */
export function defaultRunArgs(kubeconfigPath: string, cloudConfigPath: string): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    '--cloud-provider=static',
    `--cloud-config=${cloudConfigPath}`,
    '--controllers=*',
    '--allocate-node-cidrs=true',
    `--cluster-cidr=${DOUBLE_CLUSTER_CIDRS.join(',')}`,
    '--node-cidr-mask-size-ipv4=24',
    '--node-cidr-mask-size-ipv6=64',
    `--service-cluster-ip-range=${DOUBLE_SERVICE_CIDRS.join(',')}`,
    '--leader-elect=false',
    '--secure-port=0',
    '--node-status-update-frequency=1s',
  ];
}

/** A controller manager run in this process against the double. */
export interface RunningManager {
  manager: ControllerManager;
  abort: AbortController;
  done: Promise<ManagerExit>;
}

/** An API server double and what runs against it; reusable: open, close, open again (useDouble does, per test). */
export class DoubleTarget {
  #api: ApiServerDouble | undefined;
  #dir: string | undefined;
  #cloudVersion = 0;
  #managers: RunningManager[] = [];
  #cleanups: Array<() => unknown> = [];
  readonly #procs = new Processes();

  /** The double (between open and close). */
  get api(): ApiServerDouble {
    if (!this.#api) throw new Error('DoubleTarget: the double is not running (useDouble runs it inside each test only)');
    return this.#api;
  }

  async open(options: ApiServerDoubleOptions = {}): Promise<this> {
    if (this.#api) throw new Error('DoubleTarget: already open');
    this.#api = await startDouble(options);
    if (this.#dir) writeFileSync(path.join(this.#dir, 'admin.kubeconfig'), this.#api.kubeconfig, { mode: 0o600 });
    return this;
  }

  /** The target's temporary folder (kubeconfigs, the cloud-config), removed by close(). */
  get dir(): string {
    if (!this.#dir) {
      this.#dir = mkdtempSync(path.join(tmpdir(), 'node-address-ccm-double-'));
      writeFileSync(path.join(this.#dir, 'admin.kubeconfig'), this.api.kubeconfig, { mode: 0o600 });
    }
    return this.#dir;
  }

  /** An admin kubeconfig file for the double. */
  get kubeconfigPath(): string {
    return path.join(this.dir, 'admin.kubeconfig');
  }

  /** The static provider's cloud-config file (no nodes until writeCloudConfig). */
  get cloudConfigPath(): string {
    const file = path.join(this.dir, 'cloud.yaml');
    if (this.#cloudVersion === 0) this.writeCloudConfig({});
    return file;
  }

  /** Admin KubeConfig for the test's own client. */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromString(this.api.kubeconfig);
    return kc;
  }

  /** Rewrites the static cloud-config atomically (the provider hot-reloads it). */
  writeCloudConfig(nodes: Record<string, StaticNodeEntry>): void {
    const tmp = path.join(this.dir, `.cloud.yaml.${++this.#cloudVersion}`);
    writeFileSync(tmp, toYaml({ nodes }));
    renameSync(tmp, path.join(this.dir, 'cloud.yaml'));
  }

  /** Writes a kubeconfig for `user` (a user given in the double's options) and returns its path. */
  writeKubeconfigFor(user: string): string {
    const file = path.join(this.dir, `${user.replace(/[^A-Za-z0-9_.-]/g, '_')}.kubeconfig`);
    writeFileSync(file, this.api.kubeconfigFor(user), { mode: 0o600 });
    return file;
  }

  /** Runs a controller manager in this process against the double (its kubeconfig unless deps gives one). */
  runManager(options: RunOptions, deps: ManagerDeps = {}): RunningManager {
    const manager = new ControllerManager(options, { kubeConfig: kubeConfigFromString(this.api.kubeconfig), ...deps });
    const abort = new AbortController();
    const r = { manager, abort, done: manager.run(abort.signal) };
    this.#managers.push(r);
    return r;
  }

  /**
   * The `run` command in this process (startProcess: health and metrics serving, the heap budget;
   * no signal handlers), stopped when the target closes. deps.kubeConfig: the admin's unless given.
   */
  async startRunProcess(options: RunOptions, deps: ManagerDeps = {}): Promise<RunningProcess> {
    const proc = await startProcess(options, silentLogger, { kubeConfig: kubeConfigFromString(this.api.kubeconfig), ...deps }, false);
    this.defer(async () => {
      proc.stop();
      await proc.done;
    });
    return proc;
  }

  /** The built CLI (or `options.script`) as a child process, stopped (SIGTERM, 5 s grace) by close(). */
  start(args: string[], options: StartOptions = {}): CliProcess {
    return this.#procs.start(args, options);
  }

  /**
   * `node-address-ccm run` against the double with the static provider and defaultRunArgs; `args`
   * come after the defaults and override them (commander: the last occurrence of a flag wins).
   */
  startRun(args: string[] = [], kubeconfigPath = this.kubeconfigPath): CliProcess {
    return this.start(['run', ...defaultRunArgs(kubeconfigPath, this.cloudConfigPath), ...args]);
  }

  /** connect() to the double, closed when the target closes (after what is deferred later: the controller using it). */
  connect(userAgent?: string): Connection {
    const conn = connect(this.api, userAgent);
    this.defer(conn.close);
    return conn;
  }

  /**
   * `run --cloud-provider static` (the built CLI, or `o.start.script`) until node n1, created with
   * the provided-node-ip annotation `o.nodeIP` and found in the cloud-config as `o.cloud`, is
   * initialised; then `o.whileRunning`, then SIGTERM. Resolves with the process once it exited:
   * the caller checks the exit code and output.
   */
  async runStaticUntilInitialised(o: { nodeIP: string; cloud: StaticNodeEntry; args?: string[]; start?: StartOptions; whileRunning?: (proc: CliProcess) => Promise<void> }): Promise<CliProcess> {
    this.writeCloudConfig({ n1: o.cloud });
    createNode(this.api, { name: 'n1', nodeIP: o.nodeIP });
    const proc = this.start(['run', `--kubeconfig=${this.kubeconfigPath}`, '--cloud-provider', 'static', '--cloud-config', this.cloudConfigPath, ...(o.args ?? [])], o.start);
    try {
      await eventually(() => isInitialised(this.api, 'n1'), { timeoutMs: 15_000, what: 'n1 initialised', describe: () => proc.tail() });
      await o.whileRunning?.(proc);
    } finally {
      proc.kill('SIGTERM');
    }
    await proc.exited;
    return proc;
  }

  /** Runs `cleanup` when the target closes, before the double stops; the last added runs first. */
  defer(cleanup: () => unknown): void {
    this.#cleanups.push(cleanup);
  }

  /** Stops what runs against the double and replaces it with one started with `options` (same folder). */
  async replaceApi(options: ApiServerDoubleOptions = {}): Promise<ApiServerDouble> {
    await this.#stopAll();
    await this.open(options);
    return this.api;
  }

  /** Stops the managers, cleanups and processes, then the double, and removes the folder. */
  async close(): Promise<void> {
    await this.#stopAll();
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
    this.#cloudVersion = 0;
  }

  async #stopAll(): Promise<void> {
    for (const r of this.#managers) r.abort.abort();
    await Promise.allSettled(this.#managers.map((r) => r.done));
    this.#managers = [];
    for (const c of this.#cleanups.splice(0).reverse()) await c();
    await this.#procs.cleanup(5_000);
    await this.#api?.stop();
    this.#api = undefined;
  }
}

/** A double for callers that stop it themselves (`await target.close()`, e.g. in afterAll). */
export function startDoubleTarget(options: ApiServerDoubleOptions = {}): Promise<DoubleTarget> {
  return new DoubleTarget().open(options);
}

/**
 * A fresh double for each test of the file or describe, closed after it. `open: false`: each test
 * that needs one opens it itself, with options of its own (`await cluster.open({ rbac })`).
 */
export function useDouble(options: ApiServerDoubleOptions = {}, { open = true }: { open?: boolean } = {}): DoubleTarget {
  const target = new DoubleTarget();
  if (open) {
    beforeEach(async () => {
      await target.open(options);
    });
  }
  afterEach(() => target.close());
  return target;
}

/** What one controller replica has: its own client, node watcher (not started), node cache and writer. */
export interface Connection {
  client: KubeClient;
  watcher: Watcher<NodeObject & KubeObject>;
  nodes: NodeCache;
  writer: NodeWriter;
  /** Stops the watcher and closes the client (once; later calls wait for the first). */
  close(): Promise<void>;
}

export function connect(api: ApiServerDouble, userAgent = 'node-address-ccm-test'): Connection {
  const client = new KubeClient(kubeConfigFromString(api.kubeconfig), { userAgent, writeTimeoutMs: 2000 });
  const watcher = new Watcher<NodeObject & KubeObject>({ client, resource: NODES, staleAfterMs: 5000, backoff: { initialMs: 20, maxMs: 200 } });
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => (closed ??= (async () => {
    await watcher.stop();
    client.close();
  })());
  return { client, watcher, nodes: nodeCacheFromWatcher(watcher), writer: nodeWriterFromClient(client), close };
}

/** Creates a node as the kubelet does (status included), without server-set fields. */
export function createNode(api: ApiServerDouble, o: MakeNodeOptions): NodeObject {
  return api.store.create('nodes', newNode(o)) as unknown as NodeObject;
}

export function storedNode(api: ApiServerDouble, name: string): NodeObject {
  return api.store.get('nodes', name) as unknown as NodeObject;
}

export function isInitialised(api: ApiServerDouble, name: string): boolean {
  return !hasUninitializedTaint(storedNode(api, name));
}
