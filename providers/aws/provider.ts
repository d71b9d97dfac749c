// `--cloud-provider aws`: node metadata from EC2 DescribeInstances, batched. A resync of thousands
// of nodes costs one call per 500 instance IDs (or per 150 private DNS names), and one bad ID in a
// batch never costs the other nodes their answers.
import { AssignIpv6AddressesCommand, DescribeInstancesCommand, EC2Client, type DescribeInstancesCommandInput, type Filter, type Instance } from '@aws-sdk/client-ec2';
import { forEachLimited } from '../../src/util/limit.js';
import type { CloudProvider, InstanceMetadata, InstanceResult, NodeRef, PodCIDRDetails, PodCIDRRequest, PodCIDRRequestOutcome, ProviderLogger } from '../types.js';
import { found, notFound, retryableError } from '../types.js';
import { awsFamilyHint, awsNodeAddresses, validateNodeIPFamilies, type AWSNodeIPFamiliesValue } from './addresses.js';
import { BackoffGate, sharedEC2Gate } from './backoff.js';
import type { AWSCloudConfig } from './config.js';
import { awsPodCIDRs } from './pod-cidrs.js';
import { formatAWSProviderID, instanceIDFromNodeName, parseAWSProviderID } from './provider-id.js';
import { awsInstanceKey } from './provider-id.js';

/** EC2 accepts up to 1000 IDs per call; 500 keeps responses (and failures) moderate. */
export const INSTANCE_ID_BATCH = 500;
/** EC2 allows at most 200 values per filter; stay well below. */
export const DNS_NAME_BATCH = 150;
const FILTER_PAGE_SIZE = 1000;
/** Every state except terminated: a stopped node still owns its name. */
const ALIVE_STATES = ['pending', 'running', 'shutting-down', 'stopping', 'stopped'];

export interface AwsProviderOptions {
  config?: Partial<AWSCloudConfig>;
  /** Region label for nodes and the client's region; default config.region. */
  region?: string;
  /** A ready client (tests, or callers that build their own). Otherwise one is created. */
  client?: EC2Client;
  /**
   * The client for AssignIpv6Addresses: it must make one attempt only (the call is not
   * idempotent). Default: one built from these options with maxAttempts 1.
   */
  mutationClient?: EC2Client;
  /** Endpoint override; without it the SDK also honours AWS_ENDPOINT_URL_EC2 / AWS_ENDPOINT_URL. */
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** SDK attempts per request. Default 3. */
  maxAttempts?: number;
  /** SDK retry mode. Default 'adaptive' (client-side rate limiting after throttles). */
  retryMode?: 'standard' | 'adaptive';
  /**
   * Our own retries of a request still throttled after the SDK's attempts, paced by the shared
   * gate. Default 3.
   */
  throttleRetries?: number;
  /** Throttle gate; default the process-wide one. */
  gate?: BackoffGate;
  /** Concurrent DescribeInstances calls per round. Default 4. */
  concurrency?: number;
  logger?: ProviderLogger;
}

type Lookup = { kind: 'instance'; instance: Instance } | { kind: 'notFound'; reason: string } | { kind: 'error'; error: Error };

const noopLogger: ProviderLogger = { info() {}, warn() {}, error() {}, debug() {} };

function errorCode(err: unknown): string {
  const e = err as { name?: string; Code?: string; code?: string };
  return e?.Code ?? e?.name ?? e?.code ?? '';
}

