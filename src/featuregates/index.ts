// --feature-gates, parsed the way Kubernetes components parse it (component-base featuregate):
// "A=true,B=false", empty items skipped, whitespace around names and values trimmed, values as
// Go's strconv.ParseBool reads them, unknown names rejected.

export interface FeatureGateSpec {
  default: boolean;
  description: string;
  /**
   * Set when upstream Kubernetes locked the gate to its default. We keep such gates switchable,
   * but a caller should warn when one is set away from upstream's locked value.
   */
  upstreamLockedTo?: boolean;
}

export const KNOWN_FEATURE_GATES = {
  CloudDualStackNodeIPs: {
    default: true,
    description: 'accept a dual-stack pair in the alpha.kubernetes.io/provided-node-ip annotation (KEP-3705)',
    upstreamLockedTo: true,
  },
} as const satisfies Record<string, FeatureGateSpec>;

export type FeatureGateName = keyof typeof KNOWN_FEATURE_GATES;

export class FeatureGateError extends Error {
  override name = 'FeatureGateError';
}

export interface FeatureGates {
  enabled(name: FeatureGateName): boolean;
  /** Gates set explicitly on the command line, in the order given (a repeated gate counts once, last value wins). */
  readonly explicit: ReadonlyMap<FeatureGateName, boolean>;
  /** Gates whose effective value differs from what upstream Kubernetes locks them to. */
  divergingFromUpstream(): FeatureGateName[];
  /** "A=true,B=false" for every known gate, sorted by name. */
  toString(): string;
}

const TRUE_WORDS = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_WORDS = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

function isKnown(name: string): name is FeatureGateName {
  return Object.hasOwn(KNOWN_FEATURE_GATES, name);
}

function knownList(): string {
  return Object.keys(KNOWN_FEATURE_GATES).sort().join(', ');
}

/** Parses a --feature-gates value; undefined or empty gives every gate its default. */
export function parseFeatureGates(text?: string): FeatureGates {
  const explicit = new Map<FeatureGateName, boolean>();
  for (const item of (text ?? '').split(',')) {
    if (item.length === 0) continue;
    const eq = item.indexOf('=');
    const name = (eq < 0 ? item : item.slice(0, eq)).trim();
    if (name === '') throw new FeatureGateError(`--feature-gates: item ${JSON.stringify(item)} names no gate (known: ${knownList()})`);
    if (eq < 0) throw new FeatureGateError(`--feature-gates: missing bool value for ${JSON.stringify(name)} (write ${name}=true or ${name}=false; known: ${knownList()})`);
    const raw = item.slice(eq + 1).trim();
    let value: boolean;
    if (TRUE_WORDS.has(raw)) value = true;
    else if (FALSE_WORDS.has(raw)) value = false;
    else throw new FeatureGateError(`--feature-gates: invalid value of ${name}=${raw}: ${JSON.stringify(raw)} is not a boolean (use true or false; known: ${knownList()})`);
    if (!isKnown(name)) throw new FeatureGateError(`--feature-gates: unrecognized feature gate ${JSON.stringify(name)} (known: ${knownList()})`);
    explicit.delete(name);
    explicit.set(name, value);
  }
  const enabled = (name: FeatureGateName): boolean => explicit.get(name) ?? KNOWN_FEATURE_GATES[name].default;
  return {
    enabled,
    explicit,
    divergingFromUpstream: () =>
      (Object.keys(KNOWN_FEATURE_GATES) as FeatureGateName[]).filter((name) => {
        const spec: FeatureGateSpec = KNOWN_FEATURE_GATES[name];
        return spec.upstreamLockedTo !== undefined && enabled(name) !== spec.upstreamLockedTo;
      }),
    toString: () =>
      (Object.keys(KNOWN_FEATURE_GATES) as FeatureGateName[])
        .sort()
        .map((name) => `${name}=${enabled(name)}`)
        .join(','),
  };
}

/** One warning line per gate switched away from upstream's locked value, for callers to log. */
export function featureGateWarnings(gates: FeatureGates): string[] {
  return gates.divergingFromUpstream().map((name) => {
    const spec: FeatureGateSpec = KNOWN_FEATURE_GATES[name];
    return `feature gate ${name} is set to ${gates.enabled(name)}, but Kubernetes locks it to ${spec.upstreamLockedTo}: ${
      name === 'CloudDualStackNodeIPs' ? 'dual-stack provided-node-ip annotations will be rejected and those nodes stay tainted' : spec.description
    }`;
  });
}
