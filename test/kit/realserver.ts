// The real-server tier's cluster: upstream's kube-apiserver and etcd (test/kit/controlplane.ts)
// set up as an operator sets up a cluster for node-address-ccm, and what runs against it.
//
//   - deploy/'s own manifests applied with kubectl (the ClusterCIDR CRD, the ServiceAccount, its
//     RBAC; deploy/node-lifecycle's on request), so the controller's only authorisation is
//     deploy/'s RBAC;
//   - the controller (`run`, the built CLI) authenticates as that ServiceAccount with a token from
//     the TokenRequest API (`kubectl create token`), as a pod's projected token would;
//   - simulated kubelets authenticate as their nodes (client certificates CN=system:node:<name>,
//     O=system:nodes signed by the control plane's CA), so the Node authorizer and NodeRestriction
//     admission judge them as they judge kubelets;
//   - the test's own reads and writes (and what an installer or kube-controller-manager would do)
//     go as the admin (system:masters);
//   - every request of a ServiceAccount or a node is in the audit log (Metadata level), which
//     `audit()` reads back: the tier fails on any request of the controller the server refused.
//
// useRealServer() starts one per describe block (beforeAll), ~3 s and ~300 MB: one per test file.
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { repoRoot } from './cli.js';
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './controlplane.js';
import { DOUBLE_SERVICE_CIDRS, defaultRunArgs, type StaticNodeEntry } from './double.js';
import { Processes, type CliProcess, type StartOptions } from './processes.js';
import { issueClientCertificate } from './x509.js';
import { kubectl as runKubectl, type KubectlResult } from '../kubectl/kubectl.js';

export const SA_NAMESPACE = 'kube-system';
export const SA_NAME = 'node-address-ccm';
export const SA_USER = `system:serviceaccount:${SA_NAMESPACE}:${SA_NAME}`;
/** deploy/base without the Deployment and the PodDisruptionBudget: the controller runs here as a process. */
export const DEPLOY_BASE = ['deploy/base/crd-clustercidrs.yaml', 'deploy/base/serviceaccount.yaml', 'deploy/base/rbac.yaml'];
export const DEPLOY_NODE_LIFECYCLE = 'deploy/node-lifecycle/rbac.yaml';
/** The Service range the control plane serves (test/controlplane's default), also the run's flag. */
export const REAL_SERVICE_CIDRS = DOUBLE_SERVICE_CIDRS;

/**
 * Requests of ServiceAccounts and nodes at Metadata level (who, what, the answer's code), their
 * DELETEs with the request body (the preconditions sent), nothing of anyone else: the API
 * server's own loopback client and the test's admin would bury them.
 */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Request
    verbs: ["delete"]
    userGroups: ["system:serviceaccounts", "system:nodes"]
  - level: Metadata
    userGroups: ["system:serviceaccounts", "system:nodes"]
  - level: None
