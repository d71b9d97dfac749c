// The ARM side of the adapter: the cloud's endpoints, the credential (@azure/identity) and the
// SDK clients (@azure/arm-compute, @azure/arm-network), each imported when the provider is built,
// never before. Every list call pages through the SDK's async iterators.
import { readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import type { TokenCredential } from '@azure/identity';
import type { ProviderLogger } from '../types.js';
import type { AzureNetworkInterface, AzurePublicIP } from './addresses.js';
import { azureStackApiVersionPolicy } from './api-version.js';
import { readClientCertificate } from './client-certificate.js';
import type { AzureCloudConfig } from './config.js';
import { metadataURL, resolveAzureEnvironment, type AzureEnvironment } from './environment.js';
import { ReloadingMsiDataPlaneCredential } from './msi-dataplane.js';
import type { AzureArmSource, AzureScaleSet, AzureScaleSetVM, AzureVM } from './provider.js';
import { armGatePolicy, ThrottleGate, type ArmCallStats } from './throttle.js';

export { AZURE_ENVIRONMENTS, type AzureEnvironment } from './environment.js';

export interface AzureArmOptions {
  /** Extra CA certificates (PEM) trusted for ARM, the metadata endpoint and AAD: tests' self-signed emulator. Production uses NODE_EXTRA_CA_CERTS. */
  tlsCA?: string;
  /** SDK retries of one request (429 with Retry-After, 5xx, network errors). Default 3. */
  maxRetries?: number;
  /** First exponential-retry delay for 5xx (ms). Default 1000. */
  retryDelayMs?: number;
  /** The process-wide gate by default. */
  gate?: ThrottleGate;
  /** Longest one list call (every page, retries included) may take (ms). Default 60 s. */
  callTimeoutMs?: number;
}

/** The gate shared by every azure provider in this process: ARM's limits are per subscription and principal. */
export const sharedArmGate = new ThrottleGate();

function getJSON(url: string, ca: string | undefined, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: 'GET', headers: { accept: 'application/json' }, ...(ca ? { ca } : {}), timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) >= 300) return reject(new Error(`GET ${url}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
        try {
          resolve(JSON.parse(text));
        } catch {
          reject(new Error(`GET ${url}: not JSON`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * The endpoints of the configured cloud (environment.ts says how): its built-in ones, a
 * resourceManagerEndpoint's `/metadata/endpoints?api-version=2019-05-01`, and for
 * AzureStackCloud the AZURE_ENVIRONMENT_FILEPATH file. What the operator should know (a metadata
 * answer that names no entry for the cloud) is logged.
 */
export async function resolveEnvironment(
  config: Pick<AzureCloudConfig, 'cloud' | 'cloudName' | 'resourceManagerEndpoint' | 'environmentFile' | 'disableAzureStackCloud'>,
  tlsCA?: string,
  logger?: ProviderLogger,
): Promise<AzureEnvironment> {
  let metadata: unknown;
  if (config.resourceManagerEndpoint) {
    try {
      metadata = await getJSON(metadataURL(config.resourceManagerEndpoint), tlsCA, 10_000);
    } catch (err) {
      throw new Error(`azure: resourceManagerEndpoint: reading the cloud's endpoints failed: ${(err as Error).message}`, { cause: err });
    }
  }
  let environmentFile: { path: string; contents: unknown } | undefined;
  if (config.environmentFile) {
    let text: string;
    try {
      text = await readFile(config.environmentFile, 'utf8');
    } catch (err) {
      throw new Error(`azure: AZURE_ENVIRONMENT_FILEPATH: reading ${config.environmentFile} failed: ${(err as Error).message}`, { cause: err });
    }
    try {
      environmentFile = { path: config.environmentFile, contents: JSON.parse(text) };
    } catch (err) {
      throw new Error(`azure: AZURE_ENVIRONMENT_FILEPATH ${config.environmentFile}: not JSON: ${(err as Error).message}`, { cause: err });
    }
  }
  const { environment, notes } = resolveAzureEnvironment({ ...config, metadata, environmentFile });
  for (const note of notes) logger?.warn({ cloud: config.cloudName ?? config.cloud }, `azure: ${note}`);
  return environment;
}

