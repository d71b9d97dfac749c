// Where the allocator's pools and exclusions come from. This issue ships the flags source
// (--cluster-cidr, mask flags, --service-cluster-ip-range); ClusterCIDR objects and ServiceCIDR
// watching are further sources added next to it, without changing the IPAM loop.
import { flagsPoolToClusterCIDR, parseFlagsPool, type PodCIDRAllocator } from '../../ipam/index.js';
import { parseCIDRList } from '../../ipam/cidr.js';
import type { Logger } from '../../log.js';
import type { ExclusionConflict } from '../../ipam/index.js';
import type { EventType } from '../seams.js';

/** An object other than a Node that events are recorded about (ClusterCIDRs). */
export interface EventObjectRef {
  kind: string;
  apiVersion: string;
  name: string;
  uid?: string;
}

/** What the IPAM loop offers its sources. */
export interface PoolSourceHooks {
  /** Pools were added (or became usable): nodes waiting for space are retried at once. */
  poolsChanged(): void;
  /** A Warning/Normal event about a node, by name (dropped when the node is not in the cache). */
  nodeEvent(node: string, type: EventType, reason: string, message: string): void;
  /** An event about another object (a ClusterCIDR). */
  objectEvent(ref: EventObjectRef, type: EventType, reason: string, message: string): void;
}

export interface PoolSource {
  /** For logs. */
  readonly name: string;
  /**
   * Loads the source into the allocator and keeps it current until stop(). Resolves once the
   * initial pools and exclusions are in the allocator (before any node is placed).
   */
  start(allocator: PodCIDRAllocator, logger: Logger, hooks?: PoolSourceHooks): Promise<void>;
  /**
   * A follower's start (warm standby): loads the source and keeps it current like start(), but
   * writes nothing until lead(). Sources that never write need neither (start() serves).
   */
  follow?(allocator: PodCIDRAllocator, logger: Logger, hooks?: PoolSourceHooks): Promise<void>;
  /**
   * The follower took the lease: bring the source current to a read made now (its objects may
   * have changed while the watch lagged), then do what start() does that writes.
   */
  lead?(signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
  /** Nodes' blocks were released (node deleted): pools held only by them may finish terminating. */
  nodesReleased?(pools: readonly string[]): void;
  /**
   * Every existing node's blocks are recorded (start-up restore done). Until then a source must
   * not conclude that a pool is unused.
   */
  nodesRestored?(): void;
  /** Existing node blocks found overlapping excluded ranges (restore, node updates). */
  conflictsFound?(conflicts: readonly ExclusionConflict[]): void;
}

export interface FlagsSourceInput {
  clusterCIDR: string;
  nodeCIDRMaskSize?: number;
  nodeCIDRMaskSizeIPv4?: number;
  nodeCIDRMaskSizeIPv6?: number;
  serviceClusterIPRange?: string;
}

/** Exclusion key of the Service range given by flag. */
export const SERVICE_RANGE_EXCLUSION = 'flag:--service-cluster-ip-range';

/**
 * The RangeAllocator pool from flags: one fallback pool, and the Service range(s) excluded from
 * it. Validates eagerly, so a bad flag fails the process at start-up with the flag's name.
 */
export class FlagsPoolSource implements PoolSource {
  readonly name = 'flags';
  readonly #pool: ReturnType<typeof flagsPoolToClusterCIDR>;
  readonly #serviceRanges: string[];

  constructor(input: FlagsSourceInput) {
    const flagsInput: Parameters<typeof parseFlagsPool>[0] = { clusterCIDR: input.clusterCIDR };
    if (input.nodeCIDRMaskSize !== undefined) flagsInput.nodeCIDRMaskSize = input.nodeCIDRMaskSize;
    if (input.nodeCIDRMaskSizeIPv4 !== undefined) flagsInput.nodeCIDRMaskSizeIPv4 = input.nodeCIDRMaskSizeIPv4;
    if (input.nodeCIDRMaskSizeIPv6 !== undefined) flagsInput.nodeCIDRMaskSizeIPv6 = input.nodeCIDRMaskSizeIPv6;
    this.#pool = flagsPoolToClusterCIDR(parseFlagsPool(flagsInput));
    this.#serviceRanges = [];
    if (input.serviceClusterIPRange !== undefined) {
      try {
        this.#serviceRanges = parseCIDRList(input.serviceClusterIPRange).map((c) => c.text);
      } catch (err) {
        throw new Error(`--service-cluster-ip-range: ${(err as Error).message}`, { cause: err });
      }
      if (this.#serviceRanges.length === 0 || this.#serviceRanges.length > 2) {
        throw new Error(`--service-cluster-ip-range: one CIDR or a dual-stack pair, got "${input.serviceClusterIPRange}"`);
      }
    }
  }

  /** The pool's name (created-from-flags-…). */
  get poolName(): string {
    return this.#pool.name;
  }

  start(allocator: PodCIDRAllocator, logger: Logger): Promise<void> {
    allocator.upsertPool(this.#pool);
    if (this.#serviceRanges.length > 0) allocator.setExclusion(SERVICE_RANGE_EXCLUSION, this.#serviceRanges);
    logger.info({ pool: this.#pool.name, families: this.#pool.families.map((f) => `${f.cidr.text}:/${f.maskSize}`), serviceRanges: this.#serviceRanges }, 'flags pool loaded');
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}
