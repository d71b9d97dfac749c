// What each command loads (issue 17): a module-load hook in the child process records every
// module it resolves or requires. `--cloud-provider static`, --help and the commands that need
// no cloud load no cloud SDK; `--cloud-provider aws`/`gce`/`azure` load their own SDK and not the others.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { repoRoot, runCli, runProcess } from '../kit/cli.js';
import { useDouble } from '../kit/double.js';
import { CLOUD_SDK_PACKAGES, moduleLog, type ModuleLog } from '../kit/module-log.js';
import { ip } from '../kit/nodes.js';

let log: ModuleLog;
let dir: string;

beforeEach(async () => {
  log = moduleLog();
  dir = await mkdtemp(path.join(tmpdir(), 'ccm-imports-'));
});
afterEach(async () => {
  log.dispose();
  await rm(dir, { recursive: true, force: true });
});

/** Adapter modules of the repository's providers that the process loaded. */
function adaptersLoaded(): string[] {
  const root = pathToFileURL(path.join(repoRoot, 'dist/providers')).href;
  const names = log.read().filter((u) => u.startsWith(`${root}/`)).map((u) => u.slice(root.length + 1).split('/')[0]).filter((n) => !n.endsWith('.js'));
  return [...new Set(names)].sort();
}

describe('run --cloud-provider static against the API double', () => {
  const cluster = useDouble({ bookmarkIntervalMs: 500 });

  it('initialises a node and never imports a cloud SDK or another adapter', async () => {
    const run = await cluster.runStaticUntilInitialised({
      nodeIP: '10.0.0.1', cloud: { addresses: [ip('10.0.0.1')] }, args: ['--secure-port=0', '--leader-elect=false'], start: { env: log.env },
    });
    expect(run.exitCode()).toBe(0);
    expect(run.stderr).toBe('');
    // The hook saw the process at work (the Kubernetes client, the static adapter) ...
    expect(log.packagesLoaded(['@kubernetes/client-node'])).toEqual(['@kubernetes/client-node']);
    expect(adaptersLoaded()).toEqual(['static']);
    // ... and no cloud SDK, nor what only --cloud-provider-module or the webhook loads.
    expect(log.packagesLoaded(CLOUD_SDK_PACKAGES)).toEqual([]);
    expect(log.packagesLoaded(['ajv'])).toEqual([]);
    expect(log.read().filter((u) => /\/dist\/providers\/(answers|checked-provider)\.js$/.test(u))).toEqual([]);
  });
});