`;

/** One audit event (Metadata level, stage ResponseComplete or Panic), the fields the tier reads. */
export interface AuditEvent {
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string; groups?: string[] };
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string; apiVersion?: string };
  responseStatus?: { code?: number; reason?: string; message?: string; status?: string };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
  /** DELETEs only (AUDIT_POLICY): the DeleteOptions sent. */
  requestObject?: { preconditions?: { uid?: string; resourceVersion?: string } };
}

/** `<code> <verb> <group>/<resource>[/<subresource>] <namespace>/<name>`: one line per request, for messages. */
export function describeAuditEvent(e: AuditEvent): string {
  const r = e.objectRef;
  const what = r ? `${r.apiGroup ? `${r.apiGroup}/` : ''}${r.resource ?? ''}${r.subresource ? `/${r.subresource}` : ''} ${r.namespace ? `${r.namespace}/` : ''}${r.name ?? ''}`.trim() : e.requestURI;
  return `${e.responseStatus?.code ?? '?'} ${e.verb} ${what} (${e.user.username})${e.responseStatus?.message ? `: ${e.responseStatus.message}` : ''}`;
}

/** `verb resource[/subresource][.group]`, the key test/rbac's grants use too. */
export function auditGrantKey(e: AuditEvent): string {
  const r = e.objectRef ?? {};
  return `${e.verb} ${r.resource ?? e.requestURI}${r.subresource ? `/${r.subresource}` : ''}${r.apiGroup ? `.${r.apiGroup}` : ''}`;
}

export interface RealServerOptions extends ControlPlaneOptions {
  /** deploy/ files applied before the tests (paths from the repository root); default DEPLOY_BASE. */
  manifests?: string[];
}

/**
 * Flags of every `run` here: startRun's (the double's tests), with deploy/'s leader election in
 * place of none: the Lease its Role names, in kube-system, with short timings.
 */
export function realServerRunArgs(kubeconfigPath: string, cloudConfigPath: string): string[] {
  return [
    ...defaultRunArgs(kubeconfigPath, cloudConfigPath).filter((a) => a !== '--leader-elect=false'),
    '--leader-elect=true',
    `--leader-elect-resource-namespace=${SA_NAMESPACE}`,
    '--leader-elect-resource-name=node-address-ccm',
    '--leader-elect-lease-duration=4s',
    '--leader-elect-renew-deadline=3s',
    '--leader-elect-retry-period=1s',
  ];
}

/** cloud-node-lifecycle on, with periods short enough that a vanished node is acted on within a second or two. */
export const LIFECYCLE_RUN_ARGS = ['--controllers=*,cloud-node-lifecycle', '--node-monitor-period=1s', '--node-startup-grace-period=0s'];

/**
 * A strategic merge patch of nodes/status setting the Ready condition: Unknown as
 * kube-controller-manager's node lifecycle controller sets it when a kubelet stops posting status,
 * True as the kubelet posts it.
 */
export function readyConditionPatch(status: 'True' | 'Unknown'): Record<string, unknown> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const [reason, message] = status === 'True' ? ['KubeletReady', 'kubelet is posting ready status'] : ['NodeStatusUnknown', 'Kubelet stopped posting node status.'];
  return { status: { conditions: [{ type: 'Ready', status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now }] } };
}

/** A running control plane set up with deploy/'s manifests, and what the tests run against it. */
export class RealServer {
  readonly cp: ControlPlane;
  /** The tier's own folder: kubeconfigs, the static cloud-config. */
  readonly dir: string;
  readonly #procs = new Processes();
  readonly #nodeConfigs = new Map<string, KubeConfig>();
  readonly #saKubeconfigs = new Map<string, string>();
  #admin: KubeClient | undefined;
  #cloudVersion = 0;
  #ca: { cert: string; key: string } | undefined;

  private constructor(cp: ControlPlane, dir: string) {
    this.cp = cp;
    this.dir = dir;
  }

  static async start(options: RealServerOptions = {}): Promise<RealServer> {
    const dir = mkdtempSync(path.join(tmpdir(), 'realserver-'));
    const policy = path.join(dir, 'audit-policy.yaml');
    writeFileSync(policy, AUDIT_POLICY);
    let cp: ControlPlane | undefined;
    try {
      cp = await startControlPlane({ ...options, auditPolicy: options.auditPolicy ?? policy });
      const server = new RealServer(cp, dir);
      await server.apply(...(options.manifests ?? DEPLOY_BASE));
      // The CRD is served once Established; the tests create ClusterCIDRs right away.
      await server.kubectl('wait', '--for=condition=Established', '--timeout=60s', 'crd/clustercidrs.networking.x-k8s.io');
      return server;
    } catch (err) {
      await cp?.stop();
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** kubectl as the admin; throws with stderr on a non-zero exit. */
  async kubectl(...args: string[]): Promise<string> {
    const r = await this.kubectlResult(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** kubectl as the admin (or with `kubeconfig`), whatever its exit code. */
  kubectlResult(args: string[], options: { stdin?: string; kubeconfig?: string } = {}): Promise<KubectlResult> {
    return runKubectl(options.kubeconfig ?? this.cp.kubeconfig, args, { timeoutMs: 60_000, ...(options.stdin !== undefined ? { stdin: options.stdin } : {}) });
  }

  /** `kubectl apply` of repository files (paths from the repository root), as the admin. */
  async apply(...files: string[]): Promise<string> {
    return this.kubectl('apply', ...files.flatMap((f) => ['-f', path.join(repoRoot, f)]));
  }

  /** `kubectl apply -f -` of YAML text, as the admin. */
  async applyText(yamlText: string): Promise<string> {
    const r = await this.kubectlResult(['apply', '-f', '-'], { stdin: yamlText });
    if (r.code !== 0) throw new Error(`kubectl apply -f - exited ${r.code}:\n${r.stderr}${r.stdout}\n--- input ---\n${yamlText}`);
    return r.stdout;
  }

  adminKubeConfig(): KubeConfig {
    return kubeConfigFromString(readFileSync(this.cp.kubeconfig, 'utf8'));
  }

  /** A client as the admin, for the tests' own reads and writes (closed with the server). */
  admin(): KubeClient {
    this.#admin ??= new KubeClient(this.adminKubeConfig(), { userAgent: 'realserver-admin', readTimeoutMs: 10_000, writeTimeoutMs: 10_000 });
    return this.#admin;
  }

  /**
   * Whether kube-apiserver's authorizer lets `user` (a ServiceAccount: its groups are added) do
   * this: a SubjectAccessReview, the question `kubectl auth can-i --as` asks.
   */
  async allows(user: string, attributes: { verb: string; resource: string; group?: string; subresource?: string; namespace?: string; name?: string }): Promise<boolean> {
    const sa = /^system:serviceaccount:([^:]+):/.exec(user);
    const groups = sa ? ['system:serviceaccounts', `system:serviceaccounts:${sa[1]}`, 'system:authenticated'] : ['system:authenticated'];
    const review = await this.admin().request<{ status?: { allowed?: boolean } }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups, resourceAttributes: { group: '', ...attributes } } },
    });
    return review.status?.allowed === true;
  }

  /**
   * A kubeconfig file for a ServiceAccount: a token from the TokenRequest API (`kubectl create
   * token`, 3 h: longer than any run here) and the control plane's CA; made once per account.
   */
  async serviceAccountKubeconfig(name = SA_NAME, namespace = SA_NAMESPACE): Promise<string> {
    const key = `${namespace}/${name}`;
    let file = this.#saKubeconfigs.get(key);
    if (!file) {
      file = await this.#writeServiceAccountKubeconfig(name, namespace);
      this.#saKubeconfigs.set(key, file);
    }
    return file;
  }

  async #writeServiceAccountKubeconfig(name: string, namespace: string): Promise<string> {
    const token = (await this.kubectl('create', 'token', name, '-n', namespace, '--duration=3h')).trim();
    const file = path.join(this.dir, `sa-${namespace}-${name}.kubeconfig`);
    writeFileSync(file, toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'controlplane', cluster: { server: this.cp.server, 'certificate-authority': this.cp.caFile } }],
      users: [{ name: `${namespace}-${name}`, user: { token } }],
      contexts: [{ name: 'sa', context: { cluster: 'controlplane', user: `${namespace}-${name}` } }],
      'current-context': 'sa',
    }), { mode: 0o600 });
    return file;
  }

  /** The kubelet's identity for node `name`: a client certificate CN=system:node:<name>, O=system:nodes. */
  nodeKubeConfig(name: string): KubeConfig {
    let kc = this.#nodeConfigs.get(name);
    if (!kc) {
      this.#ca ??= { cert: readFileSync(this.cp.caFile, 'utf8'), key: readFileSync(path.join(this.cp.dir, 'pki', 'ca.key'), 'utf8') };
      const { cert, key } = issueClientCertificate(this.#ca, `system:node:${name}`, ['system:nodes']);
      const b64 = (s: string): string => Buffer.from(s).toString('base64');
      kc = kubeConfigFromString(toYaml({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'controlplane', cluster: { server: this.cp.server, 'certificate-authority-data': b64(this.#ca.cert) } }],
        users: [{ name: `node-${name}`, user: { 'client-certificate-data': b64(cert), 'client-key-data': b64(key) } }],
        contexts: [{ name: 'kubelet', context: { cluster: 'controlplane', user: `node-${name}` } }],
        'current-context': 'kubelet',
      }));
      this.#nodeConfigs.set(name, kc);
    }
    return kc;
  }

  /** The static provider's cloud-config (empty until writeCloudConfig). */
  get cloudConfigPath(): string {
    const file = path.join(this.dir, 'cloud.yaml');
    if (this.#cloudVersion === 0) this.writeCloudConfig({});
    return file;
  }

  /** Rewrites the static cloud-config atomically (the provider hot-reloads it). */
  writeCloudConfig(nodes: Record<string, StaticNodeEntry & { shutdown?: boolean }>): void {
    const tmp = path.join(this.dir, `.cloud.yaml.${++this.#cloudVersion}`);
    writeFileSync(tmp, toYaml({ nodes }));
    renameSync(tmp, path.join(this.dir, 'cloud.yaml'));
  }

  /**
   * `node-address-ccm run` as the ServiceAccount (its kubeconfig from serviceAccountKubeconfig)
   * with realServerRunArgs; `args` come after them and override them.
   */
  startRun(kubeconfigPath: string, args: string[] = [], options: StartOptions = {}): CliProcess {
    return this.#procs.start(['run', ...realServerRunArgs(kubeconfigPath, this.cloudConfigPath), ...args], options);
  }

  /** Every audit event so far (ServiceAccounts and nodes only: see AUDIT_POLICY). */
  audit(): AuditEvent[] {
    const file = path.join(this.cp.dir, 'audit.log');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as AuditEvent)
      .filter((e) => e.stage === 'ResponseComplete' || e.stage === 'Panic');
  }

  /** Requests of `user` answered 401 or 403. */
  refused(user: string | ((username: string) => boolean)): AuditEvent[] {
    const match = typeof user === 'string' ? (u: string) => u === user : user;
    return this.audit().filter((e) => match(e.user.username) && (e.responseStatus?.code === 401 || e.responseStatus?.code === 403));
  }

  /** Stops the processes started here (SIGTERM, then SIGKILL after `graceMs`). */
  stopProcesses(graceMs = 5_000): Promise<void> {
    return this.#procs.cleanup(graceMs);
  }

  async close(): Promise<void> {
    await this.stopProcesses();
    this.#admin?.close();
    await this.cp.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A RealServer for the enclosing describe block: started in its beforeAll, closed in its afterAll. */
export interface RealServerHandle {
  /** The server (throws before the block's beforeAll ran). */
  get(): RealServer;
}

export function useRealServer(options: RealServerOptions = {}): RealServerHandle {
  let server: RealServer | undefined;
  beforeAll(async () => {
    server = await RealServer.start(options);
  }, 15 * 60_000);
  afterAll(async () => {
    await server?.close();
    server = undefined;
  }, 60_000);
  return {
    get(): RealServer {
      if (!server) throw new Error('useRealServer: the server is there once the describe block\'s beforeAll has run');
      return server;
    },
  };
}

/**
 * The file's last test: kube-apiserver refused (401/403) no request of the controller (deploy/'s
 * ServiceAccount) or of a simulated kubelet (its node's identity), read from the audit log, and
 * the controller did make requests.
 */
export function itRefusedNothing(server: RealServerHandle): void {
  it('kube-apiserver refused no request of the controller (deploy/\'s ServiceAccount and RBAC) or of a kubelet (its node\'s identity)', () => {
    const s = server.get();
    const refused = s.refused((u) => u.startsWith('system:serviceaccount:') || u.startsWith('system:node:'));
    expect(refused.map(describeAuditEvent)).toEqual([]);
    expect(s.audit().filter((e) => e.user.username === SA_USER).length, 'requests of the ServiceAccount in the audit log').toBeGreaterThan(0);
  });
}
