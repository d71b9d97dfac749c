// What `node-address-ccm explain` does once its flags are parsed: reads the inputs, takes the
// controller's own address decision, and prints why each cloud address is kept or dropped.
import { parse as parseYaml } from 'yaml';
import { USAGE_EXIT_CODE, UsageError } from '../exit-codes.js';
import { readFileFlag } from '../file-flags.js';
import { AWSInstanceDocumentError, awsInstanceAddresses, awsPodCIDRReport, parseNodeIPFamiliesFlag, readAWSInstance, renderAWSPodCIDRs, type AWSPodCIDRReport } from './explain-aws.js';
import { FeatureGateError, featureGateWarnings, parseFeatureGates } from '../../featuregates/index.js';
import { NODE_ADDRESS_TYPES, type NodeAddress, type NodeAddressType } from '../../model/node-address.js';
import {
  AddressExclusion, decideNodeAddresses, goQuote, NodeIPError, nodeStackIPs, parseKubeletNodeIPFlag, PROVIDED_NODE_IP_ANNOTATION,
  type FamilyHint, type StackName,
} from '../../nodeip/index.js';
import { awsFamilyHint } from '../../../providers/aws/addresses.js';

const UNINITIALIZED_TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';

export interface ExplainedEntry {
  type: NodeAddressType;
  address: string;
  reason: string;
}

export type ExplainReport =
  | { annotation: string | null; addresses: ExplainedEntry[]; dropped: ExplainedEntry[]; stack: StackName; tainted: false }
  /** The cloud reported no addresses: the taint goes, status.addresses stays as kubelet set it. */
  | { annotation: null; cloudAddresses: 'none'; tainted: false }
  | { annotation: string | null; error: string; hint?: string; tainted: true };

/** Where the annotation came from, for the human-readable header. */
export type AnnotationSource = { kind: 'none' } | { kind: 'node-ip'; flag: string } | { kind: 'annotation' } | { kind: 'node'; file: string };

export interface ExplainOptions {
  nodeIp?: string;
  annotation?: string;
  node?: string;
  address: string[];
  cloudAddresses?: string;
  awsInstance?: string;
  nodeIpFamilies?: string;
  featureGates?: string;
  nodeAddressExcludeCidrs?: string;
  output: 'table' | 'json';
}

function usage(message: string): UsageError {
  // main.ts keeps an exit code already set, so the usage status survives the rethrow.
  process.exitCode = USAGE_EXIT_CODE;
  return new UsageError(message);
}

const KNOWN_TYPES = NODE_ADDRESS_TYPES.join(', ');

function isAddressType(value: unknown): value is NodeAddressType {
  return typeof value === 'string' && (NODE_ADDRESS_TYPES as readonly string[]).includes(value);
}

/** Parses one --address TYPE=ADDRESS value. */
export function parseAddressFlag(value: string): NodeAddress {
  const eq = value.indexOf('=');
  if (eq < 0) throw usage(`--address ${JSON.stringify(value)}: expected TYPE=ADDRESS, e.g. InternalIP=10.0.0.1`);
  const type = value.slice(0, eq);
  const address = value.slice(eq + 1);
  if (!isAddressType(type)) throw usage(`--address ${JSON.stringify(value)}: unknown address type ${JSON.stringify(type)} (known: ${KNOWN_TYPES})`);
  if (address === '') throw usage(`--address ${JSON.stringify(value)}: the address is empty`);
  return { type, address };
}