/** The credential the config asks for, built by @azure/identity (imported here, on first use). */
export async function createCredential(config: Pick<AzureCloudConfig, 'credential'>, env: AzureEnvironment, options: AzureArmOptions = {}, logger?: ProviderLogger): Promise<TokenCredential> {
  const identity = await import('@azure/identity');
  const common = {
    authorityHost: env.authorityHost,
    // Instance discovery asks login.microsoftonline.com about the authority: not for a custom cloud.
    disableInstanceDiscovery: env.custom,
    ...(options.tlsCA ? { tlsOptions: { ca: options.tlsCA } } : {}),
  };
  const c = config.credential;
  switch (c.kind) {
    case 'workloadIdentity':
      return new identity.WorkloadIdentityCredential({ ...common, tenantId: c.tenantId, clientId: c.clientId, tokenFilePath: c.tokenFile });
    case 'managedIdentity':
      if (c.clientId) return new identity.ManagedIdentityCredential({ ...common, clientId: c.clientId });
      if (c.resourceId) return new identity.ManagedIdentityCredential({ ...common, resourceId: c.resourceId });
      return new identity.ManagedIdentityCredential(common);
    case 'clientSecret':
      return new identity.ClientSecretCredential(c.tenantId, c.clientId, c.clientSecret, common);
    case 'clientCertificate': {
      // Read once at start, as cloud-provider-azure does: a bad file stops the provider from being built.
      let bytes: Buffer;
      try {
        bytes = await readFile(c.certPath);
      } catch (err) {
        throw new Error(`azure: aadClientCertPath: reading ${c.certPath} failed: ${(err as Error).message}`, { cause: err });
      }
      let cert;
      try {
        cert = await readClientCertificate(bytes, c.certPassword);
      } catch (err) {
        throw new Error(`azure: aadClientCertPath ${c.certPath}: ${(err as Error).message}`, { cause: err });
      }
      if (cert.notAfter.getTime() < Date.now()) logger?.warn({ path: c.certPath, notAfter: cert.notAfter.toISOString() }, 'azure: the client certificate has expired; AAD will refuse it');
      logger?.info({ path: c.certPath, subject: cert.subject, thumbprint: cert.thumbprint, notAfter: cert.notAfter.toISOString() }, 'azure: client certificate read');
      // The chain goes along as x5c (cloud-provider-azure's SendCertificateChain), for subject-name/issuer authentication.
      return new identity.ClientCertificateCredential(c.tenantId, c.clientId, { certificate: cert.pem }, { ...common, sendCertificateChain: true });
    }
    case 'msiDataPlane': {
      const credential = await ReloadingMsiDataPlaneCredential.create(c.path, {
        // msi-dataplane: the identity's own (possibly regional) authority, the chain sent, no instance discovery.
        build: (id) => new identity.ClientCertificateCredential(id.tenantId, id.clientId, { certificate: id.certificate.pem }, {
          ...common, authorityHost: id.authorityHost, disableInstanceDiscovery: true, sendCertificateChain: true,
        }),
        logger,
      });
      logger?.info({ path: c.path, clientId: credential.identity.clientId, thumbprint: credential.identity.certificate.thumbprint, notBefore: credential.identity.notBefore.toISOString() }, 'azure: MSI data plane identity read');
      return credential;
    }
  }
}

/** A failed ARM call: ARM's error code and HTTP status up front (the SDK's paging error says little else). */
export class ArmError extends Error {
  constructor(message: string, readonly statusCode: number | undefined, readonly code: string | undefined, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'ArmError';
  }
}

function armError(err: unknown): unknown {
  const e = err as { name?: string; code?: string; statusCode?: number; message?: string };
  if (e?.name !== 'RestError') return err;
  const code = e.code && !/^(REQUEST_SEND_ERROR|PARSE_ERROR)$/.test(e.code) ? e.code : undefined;
  const head = [code, e.statusCode !== undefined ? `HTTP ${e.statusCode}` : undefined].filter(Boolean).join(', ');
  return new ArmError(head ? `${head}: ${e.message ?? ''}` : (e.message ?? 'ARM call failed'), e.statusCode, code, { cause: err });
}

/** Every item of a paged SDK listing. */
async function all<T>(pages: AsyncIterable<T>, signal?: AbortSignal): Promise<T[]> {
  const out: T[] = [];
  try {
    for await (const item of pages) {
      signal?.throwIfAborted();
      out.push(item);
    }
  } catch (err) {
    throw armError(err);
  }
  return out;
}

type ComputeClient = import('@azure/arm-compute').ComputeManagementClient;
type NetworkClient = import('@azure/arm-network').NetworkManagementClient;

/** ARM through the SDK clients. */
export class SdkArmSource implements AzureArmSource {
  private constructor(
    private readonly compute: ComputeClient,
    private readonly network: NetworkClient,
    private readonly callTimeoutMs: number,
    /** What went to ARM (each page, each retry), counted by the pipeline. */
    readonly stats: ArmCallStats,
    private readonly credential: TokenCredential,
  ) {}

  /** Stops what the credential keeps running (the MSI data plane identity's file watch). */
  async close(): Promise<void> {
    (this.credential as { close?: () => void }).close?.();
  }

