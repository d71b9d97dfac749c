// Which Kubernetes providerIDs and node names identify an EC2 instance. The instance ID is the last
// path segment, as cloud-provider-aws's MapToAWSInstanceID (pkg/providers/v1/instances.go) takes
// it, and must start with `i-`: `aws:///<zone>/<id>`, `aws:////<id>`, a bare `<id>`, and the longer
// forms upstream's own tests use, `aws:///<zone>/<anything>/<id>` (instances_v2_test.go) and so
// `aws:///<zone>//<id>`. Unlike cloud-provider-aws we refuse a non-empty host (`aws://account/...`)
// and another scheme (`gce://project/zone/i-1`, which upstream reads as a bare path ending in
// `i-1`): nothing we emit has either, and accepting them silently would hide a providerID written
// for some other system.

export class AWSProviderIDError extends Error {
  constructor(readonly providerID: string, reason: string) {
    super(`providerID ${JSON.stringify(providerID)}: ${reason} (expected aws:///<zone>/i-..., aws:///<zone>/<anything>/i-..., aws:////i-... or i-...)`);
    this.name = 'AWSProviderIDError';
  }
}

export interface AWSProviderID {
  instanceID: string;
  /** The first path segment when there are more than one (the zone, in every form EC2 nodes get). */
  zone?: string;
}

const INSTANCE_ID = /^i-[^/]*$/;
// EC2 instance IDs as the API issues them: 8 (old) or 17 (current) lower-case hex digits.
const STRICT_INSTANCE_ID = /^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;

function decodePath(path: string, providerID: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    throw new AWSProviderIDError(providerID, 'invalid percent-encoding');
  }
}

/** Parses a providerID; throws AWSProviderIDError naming the value when it is not an AWS one. */
export function parseAWSProviderID(providerID: string): AWSProviderID {
  if (typeof providerID !== 'string' || providerID === '') throw new AWSProviderIDError(String(providerID), 'empty');
  // Control characters make Go's URL parser fail; treat them the same way.
  if ([...providerID].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) throw new AWSProviderIDError(providerID, 'contains control characters');
  let rest: string;
  if (providerID.startsWith('aws://')) {
    rest = providerID.slice('aws://'.length);
    const slash = rest.indexOf('/');
    const host = slash < 0 ? rest : rest.slice(0, slash);
    if (host !== '') throw new AWSProviderIDError(providerID, `unexpected host "${host}"`);
    rest = slash < 0 ? '' : rest.slice(slash);
  } else {
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(providerID)?.[1];
    if (scheme !== undefined) throw new AWSProviderIDError(providerID, `scheme "${scheme}" is not aws`);
    // A bare value is read as the path of an empty-host URL, as cloud-provider-aws does.
    rest = `/${providerID}`;
  }
  // Query and fragment are not part of the path.
  rest = rest.replace(/[?#].*$/s, '');
  const tokens = decodePath(rest, providerID).replace(/^\/+|\/+$/g, '').split('/');
  // The last segment is the instance; what comes between the zone and it is not read (upstream
  // neither), and the zone is only reported back.
  const id = tokens[tokens.length - 1]!;
  if (!INSTANCE_ID.test(id)) throw new AWSProviderIDError(providerID, `"${id}" is not an instance ID (must start with "i-")`);
  const zone = tokens.length > 1 && tokens[0] !== '' ? tokens[0] : undefined;
  return zone === undefined ? { instanceID: id } : { instanceID: id, zone };
}

/** The providerID we report for an instance. */
export function formatAWSProviderID(zone: string | undefined, instanceID: string): string {
  return `aws:///${zone ?? ''}/${instanceID}`;
}

/**
 * The instance ID a node name stands for, if any: resource-name hostnames look like
 * `i-0123456789abcdef0` or `i-0123456789abcdef0.eu-west-1.compute.internal`.
 */
export function instanceIDFromNodeName(nodeName: string): string | undefined {
  const first = nodeName.split('.', 1)[0]!;
  return STRICT_INSTANCE_ID.test(first) ? first : undefined;
}

/**
 * The instance a providerID names, for comparing two providerIDs: `aws:///us-east-1a/i-0abc`,
 * `aws:////i-0abc` and a bare `i-0abc` are one instance, as cloud-provider-aws reads them
 * (KubernetesInstanceID.MapToAWSInstanceID, pkg/providers/v1/instances.go: the zone segment is not
 * part of the identity). Undefined for anything parseAWSProviderID refuses.
 */
export function awsInstanceKey(providerID: string): string | undefined {
  try {
    return `aws:${parseAWSProviderID(providerID).instanceID}`;
  } catch {
    return undefined;
  }
}
