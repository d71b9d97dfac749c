// Pod-CIDR allocation core: pure, no I/O. Shared by the node controller and the node IPAM controller.
// IPFamily (4 | 6) is the same type the package root already exports from nodeip.
export {
  CIDRParseError,
  parseCIDR,
  parseCIDRList,
  formatCIDR,
  formatAddr,
  formatIPv4,
  prefixMask,
  cidrSize,
  cidrContains,
  cidrsOverlap,
  type CIDR,
} from './cidr.js';
export { CIDRSet, CIDRSetError } from './cidrset.js';
export { ExclusionRegistry, type ExclusionChange } from './exclusions.js';
export * from './selector.js';
export * from './clustercidr.js';
export * from './flags.js';
export * from './metrics.js';
export * from './allocator.js';
export * from './plan.js';
