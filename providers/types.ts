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
  /** Extra labels the cloud wants on the node (never overwrite, never *.kubernetes.io). */
  labels?: Record<string, string>;
}

/** The answer for one node: exactly one of these. */
export type InstanceResult<T> =
  | { kind: 'found'; value: T }
  /** The instance is definitely gone (terminated, deleted, unknown to the cloud). */
  | { kind: 'notFound'; reason?: string }
  /** The cloud could not answer for this node now; ask again later. */
  | { kind: 'error'; error: Error; retryable: true };

export interface CloudProvider {
  /** Short provider name as given to --cloud-provider (`aws`, `gce`, `kind`, `static`, `fake`). */
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

/** Helpers so adapters build results the same way. */
export const found = <T>(value: T): InstanceResult<T> => ({ kind: 'found', value });
export const notFound = <T>(reason?: string): InstanceResult<T> => ({ kind: 'notFound', reason });
export const retryableError = <T>(error: unknown): InstanceResult<T> => ({
  kind: 'error',
  error: error instanceof Error ? error : new Error(String(error)),
  retryable: true,
});
