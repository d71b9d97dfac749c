// File and folder flags of the commands, checked through one module (src/util/file-argument.ts)
// so every command answers a missing, empty, folder-for-file or unreadable path the same way:
// one line naming the flag and the path, exit 2.
import { checkFolderArgument, checkOutputFile, readFileArgument } from '../util/file-argument.js';
import { UsageError } from './exit-codes.js';

function asUsage<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The text of an input file flag (`-` is standard input). */
export function readFileFlag(flag: string, file: string, expected: string): string {
  return asUsage(() => readFileArgument(flag, file, { stdin: true, expected }));
}

/** A folder flag that must hold files named like `pattern`. */
export function checkFolderFlag(flag: string, folder: string, pattern: RegExp, expected: string): void {
  asUsage(() => checkFolderArgument(flag, folder, pattern, expected));
}

/** An output file flag: checked before the command starts anything, so it never fails at the end. */
export function checkOutputFlag(flag: string, file: string): void {
  asUsage(() => checkOutputFile(flag, file));
}
