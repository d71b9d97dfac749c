// The `run` process's /metrics and health paths served like a Kubernetes component, against the
// API server double enforcing deploy/base/rbac.yaml: the process runs as the node-address-ccm
// ServiceAccount (bound to system:auth-delegator there) and asks the double to review each
// scraper's token (TokenReview) and access to the path (SubjectAccessReview).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { kubeConfigFromString } from '../../src/kube/client.js';
import { resolveRunOptions, type RawRunFlags } from '../../src/manager/options.js';
import type { RunningProcess } from '../../src/cli/commands/run-process.js';
import { parseRbacYaml } from '../../src/double/rbac.js';
import { selfSignedCertificate } from '../../src/serving/certificate.js';
import { UsageError } from '../../src/cli/exit-codes.js';
import { repoRoot } from '../kit/cli.js';
import { useDouble } from '../kit/double.js';
import { freePort, get } from '../kit/net.js';
import { eventually } from '../kit/wait.js';

const SA = 'system:serviceaccount:kube-system:node-address-ccm';
const SCRAPER = 'system:serviceaccount:monitoring:prometheus';
const OTHER = 'system:serviceaccount:default:nosy';
const TOKENS = { sa: 'sa-token', scraper: 'scraper-token', other: 'other-token' };

const METRICS_READER = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: metrics-reader}
rules:
  - nonResourceURLs: ["/metrics"]
    verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: metrics-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: metrics-reader}
subjects:
  - {kind: ServiceAccount, name: prometheus, namespace: monitoring}
