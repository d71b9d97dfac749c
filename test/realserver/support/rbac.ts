// Least privilege on kube-apiserver, the pieces both RBAC files of the tier share: what deploy/'s
// RBAC grants the ServiceAccount (read from the server: the roles as applied, and the bootstrap
// ClusterRole system:auth-delegator as kube-apiserver itself defines it), a controller run with
// every controller and the /metrics scraper of deploy/components/monitoring, and what kube-apiserver
// answered that run (its audit log, attributed by time: one controller runs at a time).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { parseAllDocuments, stringify as toYaml } from 'yaml';
import { isNotFound } from '../../../src/kube/errors.js';
import { LEASES } from '../../../src/kube/types.js';
import type { NodeAddress } from '../../../src/model/node-address.js';
import { repoRoot } from '../../kit/cli.js';
import type { StaticNodeEntry } from '../../kit/double.js';
import { freePort, get, type GetResult } from '../../kit/net.js';
import type { CliProcess } from '../../kit/processes.js';
import { auditGrantKey, LIFECYCLE_RUN_ARGS, SA_NAME, SA_NAMESPACE, SA_USER, type AuditEvent, type RealServer } from '../../kit/realserver.js';
import { E2ECluster } from '../../e2e/support/cluster.js';

export const RBAC_FILES = ['deploy/base/rbac.yaml', 'deploy/node-lifecycle/rbac.yaml'];
const MONITORING_RBAC = 'deploy/components/monitoring/rbac-prometheus.yaml';

/**
 * MultiCIDRRangeAllocator with flags one ClusterCIDR can express (equal host bits: /24 and /120),
 * so node IPAM mirrors them as a created-from-flags ClusterCIDR: every ClusterCIDR verb is asked for.
 */
export const MULTI_ARGS = ['--cidr-allocator-type=MultiCIDRRangeAllocator', '--cluster-cidr=10.244.0.0/16,fd00:10:244::/112', '--node-cidr-mask-size-ipv4=24', '--node-cidr-mask-size-ipv6=120'];

export const I = (address: string): NodeAddress => ({ type: 'InternalIP', address });

