// The one interface between the two loops that share the pod-CIDR allocator. The node IPAM loop
// owns the allocator (one in-process instance, so no block is handed out twice); the cloud node
// controller only claims a node's pod CIDRs through this, so they go out in the same write that
// removes the uninitialized taint.

/** What the cloud node controller knows about the node it initialises. */
export interface PodCIDRClaimRequest {
  name: string;
  /**
   * The node's metadata.uid: blocks are claimed for this node, not for its name. A claim made for
   * an earlier node of the same name is never returned for this one.
   */
  uid: string | undefined;
  /** The labels the node will have after the initialising write (pools select by labels). */
  labels: Record<string, string>;
}

export type PodCIDRClaimResult =
  /** Blocks reserved for the node, canonical CIDR text in stack order. */
  | { kind: 'claimed'; podCIDRs: string[]; pool: string }
  /** No free block: write without pod CIDRs; the IPAM loop reports CIDRNotAvailable and retries. */
  | { kind: 'unavailable'; reason: string }
  /** The allocator is not loaded yet (leadership fence, initial re-list): try the node again soon. */
  | { kind: 'notReady' };

export interface PodCIDRClaims {
  /**
   * Reserves blocks for a node that has none. Repeating the claim for the same node (name and
   * UID) returns the same blocks until the node is seen with them (confirmed) or deleted
   * (released), so a retried write never takes a second block; unless another node is meanwhile
   * recorded holding one of them, when the claim is dropped and free blocks are claimed instead.
   */
  claim(request: PodCIDRClaimRequest): PodCIDRClaimResult;
  /**
   * The node a claim was made for is gone (its write found no node, 404): gives its blocks back,
   * unless the cache shows a node of that name holding them. The watch's delete may have come
   * before the claim, so nothing else would ever release them.
   */
  release?(name: string, uid: string | undefined): void;
}
