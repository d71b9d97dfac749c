// The cloud adapters behind one interface (types.ts), built by name through the registry.
// Importing this module loads no adapter: each one (and its cloud SDK) is imported when
// createProvider() is asked for it.
export { checkProviderFlags, createProvider, knownProviders, providerInfo, registerProvider, type CloudConfigUse, type ProviderInfo } from './registry.js';
export type { CloudConfigFile, ProviderContext, ProviderFactory, ProviderOptions } from './types.js';
