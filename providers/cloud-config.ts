// The --cloud-config file, read in one place for every provider: whatever the cloud, an operator
// sees the same wording for a file that cannot be used, and every error about the file starts
// with the flag and the path ("--cloud-config /etc/ccm/cloud.conf: …").
import { readFile } from 'node:fs/promises';
import { readProblem } from '../src/util/file-argument.js';
import type { CloudConfigFile, ProviderContext } from './types.js';

/** `--cloud-config PATH: problem`, the form of every error about the file. */
export function cloudConfigError(path: string, problem: string, cause?: unknown): Error {
  return new Error(`--cloud-config ${path}: ${problem}`, cause === undefined ? undefined : { cause });
}

/** Reads the file whole; throws a one-line error naming the flag, the path and what is wrong. */
export async function readCloudConfig(path: string): Promise<CloudConfigFile> {
  try {
    return { path, text: await readFile(path, 'utf8') };
  } catch (err) {
    throw cloudConfigError(path, readProblem(err as NodeJS.ErrnoException), err);
  }
}

/**
 * The file of a provider that needs one. The registry builds such a provider only with its file,
 * so a missing one is a caller's bug (a factory called directly), not an operator's error.
 */
export function requiredCloudConfig(context: ProviderContext, provider: string): CloudConfigFile {
  if (!context.cloudConfig) throw new Error(`${provider}: built without its --cloud-config file (build it with createProvider)`);
  return context.cloudConfig;
}

/** True when the file holds nothing but white space. */
export function isBlank(file: CloudConfigFile): boolean {
  return file.text.trim() === '';
}

/**
 * Runs an adapter's parser on the file. Parsers name the file generically ("cloud-config
 * [global] project-id: required") because they also check files that are not a flag (deploy
 * manifests, tests); here the flag and the path take that name's place.
 */
export function parseCloudConfig<T>(file: CloudConfigFile, parse: (text: string) => T): T {
  try {
    return parse(file.text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw cloudConfigError(file.path, message.replace(/^cloud-config:?\s*/, ''), err);
  }
}
