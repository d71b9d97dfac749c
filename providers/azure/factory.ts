// `--cloud-provider azure`: the registry imports this module only when a process asks for azure;
// @azure/identity and the ARM clients are imported when the provider is built.
import { parseCloudConfig, requiredCloudConfig } from '../cloud-config.js';
import type { ProviderContext, ProviderFactory } from '../types.js';
import { createCredential, resolveEnvironment, SdkArmSource, type AzureArmOptions } from './arm.js';
import { parseAzureCloudConfig, type AzureConfigEnv } from './config.js';
import { AzureProvider, type AzureProviderOptions } from './provider.js';

export interface AzureFactoryOptions extends AzureArmOptions, Pick<AzureProviderOptions, 'listingMaxAgeMs' | 'concurrency' | 'now'> {
  /** The environment the workload identity webhook's variables are read from; default process.env. */
  env?: AzureConfigEnv;
}

/** `create` with the SDK's options open, so that tests can trust their emulator's certificate. */
export async function createAzureProvider(context: ProviderContext, options: AzureFactoryOptions = {}): Promise<AzureProvider> {
  const env = options.env ?? process.env;
  const config = parseCloudConfig(requiredCloudConfig(context, 'azure'), (text) => parseAzureCloudConfig(text, env));
  if (config.ignored.length > 0) context.logger?.info({ keys: config.ignored }, 'azure cloud-config: ignoring keys this controller does not use');
  const environment = await resolveEnvironment(config, options.tlsCA, context.logger);
  const credential = await createCredential(config, environment, options, context.logger);
  let source: SdkArmSource;
  try {
    source = await SdkArmSource.create(config, environment, credential, options);
  } catch (err) {
    (credential as { close?: () => void }).close?.();
    throw err;
  }
  context.logger?.info({ subscriptionId: config.subscriptionId, resourceGroup: config.resourceGroup, vmType: config.vmType, credential: config.credential.kind, resourceManager: environment.resourceManager, ...(environment.stackApiVersions ? { apiVersions: 'azure-stack' } : {}), nodeIPConfigurations: config.nodeIPConfigurations }, 'azure: provider ready');
  return new AzureProvider(config, source, { logger: context.logger, listingMaxAgeMs: options.listingMaxAgeMs, concurrency: options.concurrency, now: options.now });
}

export const create: ProviderFactory = (context) => createAzureProvider(context);