interface RuleDoc {
  apiGroups?: string[];
  resources?: string[];
  nonResourceURLs?: string[];
  resourceNames?: string[];
  verbs: string[];
}
interface RbacDoc {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: RuleDoc[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

function docsOf(file: string): RbacDoc[] {
  return parseAllDocuments(readFileSync(path.join(repoRoot, file), 'utf8')).map((d) => d.toJS() as RbacDoc);
}

/** One rule of a role in deploy/, or a binding of the ServiceAccount to a role deploy/ does not define. */
export interface DeployGrant {
  file: string;
  /** `ClusterRole/<name> <resources> [verbs]`, or `ClusterRoleBinding/<name> -> ClusterRole/<role>`. */
  key: string;
  kind: 'rule' | 'binding';
  role: { kind: string; name: string };
  index: number;
}

const ruleKey = (role: RbacDoc, r: RuleDoc): string =>
  `${role.kind}/${role.metadata.name} ${(r.resources ?? r.nonResourceURLs ?? []).join(',')}${r.resourceNames ? `(${r.resourceNames.join(',')})` : ''} [${r.verbs.join(' ')}]`;

/** Every rule of every role in RBAC_FILES, and every binding of the ServiceAccount to a role they do not define. */
export function deployGrants(files = RBAC_FILES): DeployGrant[] {
  const out: DeployGrant[] = [];
  for (const file of files) {
    const docs = docsOf(file);
    for (const d of docs) {
      if (d.kind === 'ClusterRole' || d.kind === 'Role') (d.rules ?? []).forEach((r, index) => out.push({ file, key: ruleKey(d, r), kind: 'rule', role: { kind: d.kind, name: d.metadata.name }, index }));
      if ((d.kind === 'ClusterRoleBinding' || d.kind === 'RoleBinding') && d.roleRef && !docs.some((r) => r.kind === d.roleRef!.kind && r.metadata.name === d.roleRef!.name)) {
        out.push({ file, key: `${d.kind}/${d.metadata.name} -> ${d.roleRef.kind}/${d.roleRef.name}`, kind: 'binding', role: { kind: d.kind, name: d.metadata.name }, index: -1 });
      }
    }
  }
  return out;
}

/** The file's YAML with one grant taken away: the rule dropped from its role, or the binding left out. */
export function withoutGrant(g: DeployGrant): string {
  const docs = docsOf(g.file)
    .filter((d) => !(g.kind === 'binding' && d.kind === g.role.kind && d.metadata.name === g.role.name))
    .map((d) => (g.kind === 'rule' && d.kind === g.role.kind && d.metadata.name === g.role.name ? { ...d, rules: (d.rules ?? []).filter((_r, i) => i !== g.index) } : d));
  return docs.map((d) => toYaml(d)).join('---\n');
}

/**
 * Every (verb, resource) the ServiceAccount's bindings grant, as kube-apiserver holds them: the
 * bindings and roles read back from the server (deploy/'s as applied, system:auth-delegator as the
 * server bootstraps it). Keys as auditGrantKey; a namespaced Role's grants carry ` in <ns>`.
 */
export async function grantedOnServer(s: RealServer): Promise<string[]> {
  const json = async <T>(...args: string[]): Promise<T> => JSON.parse(await s.kubectl(...args, '-o', 'json')) as T;
  const bindings = [
    ...(await json<{ items: RbacDoc[] }>('get', 'clusterrolebindings')).items,
    ...(await json<{ items: RbacDoc[] }>('get', 'rolebindings', '-A')).items,
  ].filter((b) => (b.subjects ?? []).some((x) => x.kind === 'ServiceAccount' && x.name === SA_NAME && x.namespace === SA_NAMESPACE));
  const keys: string[] = [];
  for (const b of bindings) {
    const ns = b.kind === 'RoleBinding' ? b.metadata.namespace : undefined;
    const role = await json<RbacDoc>('get', b.roleRef!.kind.toLowerCase(), b.roleRef!.name, ...(b.roleRef!.kind === 'Role' ? ['-n', ns!] : []));
    for (const r of role.rules ?? []) {
      for (const verb of r.verbs) {
        for (const group of r.apiGroups ?? []) {
          for (const res of r.resources ?? []) keys.push(`${verb} ${res}${group ? `.${group}` : ''}${ns ? ` in ${ns}` : ''}`);
        }
        for (const url of r.nonResourceURLs ?? []) keys.push(`${verb} ${url}`);
      }
    }
  }
  return [...new Set(keys)].sort();
}

/** auditGrantKey plus ` in <ns>` for a namespaced request: comparable with grantedOnServer. */
export function usedKey(e: AuditEvent): string {
  return `${auditGrantKey(e)}${e.objectRef?.namespace ? ` in ${e.objectRef.namespace}` : ''}`;
}

/** Whether RBAC allowed the request (the authorizer's decision, whatever the answer was after it). */
export const allowed = (e: AuditEvent): boolean => e.annotations?.['authorization.k8s.io/decision'] === 'allow';

/** The scraper of deploy/components/monitoring (monitoring/prometheus-k8s), as prometheus-operator would have created it. */
export async function setUpScraper(s: RealServer): Promise<string> {
  await s.kubectl('create', 'namespace', 'monitoring');
  await s.kubectl('create', 'serviceaccount', 'prometheus-k8s', '-n', 'monitoring');
  await s.apply(MONITORING_RBAC);
  return (await s.kubectl('create', 'token', 'prometheus-k8s', '-n', 'monitoring', '--duration=3h')).trim();
}

/** One controller run against the server, and what kube-apiserver answered it. */
export class ControllerRun {
  readonly ccm: CliProcess;
  readonly cluster: E2ECluster;
  readonly prefix: string;
  readonly url: string;
  readonly from: number;
  #to: number | undefined;
  readonly #s: RealServer;
  readonly #cloud: Record<string, StaticNodeEntry & { shutdown?: boolean }> = {};

  private constructor(s: RealServer, prefix: string, start: (run: ControllerRun) => CliProcess, url: string, cloud: Record<string, StaticNodeEntry & { shutdown?: boolean }>) {
    this.#s = s;
    this.prefix = prefix;
    this.url = url;
    this.cluster = new E2ECluster(s.adminKubeConfig(), prefix, { kubeletKubeConfig: (n) => s.nodeKubeConfig(n) });
    this.writeCloud(cloud);
    this.from = Date.now();
    this.ccm = start(this);
  }

  /**
   * `run` with every controller (cloud-node, node-ipam in MultiCIDRRangeAllocator mode,
   * cloud-node-lifecycle), leader election on deploy/'s Lease (deleted first: each run creates it),
   * /metrics on HTTPS with delegated authentication, as deploy/'s ServiceAccount.
   */
  static async start(s: RealServer, prefix: string, cloud: Record<string, StaticNodeEntry & { shutdown?: boolean }>, extraArgs: string[] = []): Promise<ControllerRun> {
    try {
      await s.admin().delete(LEASES, 'node-address-ccm', { namespace: SA_NAMESPACE });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const kubeconfig = await s.serviceAccountKubeconfig();
    const port = await freePort();
    const args = [...LIFECYCLE_RUN_ARGS, ...MULTI_ARGS, `--secure-port=${port}`, '--bind-address=127.0.0.1', ...extraArgs];
    return new ControllerRun(s, prefix, () => s.startRun(kubeconfig, args), `https://127.0.0.1:${port}`, cloud);
  }

  name(id: string): string {
    return `${this.prefix}-${id}`;
  }

  /** The static cloud-config, node ids without the prefix. */
  writeCloud(cloud: Record<string, StaticNodeEntry & { shutdown?: boolean }>): void {
    for (const k of Object.keys(this.#cloud)) delete this.#cloud[k];
    for (const [id, entry] of Object.entries(cloud)) this.#cloud[this.name(id)] = entry;
    this.#s.writeCloudConfig(this.#cloud);
  }

  /** Registers node `id` as its kubelet would (its own identity), with the cloud's addresses on its host. */
  async register(id: string, nodeIP?: string): Promise<string> {
    const name = this.name(id);
    const entry = this.#cloud[name];
    await this.cluster.registerFakeNode({ name, cloudProviderExternal: true, ...(nodeIP ? { nodeIP } : {}), hostIPs: [...(entry?.addresses ?? []).map((a) => a.address), ...(nodeIP && !(entry?.addresses ?? []).some((a) => a.address === nodeIP) ? [nodeIP] : [])] });
    return name;
  }

  scrape(token: string): Promise<GetResult> {
    return get(`${this.url}/metrics`, { token });
  }

  /** The ServiceAccount's requests of this run (so far, or up to stop()). */
  audit(): AuditEvent[] {
    const to = this.#to ?? Number.POSITIVE_INFINITY;
    return this.#s.audit().filter((e) => e.user.username === SA_USER && Date.parse(e.requestReceivedTimestamp) >= this.from && Date.parse(e.requestReceivedTimestamp) <= to);
  }

  /** This run's requests RBAC refused. */
  forbidden(): AuditEvent[] {
    return this.audit().filter((e) => e.annotations?.['authorization.k8s.io/decision'] === 'forbid');
  }

  log(): string {
    return `controller manager output (tail):\n${this.ccm.tail(40)}`;
  }

  /** SIGTERM (the Lease released), then the run's nodes deleted; fails if a deletion failed. */
  async stop(): Promise<void> {
    await this.ccm.stop();
    this.#to = Date.now();
    expect(await this.cluster.cleanup()).toEqual([]);
  }
}

export const randomSuffix = (): string => randomBytes(3).toString('hex');
