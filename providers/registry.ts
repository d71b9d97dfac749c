// --cloud-provider NAME → adapter. The registry knows every built-in provider by name and by what
// it needs on the command line without loading it: an adapter (and its cloud SDK, tens of MB and
// up to seconds of start-up) is imported only when a process asks for that provider.
import { cloudConfigError, isBlank, readCloudConfig } from './cloud-config.js';
import type { CloudProvider, ProviderContext, ProviderFactory, ProviderOptions } from './types.js';

/** What --cloud-config means to a provider: `none` is not read (a warning says it is ignored). */
export type CloudConfigUse = 'required' | 'optional' | 'none';

/** A built-in provider as the registry knows it before its module is loaded. */
export interface ProviderInfo {
  name: string;
  /** One line for --help and errors. */
  summary: string;
  cloudConfig: CloudConfigUse;
  /**
   * A blank --cloud-config file is a valid configuration (every key has a default, or a list of
   * no entries); otherwise it is an error, since it is most likely a mount or a write gone wrong.
   */
  acceptsBlankCloudConfig?: boolean;
  /** What the --cloud-config file is (named when it is absent or blank). */
  cloudConfigHint?: string;
  /** Packages the adapter loads; a process using another provider never imports them. */
  sdk: readonly string[];
}

interface BuiltIn extends ProviderInfo {
  /** The adapter's factory module (`<cloud>/factory.ts`); each one exports `create`. */
  load(): Promise<{ create: ProviderFactory }>;
}

// Literal import() paths, so a bundler can split each adapter into its own chunk.
const BUILT_IN: readonly BuiltIn[] = [
  {
    name: 'aws', summary: 'Amazon EC2 (DescribeInstances)', cloudConfig: 'optional', acceptsBlankCloudConfig: true, sdk: ['@aws-sdk/client-ec2'],
    load: () => import('./aws/factory.js'),
  },
  {
    name: 'azure', summary: 'Microsoft Azure VMs and scale sets (ARM)', cloudConfig: 'required',
    cloudConfigHint: 'cloud-provider-azure\'s azure.json with subscriptionId, resourceGroup and a credential',
    sdk: ['@azure/identity', '@azure/arm-compute', '@azure/arm-network'],
    load: () => import('./azure/factory.js'),
  },
  {
    name: 'fake', summary: 'an empty in-memory cloud (simulations and tests)', cloudConfig: 'none', sdk: [],
    load: () => import('./fake/factory.js'),
  },
  {
    name: 'gce', summary: 'Google Compute Engine (instances API)', cloudConfig: 'required', cloudConfigHint: 'gce.conf with [global] project-id', sdk: ['@google-cloud/compute'],
    load: () => import('./gce/factory.js'),
  },
  {
    name: 'kind', summary: 'kind node containers over the Docker API', cloudConfig: 'required', cloudConfigHint: 'YAML with at least "cluster"', sdk: [],
    load: () => import('./kind/factory.js'),
  },
  {
    // Blank is a list of no machines, as after an edit that removes the last one.
    name: 'static', summary: 'nodes listed in a YAML file, re-read on change', cloudConfig: 'required', acceptsBlankCloudConfig: true, cloudConfigHint: 'a YAML file listing the nodes', sdk: [],
    load: () => import('./static/factory.js'),
  },
  {
    name: 'webhook', summary: 'any inventory behind an HTTPS endpoint (one POST per batch of nodes)', cloudConfig: 'required', cloudConfigHint: 'YAML with at least "url"', sdk: [],
    load: () => import('./webhook/factory.js'),
  },
];

const builtIn = new Map(BUILT_IN.map((p) => [p.name, p]));

/** What a provider added at run time says about its --cloud-config (nothing: read whenever given). */
export type RegisteredProviderInfo = Partial<Pick<ProviderInfo, 'cloudConfig' | 'acceptsBlankCloudConfig' | 'cloudConfigHint' | 'summary'>>;

/** Added at run time by embedders, tests and --cloud-provider-module; a name here wins over a built-in. */
const extra = new Map<string, { factory: ProviderFactory; info: ProviderInfo | undefined }>();

