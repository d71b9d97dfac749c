// --cloud-provider NAME → adapter. Each adapter folder registers one factory here.
import type { CloudProvider, ProviderFactory, ProviderOptions } from './types.js';

const factories = new Map<string, ProviderFactory>();

export function registerProvider(name: string, factory: ProviderFactory): void {
  factories.set(name, factory);
}

export function knownProviders(): string[] {
  return [...factories.keys()].sort();
}

export async function createProvider(name: string, options: ProviderOptions): Promise<CloudProvider> {
  const factory = factories.get(name);
  if (!factory) {
    throw new Error(`--cloud-provider: unknown provider "${name}" (known: ${knownProviders().join(', ') || 'none'})`);
  }
  return factory(options);
}
