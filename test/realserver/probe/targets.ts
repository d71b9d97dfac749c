// The two targets of the probe, set up alike: a namespace `probe`, a ServiceAccount `probe/nobody`
// bound to nothing (with a token), an unknown token, the ClusterCIDR CRD of deploy/, and a way to
// compact. Setup is not compared; only the probe's steps are.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { ApiServerDouble } from '../../../src/double/index.js';
import { repoRoot } from '../../kit/cli.js';
import type { ControlPlane } from '../../kit/controlplane.js';
import { startDouble } from '../../kit/double.js';
import { eventually } from '../../kit/wait.js';
import { send, type Credentials, type Endpoint } from './http.js';
import type { ProbeTarget } from './runner.js';
import { PROBE_NAMESPACE } from './steps.js';

const NOBODY = 'nobody';
const BOGUS_TOKEN = 'probe-token-no-server-knows';

async function must(endpoint: Endpoint, creds: Credentials, method: string, p: string, body?: unknown): Promise<unknown> {
  const a = await send(endpoint, creds, { method, path: p, headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (a.code >= 300) throw new Error(`probe setup: ${method} ${p} answered ${a.code}: ${a.text.slice(0, 600)}`);
  return JSON.parse(a.text);
}

/** The real kube-apiserver of a started control plane, set up for the probe. */
export async function realTarget(cp: ControlPlane): Promise<ProbeTarget> {
  const endpoint: Endpoint = { url: cp.server, ca: readFileSync(cp.caFile, 'utf8') };
  const admin: Credentials = { cert: readFileSync(path.join(cp.dir, 'pki/admin.crt'), 'utf8'), key: readFileSync(path.join(cp.dir, 'pki/admin.key'), 'utf8') };
  await must(endpoint, admin, 'POST', '/api/v1/namespaces', { metadata: { name: PROBE_NAMESPACE } });
  // Pods need their namespace's default ServiceAccount (kube-controller-manager makes it in a cluster).
  for (const sa of ['default', NOBODY]) await must(endpoint, admin, 'POST', `/api/v1/namespaces/${PROBE_NAMESPACE}/serviceaccounts`, { metadata: { name: sa } });
  const tr = (await must(endpoint, admin, 'POST', `/api/v1/namespaces/${PROBE_NAMESPACE}/serviceaccounts/${NOBODY}/token`, { spec: { expirationSeconds: 3600 } })) as { status: { token: string } };
  const crd = parseYaml(readFileSync(path.join(repoRoot, 'deploy/base/crd-clustercidrs.yaml'), 'utf8')) as unknown;
  await must(endpoint, admin, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  await eventually(async () => {
    const a = await send(endpoint, admin, { method: 'GET', path: '/apis/networking.x-k8s.io/v1/clustercidrs' });
    if (a.code !== 200) throw new Error(`ClusterCIDRs not served yet: ${a.code}`);
  }, { timeoutMs: 30_000, intervalMs: 100 });
  return {
    name: 'the real kube-apiserver',
    endpoint,
    users: { admin, nobody: { token: tr.status.token }, bogus: { token: BOGUS_TOKEN } },
    compact: () => compactEtcd(cp.etcd),
  };
}

/** Compacts the control plane's etcd to its current revision (etcd's JSON gateway). */
async function compactEtcd(etcd: string): Promise<void> {
  const post = async (p: string, body: object): Promise<Record<string, unknown>> => {
    const res = await fetch(etcd + p, { method: 'POST', body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`etcd ${p}: ${res.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const range = await post('/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 });
  const revision = (range.header as { revision: string }).revision;
  await post('/v3/kv/compaction', { revision, physical: true });
}

export interface DoubleProbeTarget extends ProbeTarget {
  double: ApiServerDouble;
}

/** A fresh double, set up for the probe: deploy/'s RBAC enforced, the ServiceAccount known by token. */
export async function doubleTarget(): Promise<DoubleProbeTarget> {
  const nobodyToken = 'probe-nobody-token';
  // Bookmarks about as often as kube-apiserver's (about once a minute), so a short watch sees as many.
  const double = await startDouble({
    rbac: path.join(repoRoot, 'deploy/base'),
    users: [{ name: `system:serviceaccount:${PROBE_NAMESPACE}:${NOBODY}`, token: nobodyToken }],
    bookmarkIntervalMs: 60_000,
  });
  const endpoint: Endpoint = { url: double.url };
  const admin: Credentials = { token: double.adminToken };
  await must(endpoint, admin, 'POST', '/api/v1/namespaces', { metadata: { name: PROBE_NAMESPACE } });
  return {
    name: 'the API server double',
    double,
    endpoint,
    users: { admin, nobody: { token: nobodyToken }, bogus: { token: BOGUS_TOKEN } },
    compact: () => Promise.resolve(double.compactHistory()),
  };
}
