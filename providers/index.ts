// The provider registry. Importing this module loads no adapter: each one (and its cloud SDK) is
// imported when createProvider() is asked for it.
export { checkProviderFlags, createProvider, knownProviders, providerInfo, registerProvider, type CloudConfigUse, type ProviderInfo } from './registry.js';
export type { CloudConfigFile, ProviderContext, ProviderFactory, ProviderOptions } from './types.js';