describe('commands that need no cloud', () => {
  const cluster = useDouble();

  it.each([
    [['--help']],
    [['run', '--help']],
    [['simulate', '--help']],
    [['audit', '--help']],
    [['apiserver', '--help']],
    [['explain', '--help']],
    [['plan', '--help']],
  ])('%j loads no cloud SDK, no adapter, no Kubernetes client and no command implementation', async (args) => {
    const r = await runCli(args, { env: log.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: node-address-ccm/);
    expect(log.read().some((u) => u.endsWith('/dist/src/cli/main.js'))).toBe(true);
    expect(log.packagesLoaded([...CLOUD_SDK_PACKAGES, '@kubernetes/client-node', 'yaml', 'ipaddr.js', 'sorted-btree', 'pino'])).toEqual([]);
    expect(adaptersLoaded()).toEqual([]);
    // Help needs the flags only (and the Node model, for the address types and the annotation it
    // names): the allocator, the node-IP decision and the commands' work stay unloaded.
    const src = pathToFileURL(path.join(repoRoot, 'dist/src')).href;
    const loaded = log.read().filter((u) => u.startsWith(`${src}/`)).map((u) => u.slice(src.length + 1));
    expect(loaded.filter((m) => /^(ipam|audit|double|simulation|kube|nodeip)\/|^manager\/manager|-report\.js$/.test(m))).toEqual([]);
  });

  it('simulate runs its cluster on the static adapter without a cloud SDK', async () => {
    const r = await runCli(['simulate', '--nodes', '2'], { env: log.env, timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(adaptersLoaded()).toEqual(['static']);
    expect(log.packagesLoaded(CLOUD_SDK_PACKAGES)).toEqual([]);
  });

  it('audit reads a cluster without a cloud SDK or adapter', async () => {
    const r = await runCli(['audit', `--kubeconfig=${cluster.kubeconfigPath}`, '--cluster-cidr', '10.244.0.0/16'], { env: log.env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(log.packagesLoaded(['@kubernetes/client-node'])).toEqual(['@kubernetes/client-node']);
    expect(log.packagesLoaded(CLOUD_SDK_PACKAGES)).toEqual([]);
    expect(adaptersLoaded()).toEqual([]);
  });
});

/** The Azure SDK and what only it pulls in (node-forge for PKCS#12 client certificates): the other clouds' tests check none of it loads. */
const AZURE_SDK_PACKAGES = ['@azure/', '@azure-rest/', '@typespec/ts-http-runtime', 'node-forge'];

/** Builds one provider through the registry in a child process, as the manager does. */
async function createInChild(name: string, options: Record<string, string>, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string }> {
  const registry = pathToFileURL(path.join(repoRoot, 'dist/providers/index.js')).href;
  const script = `const { createProvider } = await import(${JSON.stringify(registry)});
try { const p = await createProvider(${JSON.stringify(name)}, ${JSON.stringify(options)}); console.log('built ' + p.name); await p.close?.(); }
catch (err) { console.log('error ' + err.message); }`;
  const r = await runProcess(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, env: { ...process.env, ...log.env, ...env } });
  // The log saw the child at work, so that what it did not load is a finding, not a missing log.
  expect(log.read(), r.stderr).toContain(registry);
  return { code: r.code, out: r.stdout.trim() };
}

describe('the registry loads one adapter and its SDK on demand', () => {
  it('aws: the EC2 SDK, not the Compute or Azure SDK', async () => {
    const r = await createInChild('aws', {}, { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_ENDPOINT_URL_EC2: 'http://127.0.0.1:9' });
    expect(r.out).toBe('built aws');
    expect(adaptersLoaded()).toEqual(['aws']);
    expect(log.packagesLoaded(CLOUD_SDK_PACKAGES)).toEqual(expect.arrayContaining(['@aws-sdk/', '@smithy/']));
    expect(log.packagesLoaded(['@google-cloud/', 'google-gax'])).toEqual([]);
    expect(log.packagesLoaded(AZURE_SDK_PACKAGES)).toEqual([]);
  });

  it('gce: the v1 instances client alone, not the package index, the EC2 or the Azure SDK', async () => {
    const conf = path.join(dir, 'gce.conf');
    await writeFile(conf, '[global]\nproject-id = p\napi-endpoint = http://127.0.0.1:9/compute/v1/\n');
    const r = await createInChild('gce', { cloudConfig: conf });
    expect(r.out).toBe('built gce');
    expect(adaptersLoaded()).toEqual(['gce']);
    const compute = log.read().filter((u) => u.includes('/node_modules/@google-cloud/compute/build/src/'));
    expect(compute.map((u) => u.replace(/.*\/build\/src\//, '')).sort()).toEqual(['v1/instances_client.js', 'v1/instances_client_config.json']);
    expect(log.packagesLoaded(['@aws-sdk/', '@smithy/'])).toEqual([]);
    expect(log.packagesLoaded(AZURE_SDK_PACKAGES)).toEqual([]);
  });

  it('azure: @azure/identity and the ARM clients, not the EC2 or Compute SDK', async () => {
    const conf = path.join(dir, 'azure.json');
    // Public cloud and a managed identity: building the provider asks nothing of ARM or IMDS.
    await writeFile(conf, JSON.stringify({ subscriptionId: '0b1f6471-1bf0-4dda-aec3-111122223333', resourceGroup: 'rg', useManagedIdentityExtension: true }));
    const r = await createInChild('azure', { cloudConfig: conf });
    expect(r.out).toBe('built azure');
    expect(adaptersLoaded()).toEqual(['azure']);
    expect(log.packagesLoaded(['@azure/identity', '@azure/arm-compute', '@azure/arm-network', '@azure/msal-node'])).toEqual(['@azure/identity', '@azure/arm-compute', '@azure/arm-network', '@azure/msal-node']);
    expect(log.packagesLoaded(['@aws-sdk/', '@smithy/', '@google-cloud/', 'google-gax', 'google-auth-library'])).toEqual([]);
    // No client certificate in PKCS#12 form: no PKCS#12 reader.
    expect(log.packagesLoaded(['node-forge'])).toEqual([]);
  });

  it('azure with a PKCS#12 client certificate: node-forge too, loaded to read it', async () => {
    const conf = path.join(dir, 'azure.json');
    const pfx = path.join(repoRoot, 'test/providers/azure/fixtures/client-aes.pfx');
    await writeFile(conf, JSON.stringify({
      subscriptionId: '0b1f6471-1bf0-4dda-aec3-111122223333', resourceGroup: 'rg', tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47',
      aadClientId: '77777777-8888-9999-aaaa-bbbbbbbbbbbb', aadClientCertPath: pfx, aadClientCertPassword: 'pfx-password',
    }));
    const r = await createInChild('azure', { cloudConfig: conf });
    expect(r.out).toBe('built azure');
    expect(log.packagesLoaded(['@azure/identity', 'node-forge'])).toEqual(['@azure/identity', 'node-forge']);
  });

  it('azure: a cloud-config without a credential is refused before any SDK loads', async () => {
    const conf = path.join(dir, 'azure.json');
    await writeFile(conf, JSON.stringify({ subscriptionId: '0b1f6471-1bf0-4dda-aec3-111122223333', resourceGroup: 'rg' }));
    const r = await createInChild('azure', { cloudConfig: conf });
    expect(r.out).toBe(`error --cloud-config ${conf}: no credential: set useFederatedWorkloadIdentityExtension (workload identity), useManagedIdentityExtension (managed identity), aadClientId with aadClientSecret or aadClientCertPath, or aadMSIDataPlaneIdentityPath`);
    expect(adaptersLoaded()).toEqual(['azure']);
    expect(log.packagesLoaded(['@azure/'])).toEqual([]);
  });

  it('kind: its adapter only, no cloud SDK', async () => {
    const conf = path.join(dir, 'kind.yaml');
    await writeFile(conf, 'cluster: kind\n');
    expect((await createInChild('kind', { cloudConfig: conf })).out).toBe('built kind');
    expect(adaptersLoaded()).toEqual(['kind']);
    expect(log.packagesLoaded(CLOUD_SDK_PACKAGES)).toEqual([]);
  });

  it('webhook: its adapter and ajv, no cloud SDK', async () => {
    const conf = path.join(dir, 'webhook.yaml');
    await writeFile(conf, 'url: https://127.0.0.1:9/v1/instances\n');
    expect((await createInChild('webhook', { cloudConfig: conf })).out).toBe('built webhook');
    expect(adaptersLoaded()).toEqual(['webhook']);
    expect(log.packagesLoaded(['ajv'])).toEqual(['ajv']);
    expect(log.packagesLoaded(CLOUD_SDK_PACKAGES)).toEqual([]);
  });

  it('fake: its adapter only, no cloud SDK', async () => {
    expect((await createInChild('fake', {})).out).toBe('built fake');
    expect(adaptersLoaded()).toEqual(['fake']);
    expect(log.packagesLoaded(CLOUD_SDK_PACKAGES)).toEqual([]);
  });

  it('an unknown name fails with the known ones and loads no adapter', async () => {
    const r = await createInChild('nope', {});
    expect(r.out).toBe('error --cloud-provider: unknown provider "nope" (known: aws, azure, fake, gce, kind, static, webhook)');
    expect(adaptersLoaded()).toEqual([]);
    expect(log.packagesLoaded(CLOUD_SDK_PACKAGES)).toEqual([]);
  });

  it('a missing --cloud-config is reported before the adapter loads', async () => {
    const r = await createInChild('gce', {});
    expect(r.out).toBe('error --cloud-config: required by --cloud-provider gce (gce.conf with [global] project-id)');
    expect(adaptersLoaded()).toEqual([]);
    expect(log.packagesLoaded(CLOUD_SDK_PACKAGES)).toEqual([]);
  });

  it('a --cloud-config that cannot be used is reported before the adapter loads', async () => {
    const conf = path.join(dir, 'gce.conf');
    await writeFile(conf, '\n');
    const r = await createInChild('gce', { cloudConfig: conf });
    expect(r.out).toBe(`error --cloud-config ${conf}: the file is empty; --cloud-provider gce needs gce.conf with [global] project-id`);
    expect(adaptersLoaded()).toEqual([]);
    expect(log.packagesLoaded(CLOUD_SDK_PACKAGES)).toEqual([]);
  });
});
