// Public surface of the static adapter.
export { StaticCloudProvider, type StaticProviderOptions } from './provider.js';
export { parseStaticCloudConfig, StaticConfigError, type StaticCloudConfig, type StaticNode } from './config.js';
export { canonicalIP, canonicalCIDR, ipFamily, type IPFamily } from './ip.js';
