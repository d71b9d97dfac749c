// The one small interface every cloud adapter implements. It is batched by design: the
// controllers ask about many nodes at once, and an adapter answers each node with exactly one of
// three outcomes, so one slow or broken instance never hides the answers for the others.
import type { NodeAddress } from '../src/model/node-address.js';

/** What the controllers know about a node when they ask the cloud. */
export interface NodeRef {
  /** metadata.name */
  name: string;
  /** spec.providerID, empty when the node has not been initialised yet. */
  providerID?: string;
  /** metadata.labels */
  labels?: Record<string, string>;
}

/** Everything the cloud says about one instance. */
export interface InstanceMetadata {
  providerID: string;
  instanceType?: string;
  zone?: string;
  region?: string;
  /** In the cloud's order of preference. */
  addresses: NodeAddress[];
  /** Cloud-owned pod ranges (CloudAllocator mode), canonical CIDR text, stack order. */
  podCIDRs?: string[];
  /** How the pod ranges were chosen, or why there are none (CloudAllocator mode). */
  podCIDRDetails?: PodCIDRDetails;
  /** Extra labels the cloud wants on the node (never overwrite, never *.kubernetes.io). */
  labels?: Record<string, string>;
}

/** What CloudAllocator tells the node about its cloud pod ranges beyond the ranges themselves. */
export interface PodCIDRDetails {
  /** Choices made among several candidate ranges, said once as a Normal event. */
  notes?: string[];
  /** Why podCIDRs is absent: the node waits, with a Warning event saying this. */
  missing?: string;
  /**
   * The ranges belong to this instance alone while it lives (EC2's delegated prefixes): a range
   * that overlaps another node's block, a pool or a Service range is refused, never written.
   */
  exclusive?: boolean;
  /** Set when podCIDRs is absent and the provider is configured to ask the cloud for ranges. */
  request?: PodCIDRRequest;
}

/** What `requestPodCIDRs` would ask the cloud for. */
export interface PodCIDRRequest {
  /** The cloud object the ranges are asked for (an EC2 network interface ID). */
  target: string;
  /** In words, for events: "one IPv6 /80 prefix". */
  what: string;
}

/**
 * What came of a request: `done`; `not-applied`, the cloud answered that it did nothing (`retry`:
 * it was only throttled); `unknown`, no answer that says (a timeout, a lost response, a server
 * error): the caller finds out by reading, never by asking again.
 */
export type PodCIDRRequestOutcome =
  | { kind: 'done'; detail: string }
  | { kind: 'not-applied'; retry: boolean; error: Error }
  | { kind: 'unknown'; error: Error };

/** The answer for one node: exactly one of these. */
export type InstanceResult<T> =
  | { kind: 'found'; value: T }
  /** The instance is definitely gone (terminated, deleted, unknown to the cloud). */
  | { kind: 'notFound'; reason?: string }
  /** The cloud could not answer for this node now; ask again later. */
  | { kind: 'error'; error: Error; retryable: true };

export interface CloudProvider {
  /** Short provider name as given to --cloud-provider (`aws`, `azure`, `gce`, `kind`, `static`, `fake`). */
  readonly name: string;
  /** Metadata for many nodes in one round; the map has one entry per input node name. */
  instancesMetadata(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<InstanceMetadata>>>;
  /** Whether each instance still exists (for a later lifecycle controller). */
  instancesExist(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>>;
  /** Whether each instance is shut down (stopped but not gone). */
  instancesShutdown(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>>;
  /**
   * Why this provider, as configured, never reports addresses of `family`, if that is so (aws
   * without ipv6 in nodeIPFamilies). Added to the event of a node whose annotation names an IP of
   * a family the cloud's answer lacked.
   */
  familyHint?(family: 'IPv4' | 'IPv6'): string | undefined;
  /**
   * The instance a providerID names, as one string: two providerIDs name the same instance exactly
   * when their keys are equal, so spellings this provider treats as one are one (EC2's
   * `aws:///us-east-1a/i-0abc` and `aws:///i-0abc`; ARM IDs in any case). Undefined when the ID is
   * not one of this provider's: it is then compared as written. Without this method every
   * providerID is compared as written. The controllers use it to refuse an answer that names
   * another instance than the node's own, or one another live Node already has.
   */
  instanceKey?(providerID: string): string | undefined;
  /**
   * Asks the cloud for the pod ranges `request` names (CloudAllocator, when the provider offers a
   * request in podCIDRDetails). Not idempotent: one call per request, no retries of its own.
   */
  requestPodCIDRs?(node: NodeRef, request: PodCIDRRequest, signal?: AbortSignal): Promise<PodCIDRRequestOutcome>;
  /** Release timers, sockets and file watches. */
  close?(): Promise<void> | void;
}

/** How a provider is built from the command line. */
export interface ProviderOptions {
  /** Path given to --cloud-config, if any. */
  cloudConfig?: string;
  /** Structured logger (pino-compatible subset). */
  logger?: ProviderLogger;
}

/** The --cloud-config file as the registry read it, once, before the adapter loaded. */
export interface CloudConfigFile {
  /** As given on the command line: errors name it, and static watches it for edits. */
  path: string;
  /** The content at start-up. */
  text: string;
}

/**
 * What a factory gets: the --cloud-config file already checked and read (absent when the flag was
 * not given, or the provider does not use it), so adapters only parse it.
 */
export interface ProviderContext {
  cloudConfig?: CloudConfigFile;
  logger?: ProviderLogger;
}

export interface ProviderLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

export type ProviderFactory = (context: ProviderContext) => Promise<CloudProvider>;

const BATCH_ERROR = Symbol.for('node-address-ccm.batch-error');

/**
 * An error about a batch rather than about any one node in it (a POST whose answer document did
 * not parse, a request that timed out): an adapter that serves one call in several requests gives
 * the same BatchError to every node of the request that failed. The controllers then ask those
 * nodes again in smaller batches, as they do when a whole call rejects, until a node that keeps
 * failing is alone; the others get their own answers. Recognised by a registered symbol, so a
 * bundled copy of this class in a provider module works too.
 */
export class BatchError extends Error {
  override name = 'BatchError';
  readonly [BATCH_ERROR] = true;
}

/** Whether `err` is a BatchError (of this copy of the class or of another). */
export function isBatchError(err: unknown): err is BatchError {
  return err instanceof Error && (err as unknown as Record<symbol, unknown>)[BATCH_ERROR] === true;
}

/** Helpers so adapters build results the same way. */
export const found = <T>(value: T): InstanceResult<T> => ({ kind: 'found', value });
export const notFound = <T>(reason?: string): InstanceResult<T> => ({ kind: 'notFound', reason });
export const retryableError = <T>(error: unknown): InstanceResult<T> => ({
  kind: 'error',
  error: error instanceof Error ? error : new Error(String(error)),
  retryable: true,
});