`;

// Each test's double enforces an RBAC policy of its own: start() opens it.
const cluster = useDouble({}, { open: false });
let proc: RunningProcess | undefined;
let dir: string | undefined;

afterEach(async () => {
  proc = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The `run` process against a double enforcing `rbacText` (a test that starts twice gets a fresh double). */
async function start(rbacText: string, flags: RawRunFlags = {}): Promise<{ url: string; port: number }> {
  await cluster.replaceApi({
    rbac: parseRbacYaml(rbacText, 'test policy'),
    users: [{ name: SA, token: TOKENS.sa }, { name: SCRAPER, token: TOKENS.scraper }, { name: OTHER, token: TOKENS.other }],
  });
  const port = await freePort();
  const options = resolveRunOptions({ controllers: 'node-ipam', leaderElect: 'false', securePort: String(port), ...flags });
  proc = await cluster.startRunProcess(options, { kubeConfig: kubeConfigFromString(cluster.api.kubeconfigFor(SA)) });
  return { url: proc.health?.url ?? '', port };
}

const deployRbac = (): Promise<string> => readFile(path.join(repoRoot, 'deploy/base/rbac.yaml'), 'utf8');
const reviews = (resource: string): number => cluster.api.count({ user: SA, verb: 'create', resource });

describe('secure serving with the deploy/ RBAC', () => {
  it('answers /metrics 200 to an authorized token, 403 to another, 401 without or with a bad one; health paths need none', async () => {
    const { url } = await start(`${await deployRbac()}\n---\n${METRICS_READER}`);
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ok = await get(`${url}/metrics`, { token: TOKENS.scraper });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatch(/^# TYPE rest_client_requests_total counter$/m);
    const denied = await get(`${url}/metrics`, { token: TOKENS.other });
    expect(denied.status).toBe(403);
    expect(denied.body).toContain(`forbidden: User "${OTHER}" cannot get path "/metrics"`);
    expect((await get(`${url}/metrics`)).status).toBe(401);
    expect((await get(`${url}/metrics`, { token: 'not-a-token' })).status).toBe(401);
    for (const p of ['/healthz', '/livez']) expect([p, (await get(`${url}${p}`)).status]).toEqual([p, 200]);
    await eventually(() => proc?.manager.notReadyReason() === undefined, { timeoutMs: 10_000, what: 'the process connected' });
    expect((await get(`${url}/readyz`)).status).toBe(200);
    // Health paths are served without asking the API server.
    expect(cluster.api.count({ user: SA, verb: 'create', resource: 'tokenreviews' })).toBe(3);
  });

  it('caches reviews: repeated scrapes cost one TokenReview and one SubjectAccessReview', async () => {
    const { url } = await start(`${await deployRbac()}\n---\n${METRICS_READER}`);
    for (let i = 0; i < 5; i++) expect((await get(`${url}/metrics`, { token: TOKENS.scraper })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await get(`${url}/metrics`, { token: TOKENS.other })).status).toBe(403);
    expect(reviews('tokenreviews')).toBe(2);
    expect(reviews('subjectaccessreviews')).toBe(2);
    // The process's own rest_client metrics count those reviews.
    const body = (await get(`${url}/metrics`, { token: TOKENS.scraper })).body;
    expect(body).toMatch(/^rest_client_requests_total\{code="201",method="POST",host="127\.0\.0\.1:\d+"\} 4$/m);
    expect(body).toMatch(/^rest_client_request_duration_seconds_count\{verb="GET",host="127\.0\.0\.1:\d+"\} \d+$/m);
  });

  it('without the system:auth-delegator binding, scrapes get 401 (the review is refused) and health paths still 200', async () => {
    const withoutDelegator = (await deployRbac()).split(/^---$/m).filter((doc) => !doc.includes('system:auth-delegator')).join('---');
    expect(withoutDelegator).not.toContain('system:auth-delegator');
    const { url } = await start(`${withoutDelegator}\n---\n${METRICS_READER}`);
    expect((await get(`${url}/metrics`, { token: TOKENS.scraper })).status).toBe(401);
    expect(cluster.api.count({ user: SA, verb: 'create', resource: 'tokenreviews', code: 403 })).toBe(1);
    expect((await get(`${url}/healthz`)).status).toBe(200);
  });

  it('--authorization-always-allow-paths replaces the default list (a trailing * matches a prefix)', async () => {
    const { url } = await start(`${await deployRbac()}\n---\n${METRICS_READER}`, { authorizationAlwaysAllowPaths: '/metric*' });
    expect((await get(`${url}/metrics`)).status).toBe(200);
    expect((await get(`${url}/healthz`)).status).toBe(401);
  });
});

describe('TLS', () => {
  it('self-signed: made at start for localhost and 127.0.0.1; a client trusting it completes the handshake, one trusting another CA fails', async () => {
    const { url } = await start(await deployRbac());
    const first = await get(`${url}/healthz`);
    const pem = `-----BEGIN CERTIFICATE-----\n${(first.peer?.raw ?? Buffer.alloc(0)).toString('base64').match(/.{1,64}/g)?.join('\n')}\n-----END CERTIFICATE-----\n`;
    const cert = new X509Certificate(pem);
    expect(cert.subjectAltName).toContain('DNS:localhost');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect((await get(`${url}/healthz`, { ca: pem })).status).toBe(200);
    const stranger = selfSignedCertificate({ commonName: 'someone else', hosts: ['127.0.0.1'] }).cert;
    await expect(get(`${url}/healthz`, { ca: stranger })).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
  });

  it('provided: --tls-cert-file and --tls-private-key-file are served as given', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ccm-serving-'));
    const given = selfSignedCertificate({ commonName: 'ccm.example', hosts: ['ccm.example', '127.0.0.1'] });
    await writeFile(path.join(dir, 'tls.crt'), given.cert);
    await writeFile(path.join(dir, 'tls.key'), given.key);
    const { url } = await start(await deployRbac(), { tlsCertFile: path.join(dir, 'tls.crt'), tlsPrivateKeyFile: path.join(dir, 'tls.key') });
    const r = await get(`${url}/livez`, { ca: given.cert, servername: 'ccm.example' });
    expect(r.status).toBe(200);
    expect(r.peer?.subject.CN).toBe('ccm.example');
  });

  it('a key that is not the certificate\'s, or a missing file, is a usage error naming the flag', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ccm-serving-'));
    const a = selfSignedCertificate({ commonName: 'a', hosts: ['localhost'] });
    const b = selfSignedCertificate({ commonName: 'b', hosts: ['localhost'] });
    await writeFile(path.join(dir, 'a.crt'), a.cert);
    await writeFile(path.join(dir, 'b.key'), b.key);
    const crt = path.join(dir, 'a.crt');
    const key = path.join(dir, 'b.key');
    await expect(start(await deployRbac(), { tlsCertFile: crt, tlsPrivateKeyFile: key })).rejects.toThrow(new UsageError(`--tls-private-key-file ${key}: does not match the certificate in --tls-cert-file ${crt}`));
    await expect(start(await deployRbac(), { tlsCertFile: path.join(dir, 'none.crt'), tlsPrivateKeyFile: key })).rejects.toThrow(`--tls-cert-file ${path.join(dir, 'none.crt')}: cannot read: no such file`);
  });

  it('--insecure-plain-http serves plain HTTP with no authentication', async () => {
    const { url } = await start(await deployRbac(), { insecurePlainHttp: true });
    expect(url).toMatch(/^http:\/\//);
    expect((await get(`${url}/metrics`)).status).toBe(200);
    expect(reviews('tokenreviews')).toBe(0);
  });
});
