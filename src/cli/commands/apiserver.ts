// `node-address-ccm apiserver`: runs the Kubernetes API server double in the foreground, for
// humans and scripts that need a cluster API without a cluster.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { USAGE_EXIT_CODE, UsageError } from '../exit-codes.js';
import { checkFolderFlag, checkOutputFlag, readFileFlag } from '../file-flags.js';
import type { RbacPolicy } from '../../double/rbac.js';
import type { UserSpec } from '../../double/server.js';

interface ApiserverOptions {
  port: string;
  writeKubeconfig?: string;
  rbac?: string;
  user: string[];
  historySize: string;
  logLevel: string;
  https?: boolean;
  faults?: string;
  faultSeed: string;
  adminToken?: string;
}

function usage(message: string): UsageError {
  // main.ts keeps an exit code already set, so the usage status survives the rethrow.
  process.exitCode = USAGE_EXIT_CODE;
  return new UsageError(message);
}

function intFlag(flag: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw usage(`${flag} ${JSON.stringify(value)}: expected an integer in ${min}..${max}`);
  return Number(value);
}

/** Parses one --user NAME:TOKEN[:GROUP1,GROUP2] value. */
export function parseUserFlag(value: string): UserSpec {
  // Service-account names contain colons; the token and groups are the last fields.
  const m = value.match(/^(.+?):([^:]+)(?::([^:]*))?$/);
  const sa = value.match(/^(system:serviceaccount:[^:]+:[^:]+):([^:]+)(?::([^:]*))?$/);
  const parts = sa ?? m;
  if (!parts) throw usage(`--user ${JSON.stringify(value)}: expected NAME:TOKEN[:GROUP,GROUP]`);
  return { name: parts[1], token: parts[2], groups: parts[3] ? parts[3].split(',').filter((g) => g !== '') : [] };
}

export function register(program: Command): void {
  program
    .command('apiserver')
    .description('run the Kubernetes API server double on 127.0.0.1 until interrupted (prints its URL)')
    .option('--port <n>', 'port on 127.0.0.1 (0: any free port)', '0')
    .option('--write-kubeconfig <file>', 'write an admin kubeconfig to this file')
    .option('--rbac <dir>', 'enforce RBAC from the Role/ClusterRole/binding YAML files in this folder')
    .option('--user <name:token[:groups]>', 'a bearer token and the user (and groups) it authenticates as; repeatable', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--history-size <n>', 'watch events kept for resuming watches', '10000')
    .option('--https', 'serve HTTPS with a self-signed certificate for 127.0.0.1 (needs openssl); the kubeconfig trusts it')
    .option('--faults <file>', 'fault plan (YAML or JSON: rules, blackout, watchCloses, seed) applied at start; read and replaced while running at /_double/faults with the admin token')
    .option('--admin-token <token>', 'bearer token of the admin user (group system:masters; default: random, in --write-kubeconfig)')
    .option('--fault-seed <n>', 'seed of the random draws of errorRate rules (a plan\'s seed overrides it)', '1')
    .option('--log-level <level>', 'log level', 'info')
    .action(async (opts: ApiserverOptions) => {
      const port = intFlag('--port', opts.port, 0, 65535);
      const historySize = intFlag('--history-size', opts.historySize, 1, 10_000_000);
      const seed = intFlag('--fault-seed', opts.faultSeed, 0, 2 ** 32 - 1);
      const users = opts.user.map(parseUserFlag);
      if (opts.adminToken !== undefined && !/^[\x21-\x7e]{1,256}$/.test(opts.adminToken)) throw usage(`--admin-token ${JSON.stringify(opts.adminToken)}: expected 1 to 256 characters, printable ASCII without spaces`);
      // Files before anything starts: each slip is one line naming the flag.
      const faultsText = opts.faults === undefined ? undefined : readFileFlag('--faults', opts.faults, 'a fault plan (YAML or JSON: rules, blackout, watchCloses, seed)');
      if (opts.rbac !== undefined) checkFolderFlag('--rbac', opts.rbac, /\.(ya?ml|json)$/, 'YAML or JSON files (*.yaml, *.yml, *.json) with Roles, ClusterRoles and bindings');
      if (opts.writeKubeconfig !== undefined) checkOutputFlag('--write-kubeconfig', opts.writeKubeconfig);
      // Imported when the command runs: --help loads no server or logger.
      const [{ createLogger }, { loadRbacDir }, { startApiServerDouble }, { parseFaultPlanText }] = await Promise.all([
        import('../../log.js'), import('../../double/rbac.js'), import('../../double/server.js'), import('../../double/faults.js'),
      ]);
      let plan;
      if (opts.faults !== undefined) {
        try {
          plan = parseFaultPlanText(faultsText as string);
        } catch (err) {
          throw usage(`--faults ${opts.faults}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      let rbac: RbacPolicy | undefined;
      if (opts.rbac !== undefined) {
        try {
          rbac = loadRbacDir(opts.rbac);
        } catch (err) {
          throw usage(`--rbac ${opts.rbac}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      let logger;
      try {
        logger = createLogger({ level: opts.logLevel, name: 'apiserver-double', destination: process.stderr });
      } catch (err) {
        throw usage(err instanceof Error ? err.message : String(err));
      }
      const server = await startApiServerDouble({ port, historySize, rbac, users, logger, tls: opts.https === true, seed, adminToken: opts.adminToken });
      if (plan) {
        server.faults.applyPlan(plan);
        logger.info({ plan }, 'fault plan applied');
      }
      if (opts.writeKubeconfig) writeFileSync(opts.writeKubeconfig, server.kubeconfig, { mode: 0o600 });
      process.stdout.write(`${server.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void server.stop().then(resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
