// `node-address-ccm simulate` (what `npm start` runs): the controller manager against an embedded
// simulated cluster, with progress and a final table.
import type { Command } from 'commander';
import { UsageError } from '../exit-codes.js';
import type { Logger } from '../../log.js';
import { parseIntFlag, parseGoDuration } from '../../manager/options.js';
import { SIM_MAX_NODES } from '../../sim/cluster/scenario.js';

interface SimulateFlags {
  nodes: string;
  featureGates?: string;
  logLevel: string;
  timeout: string;
  fullTable?: boolean;
}

export function register(program: Command): void {
  program
    .command('simulate')
    .description('run the controller manager against an embedded simulated cluster (API server double, static cloud) and show the outcome')
    .option('--nodes <n>', 'number of tainted nodes (cycling through the KEP-3705 cases)', '12')
    .option('--feature-gates <list>', 'feature gates, e.g. CloudDualStackNodeIPs=false')
    .option('--timeout <duration>', 'give up after this long', '60s')
    .option('--full-table', 'print every node even for large clusters')
    .option('--log-level <level>', 'controller logs on stderr: fatal, error, warn, info, debug, trace or silent', 'silent')
    .action(async (flags: SimulateFlags) => {
      // Imported when the command runs: --help loads no Kubernetes client.
      const [{ createLogger }, { runSimulation }] = await Promise.all([import('../../log.js'), import('../../sim/cluster/run.js')]);
      let nodes: number;
      let timeoutMs: number;
      let logger: Logger;
      try {
        nodes = parseIntFlag('--nodes', flags.nodes, 1, SIM_MAX_NODES);
        timeoutMs = parseGoDuration('--timeout', flags.timeout);
        if (timeoutMs <= 0) throw new Error(`--timeout: must be positive, got "${flags.timeout}"`);
        logger = createLogger({ level: flags.logLevel, destination: process.stderr });
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      let result;
      try {
        result = await runSimulation({
          nodes, timeoutMs, logger, out: process.stdout, fullTable: flags.fullTable === true,
          ...(flags.featureGates !== undefined ? { flags: { featureGates: flags.featureGates } } : {}),
        });
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('--')) throw new UsageError(err.message);
        throw err;
      }
      process.exitCode = result.converged && result.asExpected ? 0 : 1;
    });
}
