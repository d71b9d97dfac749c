// `node-address-ccm audit`: reads a live cluster (kubeconfig) and lists overlaps among node
// addresses, pod CIDRs, ClusterCIDRs and Service CIDRs, pod CIDRs outside every pool, and pod
// CIDRs node-address-ccm did not allocate (no ipam.node-address-ccm.io/pool annotation).
// Exit status: 0 no conflict (warnings and information allowed), 1 a conflict, 2 bad flags,
// 3 the cluster could not be read.
import type { Command } from 'commander';
import type { KubeClient } from '../../kube/client.js';
import type { CollectOptions } from '../../audit/collect.js';
import { USAGE_EXIT_CODE, UsageError } from '../exit-codes.js';

export const AUDIT_CONFLICT_EXIT_CODE = 1;
export const AUDIT_UNREACHABLE_EXIT_CODE = 3;

interface AuditFlags {
  kubeconfig?: string;
  clusterCidr?: string;
  serviceClusterIpRange?: string;
  output: string;
}

function usage(message: string): UsageError {
  process.exitCode = USAGE_EXIT_CODE;
  return new UsageError(message);
}

/** The CIDR module comes in as an argument: it is imported only when the command runs. */
function checkCIDRs({ parseCIDRList, CIDRParseError }: typeof import('../../ipam/cidr.js'), flag: string, value: string | undefined): void {
  if (value === undefined) return;
  try {
    if (parseCIDRList(value).length === 0) throw usage(`${flag}: must not be empty`);
  } catch (err) {
    if (err instanceof CIDRParseError) throw usage(`${flag}: ${err.message}`);
    throw err;
  }
}

export function register(program: Command): void {
  program
    .command('audit')
    .description('report IP range overlaps and foreign pod CIDRs in a live cluster (exit 1 on a conflict)')
    .option('--kubeconfig <path>', 'kubeconfig file (in-cluster config when absent)')
    .option('--cluster-cidr <cidrs>', 'also treat this --cluster-cidr as a pool (clusters allocating from flags)')
    .option('--service-cluster-ip-range <cidrs>', 'Service range(s), used when the cluster serves no ServiceCIDR API')
    .option('-o, --output <format>', 'text or json', 'text')
    .action(async (flags: AuditFlags) => {
      if (flags.output !== 'text' && flags.output !== 'json') throw usage(`--output: "${flags.output}" is not text or json`);
      // Imported when the command runs: --help loads no Kubernetes client, parser or report; and
      // the flags are judged before the client loads (about a second), a slip named at once.
      const [cidr, { readKubeconfigFile }] = await Promise.all([import('../../ipam/cidr.js'), import('../../kube/kubeconfig-file.js')]);
      checkCIDRs(cidr, '--cluster-cidr', flags.clusterCidr);
      checkCIDRs(cidr, '--service-cluster-ip-range', flags.serviceClusterIpRange);
      if (flags.kubeconfig !== undefined) {
        try {
          readKubeconfigFile(flags.kubeconfig);
        } catch (err) {
          throw usage((err as Error).message);
        }
      }
      const [{ KubeClient, loadKubeConfig }, { collectAuditInput }, { AUDIT_VISIBILITY, auditFindings, formatAuditReport }] = await Promise.all([
        import('../../kube/client.js'), import('../../audit/collect.js'), import('../../audit/findings.js'),
      ]);
      let client: KubeClient;
      try {
        client = new KubeClient(loadKubeConfig(flags.kubeconfig !== undefined ? { kubeconfig: flags.kubeconfig } : {}), { userAgent: 'node-address-ccm-audit' });
      } catch (err) {
        throw usage((err as Error).message);
      }
      const options: CollectOptions = {};
      if (flags.clusterCidr !== undefined) options.clusterCIDR = flags.clusterCidr;
      if (flags.serviceClusterIpRange !== undefined) options.serviceClusterIPRange = flags.serviceClusterIpRange;
      let collected;
      try {
        collected = await collectAuditInput(client, options);
      } catch (err) {
        process.exitCode = AUDIT_UNREACHABLE_EXIT_CODE;
        throw new Error(`reading the cluster at ${client.server}: ${(err as Error).message}`, { cause: err });
      } finally {
        client.close();
      }
      const report = auditFindings(collected.input);
      if (flags.output === 'json') {
        process.stdout.write(`${JSON.stringify({ ...report, sources: collected.notes, visibility: AUDIT_VISIBILITY }, null, 2)}\n`);
      } else {
        process.stdout.write(`sources: ${collected.notes.join('; ')}\n${formatAuditReport(report)}`);
      }
      process.exitCode = report.counts.conflict > 0 ? AUDIT_CONFLICT_EXIT_CODE : 0;
    });
}
