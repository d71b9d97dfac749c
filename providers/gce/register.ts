// `--cloud-provider gce`: the registry imports this module only when a process asks for gce; the
// Compute client itself is imported when the provider is built.
import type { ProviderFactory } from '../types.js';
import { createGceProvider } from './index.js';

export const create: ProviderFactory = (options) => createGceProvider(options);
