// One line per subcommand; each file exports a `register(program)` function.
import type { Command } from 'commander';
import { register as registerExplain } from './explain.js';
import { register as registerApiserver } from './apiserver.js';
import { register as registerPlan } from './plan.js';
import { register as registerRun } from './run.js';
import { register as registerSimulate } from './simulate.js';
import { register as registerAudit } from './audit.js';

export function registerCommands(_program: Command): void {
  // Subcommands register here.
  registerExplain(_program);
  registerApiserver(_program);
  registerPlan(_program);
  registerRun(_program);
  registerSimulate(_program);
  registerAudit(_program);
}