  static async create(config: Pick<AzureCloudConfig, 'subscriptionId'>, env: AzureEnvironment, credential: TokenCredential, options: AzureArmOptions = {}): Promise<SdkArmSource> {
    const [{ ComputeManagementClient }, { NetworkManagementClient }] = await Promise.all([import('@azure/arm-compute'), import('@azure/arm-network')]);
    const endpoint = env.resourceManager.replace(/\/+$/, '');
    const scope = `${env.audience.replace(/\/+$/, '')}/.default`;
    const stats: ArmCallStats = { requests: 0, throttled: 0 };
    const common = {
      retryOptions: { maxRetries: options.maxRetries ?? 3, retryDelayInMs: options.retryDelayMs ?? 1_000, maxRetryDelayInMs: 30_000 },
      additionalPolicies: [
        { policy: armGatePolicy(options.gate ?? sharedArmGate, stats), position: 'perRetry' as const },
        ...(env.stackApiVersions ? [{ policy: azureStackApiVersionPolicy(), position: 'perCall' as const }] : []),
      ],
      userAgentOptions: { userAgentPrefix: 'node-address-ccm' },
      ...(options.tlsCA ? { tlsOptions: { ca: options.tlsCA } } : {}),
    };
    const compute = new ComputeManagementClient(credential, config.subscriptionId, { ...common, endpoint, credentials: { scopes: [scope] } } as ConstructorParameters<typeof ComputeManagementClient>[2]);
    // The classic network client builds URLs from $host and authenticates for credentialScopes.
    const network = new NetworkManagementClient(credential, config.subscriptionId, { ...common, endpoint, $host: endpoint, credentialScopes: [scope] } as import('@azure/arm-network').NetworkManagementClientOptionalParams);
    return new SdkArmSource(compute, network, options.callTimeoutMs ?? 60_000, stats, credential);
  }

  /** The caller's signal, cut off after the call budget. */
  private async within<T>(signal: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const budget = AbortSignal.timeout(this.callTimeoutMs);
    return run(signal ? AbortSignal.any([signal, budget]) : budget);
  }

  listVMs(resourceGroup: string, signal?: AbortSignal): Promise<AzureVM[]> {
    return this.within(signal, (s) => all(this.compute.virtualMachines.list(resourceGroup, { abortSignal: s }), s) as Promise<AzureVM[]>);
  }

  listVMStatuses(signal?: AbortSignal): Promise<AzureVM[]> {
    return this.within(signal, (s) => all(this.compute.virtualMachines.listAll({ statusOnly: 'true', abortSignal: s }), s) as Promise<AzureVM[]>);
  }

  listScaleSets(resourceGroup: string, signal?: AbortSignal): Promise<AzureScaleSet[]> {
    return this.within(signal, (s) => all(this.compute.virtualMachineScaleSets.list(resourceGroup, { abortSignal: s }), s) as Promise<AzureScaleSet[]>);
  }

  listScaleSetVMs(resourceGroup: string, scaleSet: string, signal?: AbortSignal): Promise<AzureScaleSetVM[]> {
    return this.within(signal, (s) => all(this.compute.virtualMachineScaleSetVMs.list(resourceGroup, scaleSet, { expand: 'instanceView', abortSignal: s }), s) as Promise<AzureScaleSetVM[]>);
  }

  listNICs(resourceGroup: string, signal?: AbortSignal): Promise<AzureNetworkInterface[]> {
    return this.within(signal, (s) => all(this.network.networkInterfaces.list(resourceGroup, { abortSignal: s }), s) as Promise<AzureNetworkInterface[]>);
  }

  listScaleSetNICs(resourceGroup: string, scaleSet: string, signal?: AbortSignal): Promise<AzureNetworkInterface[]> {
    return this.within(signal, (s) => all(this.network.networkInterfaces.listVirtualMachineScaleSetNetworkInterfaces(resourceGroup, scaleSet, { abortSignal: s }), s) as Promise<AzureNetworkInterface[]>);
  }

  listPublicIPs(resourceGroup: string, signal?: AbortSignal): Promise<AzurePublicIP[]> {
    return this.within(signal, (s) => all(this.network.publicIPAddresses.list(resourceGroup, { abortSignal: s }), s) as Promise<AzurePublicIP[]>);
  }

  listScaleSetPublicIPs(resourceGroup: string, scaleSet: string, signal?: AbortSignal): Promise<AzurePublicIP[]> {
    return this.within(signal, (s) => all(this.network.publicIPAddresses.listVirtualMachineScaleSetPublicIPAddresses(resourceGroup, scaleSet, { abortSignal: s }), s) as Promise<AzurePublicIP[]>);
  }
}
