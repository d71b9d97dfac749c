// The image's /app as deploy/Dockerfile builds it (scripts/build-image-root.mjs: esbuild bundle +
// pruned production install), built here into a temp folder: `run --help` works, `run` with
// the static provider initialises a node against the API double, and every provider, loaded
// through the bundle's registry, answers its emulator — aws (EC2), gce (Compute v1 with the
// pruned protos, credentials from a metadata-server double as on a GCE VM), azure (ARM with the
// clients cut to the groups the adapter calls, a workload-identity token from the emulated AAD
// tenant and a managed-identity token from emulated IMDS), kind (Docker API).
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, repoRoot } from '../kit/cli.js';
import { startDoubleTarget } from '../kit/double.js';
import { ip } from '../kit/nodes.js';
import { EC2Emulator } from '../emulators/ec2/server.js';
import { GceEmulator } from '../emulators/gce/server.js';
import { DockerEmulator } from '../emulators/docker/server.js';
import { AzureEmulator } from '../emulators/azure/server.js';

const run = promisify(execFile);
// Node 22 (the image's runtime) prints deprecations that Node 20 keeps pending, such as DEP0040
// for a bundled require('punycode'): ask for them here, so stderr stays empty under both.
const PENDING_DEPRECATIONS = ['--pending-deprecation'];
let dir = '';
let image = '';

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), 'ccm-image-'));
  image = path.join(dir, 'image');
  // The script installs the production dependencies from package-lock.json itself, as the
  // Dockerfile's deps stage does.
  await run(process.execPath, [path.join(repoRoot, 'scripts/build-image-root.mjs'), '--out', image], { cwd: repoRoot, timeout: 170_000 });
}, 180_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Report { nodeModulesBytes: number; nodeModulesBeforePruneBytes: number; totalBytes: number; externals: string[] }

