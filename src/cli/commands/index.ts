// One line per subcommand; each file exports a `register(program)` function.
import type { Command } from 'commander';

export function registerCommands(_program: Command): void {
  // Subcommands register here.
}