export function registerProvider(name: string, factory: ProviderFactory, info?: RegisteredProviderInfo): void {
  extra.set(name, { factory, info: info ? { sdk: [], ...info, name, summary: info.summary ?? name, cloudConfig: info.cloudConfig ?? 'optional' } : undefined });
}

/** Whether `name` is a built-in provider (a module may not take its name). */
export function isBuiltInProvider(name: string): boolean {
  return builtIn.has(name);
}

export function knownProviders(): string[] {
  return [...new Set([...builtIn.keys(), ...extra.keys()])].sort();
}

/** What the registry knows about a built-in provider, without loading it. */
export function providerInfo(name: string): ProviderInfo | undefined {
  const p = builtIn.get(name);
  if (!p) return undefined;
  const { load: _load, ...info } = p;
  return info;
}

function unknownProvider(name: string): Error {
  return new Error(`--cloud-provider: unknown provider "${name}" (known: ${knownProviders().join(', ') || 'none'})`);
}

function needs(p: ProviderInfo): string {
  return p.cloudConfigHint ?? 'the provider configuration';
}

/**
 * Checks what can be checked without loading the adapter or touching a file: the name, and that
 * --cloud-config is given when the provider needs one.
 */
export function checkProviderFlags(name: string, options: ProviderOptions): void {
  const added = extra.get(name);
  if (added && !added.info) return;
  const p = added?.info ?? builtIn.get(name);
  if (!p) throw unknownProvider(name);
  if (p.cloudConfig === 'required' && !options.cloudConfig) {
    throw new Error(`--cloud-config: required by --cloud-provider ${name} (${needs(p)})`);
  }
}

/**
 * What the factory gets, with the --cloud-config file read once here so that every adapter has the
 * same checks and wording. Of a provider registered at run time the registry knows nothing, so
 * its file is read whenever one is given.
 */
async function contextFor(p: ProviderInfo | undefined, options: ProviderOptions): Promise<ProviderContext> {
  const context: ProviderContext = options.logger ? { logger: options.logger } : {};
  if (!options.cloudConfig) return context;
  if (p?.cloudConfig === 'none') {
    // Accepted, as it always was; but a file that changes nothing usually means the wrong provider.
    options.logger?.warn({ cloudConfig: options.cloudConfig }, `--cloud-config: ignored, --cloud-provider ${p.name} takes no configuration file`);
    return context;
  }
  const file = await readCloudConfig(options.cloudConfig);
  if (p && !p.acceptsBlankCloudConfig && isBlank(file)) {
    throw cloudConfigError(file.path, `the file is empty; --cloud-provider ${p.name} needs ${needs(p)}`);
  }
  return { ...context, cloudConfig: file };
}

/** True when `err` says the module `pkg` (or a file in it) is not installed. */
function isMissing(err: unknown, pkg: string): boolean {
  const e = err as NodeJS.ErrnoException | undefined;
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'MODULE_NOT_FOUND') return false;
  return typeof e.message === 'string' && e.message.includes(`'${pkg}`);
}

/** Builds the provider named by --cloud-provider, importing only that adapter and its SDK. */
export async function createProvider(name: string, options: ProviderOptions): Promise<CloudProvider> {
  const added = extra.get(name);
  if (added) {
    checkProviderFlags(name, options);
    return added.factory(await contextFor(added.info, options));
  }
  checkProviderFlags(name, options);
  const p = builtIn.get(name) as BuiltIn;
  // Before the adapter loads: a bad file costs no SDK import.
  const context = await contextFor(p, options);
  try {
    // Adapters may import their SDK at load time or when building the client: both are covered.
    const mod = await p.load();
    return await mod.create(context);
  } catch (err) {
    // A single-cloud image leaves the other clouds' SDKs out; say so instead of a bare stack.
    const pkg = p.sdk.find((s) => isMissing(err, s));
    if (pkg) throw new Error(`--cloud-provider: ${name} needs ${pkg}, which this installation does not include (an image built for another cloud?)`, { cause: err });
    throw err;
  }
}
