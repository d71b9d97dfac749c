// The subset of cloud-provider-aws's cloud.conf we use. The file is gcfg (git-config style INI):
// `[Section]` headers, `Name = value` pairs with case-insensitive names, `;`/`#` comments,
// double-quoted values with \" \\ \n \t escapes, repeatable names for list values (an empty value
// clears the list). Keys cloud-provider-aws knows but we do not use are ignored (reported back so
// the caller can log them), so an existing cloud.conf works unchanged.
import { AWS_NODE_IP_FAMILIES_VALUES, type AWSNodeIPFamiliesValue } from './addresses.js';

export interface AWSCloudConfig {
  region?: string;
  /** Cluster ID used for the `kubernetes.io/cluster/<id>` and legacy `KubernetesCluster` tags. */
  clusterID?: string;
  nodeIPFamilies: AWSNodeIPFamiliesValue[];
  /**
   * `[Global] AssignIPv6PodPrefix` (this controller's own key, default false): with CloudAllocator,
   * ask EC2 once for an IPv6 /80 prefix on a primary interface that has none.
   */
  assignIPv6PodPrefix?: boolean;
  /** `[Section] Key` names present in the file but not used here. */
  ignored: string[];
}

export class AWSCloudConfigError extends Error {
  constructor(message: string) {
    super(`cloud-config: ${message}`);
    this.name = 'AWSCloudConfigError';
  }
}

interface RawEntry {
  section: string;
  name: string;
  value: string;
  line: number;
}

const TRUE_WORDS = ['true', 'yes', 'on', '1'];
const FALSE_WORDS = ['false', 'no', 'off', '0'];

/** A gcfg boolean (case-insensitive; a bare name is true). */
function parseBool(e: RawEntry): boolean {
  const v = e.value.toLowerCase();
  if (TRUE_WORDS.includes(v)) return true;
  if (FALSE_WORDS.includes(v)) return false;
  throw new AWSCloudConfigError(`[Global] ${e.name} (line ${e.line}): ${JSON.stringify(e.value)} is not a boolean (true or false)`);
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t' };

function escape(next: string | undefined, lineNo: number): string {
  if (next === undefined || !(next in ESCAPES)) throw new AWSCloudConfigError(`line ${lineNo}: invalid escape "\\${next ?? ''}"`);
  return ESCAPES[next]!;
}

function unquote(raw: string, lineNo: number): string {
  // Walk the value: quoted runs keep spaces and honour escapes; an unquoted ; or # starts a comment.
  let out = '';
  let inQuote = false;
  let pendingSpace = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (inQuote) {
      if (c === '"') inQuote = false;
      else if (c === '\\') out += escape(raw[++i], lineNo);
      else out += c;
      continue;
    }
    if (c === ';' || c === '#') break;
    if (c === '"') {
      out += pendingSpace;
      pendingSpace = '';
      inQuote = true;
    } else if (c === ' ' || c === '\t') {
      if (out !== '') pendingSpace += c;
    } else if (c === '\\') {
      out += pendingSpace + escape(raw[++i], lineNo);
      pendingSpace = '';
    } else {
      out += pendingSpace + c;
      pendingSpace = '';
    }
  }
  if (inQuote) throw new AWSCloudConfigError(`line ${lineNo}: unterminated quoted value`);
  return out;
}

