// The flag values only the libraries can judge (feature gates, CIDRs, the provider's name and its
// --cloud-config), checked before anything connects or loads a cloud SDK: a slip in a flag is
// named at once, not after the kubeconfig, the Kubernetes client or an adapter has loaded.
import { checkProviderFlags, isBuiltInProvider } from '../../providers/registry.js';
import { checkModuleArgument } from '../../providers/module-argument.js';
import { featureGateWarnings, parseFeatureGates, type FeatureGates } from '../featuregates/index.js';
import { parseCIDRList } from '../ipam/cidr.js';
import { AddressExclusion } from '../nodeip/exclude.js';
import { parseFlagsPool, type FlagsPool } from '../ipam/flags.js';
import { fileArgumentError, readFileArgument } from '../util/file-argument.js';
import type { RunOptions } from './options.js';

/** What the checks found that the manager uses. */
export interface CheckedFlagValues {
  gates: FeatureGates;
  /** Warnings about gates (deprecated, locked), to log once a logger exists. */
  gateWarnings: string[];
  /** The --cluster-cidr pool, validated (MultiCIDRRangeAllocator and CloudAllocator). */
  flagsPool?: FlagsPool;
  /** --node-address-exclude-cidrs, parsed; absent when empty. */
  excludeAddresses?: AddressExclusion;
}

/** Whether any controller that runs asks the cloud (and so needs --cloud-provider). */
export function needsCloudProvider(o: RunOptions): boolean {
  const cloudAllocator = o.controllers.has('node-ipam') && o.ipam.allocateNodeCIDRs && o.ipam.cidrAllocatorType === 'CloudAllocator';
  return o.controllers.has('cloud-node') || o.controllers.has('cloud-node-lifecycle') || cloudAllocator;
}

/**
 * A serving certificate or key file is read at start: one that is missing, empty or not PEM is
 * named now, not after leader election when the HTTPS server starts.
 */
function checkPem(flag: string, file: string | undefined, label: string, expected: string): void {
  if (file === undefined) return;
  const text = readFileArgument(flag, file, { expected });
  if (!new RegExp(`-----BEGIN [A-Z ]*${label}-----`).test(text)) throw fileArgumentError(flag, file, `not PEM: no "-----BEGIN … ${label}-----" line; expected ${expected}`);
}

/** Throws an error naming the flag ("--cluster-cidr: …") for the first value the libraries refuse. */
export function checkFlagValues(o: RunOptions): CheckedFlagValues {
  const gates = parseFeatureGates(o.featureGates);
  const checked: CheckedFlagValues = { gates, gateWarnings: featureGateWarnings(gates) };
  if (o.nodeAddressExcludeCIDRs.trim() !== '') {
    try {
      checked.excludeAddresses = AddressExclusion.parse(o.nodeAddressExcludeCIDRs);
    } catch (err) {
      throw new Error(`--node-address-exclude-cidrs: ${(err as Error).message}`, { cause: err });
    }
  }
  const ipam = o.ipam;
  if (ipam.allocateNodeCIDRs && ipam.clusterCIDR !== undefined) {
    checked.flagsPool = parseFlagsPool({
      clusterCIDR: ipam.clusterCIDR,
      ...(ipam.nodeCIDRMaskSize !== undefined ? { nodeCIDRMaskSize: ipam.nodeCIDRMaskSize } : {}),
      ...(ipam.nodeCIDRMaskSizeIPv4 !== undefined ? { nodeCIDRMaskSizeIPv4: ipam.nodeCIDRMaskSizeIPv4 } : {}),
      ...(ipam.nodeCIDRMaskSizeIPv6 !== undefined ? { nodeCIDRMaskSizeIPv6: ipam.nodeCIDRMaskSizeIPv6 } : {}),
    });
  }
  if (ipam.allocateNodeCIDRs && ipam.serviceClusterIPRange !== undefined) {
    let ranges;
    try {
      ranges = parseCIDRList(ipam.serviceClusterIPRange);
    } catch (err) {
      throw new Error(`--service-cluster-ip-range: ${(err as Error).message}`, { cause: err });
    }
    if (ipam.cidrAllocatorType === 'RangeAllocator' && (ranges.length === 0 || ranges.length > 2)) {
      throw new Error(`--service-cluster-ip-range: one CIDR or a dual-stack pair, got "${ipam.serviceClusterIPRange}"`);
    }
  }
  checkPem('--tls-cert-file', o.serving.tlsCertFile, 'CERTIFICATE', 'a PEM serving certificate (chain)');
  checkPem('--tls-private-key-file', o.serving.tlsPrivateKeyFile, 'PRIVATE KEY', 'the PEM private key of --tls-cert-file');
  if (needsCloudProvider(o) && o.cloudProviderModule !== undefined) {
    // The module says what it needs once it is loaded; until then only its path can be checked.
    if (isBuiltInProvider(o.cloudProvider as string)) throw new Error(`--cloud-provider-module ${o.cloudProviderModule}: --cloud-provider ${o.cloudProvider} is a built-in provider; a module's provider needs a name of its own`);
    checkModuleArgument(o.cloudProviderModule);
  } else if (needsCloudProvider(o)) {
    checkProviderFlags(o.cloudProvider as string, o.cloudConfig !== undefined ? { cloudConfig: o.cloudConfig } : {});
  }
  return checked;
}