/** What an AssignIpv6Addresses error says about whether EC2 acted on the call. */
export function assignOutcome(err: unknown): PodCIDRRequestOutcome {
  const error = err instanceof Error ? err : new Error(String(err));
  const status = (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  // RequestLimitExceeded: EC2 refused the request before running it.
  if (isThrottle(err)) return { kind: 'not-applied', retry: true, error };
  // A 4xx with a code is EC2 refusing the request (a limit, a bad ID, no permission). A 5xx, or no
  // answer at all (reset, timeout, abort), may have come after the prefix was assigned.
  if (status !== undefined && status >= 400 && status < 500 && errorCode(err) !== '') return { kind: 'not-applied', retry: false, error };
  return { kind: 'unknown', error };
}

function isThrottle(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'RequestLimitExceeded' || code === 'Throttling' || code === 'ThrottlingException';
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The IDs from `candidates` that an EC2 error message names (quoted or in a comma list). */
export function idsNamedInMessage(message: string, candidates: readonly string[]): string[] {
  return candidates.filter((id) => new RegExp(`(^|[\\s'",:])${escapeRegExp(id)}($|[\\s'",.)])`).test(message));
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function hasClusterTag(instance: Instance, clusterID: string): boolean {
  return (instance.Tags ?? []).some((t) => t.Key === `kubernetes.io/cluster/${clusterID}` || (t.Key === 'KubernetesCluster' && t.Value === clusterID));
}

function buildClient(options: AwsProviderOptions, region: string | undefined): EC2Client {
  return new EC2Client({
    ...(region ? { region } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    retryMode: options.retryMode ?? 'adaptive',
    maxAttempts: options.maxAttempts ?? 3,
  });
}

export class AwsProvider implements CloudProvider {
  readonly name = 'aws';
  /** Which providerIDs name one instance (awsInstanceKey): the controllers compare answers with it. */
  readonly instanceKey = awsInstanceKey;
  /** DescribeInstances requests we issued (each page and each of our retries counts; SDK-internal retries do not). */
  apiCalls = 0;
  /** AssignIpv6Addresses requests we issued (never retried). */
  assignCalls = 0;
  readonly region: string | undefined;
  readonly clusterID: string | undefined;
  readonly nodeIPFamilies: AWSNodeIPFamiliesValue[];
  readonly assignIPv6PodPrefix: boolean;
  private readonly client: EC2Client;
  private mutationClient: EC2Client | undefined;
  private readonly options: AwsProviderOptions;
  private readonly ownsClient: boolean;
  private readonly gate: BackoffGate;
  private readonly throttleRetries: number;
  private readonly concurrency: number;
  private readonly logger: ProviderLogger;

  constructor(options: AwsProviderOptions = {}, ownsClient = !options.client) {
    const config = options.config ?? {};
    this.nodeIPFamilies = [...validateNodeIPFamilies(config.nodeIPFamilies ?? ['ipv4'])];
    this.assignIPv6PodPrefix = config.assignIPv6PodPrefix === true;
    if (this.assignIPv6PodPrefix && !this.nodeIPFamilies.includes('ipv6')) throw new Error('aws: assignIPv6PodPrefix needs nodeIPFamilies to include ipv6');
    this.options = options;
    this.mutationClient = options.mutationClient;
    this.clusterID = config.clusterID;
    this.region = options.region ?? config.region;
    this.gate = options.gate ?? sharedEC2Gate;
    this.throttleRetries = options.throttleRetries ?? 3;
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.logger = options.logger ?? noopLogger;
    this.ownsClient = ownsClient;
    this.client = options.client ?? buildClient(options, this.region);
  }

  familyHint(family: 'IPv4' | 'IPv6'): string | undefined {
    return awsFamilyHint(this.nodeIPFamilies, family);
  }

  /** Builds a provider and settles the region (config, then the SDK's default chain). */
  static async create(options: AwsProviderOptions = {}): Promise<AwsProvider> {
    let region = options.region ?? options.config?.region;
    const client = options.client ?? buildClient(options, region);
    if (!region) {
      region = await client.config.region().catch(() => undefined);
    }
    if (!region) {
      if (!options.client) client.destroy();
      throw new Error('aws: no region: set [Global] Region (or Zone) in --cloud-config, or AWS_REGION');
    }
    return new AwsProvider({ ...options, client, region }, !options.client);
  }

  async instancesMetadata(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<InstanceMetadata>>> {
    const lookups = await this.lookup(nodes, signal);
    const out = new Map<string, InstanceResult<InstanceMetadata>>();
    for (const n of nodes) {
      const l = lookups.get(n.name)!;
      if (l.kind !== 'instance') {
        out.set(n.name, l.kind === 'notFound' ? notFound(l.reason) : retryableError(l.error));
        continue;
      }
      try {
        out.set(n.name, found(this.metadata(l.instance, n.providerID)));
      } catch (err) {
        out.set(n.name, retryableError(err));
      }
    }
    return out;
  }

  async instancesExist(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    const lookups = await this.lookup(nodes, signal);
    const out = new Map<string, InstanceResult<boolean>>();
    for (const n of nodes) {
      const l = lookups.get(n.name)!;
      out.set(n.name, l.kind === 'error' ? retryableError(l.error) : found(l.kind === 'instance'));
    }
    return out;
  }

  async instancesShutdown(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    const lookups = await this.lookup(nodes, signal);
    const out = new Map<string, InstanceResult<boolean>>();
    for (const n of nodes) {
      const l = lookups.get(n.name)!;
      if (l.kind === 'instance') out.set(n.name, found(l.instance.State?.Name === 'stopped'));
      else out.set(n.name, l.kind === 'notFound' ? notFound(l.reason) : retryableError(l.error));
    }
    return out;
  }

  close(): void {
    if (this.ownsClient) this.client.destroy();
    if (!this.options.mutationClient) this.mutationClient?.destroy();
  }

  /**
   * One AssignIpv6Addresses call with Ipv6PrefixCount 1, one attempt, no retries: an error is
   * classified (assignOutcome), never answered by calling again. Throws only when `signal` has
   * already ended the term, before anything was sent.
   */
  async requestPodCIDRs(node: NodeRef, request: PodCIDRRequest, signal?: AbortSignal): Promise<PodCIDRRequestOutcome> {
    if (!this.assignIPv6PodPrefix) return { kind: 'not-applied', retry: false, error: new Error('aws: [Global] AssignIPv6PodPrefix is off') };
    await this.gate.wait(signal);
    signal?.throwIfAborted();
    this.mutationClient ??= buildClient({ ...this.options, maxAttempts: 1, retryMode: 'standard' }, this.region);
    this.assignCalls++;
    this.logger.info({ node: node.name, networkInterfaceId: request.target }, 'AssignIpv6Addresses: asking EC2 for one IPv6 /80 prefix');
    try {
      const out = await this.mutationClient.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: request.target, Ipv6PrefixCount: 1 }), { abortSignal: signal });
      this.gate.succeeded();
      const got = out.AssignedIpv6Prefixes ?? [];
      return { kind: 'done', detail: got.length > 0 ? `EC2 assigned ${got.join(', ')} to ${request.target}` : `EC2 accepted the request for ${request.target}` };
    } catch (err) {
      if (isThrottle(err)) this.gate.throttled();
      const outcome = assignOutcome(err);
      this.logger.warn({ node: node.name, networkInterfaceId: request.target, outcome: outcome.kind, err: (err as Error).message }, 'AssignIpv6Addresses failed');
      return outcome;
    }
  }

  private podCIDRs(instance: Instance, meta: InstanceMetadata): void {
    const details: PodCIDRDetails = { exclusive: true };
    meta.podCIDRDetails = details;
    let pods;
    try {
      pods = awsPodCIDRs(instance, { nodeIPFamilies: this.nodeIPFamilies });
    } catch (err) {
      // A prefix we cannot read costs the pod CIDRs, not the node's addresses.
      details.missing = (err as Error).message;
      return;
    }
    if (pods.podCIDRs.length > 0) meta.podCIDRs = pods.podCIDRs;
    const notes = pods.families.flatMap((f) => (f.kind === 'chosen' && f.note ? [f.note] : []));
    if (notes.length > 0) details.notes = notes;
    const missing = pods.families.flatMap((f) => (f.kind === 'missing' ? [f] : []));
    if (missing.length === 0) return;
    details.missing = [...new Set(missing.map((f) => f.message))].join('; ');
    if (this.assignIPv6PodPrefix && missing.some((f) => f.family === 6) && pods.interfaceId?.startsWith('eni-')) {
      details.request = { target: pods.interfaceId, what: 'one IPv6 /80 prefix' };
    }
  }

  /**
   * The instance's metadata. The providerID is the node's own when it has one, as
   * cloud-provider-aws's InstanceMetadata answers (instances_v2.go getProviderID): any form it
   * names the instance by (`aws:////i-…`, `aws:///<zone>/<anything>/i-…`, a bare `i-…`) comes back
   * as written, never rewritten to `aws:///<zone>/i-…`; a node without one gets that form.
   */
  private metadata(instance: Instance, nodeProviderID: string | undefined): InstanceMetadata {
    const zone = instance.Placement?.AvailabilityZone || undefined;
    const meta: InstanceMetadata = {
      providerID: nodeProviderID || formatAWSProviderID(zone, instance.InstanceId!),
      addresses: awsNodeAddresses(instance, { nodeIPFamilies: this.nodeIPFamilies }),
    };
    this.podCIDRs(instance, meta);
    if (instance.InstanceType) meta.instanceType = instance.InstanceType;
    if (zone) meta.zone = zone;
    if (this.region) meta.region = this.region;
    return meta;
  }

  /** One answer per node name: the live instance, notFound, or an error. */
  private async lookup(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, Lookup>> {
    signal?.throwIfAborted();
    const byID = new Map<string, string[]>();
    const byDNS = new Map<string, string[]>();
    const out = new Map<string, Lookup>();
    const add = (m: Map<string, string[]>, key: string, node: string): void => {
      const list = m.get(key);
      if (list) list.push(node);
      else m.set(key, [node]);
    };
    for (const n of nodes) {
      if (n.providerID) {
        try {
          add(byID, parseAWSProviderID(n.providerID).instanceID, n.name);
        } catch (err) {
          // Not ours to judge as gone: another controller may have set it. Report and retry later.
          out.set(n.name, { kind: 'error', error: err as Error });
        }
        continue;
      }
      const id = instanceIDFromNodeName(n.name);
      if (id) add(byID, id, n.name);
      else add(byDNS, n.name, n.name);
    }
    const [ids, names] = await Promise.all([this.describeByIDs([...byID.keys()], signal), this.describeByDNSNames([...byDNS.keys()], signal)]);
    // An aborted round is abandoned as a whole, rather than reported as per-node errors.
    signal?.throwIfAborted();
    for (const [id, nodeNames] of byID) for (const n of nodeNames) out.set(n, ids.get(id)!);
    for (const [dns, nodeNames] of byDNS) for (const n of nodeNames) out.set(n, names.get(dns)!);
    return out;
  }

  private async describeByIDs(ids: string[], signal?: AbortSignal): Promise<Map<string, Lookup>> {
    const out = new Map<string, Lookup>();
    await forEachLimited(chunk(ids, INSTANCE_ID_BATCH), this.concurrency, (c) => this.describeIDChunk(c, out, signal));
    return out;
  }

  private async describeIDChunk(ids: string[], out: Map<string, Lookup>, signal?: AbortSignal): Promise<void> {
    let pending = ids;
    while (pending.length > 0) {
      let instances: Instance[];
      try {
        instances = await this.describeAll({ InstanceIds: pending }, signal);
      } catch (err) {
        const code = errorCode(err);
        if (code !== 'InvalidInstanceID.NotFound' && code !== 'InvalidInstanceID.Malformed') {
          for (const id of pending) out.set(id, { kind: 'error', error: err as Error });
          return;
        }
        const message = (err as Error).message ?? '';
        let bad = idsNamedInMessage(message, pending);
        if (bad.length === 0 && pending.length === 1) bad = pending;
        if (bad.length === 0) {
          // The message named no ID we sent: split the batch so the bad ID is isolated.
          const half = Math.ceil(pending.length / 2);
          await this.describeIDChunk(pending.slice(0, half), out, signal);
          await this.describeIDChunk(pending.slice(half), out, signal);
          return;
        }
        for (const id of bad) {
          out.set(
            id,
            code === 'InvalidInstanceID.NotFound'
              ? { kind: 'notFound', reason: `EC2 instance ${id} does not exist` }
              : { kind: 'error', error: new Error(`EC2 rejected instance ID ${JSON.stringify(id)} as malformed: ${message}`) },
          );
        }
        this.logger.debug({ code, ids: bad }, 'DescribeInstances: retrying batch without the IDs EC2 rejected');
        const badSet = new Set(bad);
        pending = pending.filter((id) => !badSet.has(id));
        continue;
      }
      const seen = new Map(instances.map((i) => [i.InstanceId!, i]));
      for (const id of pending) {
        const i = seen.get(id);
        if (!i) out.set(id, { kind: 'notFound', reason: `EC2 instance ${id} does not exist` });
        else if (i.State?.Name === 'terminated') out.set(id, { kind: 'notFound', reason: `EC2 instance ${id} is terminated` });
        else out.set(id, { kind: 'instance', instance: i });
      }
      return;
    }
  }

  private async describeByDNSNames(names: string[], signal?: AbortSignal): Promise<Map<string, Lookup>> {
    const out = new Map<string, Lookup>();
    await forEachLimited(chunk(names, DNS_NAME_BATCH), this.concurrency, async (c) => {
      const filters: Filter[] = [
        { Name: 'private-dns-name', Values: c },
        { Name: 'instance-state-name', Values: ALIVE_STATES },
      ];
      let instances: Instance[];
      try {
        instances = await this.describeAll({ Filters: filters, MaxResults: FILTER_PAGE_SIZE }, signal);
      } catch (err) {
        for (const n of c) out.set(n, { kind: 'error', error: err as Error });
        return;
      }
      const matches = new Map<string, Instance[]>();
      for (const i of instances) {
        if (i.State?.Name === 'terminated') continue;
        // Other clusters may share the VPC; only instances tagged for ours count.
        if (this.clusterID && !hasClusterTag(i, this.clusterID)) continue;
        const list = matches.get(i.PrivateDnsName ?? '');
        if (list) list.push(i);
        else matches.set(i.PrivateDnsName ?? '', [i]);
      }
      for (const n of c) {
        const m = matches.get(n) ?? [];
        if (m.length === 1) out.set(n, { kind: 'instance', instance: m[0]! });
        else if (m.length === 0) {
          const scope = this.clusterID ? ` tagged for cluster ${this.clusterID}` : '';
          out.set(n, { kind: 'notFound', reason: `no EC2 instance${scope} has private DNS name ${n}` });
        } else {
          const ids = m.map((i) => i.InstanceId).join(', ');
          out.set(n, { kind: 'error', error: new Error(`several EC2 instances have private DNS name ${n}: ${ids}`) });
        }
      }
    });
    return out;
  }

  /** All pages of one DescribeInstances query. */
  private async describeAll(input: DescribeInstancesCommandInput, signal?: AbortSignal): Promise<Instance[]> {
    const instances: Instance[] = [];
    let token: string | undefined;
    do {
      const page = await this.send({ ...input, ...(token ? { NextToken: token } : {}) }, signal);
      for (const r of page.Reservations ?? []) instances.push(...(r.Instances ?? []));
      token = page.NextToken || undefined;
    } while (token);
    return instances;
  }

  private async send(input: DescribeInstancesCommandInput, signal?: AbortSignal) {
    for (let attempt = 0; ; attempt++) {
      await this.gate.wait(signal);
      try {
        this.apiCalls++;
        const out = await this.client.send(new DescribeInstancesCommand(input), { abortSignal: signal });
        this.gate.succeeded();
        return out;
      } catch (err) {
        if (!isThrottle(err)) throw err;
        this.gate.throttled();
        if (attempt >= this.throttleRetries || signal?.aborted) throw err;
        this.logger.debug({ attempt: attempt + 1, delayMs: this.gate.currentDelayMs }, 'DescribeInstances throttled; backing off');
      }
    }
  }
}
