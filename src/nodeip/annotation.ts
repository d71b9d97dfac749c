// The provided-node-ip annotation (strict, as the cloud-controller-manager reads it) and kubelet's
// --node-ip flag (lenient, as kubelet reads it before writing the annotation).
import { NodeIPError } from './errors.js';
import { goQuote, goTrimSpace } from './go-text.js';
import { isUnspecifiedIP, parseIPSloppy, type ParsedIP } from './ip.js';

// The annotation's name is part of the Node model; parsed here.
export { PROVIDED_NODE_IP_ANNOTATION } from '../model/node.js';

/** Checks shared by both readers, in the order Kubernetes applies them. */
function checkNodeIPList(ips: ParsedIP[], allowDualStack: boolean): void {
  if (ips.length > 2 || (ips.length === 2 && ips[0]!.family === ips[1]!.family)) {
    throw new NodeIPError('must contain either a single IP or a dual-stack pair of IPs');
  }
  if (ips.length === 2 && !allowDualStack) {
    throw new NodeIPError('dual-stack not supported in this configuration');
  }
  if (ips.length === 2 && (isUnspecifiedIP(ips[0]!) || isUnspecifiedIP(ips[1]!))) {
    throw new NodeIPError("dual-stack node IP cannot include '0.0.0.0' or '::'");
  }
}

function parseAnnotationIPs(value: string, allowDualStack: boolean): ParsedIP[] {
  const ips: ParsedIP[] = [];
  // No trimming: the annotation is written by kubelet, so stray spaces mean something is wrong.
  for (const item of value.split(',')) {
    const ip = parseIPSloppy(item);
    if (!ip) throw new NodeIPError(`could not parse ${goQuote(item)}`);
    ips.push(ip);
  }
  checkNodeIPList(ips, allowDualStack);
  return ips;
}

/**
 * Parses the provided-node-ip annotation value: one IP or a dual-stack pair, in either order.
 * Returns canonical IP texts in annotation order. Throws NodeIPError with Kubernetes' wording.
 */
export function parseNodeIPAnnotation(value: string, options: { allowDualStack: boolean }): string[] {
  return parseAnnotationIPs(value, options.allowDualStack).map((ip) => ip.canonical);
}

/** What kubelet makes of its --node-ip flag when it runs with an external cloud provider. */
export interface KubeletNodeIPFlag {
  /** Canonical IPs, possibly empty (flag unset, or nothing in it parsed). */
  nodeIPs: string[];
  /** The annotation kubelet writes, or undefined when it writes none (unset, 0.0.0.0 or ::). */
  annotation: string | undefined;
  /** Items that are not IPs: kubelet logs "Could not parse some node IP(s), ignoring them". */
  ignored: string[];
}

/**
 * Reads kubelet's --node-ip as kubelet does with --cloud-provider=external: items are trimmed, an
 * item that is not an IP is logged and ignored (not fatal), and a dual-stack pair is allowed.
 * What remains must be one IP or a dual-stack pair without an unspecified half, or kubelet refuses
 * to start: that throws NodeIPError. An unspecified single IP selects no node IP, hence no
 * annotation; so does a flag none of whose items parse.
 */
export function parseKubeletNodeIPFlag(value: string | undefined): KubeletNodeIPFlag {
  if (value === undefined || value === '') return { nodeIPs: [], annotation: undefined, ignored: [] };
  const ips: ParsedIP[] = [];
  const ignored: string[] = [];
  for (const raw of value.split(',')) {
    // strings.TrimSpace, as kubelet trims: U+0085 is space, U+FEFF is not.
    const item = goTrimSpace(raw);
    const ip = parseIPSloppy(item);
    if (ip) ips.push(ip);
    else ignored.push(item);
  }
  checkNodeIPList(ips, true);
  const nodeIPs = ips.map((ip) => ip.canonical);
  const annotation = ips.length === 0 || isUnspecifiedIP(ips[0]!) ? undefined : nodeIPs.join(',');
  return { nodeIPs, annotation, ignored };
}
