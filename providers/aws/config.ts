// cloud-provider-aws's cloud.conf, read by the shared gcfg reader (providers/gcfg.ts) against the
// schema of cloud-provider-aws's own CloudConfig (pkg/providers/v1/config/config.go), so a file
// reads here as it does there: names are case-insensitive, a repeated single-valued key keeps its
// last value, `NodeIPFamilies` alone on a line clears the list and `NodeIPFamilies =` adds an empty
// (and so unknown) family, a bool that is not a gcfg boolean is an error, and sections and keys
// cloud-provider-aws does not know are ignored. Keys it knows but this controller does not use are
// ignored too; both kinds are reported back in `ignored` so the factory can log them.
import { GcfgError, readGcfg, type GcfgSchema } from '../gcfg.js';
import { AWS_NODE_IP_FAMILIES_VALUES, type AWSNodeIPFamiliesValue } from './addresses.js';

export interface AWSCloudConfig {
  /** `[Global] Region`, or the region of `[Global] Zone` when that is set. */
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

/**
 * cloud-provider-aws's CloudConfig as gcfg sees it: the Go type of each field decides how a line
 * is read (a `[]string` is multi-valued, a `bool` takes a bare name as true, a `string` or `int32`
 * must have a value). `AssignIPv6PodPrefix` is this controller's own key, which cloud-provider-aws
 * ignores as unknown.
 */
export const AWS_CLOUD_CONFIG_SCHEMA: GcfgSchema = {
  Global: {
    variables: {
      Zone: 'string',
      Region: 'string',
      VPC: 'string',
      SubnetID: 'string',
      RouteTableID: 'string',
      RoleARN: 'string',
      SourceARN: 'string',
      KubernetesClusterTag: 'string',
      KubernetesClusterID: 'string',
      DisableSecurityGroupIngress: 'bool',
      ElbSecurityGroup: 'string',
      NodeIPFamilies: 'strings',
      ClusterServiceLoadBalancerHealthProbeMode: 'string',
      ClusterServiceSharedLoadBalancerHealthProbePort: 'int32',
      ClusterServiceSharedLoadBalancerHealthProbePath: 'string',
      SupportedTopologyInstanceTypePattern: 'string',
      NLBSecurityGroupMode: 'string',
      AssignIPv6PodPrefix: 'bool',
    },
  },
  ServiceOverride: {
    subsections: true,
    variables: { Service: 'string', Region: 'string', URL: 'string', SigningRegion: 'string', SigningMethod: 'string', SigningName: 'string' },
  },
};

/** The `[Global]` keys this controller reads; every other key of the schema is reported as ignored. */
const USED = new Set(['Zone', 'Region', 'KubernetesClusterTag', 'KubernetesClusterID', 'NodeIPFamilies', 'AssignIPv6PodPrefix']);

/**
 * The region of an availability zone as cloud-provider-aws's azToRegion (pkg/providers/v1/aws.go)
 * derives it: the leading letter groups, each followed by `-`, and the number after them. So
 * `eu-west-1a` is in `eu-west-1`, the Local Zone `us-west-2-lax-1a` in `us-west-2`, the Wavelength
 * Zone `us-east-1-wl1-bos-wlz-1` in `us-east-1`. Undefined for a zone that names no region.
 */
export function awsRegionOfZone(zone: string): string | undefined {
  return /^(?:[a-zA-Z]+-)+[0-9]+/.exec(zone)?.[0];
}

const REGION = /^[a-z0-9-]+$/;

/** Parses cloud-provider-aws's cloud.conf (the fields we use). Throws naming the field and value. */
export function parseAWSCloudConfig(text: string): AWSCloudConfig {
  let file;
  try {
    file = readGcfg(text, AWS_CLOUD_CONFIG_SCHEMA);
  } catch (err) {
    if (err instanceof GcfgError) throw new AWSCloudConfigError(err.message);
    throw err;
  }
  const global = file.section('Global');
  const ignored = global.names().filter((n) => !USED.has(n)).map((n) => `[Global] ${n}`);
  for (const sub of file.subsections('ServiceOverride').values()) ignored.push(...sub.names().map((n) => `${sub.header} ${n}`));
  ignored.push(...file.ignored);

  // An empty value is no value, as upstream's `!= ""` checks read it.
  const zone = global.string('Zone');
  const regionKey = global.string('Region');
  let region: string | undefined;
  if (zone?.value) {
    // Zone wins over Region when both are set (aws.go getRegionFromMetadata).
    region = awsRegionOfZone(zone.value);
    if (region === undefined) throw new AWSCloudConfigError(`[Global] Zone (line ${zone.line}): ${JSON.stringify(zone.value)} names no region (a zone is its region and a letter, e.g. eu-west-1a)`);
    if (!REGION.test(region)) throw new AWSCloudConfigError(`[Global] Zone (line ${zone.line}): ${JSON.stringify(zone.value)} gives region ${JSON.stringify(region)}, which is not a region name (lower case)`);
  } else if (regionKey?.value) {
    region = regionKey.value;
    if (!REGION.test(region)) throw new AWSCloudConfigError(`[Global] Region (line ${regionKey.line}): invalid value ${JSON.stringify(region)}`);
  }

  const tag = global.string('KubernetesClusterTag')?.value || undefined;
  const id = global.string('KubernetesClusterID')?.value || undefined;
  if (tag && id && tag !== id) {
    throw new AWSCloudConfigError(`[Global] KubernetesClusterTag ${JSON.stringify(tag)} and KubernetesClusterID ${JSON.stringify(id)} disagree`);
  }
  const clusterID = id ?? tag;
  if (clusterID !== undefined && /[\s/]/.test(clusterID)) {
    throw new AWSCloudConfigError(`[Global] ${id ? 'KubernetesClusterID' : 'KubernetesClusterTag'}: invalid value ${JSON.stringify(clusterID)}`);
  }

  const families = global.strings('NodeIPFamilies') ?? { values: [], lines: [] };
  const nodeIPFamilies: AWSNodeIPFamiliesValue[] = [];
  for (const [i, f] of families.values.entries()) {
    const where = `[Global] NodeIPFamilies (line ${families.lines[i]})`;
    if (f === '') throw new AWSCloudConfigError(`${where}: an empty family ("NodeIPFamilies =" adds an empty value; the name alone on a line clears the list)`);
    if (!(AWS_NODE_IP_FAMILIES_VALUES as readonly string[]).includes(f)) {
      throw new AWSCloudConfigError(`${where}: unknown family ${JSON.stringify(f)} (known: ${AWS_NODE_IP_FAMILIES_VALUES.join(', ')}; repeat the key for two families)`);
    }
    if (nodeIPFamilies.includes(f as AWSNodeIPFamiliesValue)) throw new AWSCloudConfigError(`${where}: ${JSON.stringify(f)} listed twice`);
    nodeIPFamilies.push(f as AWSNodeIPFamiliesValue);
  }
  // No family (the key never written, or cleared last) is ipv4, as cloud-provider-aws defaults it.
  if (nodeIPFamilies.length === 0) nodeIPFamilies.push('ipv4');

  const assign = global.bool('AssignIPv6PodPrefix');
  if (assign?.value && !nodeIPFamilies.includes('ipv6')) {
    throw new AWSCloudConfigError(`[Global] AssignIPv6PodPrefix (line ${assign.line}): true needs NodeIPFamilies to include ipv6 (the pod CIDRs follow NodeIPFamilies, now ${nodeIPFamilies.join(', ')})`);
  }
  const out: AWSCloudConfig = { nodeIPFamilies, ignored };
  if (assign?.value) out.assignIPv6PodPrefix = true;
  if (region) out.region = region;
  if (clusterID) out.clusterID = clusterID;
  return out;
}
