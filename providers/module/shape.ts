// The shape of what a provider module exports and of the provider its create() builds, checked
// before anything uses them, each problem in words an adapter's author can act on. Pure.
import type { ProviderDefinition } from './define.js';

const PROVIDER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const CLOUD_CONFIG_USES = ['required', 'optional', 'none'];
/** The batched methods every provider has, and the optional ones. */
export const BATCHED_METHODS = ['instancesMetadata', 'instancesExist', 'instancesShutdown'] as const;
const OPTIONAL_METHODS = ['familyHint', 'instanceKey', 'requestPodCIDRs', 'close'] as const;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'missing';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v);
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * The definition a module's namespace holds: its default export, from defineProvider (or a bare
 * factory function, whose provider then names itself). Throws listing every problem.
 */
export function definitionOf(namespace: Record<string, unknown>): ProviderDefinition | { create: ProviderDefinition['create']; name?: undefined } {
  const d = namespace.default;
  if (d === undefined) {
    const named = Object.keys(namespace).sort();
    throw new Error(`no default export (expected "export default defineProvider({ name, create })"${named.length ? `; it exports ${named.join(', ')}` : ''})`);
  }
  if (typeof d === 'function') return { create: d as ProviderDefinition['create'] };
  if (typeof d !== 'object' || d === null || Array.isArray(d)) throw new Error(`the default export is ${describe(d)}, not defineProvider({ name, create })`);
  const def = d as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof def.name !== 'string' || !PROVIDER_NAME.test(def.name)) problems.push(`name is ${describe(def.name)}, not a lower-case name of letters, digits and "-"`);
  if (typeof def.create !== 'function') problems.push(`create is ${describe(def.create)}, not a function`);
  if (def.cloudConfig !== undefined && !CLOUD_CONFIG_USES.includes(def.cloudConfig as string)) problems.push(`cloudConfig is ${describe(def.cloudConfig)}, not one of ${CLOUD_CONFIG_USES.join(', ')}`);
  if (def.acceptsBlankCloudConfig !== undefined && typeof def.acceptsBlankCloudConfig !== 'boolean') problems.push(`acceptsBlankCloudConfig is ${describe(def.acceptsBlankCloudConfig)}, not true or false`);
  if (def.cloudConfigHint !== undefined && typeof def.cloudConfigHint !== 'string') problems.push(`cloudConfigHint is ${describe(def.cloudConfigHint)}, not a string`);
  const t = def.timeoutSeconds;
  if (t !== undefined && (typeof t !== 'number' || !(t > 0) || t > 600)) problems.push(`timeoutSeconds is ${describe(t)}${typeof t === 'number' ? ` (${t})` : ''}, not a number of seconds in (0, 600]`);
  if (problems.length > 0) throw new Error(`the default export is not a provider definition: ${problems.join('; ')}`);
  return def as unknown as ProviderDefinition;
}

/** What is wrong with the object create() resolved to, as a provider named `name`: empty when nothing. */
export function providerShapeProblems(p: unknown, name: string | undefined): string[] {
  if (typeof p !== 'object' || p === null) return [`create() resolved to ${describe(p)}, not a provider object`];
  const o = p as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof o.name !== 'string' || o.name === '') problems.push(`name is ${describe(o.name)}, not a string`);
  else if (name !== undefined && o.name !== name) problems.push(`name is ${JSON.stringify(o.name)}, not ${JSON.stringify(name)} as the definition says`);
  else if (name === undefined && !PROVIDER_NAME.test(o.name)) problems.push(`name is ${JSON.stringify(o.name)}, not a lower-case name of letters, digits and "-"`);
  for (const m of BATCHED_METHODS) {
    if (typeof o[m] !== 'function') problems.push(`${m} is ${describe(o[m])}, not a function`);
    // (nodes, signal?): a per-node method (node, zone, signal) would take more.
    else if ((o[m] as (...a: unknown[]) => unknown).length > 2) problems.push(`${m} takes ${(o[m] as (...a: unknown[]) => unknown).length} parameters, not (nodes, signal?)`);
  }
  for (const m of OPTIONAL_METHODS) if (o[m] !== undefined && typeof o[m] !== 'function') problems.push(`${m} is ${describe(o[m])}, not a function`);
  return problems;
}

/** What is wrong with a batched method's answer to an empty batch (a Map with no entries): undefined when nothing. */
export function emptyBatchProblem(method: string, answer: unknown): string | undefined {
  if (!(answer instanceof Map)) return `${method}([]) resolved to ${describe(answer)}, not a Map (a batched method answers a Map of node name to outcome)`;
  if (answer.size !== 0) return `${method}([]) answered for ${answer.size} node(s) it was not asked about`;
  return undefined;
}
