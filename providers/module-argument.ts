// The value of --cloud-provider-module, judged before anything is imported: a file path must name
// a readable file (one line naming the flag and the path otherwise); a package name is judged
// when it is imported.
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileArgumentError, readProblem } from '../src/util/file-argument.js';

const FLAG = '--cloud-provider-module';

/** A file path (relative to the working folder, or absolute), as opposed to a package name. */
export function isModulePath(spec: string): boolean {
  return spec.startsWith('.') || path.isAbsolute(spec) || spec.startsWith('file:') || /\.(m?js|cjs|ts)$/.test(spec);
}

/** The flag's value, checked without importing anything: a path must name a readable file. */
export function checkModuleArgument(spec: string): void {
  if (!isModulePath(spec) || spec.startsWith('file:')) return;
  try {
    if (statSync(spec).isDirectory()) throw fileArgumentError(FLAG, spec, 'it is a directory, not a file (name the module file itself)');
  } catch (err) {
    if (!(err as NodeJS.ErrnoException).code) throw err;
    throw fileArgumentError(FLAG, spec, readProblem(err as NodeJS.ErrnoException), err);
  }
}

