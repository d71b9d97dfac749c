// What a provider module exports: `export default defineProvider({ name, create })`. The helper
// does nothing at run time; it is there so that TypeScript checks an adapter against the contract
// (providers/types.ts) where it is written, not when `run` loads it.
import type { CloudConfigUse } from '../registry.js';
import type { ProviderFactory } from '../types.js';

export interface ProviderDefinition {
  /** What --cloud-provider names; the provider create() returns has the same name. */
  name: string;
  /** What --cloud-config means to it (default `optional`: read when given). */
  cloudConfig?: CloudConfigUse;
  /** A blank --cloud-config file is a valid configuration (default: an error). */
  acceptsBlankCloudConfig?: boolean;
  /** What the --cloud-config file is, named when it is missing or blank. */
  cloudConfigHint?: string;
  /** How long one call may take before it fails and its batch is asked again in halves (default 60; at most 600). */
  timeoutSeconds?: number;
  /** Builds the provider from the --cloud-config file (read already) and a logger. */
  create: ProviderFactory;
}

/** The module's default export, typed. */
export function defineProvider<const D extends ProviderDefinition>(definition: D): D {
  return definition;
}
