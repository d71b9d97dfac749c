// Files and folders named on the command line are checked here, so that whatever the flag an
// operator reads one line in the same words ("--node /tmp/n.yaml: cannot read: no such file"),
// never the system call's text ("EISDIR: illegal operation on a directory, read") or a parser's
// internals about a file that was simply empty.
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// What an operator can act on, by errno.
const READ_PROBLEMS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  ENOTDIR: 'a parent of the path is not a directory',
  EISDIR: 'it is a directory, not a file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ELOOP: 'too many levels of symbolic links',
};

/** `cannot read: <what is wrong>` for a failed read. */
export function readProblem(err: NodeJS.ErrnoException): string {
  return `cannot read: ${READ_PROBLEMS[err.code ?? ''] ?? err.message}`;
}

/** The one form of every such error: the flag, the path, what is wrong. */
export function fileArgumentError(flag: string, file: string, problem: string, cause?: unknown): Error {
  return new Error(`${flag} ${file}: ${problem}`, cause === undefined ? undefined : { cause });
}

export interface FileArgumentOptions {
  /** `-` reads standard input. */
  stdin?: boolean;
  /** What the file should hold, said when it is empty ("a Node object, as kubectl get node NAME -o yaml prints it"). */
  expected: string;
}

/** Reads a file argument whole; a missing, unreadable, directory or blank file is a one-line error. */
export function readFileArgument(flag: string, file: string, options: FileArgumentOptions): string {
  const fromStdin = options.stdin === true && file === '-';
  const where = fromStdin ? '- (standard input)' : file;
  let text: string;
  try {
    text = readFileSync(fromStdin ? 0 : file, 'utf8');
  } catch (err) {
    throw fileArgumentError(flag, where, readProblem(err as NodeJS.ErrnoException), err);
  }
  if (text.trim() === '') throw fileArgumentError(flag, where, `${fromStdin ? 'nothing was read' : 'the file is empty'}; expected ${options.expected}`);
  return text;
}

/** A folder argument must exist, be a folder, be readable, and hold at least one file named `pattern`. */
export function checkFolderArgument(flag: string, folder: string, pattern: RegExp, expected: string): void {
  let names: string[];
  try {
    if (!statSync(folder).isDirectory()) throw fileArgumentError(flag, folder, 'it is a file, not a folder');
    names = readdirSync(folder);
  } catch (err) {
    if (!(err as NodeJS.ErrnoException).code) throw err;
    throw fileArgumentError(flag, folder, readProblem(err as NodeJS.ErrnoException).replace('no such file', 'no such folder'), err);
  }
  if (!names.some((n) => pattern.test(n))) throw fileArgumentError(flag, folder, `the folder holds no ${expected}`);
}

/** A file the command will write: its folder must exist and be writable, and it must not be a folder. */
export function checkOutputFile(flag: string, file: string): void {
  try {
    if (statSync(file).isDirectory()) throw fileArgumentError(flag, file, 'it is a directory, not a file');
  } catch (err) {
    if (!(err as NodeJS.ErrnoException).code) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw fileArgumentError(flag, file, `cannot write: ${READ_PROBLEMS[code ?? ''] ?? (err as Error).message}`, err);
  }
  const parent = path.dirname(path.resolve(file));
  try {
    if (!statSync(parent).isDirectory()) throw fileArgumentError(flag, file, `${parent} is not a directory`);
    accessSync(parent, constants.W_OK);
  } catch (err) {
    if (!(err as NodeJS.ErrnoException).code) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw fileArgumentError(flag, file, code === 'ENOENT' ? `cannot write: no folder ${parent}` : `cannot write: ${READ_PROBLEMS[code ?? ''] ?? (err as Error).message}`, err);
  }
}
