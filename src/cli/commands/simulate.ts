// `node-address-ccm simulate` (what `npm start` runs): the controller manager against an embedded
// simulated cluster, with progress and a final table.
import type { Command } from 'commander';
import { checkOutputFile } from '../../util/file-argument.js';
import { UsageError } from '../exit-codes.js';
import type { Logger } from '../../log.js';
import { parseIntFlag, parseGoDuration } from '../../manager/options.js';

interface SimulateFlags {
  nodes: string;
  featureGates?: string;
  logLevel: string;
  timeout: string;
  fullTable?: boolean;
  keep?: boolean;
  port: string;
  kubeconfigOut?: string;
}

export function register(program: Command): void {
  program
    .command('simulate')
    .description('run the controller manager against an embedded simulated cluster (API server double, static cloud) and show the outcome')
    .option('--nodes <n>', 'number of tainted nodes (cycling through the KEP-3705 cases); without --keep, the node lifecycle demo adds two not-Ready ones', '12')
    .option('--feature-gates <list>', 'feature gates, e.g. CloudDualStackNodeIPs=false')
    .option('--timeout <duration>', 'give up after this long', '60s')
    .option('--full-table', 'print every node even for large clusters')
    .option('--keep', 'the sandbox: keep the cluster and the controller manager running after the summary, write a kubeconfig and print what to try with kubectl, until Ctrl-C')
    .option('--port <n>', 'port of the API server double on 127.0.0.1 (0: any free port, printed)', '0')
    .option('--kubeconfig-out <file>', 'with --keep: write the kubeconfig here (default: in the sandbox\'s temporary folder, removed on exit)')
    .option('--log-level <level>', 'controller logs on stderr: fatal, error, warn, info, debug, trace or silent', 'silent')
    .action(async (flags: SimulateFlags) => {
      // Flags are judged first, with light modules only; the cluster and the Kubernetes client are
      // imported once they pass (and --help loads neither).
      const [{ createLogger }, { parseFeatureGates }, { SIM_MAX_NODES }] = await Promise.all([import('../../log.js'), import('../../featuregates/index.js'), import('../../simulation/cluster/size.js')]);
      let nodes: number;
      let timeoutMs: number;
      let logger: Logger;
      let port: number;
      try {
        port = parseIntFlag('--port', flags.port, 0, 65535);
        if (flags.kubeconfigOut !== undefined && flags.keep !== true) throw new Error(`--kubeconfig-out: only with --keep (got "${flags.kubeconfigOut}")`);
        if (flags.kubeconfigOut !== undefined && flags.kubeconfigOut.trim() === '') throw new Error('--kubeconfig-out: must not be empty');
        if (flags.kubeconfigOut !== undefined) checkOutputFile('--kubeconfig-out', flags.kubeconfigOut);
        nodes = parseIntFlag('--nodes', flags.nodes, 1, SIM_MAX_NODES);
        timeoutMs = parseGoDuration('--timeout', flags.timeout);
        if (timeoutMs <= 0) throw new Error(`--timeout: must be positive, got "${flags.timeout}"`);
        logger = createLogger({ level: flags.logLevel, destination: process.stderr });
        parseFeatureGates(flags.featureGates);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      const { runSimulation } = await import('../../simulation/cluster/run.js');
      // The sandbox runs until Ctrl-C (or SIGTERM), then stops everything cleanly.
      const stop = new AbortController();
      let firstSignalAt = 0;
      const onSignal = (): void => {
        // Another Ctrl-C while stopping: wait no longer. Not within a second of the first, which
        // may be the same Ctrl-C twice (`npm start` forwards the terminal's SIGINT to us too).
        if (stop.signal.aborted) {
          if (Date.now() - firstSignalAt < 1000) return;
          process.stderr.write('interrupted again: exiting without waiting for the shutdown\n');
          process.exit(130);
        }
        firstSignalAt = Date.now();
        stop.abort();
      };
      if (flags.keep === true) {
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
      }
      let result;
      try {
        result = await runSimulation({
          nodes, timeoutMs, logger, out: process.stdout, fullTable: flags.fullTable === true, port,
          ...(flags.keep === true ? { keep: { until: stop.signal, ...(flags.kubeconfigOut !== undefined ? { kubeconfigOut: flags.kubeconfigOut } : {}) } } : {}),
          ...(flags.featureGates !== undefined ? { flags: { featureGates: flags.featureGates } } : {}),
        });
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('--')) throw new UsageError(err.message);
        throw err;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
      process.exitCode = result.converged && result.asExpected ? 0 : 1;
    });
}
