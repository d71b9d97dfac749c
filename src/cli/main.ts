#!/usr/bin/env node
// Entry point of the `node-address-ccm` binary. Each subcommand lives in its own file under
// ./commands and registers itself on the shared commander program.
import { Command, CommanderError } from 'commander';
import { USAGE_EXIT_CODE, UsageError } from './exit-codes.js';
import { registerCommands } from './commands/index.js';
import { nearest } from './suggest.js';

export function buildProgram(): Command {
  const program = new Command('node-address-ccm')
    .description('KEP-3705 node addresses and multi-range pod-CIDR IPAM for external cloud providers')
    .showHelpAfterError()
    .exitOverride();
  registerCommands(program);
  return program;
}

/**
 * A first word that names no command is a slip, not an argument of the default command `run`
 * (which takes none): say so in one line, with the nearest command.
 */
export function checkCommandWord(program: Command, argv: readonly string[]): void {
  const word = argv[2];
  if (word === undefined || word.startsWith('-')) return;
  const names = program.commands.flatMap((c) => [c.name(), ...c.aliases()]);
  if (names.includes(word) || word === 'help') return;
  const guess = nearest(word, program.commands.map((c) => c.name()));
  throw new UsageError(`unknown command ${JSON.stringify(word)}${guess !== undefined ? ` (did you mean ${guess}?)` : ''}; the commands are ${program.commands.map((c) => c.name()).join(', ')} (node-address-ccm --help)`);
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    checkCommandWord(program, argv);
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version are "errors" with exit code 0 in commander.
      process.exitCode = err.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
      return;
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    if (err instanceof UsageError) {
      process.exitCode = USAGE_EXIT_CODE;
    } else if (!process.exitCode) {
      process.exitCode = 1;
    }
  }
}

// `simulate | head` closes the pipe early: stop quietly as other Unix tools do, not with an
// unhandled EPIPE stack (a running `run` logs to stdout too, and then has no reader either).
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

await main(process.argv);