describe('the image root', () => {
  it('is small and holds only the bundle and the Compute SDK closure', async () => {
    const report = JSON.parse(await readFile(path.join(image, 'report.json'), 'utf8')) as Report;
    expect(report.externals).toEqual(['@google-cloud/compute']);
    // Issue 17's target is ≤ 120 MB with every provider (figures in docs/benchmarks.md).
    expect(report.totalBytes).toBeLessThan(120e6);
    expect(report.nodeModulesBytes).toBeLessThan(report.nodeModulesBeforePruneBytes / 5);
    for (const gone of ['@kubernetes/client-node', '@aws-sdk/client-ec2', '@azure/identity', '@azure/arm-network', 'pino', 'zod']) expect(existsSync(path.join(image, 'node_modules', gone))).toBe(false);
  });

  it('imports http and https through require(): an ES import of node:http makes Node 22 load undici (about 10 MiB)', async () => {
    const files = (await readdir(path.join(image, 'lib'), { recursive: true })).filter((f) => f.endsWith('.js'));
    expect(files.length).toBeGreaterThan(10);
    const esImports: string[] = [];
    for (const f of files) {
      const text = await readFile(path.join(image, 'lib', f), 'utf8');
      for (const m of text.matchAll(/(?:from\s*|import\s*\(\s*)["'](?:node:)?https?["']/g)) esImports.push(`${f}: ${m[0]}`);
    }
    expect(esImports).toEqual([]);
  });

  it('run --help lists every provider', async () => {
    const { stdout } = await run(process.execPath, [path.join(image, 'lib/main.js'), 'run', '--help']);
    expect(stdout).toMatch(/--cloud-provider <name>\s+cloud provider \(aws, azure, fake, gce, kind, static, webhook\)/);
  });

  it('run --cloud-provider static initialises a node against the API double', async () => {
    const cluster = await startDoubleTarget({ bookmarkIntervalMs: 500 });
    try {
      const proc = await cluster.runStaticUntilInitialised({
        nodeIP: '10.0.0.1', cloud: { addresses: [ip('10.0.0.1')] }, args: ['--secure-port=0', '--leader-elect=false'],
        start: { script: path.join(image, 'lib/main.js'), nodeArgs: ['--enable-source-maps', ...PENDING_DEPRECATIONS] },
      });
      expect(proc.exitCode()).toBe(0);
      expect(proc.stderr).toBe('');
    } finally {
      await cluster.close();
    }
  });
});

describe('a single-cloud variant (--cloud aws)', () => {
  it('ships no node_modules, and asking it for gce is a usage error naming the missing SDK', async () => {
    const variant = path.join(dir, 'aws');
    // Node looks for a missing package in every parent's node_modules: one above the temp folder
    // (a /tmp/node_modules symlink, say) would hand the variant an SDK its image never has.
    for (let d = path.dirname(variant); ; d = path.dirname(d)) {
      if (existsSync(path.join(d, 'node_modules'))) throw new Error(`${path.join(d, 'node_modules')} exists above the variant: remove it, it makes the missing SDK resolvable`);
      if (path.dirname(d) === d) break;
    }
    await run(process.execPath, [path.join(repoRoot, 'scripts/build-image-root.mjs'), '--out', variant, '--cloud', 'aws'], { cwd: repoRoot, timeout: 170_000 });
    const report = JSON.parse(await readFile(path.join(variant, 'report.json'), 'utf8')) as Report;
    expect(report.externals).toEqual([]);
    expect(report.nodeModulesBytes).toBe(0);
    await writeFile(path.join(dir, 'kubeconfig-nowhere'), 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\ncurrent-context: c\n');
    await writeFile(path.join(dir, 'variant-gce.conf'), '[global]\nproject-id = p\n');
    const failed = await run(process.execPath, [...PENDING_DEPRECATIONS, path.join(variant, 'lib/main.js'), 'run', `--kubeconfig=${path.join(dir, 'kubeconfig-nowhere')}`, '--cloud-provider', 'gce',
      '--cloud-config', path.join(dir, 'variant-gce.conf'), '--secure-port=0'], { timeout: 60_000 }).then(() => undefined, (err: { code: number; stderr: string }) => err);
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toBe('error: --cloud-provider: gce needs @google-cloud/compute, which this installation does not include (an image built for another cloud?)\n');
  }, 180_000); // building the variant on a busy 2-core runner took over 60 s in a full run
});

describe('the azure variant (--cloud azure)', () => {
  it('ships no node_modules: the Azure SDK and node-forge are in the bundle, and answer the ARM emulator from there', async () => {
    const variant = path.join(dir, 'azure');
    await run(process.execPath, [path.join(repoRoot, 'scripts/build-image-root.mjs'), '--out', variant, '--cloud', 'azure'], { cwd: repoRoot, timeout: 170_000 });
    const report = JSON.parse(await readFile(path.join(variant, 'report.json'), 'utf8')) as Report;
    expect(report.externals).toEqual([]);
    expect(report.nodeModulesBytes).toBe(0);
    const emu = new AzureEmulator();
    await emu.start();
    try {
      const sub = '0b1f6471-1bf0-4dda-aec3-111122223333';
      emu.addVM(sub, 'rg', { name: 'vm-1', nics: [{ name: 'nic', ipConfigs: [{ privateIP: '10.0.0.4' }] }] });
      const ca = path.join(dir, 'azure-variant-ca.pem');
      await writeFile(ca, emu.ca);
      const conf = path.join(dir, 'azure-variant.json');
      await writeFile(conf, JSON.stringify({ subscriptionId: sub, resourceGroup: 'rg', vmType: 'standard', resourceManagerEndpoint: emu.url, useManagedIdentityExtension: true }));
      const answer = await askInChild('azure', conf, [{ name: 'vm-1' }], { NODE_EXTRA_CA_CERTS: ca, AZURE_POD_IDENTITY_AUTHORITY_HOST: emu.imdsUrl }, variant);
      const want = { 'vm-1': { providerID: `azure:///subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm-1`, addresses: [{ type: 'InternalIP', address: '10.0.0.4' }, { type: 'Hostname', address: 'vm-1' }] } };
      expect(answer).toMatchObject(want);
      // A client certificate in PKCS#12 as OpenSSL 3 writes it: node-forge, bundled, reads it.
      const fixtures = path.join(repoRoot, 'test/providers/azure/fixtures');
      emu.registerCertificate(emu.clientId, await readFile(path.join(fixtures, 'client.crt'), 'utf8'));
      const certConf = path.join(dir, 'azure-variant-cert.json');
      await writeFile(certConf, JSON.stringify({
        subscriptionId: sub, resourceGroup: 'rg', vmType: 'standard', resourceManagerEndpoint: emu.url, tenantId: emu.tenantId,
        aadClientId: emu.clientId, aadClientCertPath: path.join(fixtures, 'client-aes.pfx'), aadClientCertPassword: 'pfx-password',
      }));
      expect(await askInChild('azure', certConf, [{ name: 'vm-1' }], { NODE_EXTRA_CA_CERTS: ca }, variant)).toMatchObject(want);
      expect(emu.requests.some((r) => r.kind === 'token' && r.assertion?.header['x5t#S256'] !== undefined)).toBe(true);
    } finally {
      await emu.stop();
    }
  }, 180_000);
});

/** Builds a provider through the bundle's registry in a child process and asks about `nodes`. */
async function askInChild(name: string, cloudConfig: string | undefined, nodes: object[], env: NodeJS.ProcessEnv, root = image): Promise<unknown> {
  const registry = pathToFileURL(path.join(root, 'lib/providers.js')).href;
  const script = `const { createProvider } = await import(${JSON.stringify(registry)});
const p = await createProvider(${JSON.stringify(name)}, ${JSON.stringify(cloudConfig ? { cloudConfig } : {})});
const res = await p.instancesMetadata(${JSON.stringify(nodes)});
await p.close?.();
console.log(JSON.stringify(Object.fromEntries([...res].map(([k, v]) => [k, v.kind === 'found' ? v.value : v.kind + ': ' + (v.error?.message ?? v.reason ?? '')]))));`;
  const { stdout } = await run(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
    cwd: dir, timeout: 30_000,
    // Nothing from the developer's own cloud configuration.
    env: { PATH: process.env.PATH, HOME: dir, ...env },
  });
  return JSON.parse(stdout) as unknown;
}

describe('every provider loads from the pruned install and answers its emulator', () => {
  it('aws through the EC2 emulator', async () => {
    const emu = new EC2Emulator();
    const endpoint = await emu.start();
    try {
      emu.add({ instanceId: 'i-0123456789abcdef0', availabilityZone: 'eu-west-1a', privateDnsName: 'ip-10-0-0-1.eu-west-1.compute.internal', networkInterfaces: [{ deviceIndex: 0, privateIps: ['10.0.0.1'] }] });
      const answer = await askInChild('aws', undefined, [{ name: 'n1', providerID: 'aws:///eu-west-1a/i-0123456789abcdef0' }], {
        AWS_ENDPOINT_URL_EC2: endpoint, AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'fake-secret', AWS_MAX_ATTEMPTS: '1', AWS_EC2_METADATA_DISABLED: 'true',
      });
      expect(answer).toMatchObject({ n1: { providerID: 'aws:///eu-west-1a/i-0123456789abcdef0', zone: 'eu-west-1a', addresses: expect.arrayContaining([{ type: 'InternalIP', address: '10.0.0.1' }]) } });
    } finally {
      await emu.stop();
    }
  });

  it('gce through the Compute v1 emulator, with a token from the metadata server', async () => {
    const emu = new GceEmulator({ token: 'metadata-token' });
    await emu.start();
    // What a GCE VM's metadata server answers to google-auth-library's default credentials.
    const metadata: Server = createServer((req, res) => {
      const reply = (body: string, type = 'application/text') => res.writeHead(200, { 'Metadata-Flavor': 'Google', 'Content-Type': type }).end(body);
      if (req.headers['metadata-flavor'] !== 'Google') return res.writeHead(403).end();
      const url = (req.url ?? '').split('?')[0];
      if (url === '/computeMetadata/v1/instance/service-accounts/default/token') return reply(JSON.stringify({ access_token: 'metadata-token', expires_in: 3600, token_type: 'Bearer' }), 'application/json');
      if (url === '/computeMetadata/v1/project/project-id') return reply('image-proj');
      if (url === '/computeMetadata/v1/universe/universe-domain') return reply('googleapis.com');
      if (url === '/computeMetadata/v1/instance' || url === '/computeMetadata/v1/') return reply('');
      res.writeHead(404, { 'Metadata-Flavor': 'Google' }).end();
    });
    await new Promise<void>((resolve) => metadata.listen(0, '127.0.0.1', resolve));
    try {
      emu.addInstance('image-proj', 'us-central1-a', {
        name: 'node-0', machineType: 'zones/us-central1-a/machineTypes/e2-standard-4',
        networkInterfaces: [{ name: 'nic0', networkIP: '10.0.0.2', accessConfigs: [{ type: 'ONE_TO_ONE_NAT', natIP: '34.0.0.2' }] }],
      });
      const conf = path.join(dir, 'gce.conf');
      await writeFile(conf, `[global]\nproject-id = image-proj\napi-endpoint = ${emu.url}/compute/v1/\nstack-type = IPV4\n`);
      const { port } = metadata.address() as { port: number };
      const answer = await askInChild('gce', conf, [{ name: 'node-0' }], { GCE_METADATA_HOST: `127.0.0.1:${port}`, METADATA_SERVER_DETECTION: 'assume-present' });
      expect(answer).toMatchObject({ 'node-0': { providerID: 'gce://image-proj/us-central1-a/node-0', addresses: [{ type: 'InternalIP', address: '10.0.0.2' }, { type: 'ExternalIP', address: '34.0.0.2' }] } });
    } finally {
      await new Promise((resolve) => metadata.close(resolve));
      await emu.stop();
    }
  });

  it('azure through the ARM emulator: workload identity (the emulated AAD tenant) and a managed identity (emulated IMDS)', async () => {
    const emu = new AzureEmulator();
    await emu.start();
    try {
      const sub = '0b1f6471-1bf0-4dda-aec3-111122223333';
      emu.addScaleSet(sub, 'rg', { name: 'pool', computerNamePrefix: 'pool' });
      emu.addScaleSetVM(sub, 'rg', 'pool', { instanceId: '3', zones: ['2'], nics: [{ name: 'nic0', ipConfigs: [{ privateIP: '10.2.0.7', publicIP: '20.0.0.7' }] }] });
      // As a node would trust a private cloud's CA: NODE_EXTRA_CA_CERTS.
      const ca = path.join(dir, 'azure-emulator-ca.pem');
      await writeFile(ca, emu.ca);
      const token = path.join(dir, 'azure-identity-token');
      await writeFile(token, emu.federatedToken);
      const base = { tenantId: emu.tenantId, subscriptionId: sub, resourceGroup: 'rg', resourceManagerEndpoint: emu.url };
      const wi = path.join(dir, 'azure-wi.json');
      await writeFile(wi, JSON.stringify({ ...base, useFederatedWorkloadIdentityExtension: true, aadClientId: emu.clientId, aadFederatedTokenFile: token }));
      const mi = path.join(dir, 'azure-mi.json');
      await writeFile(mi, JSON.stringify({ ...base, useManagedIdentityExtension: true, userAssignedIdentityID: emu.managedIdentityClientId }));
      const want = {
        'pool000003': {
          providerID: `azure:///subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines/3`,
          zone: 'westeurope-2', region: 'westeurope',
          addresses: [{ type: 'InternalIP', address: '10.2.0.7' }, { type: 'Hostname', address: 'pool000003' }, { type: 'ExternalIP', address: '20.0.0.7' }],
        },
      };
      expect(await askInChild('azure', wi, [{ name: 'pool000003' }], { NODE_EXTRA_CA_CERTS: ca })).toMatchObject(want);
      expect(emu.count('token')).toBe(1);
      expect(await askInChild('azure', mi, [{ name: 'pool000003' }], { NODE_EXTRA_CA_CERTS: ca, AZURE_POD_IDENTITY_AUTHORITY_HOST: emu.imdsUrl })).toMatchObject(want);
      expect(emu.count('imds')).toBeGreaterThan(0);
    } finally {
      await emu.stop();
    }
  });

  it('kind through the Docker API emulator', async () => {
    const docker = new DockerEmulator();
    await docker.start();
    try {
      docker.addContainer({ name: 'kind-worker', labels: { 'io.x-k8s.kind.cluster': 'kind' }, networks: { kind: { IPAddress: '172.18.0.2' } } });
      const conf = path.join(dir, 'kind.yaml');
      await writeFile(conf, `cluster: kind\ndockerSocket: ${docker.socketPath}\n`);
      // As kind's kubelet registers it: --provider-id=kind://docker/<cluster>/<node>.
      const answer = await askInChild('kind', conf, [{ name: 'kind-worker', providerID: 'kind://docker/kind/kind-worker' }], {});
      expect(answer).toMatchObject({ 'kind-worker': { providerID: 'kind://docker/kind/kind-worker', addresses: expect.arrayContaining([{ type: 'InternalIP', address: '172.18.0.2' }]) } });
    } finally {
      await docker.stop();
    }
  });
});