function parseGcfg(text: string): RawEntry[] {
  const entries: RawEntry[] = [];
  let section: string | undefined;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith(';') || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      const m = /^\[\s*([A-Za-z][-A-Za-z0-9.]*)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(?:[;#].*)?$/.exec(line);
      if (!m) throw new AWSCloudConfigError(`line ${lineNo}: invalid section header ${JSON.stringify(line)}`);
      section = m[2] === undefined ? m[1]! : `${m[1]} "${m[2]}"`;
      continue;
    }
    const m = /^([A-Za-z][-A-Za-z0-9]*)\s*(?:=(.*))?$/.exec(line);
    if (!m) throw new AWSCloudConfigError(`line ${lineNo}: expected "Name = value", got ${JSON.stringify(line)}`);
    if (section === undefined) throw new AWSCloudConfigError(`line ${lineNo}: "${m[1]}" appears before any [section]`);
    // A bare name is a boolean flag set to true, as in gcfg.
    entries.push({ section, name: m[1]!, value: m[2] === undefined ? 'true' : unquote(m[2], lineNo), line: lineNo });
  }
  return entries;
}

/** Parses cloud-provider-aws's cloud.conf (the fields we use). Throws naming the field and value. */
export function parseAWSCloudConfig(text: string): AWSCloudConfig {
  const entries = parseGcfg(text);
  const single = new Map<string, RawEntry>();
  let families: AWSNodeIPFamiliesValue[] | undefined;
  const ignored: string[] = [];
  for (const e of entries) {
    if (e.section.toLowerCase() !== 'global') {
      ignored.push(`[${e.section}] ${e.name}`);
      continue;
    }
    const key = e.name.toLowerCase();
    if (key === 'nodeipfamilies') {
      if (e.value === '') {
        families = [];
        continue;
      }
      if (!(AWS_NODE_IP_FAMILIES_VALUES as readonly string[]).includes(e.value)) {
        throw new AWSCloudConfigError(`[Global] NodeIPFamilies (line ${e.line}): unknown family ${JSON.stringify(e.value)} (known: ${AWS_NODE_IP_FAMILIES_VALUES.join(', ')}; repeat the key for two families)`);
      }
      families ??= [];
      if (families.includes(e.value as AWSNodeIPFamiliesValue)) throw new AWSCloudConfigError(`[Global] NodeIPFamilies (line ${e.line}): ${JSON.stringify(e.value)} listed twice`);
      families.push(e.value as AWSNodeIPFamiliesValue);
    } else if (key === 'region' || key === 'kubernetesclustertag' || key === 'kubernetesclusterid' || key === 'assignipv6podprefix') {
      if (single.has(key)) throw new AWSCloudConfigError(`[Global] ${e.name} (line ${e.line}): set more than once`);
      single.set(key, e);
    } else {
      ignored.push(`[Global] ${e.name}`);
    }
  }
  const region = single.get('region')?.value;
  if (region !== undefined && !/^[a-z0-9-]+$/.test(region)) {
    throw new AWSCloudConfigError(`[Global] Region: invalid value ${JSON.stringify(region)}`);
  }
  const tag = single.get('kubernetesclustertag')?.value || undefined;
  const id = single.get('kubernetesclusterid')?.value || undefined;
  if (tag && id && tag !== id) {
    throw new AWSCloudConfigError(`[Global] KubernetesClusterTag ${JSON.stringify(tag)} and KubernetesClusterID ${JSON.stringify(id)} disagree`);
  }
  const clusterID = id ?? tag;
  if (clusterID !== undefined && /[\s/]/.test(clusterID)) {
    throw new AWSCloudConfigError(`[Global] ${id ? 'KubernetesClusterID' : 'KubernetesClusterTag'}: invalid value ${JSON.stringify(clusterID)}`);
  }
  if (families !== undefined && families.length === 0) {
    throw new AWSCloudConfigError('[Global] NodeIPFamilies: the last value is empty, which leaves no family');
  }
  const assign = single.get('assignipv6podprefix');
  const assignIPv6PodPrefix = assign ? parseBool(assign) : false;
  const nodeIPFamilies = families ?? ['ipv4'];
  if (assignIPv6PodPrefix && !nodeIPFamilies.includes('ipv6')) {
    throw new AWSCloudConfigError(`[Global] ${assign!.name} (line ${assign!.line}): true needs NodeIPFamilies to include ipv6 (the pod CIDRs follow NodeIPFamilies, now ${nodeIPFamilies.join(', ')})`);
  }
  const out: AWSCloudConfig = { nodeIPFamilies, ignored };
  if (assignIPv6PodPrefix) out.assignIPv6PodPrefix = true;
  if (region) out.region = region;
  if (clusterID) out.clusterID = clusterID;
  return out;
}
