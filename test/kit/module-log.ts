// Which modules a child process loaded: pass env() to the process (NODE_OPTIONS --import of the
// recording hook), then read() the URLs it resolved and required.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const hook = path.join(path.dirname(fileURLToPath(import.meta.url)), 'module-log-hook.mjs');

/**
 * Packages of the cloud SDKs (and what only they pull in): none may load unless asked for. With
 * them node-forge, which the azure adapter loads only to read a client certificate in PKCS#12.
 */
export const CLOUD_SDK_PACKAGES = ['@aws-sdk/', '@smithy/', '@google-cloud/', 'google-gax', 'google-auth-library', '@grpc/', 'protobufjs', '@azure/', '@azure-rest/', '@typespec/ts-http-runtime', 'node-forge'];

export interface ModuleLog {
  env: NodeJS.ProcessEnv;
  /** Every module URL the process loaded (deduplicated). */
  read(): string[];
  /** Packages (under node_modules) from `names` that the process loaded. */
  packagesLoaded(names: readonly string[]): string[];
  dispose(): void;
}

export function moduleLog(): ModuleLog {
  const dir = mkdtempSync(path.join(tmpdir(), 'module-log-'));
  const file = path.join(dir, 'modules.txt');
  const read = () => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return []; // nothing loaded yet: the process has not started
    }
    return [...new Set(text.split('\n').filter(Boolean))];
  };
  return {
    env: { MODULE_LOG: file, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${hook}`.trim() },
    read,
    packagesLoaded: (names) => names.filter((n) => read().some((url) => url.includes(`/node_modules/${n}`))),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
