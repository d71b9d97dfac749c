// `node-address-ccm plan`: previews pod-CIDR allocation for ClusterCIDR and Node objects as kubectl
// prints them, without touching a cluster. Exit status 0: every node has blocks; 1: some node
// failed; 2: bad flags or input. Only the flags live here; the allocator and the YAML parser are
// imported when the command runs, so --help stays light.
import type { Command } from 'commander';
import type { PlanOptions } from './plan-report.js';

export function register(program: Command): void {
  program
    .command('plan')
    .description('preview pod-CIDR allocation for ClusterCIDR and Node objects (kubectl YAML/JSON, a List or multi-document)')
    .option('--clustercidrs-file <file>', 'ClusterCIDR objects ("-" for stdin)')
    .requiredOption('--nodes-file <file>', 'Node objects ("-" for stdin)')
    .option('--service-cluster-ip-range <cidrs>', 'Service CIDRs never handed out (comma-separated)')
    .option('--cluster-cidr <cidrs>', 'the flags pool: one CIDR or a dual-stack pair')
    .option('--node-cidr-mask-size <n>', 'node mask size for a single-stack --cluster-cidr')
    .option('--node-cidr-mask-size-ipv4 <n>', 'IPv4 node mask size (default 24)')
    .option('--node-cidr-mask-size-ipv6 <n>', 'IPv6 node mask size (default 64)')
    .option('-o, --output <format>', 'table or json', 'table')
    .action(async (opts: PlanOptions) => (await import('./plan-report.js')).runPlan(opts));
}
