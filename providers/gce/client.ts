// The Compute API side of the adapter: InstancesClient over the REST transport, paged with the
// library's async iterators. Credentials come from Application Default Credentials unless a
// client is injected (tests pass a static-token auth client so no metadata server is asked).
import type { InstancesClient } from '@google-cloud/compute/build/src/v1/instances_client.js';
import type { GceInstance } from './addresses.js';
import { parseApiEndpoint, type GceConfig } from './config.js';
import { GCE_PAGE_SIZE, type GceInstanceSource, type ListedInstance } from './provider.js';
import { lastSegment } from './provider-id.js';
import type { ProviderLogger } from '../types.js';

export interface GceClientOptions {
  /** An auth client with getRequestHeaders() and fetch(); default: ADC via google-auth-library. */
  authClient?: unknown;
}

export async function createInstancesClient(config: GceConfig, options: GceClientOptions = {}): Promise<InstancesClient> {
  // Loaded lazily: the compute protos are large and only the gce provider needs them. The v1
  // instances client alone: the package index would load all ~190 clients of v1 and v1beta.
  const { InstancesClient: Client } = await import('@google-cloud/compute/build/src/v1/instances_client.js');
  const opts: Record<string, unknown> = { fallback: true };
  if (config.apiEndpoint) {
    const ep = parseApiEndpoint(config.apiEndpoint);
    // gax's REST transport takes scheme and port apart from the host name.
    Object.assign(opts, { apiEndpoint: ep.host, port: ep.port, protocol: ep.protocol });
  }
  if (options.authClient) opts.authClient = options.authClient;
  return new Client(opts as ConstructorParameters<typeof Client>[0]);
}

/**
 * Per page call, retries included. The library default retries UNAVAILABLE for ten minutes,
 * which would stall a whole resync; the controller retries the round on its own.
 */
export const GCE_CALL_TIMEOUT_MS = 30_000;

function zoneOfKey(key: string): string {
  // aggregatedList keys are "zones/<zone>"; instance.zone is a full URL.
  return lastSegment(key);
}

export class ComputeInstanceSource implements GceInstanceSource {
  constructor(
    private readonly client: InstancesClient,
    private readonly config: GceConfig,
    private readonly logger?: ProviderLogger,
    private readonly callTimeoutMs = GCE_CALL_TIMEOUT_MS,
  ) {}

  private get callOptions() {
    return { autoPaginate: false, timeout: this.callTimeoutMs };
  }

  async list(signal?: AbortSignal): Promise<{ instances: ListedInstance[]; unreachableZones: Set<string> }> {
    return this.config.zones.length > 0 ? this.listZones(signal) : this.listAggregated(signal);
  }

  private async listAggregated(signal?: AbortSignal) {
    const instances: ListedInstance[] = [];
    const unreachableZones = new Set<string>();
    const pages = this.client.aggregatedListAsync({ project: this.config.project, maxResults: GCE_PAGE_SIZE }, this.callOptions);
    for await (const [key, scoped] of pages) {
      signal?.throwIfAborted();
      const zone = zoneOfKey(key);
      if (scoped.warning?.code === 'UNREACHABLE') unreachableZones.add(zone);
      for (const instance of scoped.instances ?? []) {
        instances.push({ zone: instance.zone ? lastSegment(instance.zone) : zone, instance: instance as GceInstance });
      }
    }
    return { instances, unreachableZones };
  }

  private async listZones(signal?: AbortSignal) {
    const instances: ListedInstance[] = [];
    const unreachableZones = new Set<string>();
    const errors: string[] = [];
    for (const zone of this.config.zones) {
      try {
        const zoneInstances: ListedInstance[] = [];
        for await (const instance of this.client.listAsync({ project: this.config.project, zone, maxResults: GCE_PAGE_SIZE }, this.callOptions)) {
          signal?.throwIfAborted();
          zoneInstances.push({ zone, instance: instance as GceInstance });
        }
        instances.push(...zoneInstances);
      } catch (err) {
        if (signal?.aborted) throw err;
        // One failing zone makes only its nodes unanswerable, not the whole cluster.
        unreachableZones.add(zone);
        errors.push(`${zone}: ${(err as Error).message}`);
        this.logger?.warn({ zone, err: (err as Error).message }, 'gce: listing a zone failed');
      }
    }
    if (errors.length === this.config.zones.length) throw new Error(errors.join('; '));
    return { instances, unreachableZones };
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
