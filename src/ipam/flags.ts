// The flags pool: --cluster-cidr with the node mask flags, validated as kube-controller-manager's
// RangeAllocator does. It lives in memory with a mask per family; when it fits one ClusterCIDR
// (one family, or equal host bits) the IPAM controller mirrors it under createdFromFlagsName().
import { createHash } from 'node:crypto';
import { CIDRParseError, parseCIDR, type CIDR } from './cidr.js';
import { CompiledSelector } from './selector.js';
import type { ClusterCIDR, PoolFamily } from './clustercidr.js';

export const DEFAULT_NODE_MASK_IPV4 = 24;
export const DEFAULT_NODE_MASK_IPV6 = 64;
/** kube-controller-manager refuses IPv6 node masks more than this many bits below the cluster prefix. */
export const MAX_IPV6_MASK_DIFF = 16;

export class FlagsError extends Error {
  override name = 'FlagsError';
}

export interface FlagsInput {
  /** --cluster-cidr: one CIDR or a comma-separated dual-stack pair. */
  clusterCIDR: string;
  /** --node-cidr-mask-size (single-stack only). */
  nodeCIDRMaskSize?: number;
  nodeCIDRMaskSizeIPv4?: number;
  nodeCIDRMaskSizeIPv6?: number;
}

export interface FlagsPool {
  /** In flag order: the first family is the node's primary pod CIDR. */
  families: PoolFamily[];
}

function checkMask(flag: string, v: number | undefined): void {
  if (v !== undefined && (!Number.isInteger(v) || v < 0)) throw new FlagsError(`${flag}: must be a non-negative integer, got ${String(v)}`);
}

/** Validates the flags; throws FlagsError naming the flag and value. */
export function parseFlagsPool(input: FlagsInput): FlagsPool {
  const items = input.clusterCIDR
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new FlagsError('--cluster-cidr: is required');
  if (items.length > 2) throw new FlagsError(`--cluster-cidr: at most two CIDRs (one per family), got ${items.length}: "${input.clusterCIDR}"`);
  const cidrs: CIDR[] = items.map((s) => {
    try {
      return parseCIDR(s);
    } catch (err) {
      if (err instanceof CIDRParseError) throw new FlagsError(`--cluster-cidr: ${err.message}`);
      throw err;
    }
  });
  if (cidrs.length === 2 && cidrs[0].family === cidrs[1].family) {
    throw new FlagsError(`--cluster-cidr: a dual-stack pair needs one IPv4 and one IPv6 CIDR, got "${input.clusterCIDR}"`);
  }
  checkMask('--node-cidr-mask-size', input.nodeCIDRMaskSize);
  checkMask('--node-cidr-mask-size-ipv4', input.nodeCIDRMaskSizeIPv4);
  checkMask('--node-cidr-mask-size-ipv6', input.nodeCIDRMaskSizeIPv6);
  // 0 means "not set", as in kube-controller-manager's flag defaults.
  const generic = input.nodeCIDRMaskSize || undefined;
  const v4 = input.nodeCIDRMaskSizeIPv4 || undefined;
  const v6 = input.nodeCIDRMaskSizeIPv6 || undefined;
  let mask4 = DEFAULT_NODE_MASK_IPV4;
  let mask6 = DEFAULT_NODE_MASK_IPV6;
  if (cidrs.length === 2) {
    if (generic !== undefined) throw new FlagsError('--node-cidr-mask-size: not allowed with a dual-stack --cluster-cidr; use --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6');
  } else if (generic !== undefined && (v4 !== undefined || v6 !== undefined)) {
    throw new FlagsError('--node-cidr-mask-size: not allowed together with --node-cidr-mask-size-ipv4 or --node-cidr-mask-size-ipv6');
  } else if (generic !== undefined) {
    mask4 = mask6 = generic;
  } else {
    // kube-controller-manager refuses a family's mask flag when the single-stack cluster CIDR has
    // no range of that family, rather than ignoring it (the operator meant something else).
    const own = cidrs[0].family;
    const other = own === 4 ? 6 : 4;
    const stray = other === 4 ? v4 : v6;
    if (stray !== undefined) {
      throw new FlagsError(
        `--node-cidr-mask-size-ipv${other}: ${stray} cannot apply to a single-stack IPv${own} cluster (--cluster-cidr ${cidrs[0].text} has no IPv${other} range); use --node-cidr-mask-size-ipv${own} or --node-cidr-mask-size`,
      );
    }
  }
  if (v4 !== undefined) mask4 = v4;
  if (v6 !== undefined) mask6 = v6;
  const families: PoolFamily[] = cidrs.map((cidr) => {
    const maskSize = cidr.family === 4 ? mask4 : mask6;
    const flag = cidrs.length === 2 || (cidr.family === 4 ? v4 : v6) !== undefined ? `--node-cidr-mask-size-ipv${cidr.family}` : '--node-cidr-mask-size';
    if (maskSize < cidr.prefix || maskSize > cidr.bits) {
      throw new FlagsError(`${flag}: ${maskSize} must be between the cluster CIDR prefix /${cidr.prefix} of ${cidr.text} and ${cidr.bits}`);
    }
    if (cidr.family === 6 && maskSize - cidr.prefix > MAX_IPV6_MASK_DIFF) {
      throw new FlagsError(`${flag}: /${maskSize} is more than ${MAX_IPV6_MASK_DIFF} bits longer than the cluster CIDR ${cidr.text}`);
    }
    return { family: cidr.family, cidr, maskSize };
  });
  return { families };
}

/** Canonical text of the flags pool: IPv4 first, `cidr:mask` items joined by commas. */
export function flagsPoolCanonical(pool: FlagsPool): string {
  return [...pool.families]
    .sort((a, b) => a.family - b.family)
    .map((f) => `${f.cidr.text}:${f.maskSize}`)
    .join(',');
}

/** `created-from-flags-<first 10 hex digits of sha256 of the canonical CIDRs and masks>`. */
export function createdFromFlagsName(pool: FlagsPool): string {
  return `created-from-flags-${createHash('sha256').update(flagsPoolCanonical(pool)).digest('hex').slice(0, 10)}`;
}

/** True when the pool fits one ClusterCIDR: one family, or the same host bits in both. */
export function flagsPoolMirrorable(pool: FlagsPool): boolean {
  const hostBits = new Set(pool.families.map((f) => f.cidr.bits - f.maskSize));
  return hostBits.size === 1;
}

/** The flags pool as an allocator pool (a fallback pool, families in flag order). */
export function flagsPoolToClusterCIDR(pool: FlagsPool, name = createdFromFlagsName(pool)): ClusterCIDR {
  const v4 = pool.families.find((f) => f.family === 4);
  const v6 = pool.families.find((f) => f.family === 6);
  return {
    name,
    selector: CompiledSelector.compile(undefined),
    perNodeHostBits: Math.min(...pool.families.map((f) => f.cidr.bits - f.maskSize)),
    ...(v4 ? { ipv4: v4.cidr.text } : {}),
    ...(v6 ? { ipv6: v6.cidr.text } : {}),
    families: pool.families,
    terminating: false,
    fromFlags: true,
  };
}
