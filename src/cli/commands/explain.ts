// `node-address-ccm explain`: shows which node addresses the controller would set for a node, and
// why each cloud address is kept or dropped, without touching a cluster. Only the flags live here;
// the work (YAML, the node-IP decision) is imported when the command runs, so --help stays light.
import { Option, type Command } from 'commander';
import { PROVIDED_NODE_IP_ANNOTATION } from '../../model/node.js';
import { NODE_ADDRESS_TYPES } from '../../model/node-address.js';
import type { ExplainOptions } from './explain-report.js';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function register(program: Command): void {
  program
    .command('explain')
    .description('show the node addresses the controller would set, and why each cloud address is kept or dropped')
    .option('--node-ip <ips>', "kubelet's --node-ip value (read as kubelet does with --cloud-provider=external)")
    .option('--annotation <value>', `raw value of the ${PROVIDED_NODE_IP_ANNOTATION} annotation`)
    .option('--node <file>', 'a Node as "kubectl get node NAME -o yaml" prints it ("-" for stdin); its annotation is used')
    .option('--address <type=address>', `a cloud address, repeatable, in cloud order (types: ${NODE_ADDRESS_TYPES.join(', ')})`, collect, [])
    .option('--cloud-addresses <file>', 'YAML or JSON list of cloud addresses {type, address} ("-" for stdin)')
    .option('--aws-instance <file>', 'an EC2 instance as "aws ec2 describe-instances --output json" prints it ("-" for stdin): its addresses, and the pod CIDRs CloudAllocator would take from its delegated prefixes')
    .option('--node-ip-families <families>', 'with --aws-instance: [Global] NodeIPFamilies in order, e.g. ipv6,ipv4 (default ipv4)')
    .option('--feature-gates <gates>', 'feature gates, e.g. CloudDualStackNodeIPs=false')
    .option('--node-address-exclude-cidrs <cidrs>', "as run's flag: cloud addresses inside these CIDRs are never node addresses")
    .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (opts: ExplainOptions) => (await import('./explain-report.js')).runExplain(opts));
}
