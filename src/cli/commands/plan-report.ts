// What `node-address-ccm plan` does once its flags are parsed: reads ClusterCIDR and Node objects
// as kubectl prints them, plans pod CIDRs with the allocator, prints a table or JSON.
import { parseAllDocuments } from 'yaml';
import { USAGE_EXIT_CODE, UsageError } from '../exit-codes.js';
import { readFileFlag } from '../file-flags.js';
import { parseCIDRList, CIDRParseError } from '../../ipam/cidr.js';
import { ClusterCIDRValidationError } from '../../ipam/clustercidr.js';
import { FlagsError, type FlagsInput } from '../../ipam/flags.js';
import { planPodCIDRs, PlanInputError, type PlanNode, type PlanResult } from '../../ipam/plan.js';

export interface PlanOptions {
  clustercidrsFile?: string;
  nodesFile: string;
  serviceClusterIpRange?: string;
  clusterCidr?: string;
  nodeCidrMaskSize?: string;
  nodeCidrMaskSizeIpv4?: string;
  nodeCidrMaskSizeIpv6?: string;
  output: string;
}

function usage(message: string): UsageError {
  // main.ts keeps an exit code already set, so the usage status survives the rethrow.
  process.exitCode = USAGE_EXIT_CODE;
  return new UsageError(message);
}

function maskFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,3}$/.test(value)) throw usage(`${flag} ${JSON.stringify(value)}: expected an integer`);
  return Number(value);
}

/** Objects of `kind` from a file: a List, or one or more YAML/JSON documents. */
export function readObjects(file: string, kind: string, flag: string): unknown[] {
  const text = readFileFlag(flag, file, `${kind} objects (a List, or YAML or JSON documents)`);
  const out: unknown[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    if (!('errors' in doc) || doc.errors.length > 0) {
      const msg = 'errors' in doc ? doc.errors[0].message : 'not a YAML document';
      throw usage(`${flag} ${file}: document ${i + 1}: ${msg}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const add = (obj: unknown, where: string) => {
      const k = (obj as { kind?: unknown } | null)?.kind;
      if (obj === null || typeof obj !== 'object' || (k !== undefined && k !== kind)) {
        throw usage(`${flag} ${file}: ${where}: expected a ${kind}, got ${k === undefined ? typeof obj : JSON.stringify(k)}`);
      }
      out.push(obj);
    };
    const list = value as { kind?: unknown; items?: unknown };
    if (typeof list === 'object' && typeof list.kind === 'string' && list.kind.endsWith('List')) {
      if (!Array.isArray(list.items)) throw usage(`${flag} ${file}: document ${i + 1}: ${list.kind} without items`);
      list.items.forEach((item, j) => add(item, `document ${i + 1} items[${j}]`));
    } else add(value, `document ${i + 1}`);
  });
  return out;
}

function pad(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join('  ')).join('\n') + '\n';
}

export function formatTable(r: PlanResult): string {
  let out = '';
  const names = Object.keys(r.allocations);
  if (names.length > 0) {
    out += pad([['NODE', 'POD CIDRS', 'POOL', 'WHY'], ...names.map((n) => [n, r.allocations[n].join(','), r.decisions[n].pool, r.decisions[n].reason])]);
  }
  const failed = Object.keys(r.failures);
  if (failed.length > 0) {
    out += (out ? '\n' : '') + pad([['FAILED NODE', 'REASON'], ...failed.map((n) => [n, r.failures[n]])]);
  }
  if (r.exclusionConflicts.length > 0) {
    out += (out ? '\n' : '') + pad([['CONFLICT NODE', 'POD CIDR', 'SERVICE CIDR'], ...r.exclusionConflicts.map((c) => [c.node, c.podCIDR, c.exclusion])]);
  }
  // USED + FREE + EXCLUDED = TOTAL: excluded counts blocks kept out by Service CIDRs and not used.
  const poolRows = r.pools.flatMap((p) =>
    p.families.map((f) => [
      p.name + (p.terminating ? ' (terminating)' : ''),
      f.clusterCIDR,
      `/${f.maskSize}`,
      String(p.nodes),
      String(f.used),
      String(f.free),
      String(f.excluded),
      String(f.total),
    ]),
  );
  out += (out ? '\n' : '') + pad([['POOL', 'CIDR', 'PER NODE', 'NODES', 'USED', 'FREE', 'EXCLUDED', 'TOTAL'], ...poolRows]);
  return out;
}

function toJSON(r: PlanResult): string {
  return JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n';
}

/** The command's action (plan.ts imports this module only when the command runs). */
export function runPlan(opts: PlanOptions): void {
  if (opts.output !== 'table' && opts.output !== 'json') throw usage(`--output ${JSON.stringify(opts.output)}: expected table or json`);
  if (opts.clustercidrsFile === undefined && opts.clusterCidr === undefined) throw usage('no pools: give --clustercidrs-file, --cluster-cidr, or both');
  if (opts.clustercidrsFile === '-' && opts.nodesFile === '-') throw usage('--clustercidrs-file and --nodes-file cannot both read stdin');
  const maskFlags = [opts.nodeCidrMaskSize, opts.nodeCidrMaskSizeIpv4, opts.nodeCidrMaskSizeIpv6];
  if (opts.clusterCidr === undefined && maskFlags.some((m) => m !== undefined)) throw usage('--node-cidr-mask-size* flags need --cluster-cidr');
  let serviceCIDRs: string[] = [];
  if (opts.serviceClusterIpRange !== undefined) {
    try {
      serviceCIDRs = parseCIDRList(opts.serviceClusterIpRange).map((c) => c.text);
    } catch (err) {
      if (err instanceof CIDRParseError) throw usage(`--service-cluster-ip-range: ${err.message}`);
      throw err;
    }
  }
  const flags: FlagsInput | undefined =
    opts.clusterCidr === undefined
      ? undefined
      : {
          clusterCIDR: opts.clusterCidr,
          nodeCIDRMaskSize: maskFlag('--node-cidr-mask-size', opts.nodeCidrMaskSize),
          nodeCIDRMaskSizeIPv4: maskFlag('--node-cidr-mask-size-ipv4', opts.nodeCidrMaskSizeIpv4),
          nodeCIDRMaskSizeIPv6: maskFlag('--node-cidr-mask-size-ipv6', opts.nodeCidrMaskSizeIpv6),
        };
  const pools = opts.clustercidrsFile === undefined ? [] : readObjects(opts.clustercidrsFile, 'ClusterCIDR', '--clustercidrs-file');
  const nodes = readObjects(opts.nodesFile, 'Node', '--nodes-file') as PlanNode[];
  let result: PlanResult;
  try {
    result = planPodCIDRs(pools, nodes, { serviceCIDRs, flags });
  } catch (err) {
    if (err instanceof ClusterCIDRValidationError || err instanceof PlanInputError || err instanceof FlagsError) throw usage(err.message);
    throw err;
  }
  process.stdout.write(opts.output === 'json' ? toJSON(result) : formatTable(result));
  if (Object.keys(result.failures).length > 0) process.exitCode = 1;
}