function readInput(flag: string, file: string, expected: string): unknown {
  const text = readFileFlag(flag, file, expected);
  try {
    return parseYaml(text);
  } catch (err) {
    throw usage(`${flag} ${JSON.stringify(file)}: not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A list of {type, address}, bare or under `addresses:` (as the KEP writes it). */
export function parseCloudAddresses(flag: string, file: string, doc: unknown): NodeAddress[] {
  const list = isRecord(doc) && 'addresses' in doc ? doc.addresses : doc;
  if (!Array.isArray(list)) throw usage(`${flag} ${JSON.stringify(file)}: expected a list of {type, address} (or an object with an "addresses" list)`);
  return list.map((entry: unknown, i): NodeAddress => {
    const where = `${flag} ${JSON.stringify(file)}: entry ${i + 1}`;
    if (!isRecord(entry)) throw usage(`${where}: expected an object with "type" and "address", got ${JSON.stringify(entry)}`);
    if (!isAddressType(entry.type)) throw usage(`${where}: unknown address type ${JSON.stringify(entry.type)} (known: ${KNOWN_TYPES})`);
    if (typeof entry.address !== 'string' || entry.address === '') throw usage(`${where}: "address" must be a non-empty string, got ${JSON.stringify(entry.address)}`);
    return { type: entry.type, address: entry.address };
  });
}

/** The provided-node-ip annotation and the Hostname addresses of a Node as kubectl prints it. */
export function readNodeDocument(file: string, doc: unknown): { annotation: string | undefined; hostnames: NodeAddress[] } {
  const where = `--node ${JSON.stringify(file)}`;
  if (!isRecord(doc)) throw usage(`${where}: expected a Node object (kubectl get node NAME -o yaml)`);
  if (doc.kind !== undefined && doc.kind !== 'Node') throw usage(`${where}: expected kind Node, got ${JSON.stringify(doc.kind)} (pass a single node: kubectl get node NAME -o yaml)`);
  const metadata = isRecord(doc.metadata) ? doc.metadata : {};
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  const value = annotations[PROVIDED_NODE_IP_ANNOTATION];
  if (value !== undefined && typeof value !== 'string') {
    throw usage(`${where}: annotation ${PROVIDED_NODE_IP_ANNOTATION} must be a string, got ${JSON.stringify(value)}`);
  }
  const status = isRecord(doc.status) ? doc.status : {};
  const statusAddresses = Array.isArray(status.addresses) ? status.addresses : [];
  const hostnames = statusAddresses
    .filter((a): a is Record<string, unknown> => isRecord(a) && a.type === 'Hostname' && typeof a.address === 'string' && a.address !== '')
    .map((a): NodeAddress => ({ type: 'Hostname', address: a.address as string }));
  return { annotation: value, hostnames };
}

/**
 * Builds the report from the decision the controller takes when it initialises a node
 * (decideNodeAddresses): the annotation must match the cloud's own addresses; the node's
 * Hostname entries are mirrored only when the cloud reports none.
 */
export function buildExplainReport(
  annotation: string | undefined,
  cloud: readonly NodeAddress[],
  options: { allowDualStack: boolean; nodeAddresses?: readonly NodeAddress[]; exclude?: AddressExclusion; familyHint?: FamilyHint },
): ExplainReport {
  const decision = decideNodeAddresses(
    {
      annotation, cloudAddresses: cloud, nodeAddresses: options.nodeAddresses ?? [], allowDualStack: options.allowDualStack,
      ...(options.exclude ? { exclude: options.exclude } : {}),
      ...(options.familyHint ? { familyHint: options.familyHint } : {}),
    },
    'initialize',
  );
  if (decision.kind === 'invalid') return { annotation: annotation ?? null, error: decision.error, ...(decision.hint !== undefined ? { hint: decision.hint } : {}), tainted: true };
  if (decision.kind === 'noCloudAddresses') return { annotation: null, cloudAddresses: 'none', tainted: false };
  const note = (i: number) => (decision.mirrored.has(i) ? " (Hostname mirrored from the node's status: the cloud reported none)" : '');
  const result = decision.explanation;
  return {
    annotation: annotation ?? null,
    addresses: result.addresses.map((a) => ({ type: a.type, address: a.address, reason: a.reason + note(a.cloudIndex) })),
    dropped: [
      ...decision.excluded.map((a) => ({ type: a.type, address: a.address, reason: `excluded: inside ${a.cidr} (--node-address-exclude-cidrs)` })),
      ...result.dropped.map((a) => ({ type: a.type, address: a.address, reason: a.reason + note(a.cloudIndex) })),
    ],
    stack: result.stack,
    tainted: false,
  };
}

function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: string[]) => `  ${cells.map((cell, c) => (c === cells.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')}`;
  return [line(headers), ...rows.map(line)];
}

function describeSource(source: AnnotationSource, annotation: string | null): string {
  if (annotation === null) {
    if (source.kind === 'node-ip') return `(none: kubelet --node-ip ${goQuote(source.flag)} sets no annotation)`;
    if (source.kind === 'node') return `(none on the node in ${source.file})`;
    return '(none)';
  }
  const value = `${PROVIDED_NODE_IP_ANNOTATION}=${goQuote(annotation)}`;
  if (source.kind === 'node-ip') return `${value} (set by kubelet --node-ip ${goQuote(source.flag)})`;
  if (source.kind === 'node') return `${value} (from ${source.file})`;
  return value;
}

/** The human-readable form of a report. */
export function renderExplainTable(report: ExplainReport, source: AnnotationSource = { kind: 'annotation' }): string {
  const out = [`Annotation:  ${describeSource(source, report.annotation)}`, ''];
  if (report.tainted) {
    out.push(`Error:       ${report.error}`);
    if (report.hint !== undefined) out.push(`Hint:        ${report.hint}`);
    out.push(`Result:      a new node would stay tainted (${UNINITIALIZED_TAINT}); an initialized node keeps its current addresses`);
    return `${out.join('\n')}\n`;
  }
  if ('cloudAddresses' in report) {
    out.push('Resulting node addresses:', '  (unchanged: the cloud reported no addresses, so status.addresses stays as kubelet set it)', '');
    out.push(`Result:      the ${UNINITIALIZED_TAINT} taint can be removed`);
    return `${out.join('\n')}\n`;
  }
  const stackIPs = nodeStackIPs(report.addresses).ips;
  out.push('Resulting node addresses:');
  if (report.addresses.length === 0) out.push('  (none)');
  else out.push(...table(['#', 'TYPE', 'ADDRESS', 'WHY'], report.addresses.map((a, i) => [String(i + 1), a.type, a.address, a.reason])));
  out.push('', 'Dropped cloud addresses:');
  if (report.dropped.length === 0) out.push('  (none)');
  else out.push(...table(['TYPE', 'ADDRESS', 'WHY'], report.dropped.map((a) => [a.type, a.address, a.reason])));
  out.push('');
  out.push(`Stack:       ${report.stack}${stackIPs.length > 0 ? ` (${stackIPs.join(', ')})` : ''}`);
  out.push(`Result:      addresses set; the ${UNINITIALIZED_TAINT} taint can be removed`);
  return `${out.join('\n')}\n`;
}

/** The command's action (explain.ts imports this module only when the command runs). */
export function runExplain(opts: ExplainOptions): void {
  const given = [opts.nodeIp !== undefined && '--node-ip', opts.annotation !== undefined && '--annotation', opts.node !== undefined && '--node'].filter(Boolean);
  if (given.length > 1) throw usage(`${given.join(' and ')} cannot be used together: give at most one of --node-ip, --annotation, --node`);
  if (opts.address.length > 0 && opts.cloudAddresses !== undefined) throw usage('--address and --cloud-addresses cannot be used together');
  if (opts.node === '-' && opts.cloudAddresses === '-') throw usage('--node - and --cloud-addresses - cannot both read standard input');
  if (opts.awsInstance !== undefined && (opts.address.length > 0 || opts.cloudAddresses !== undefined)) throw usage('--aws-instance gives the cloud addresses: it cannot be used with --address or --cloud-addresses');
  if (opts.awsInstance === '-' && opts.node === '-') throw usage('--node - and --aws-instance - cannot both read standard input');
  if (opts.nodeIpFamilies !== undefined && opts.awsInstance === undefined) throw usage('--node-ip-families needs --aws-instance');

  let gates;
  try {
    gates = parseFeatureGates(opts.featureGates);
  } catch (err) {
    if (err instanceof FeatureGateError) throw usage(err.message);
    throw err;
  }
  for (const warning of featureGateWarnings(gates)) process.stderr.write(`warning: ${warning}\n`);

  let annotation: string | undefined;
  let source: AnnotationSource = { kind: 'none' };
  let nodeHostnames: NodeAddress[] = [];
  if (opts.nodeIp !== undefined) {
    try {
      const flag = parseKubeletNodeIPFlag(opts.nodeIp);
      annotation = flag.annotation;
      if (flag.ignored.length > 0) {
        // kubelet logs these and carries on without them; say so rather than fail.
        process.stderr.write(`warning: --node-ip: kubelet ignores ${flag.ignored.map((s) => goQuote(s)).join(', ')} (not an IP)` +
          `${annotation === undefined ? ', so it writes no annotation and the cloud list is used as is' : `, so it writes the annotation ${goQuote(annotation)}`}\n`);
      }
    } catch (err) {
      if (!(err instanceof NodeIPError)) throw err;
      throw usage(`--node-ip ${goQuote(opts.nodeIp)}: kubelet would refuse to start: ${err.message}`);
    }
    source = { kind: 'node-ip', flag: opts.nodeIp };
  } else if (opts.annotation !== undefined) {
    annotation = opts.annotation;
    source = { kind: 'annotation' };
  } else if (opts.node !== undefined) {
    const node = readNodeDocument(opts.node, readInput('--node', opts.node, 'a Node object, as kubectl get node NAME -o yaml prints it'));
    annotation = node.annotation;
    nodeHostnames = node.hostnames;
    source = { kind: 'node', file: opts.node };
  }

  let cloud: NodeAddress[];
  let pods: AWSPodCIDRReport | undefined;
  let awsFamilies: ReturnType<typeof parseNodeIPFamiliesFlag> | undefined;
  if (opts.awsInstance !== undefined) {
    const where = `--aws-instance ${JSON.stringify(opts.awsInstance)}`;
    try {
      awsFamilies = parseNodeIPFamiliesFlag(opts.nodeIpFamilies ?? 'ipv4');
      const instance = readAWSInstance(readInput('--aws-instance', opts.awsInstance, 'an EC2 instance as aws ec2 describe-instances prints it'));
      cloud = awsInstanceAddresses(instance, awsFamilies);
      pods = awsPodCIDRReport(instance, awsFamilies);
    } catch (err) {
      if (err instanceof AWSInstanceDocumentError) throw usage(err.message.startsWith('--') ? err.message : `${where}: ${err.message}`);
      throw err;
    }
  } else {
    cloud =
      opts.cloudAddresses !== undefined
        ? parseCloudAddresses('--cloud-addresses', opts.cloudAddresses, readInput('--cloud-addresses', opts.cloudAddresses, 'a list of {type, address}'))
        : opts.address.map(parseAddressFlag);
  }

  let exclude: AddressExclusion | undefined;
  if (opts.nodeAddressExcludeCidrs !== undefined && opts.nodeAddressExcludeCidrs.trim() !== '') {
    try {
      exclude = AddressExclusion.parse(opts.nodeAddressExcludeCidrs);
    } catch (err) {
      throw usage(`--node-address-exclude-cidrs: ${(err as Error).message}`);
    }
  }
  // With --aws-instance the families are known; otherwise the hint names the one setting known to hide a family.
  const familyHint: FamilyHint = (family) => awsFamilyHint(awsFamilies, family);
  // The node's Hostname entries go through the controller's own decision: appended after the
  // annotation was checked against the cloud's list, and only when the cloud reports no Hostname.
  const report = buildExplainReport(annotation, cloud, {
    allowDualStack: gates.enabled('CloudDualStackNodeIPs'), nodeAddresses: nodeHostnames, familyHint, ...(exclude ? { exclude } : {}),
  });
  if (opts.output === 'json') process.stdout.write(`${JSON.stringify(pods ? { ...report, podCIDRs: pods } : report, null, 2)}
`);
  else process.stdout.write(renderExplainTable(report, source) + (pods ? `${renderAWSPodCIDRs(pods).join('\n')}\n` : ''));
  if (report.tainted) process.exitCode = 1;
}
