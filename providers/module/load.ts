// --cloud-provider-module: imports an ES module (a file, or a package installed where this one
// can resolve it), reads the provider its default export defines and registers it under the name
// --cloud-provider gives. Every error is one line naming the flag and the module. What create()
// builds is checked (shape, an empty batch answered with an empty Map) and then used only behind
// CheckedProvider, so its answers go through the same checks as every other call.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fileArgumentError } from '../../src/util/file-argument.js';
import { checkModuleArgument, isModulePath } from '../module-argument.js';
import { CheckedProvider } from '../checked-provider.js';
import { isBuiltInProvider, registerProvider } from '../registry.js';
import type { CloudProvider, ProviderFactory, ProviderLogger } from '../types.js';
import type { ProviderDefinition } from './define.js';
import { BATCHED_METHODS, definitionOf, emptyBatchProblem, providerShapeProblems } from './shape.js';

const FLAG = '--cloud-provider-module';
const DEFAULT_TIMEOUT_S = 60;
/** An empty batch needs no cloud: a provider that takes longer to answer one is stuck. */
const PROBE_TIMEOUT_MS = 10_000;

function moduleError(spec: string, problem: string, cause?: unknown): Error {
  return fileArgumentError(FLAG, spec, problem, cause);
}

function firstLine(err: unknown): string {
  const e = err as Error | undefined;
  const text = e instanceof Error ? `${e.name !== 'Error' ? `${e.name}: ` : ''}${e.message}` : String(err);
  return text.split('\n')[0] ?? text;
}

async function importModule(spec: string): Promise<Record<string, unknown>> {
  checkModuleArgument(spec);
  const target = !isModulePath(spec) || spec.startsWith('file:') ? spec : pathToFileURL(path.resolve(spec)).href;
  try {
    // Not a literal: a bundler leaves it to Node, which resolves packages from this installation.
    return (await import(target)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!isModulePath(spec) && code === 'ERR_MODULE_NOT_FOUND' && firstLine(err).includes(`'${spec}'`)) {
      throw moduleError(spec, 'cannot import: no such package is installed where node-address-ccm can resolve it (next to it, in node_modules)', err);
    }
    throw moduleError(spec, `cannot import: ${firstLine(err)}`, err);
  }
}

/** Resolves within `ms` or rejects naming what did not answer. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000}s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The shape problems of `p`, including how its batched methods answer an empty batch. */
async function problemsOf(p: unknown, name: string): Promise<string[]> {
  const problems = providerShapeProblems(p, name);
  if (problems.length > 0) return problems;
  const provider = p as CloudProvider;
  for (const m of BATCHED_METHODS) {
    try {
      const answer = await within(Promise.resolve(provider[m]([])), PROBE_TIMEOUT_MS, `${m}([])`);
      const problem = emptyBatchProblem(m, answer);
      if (problem) problems.push(problem);
    } catch (err) {
      problems.push(`${m}([]) failed: ${firstLine(err)}`);
    }
  }
  return problems;
}

/**
 * Imports `spec` and registers its provider as `name` (what --cloud-provider says). After this,
 * createProvider(name) builds it: its --cloud-config read as its definition says, its create()
 * called, the result checked and wrapped.
 */
export async function loadProviderModule(spec: string, name: string, logger?: ProviderLogger): Promise<void> {
  if (isBuiltInProvider(name)) throw moduleError(spec, `--cloud-provider ${name} is a built-in provider; a module's provider needs a name of its own`);
  const namespace = await importModule(spec);
  let def;
  try {
    def = definitionOf(namespace);
  } catch (err) {
    throw moduleError(spec, (err as Error).message, err);
  }
  if (def.name !== undefined && def.name !== name) throw moduleError(spec, `defines provider "${def.name}", but --cloud-provider names "${name}"`);
  const timeoutMs = ((def as Partial<ProviderDefinition>).timeoutSeconds ?? DEFAULT_TIMEOUT_S) * 1000;
  const create = def.create;
  const factory: ProviderFactory = async (context) => {
    let built: unknown;
    try {
      built = await create(context);
    } catch (err) {
      // The adapter's own error about its --cloud-config (parseCloudConfig) already names the flag.
      if (err instanceof Error && err.message.startsWith('--')) throw err;
      throw moduleError(spec, `create() failed: ${firstLine(err)}`, err);
    }
    const problems = await problemsOf(built, name);
    if (problems.length > 0) {
      await Promise.resolve((built as Partial<CloudProvider> | null)?.close?.()).catch(() => {});
      throw moduleError(spec, `the provider create() built is not a CloudProvider: ${problems.join('; ')}`);
    }
    return new CheckedProvider(built as CloudProvider, { timeoutMs, ...(logger ? { logger } : {}) });
  };
  const d: Partial<ProviderDefinition> = def;
  registerProvider(name, factory, {
    summary: `${name} (from ${spec})`,
    ...(d.cloudConfig !== undefined ? { cloudConfig: d.cloudConfig } : {}),
    ...(d.acceptsBlankCloudConfig !== undefined ? { acceptsBlankCloudConfig: d.acceptsBlankCloudConfig } : {}),
    ...(d.cloudConfigHint !== undefined ? { cloudConfigHint: d.cloudConfigHint } : {}),
  });
}
