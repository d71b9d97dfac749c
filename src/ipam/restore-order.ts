// The order in which existing pod CIDRs are restored: oldest node first, then by name. The
// node-IPAM controller and `plan` both use it, so an offline plan picks the same winner of a
// conflict (the earlier holder keeps the block) as the controller does.

/** Nodes by creationTimestamp, then name: the order in which existing pod CIDRs are restored. */
export function restoreOrder<N extends { metadata: { name: string; creationTimestamp?: string } }>(nodes: readonly N[]): N[] {
  return [...nodes].sort((a, b) => {
    const ta = a.metadata.creationTimestamp ?? '';
    const tb = b.metadata.creationTimestamp ?? '';
    if (ta !== tb) return ta < tb ? -1 : 1;
    return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
  });
}
