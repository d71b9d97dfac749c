// Public surface of the static adapter.
export { StaticProvider, type StaticProviderOptions } from './provider.js';
export { parseStaticCloudConfig, StaticConfigError, type StaticCloudConfig, type StaticNode } from './config.js';
export { canonicalIP, canonicalCIDR } from '../ip.js';
