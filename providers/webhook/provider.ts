// `--cloud-provider webhook`: the three batched questions answered by any inventory (NetBox, a
// CMDB, a hypervisor's API) behind one HTTPS endpoint. Each batch of up to batchSize nodes is one
// POST (protocol.ts); one answer serves all three methods, since it carries the shutdown state.
import { forEachLimited } from '../../src/util/limit.js';
import { found, notFound, retryableError, type CloudProvider, type InstanceMetadata, type InstanceResult, type NodeRef, type ProviderLogger } from '../types.js';
import { WebhookCallError, type WebhookClient } from './client.js';
import { buildRequest, readAnswer, type WebhookOutcome } from './protocol.js';

/** POSTs in flight for one call of many batches. */
const CONCURRENT_POSTS = 4;

const noopLogger: ProviderLogger = { info() {}, warn() {}, error() {}, debug() {} };

export interface WebhookProviderOptions {
  client: WebhookClient;
  batchSize: number;
  /** For messages: where answers come from. */
  url: string;
  logger?: ProviderLogger;
}

export class WebhookProvider implements CloudProvider {
  readonly name = 'webhook';
  readonly #o: WebhookProviderOptions;
  readonly #log: ProviderLogger;

  constructor(options: WebhookProviderOptions) {
    this.#o = options;
    this.#log = options.logger ?? noopLogger;
  }

  /**
   * Every node's outcome, or the Error that cost its batch the answer. Rejects only when the
   * signal aborts or every batch failed (then the call as a whole had no answer).
   */
  async #ask(operation: string, nodes: readonly NodeRef[], signal: AbortSignal | undefined): Promise<Map<string, WebhookOutcome | Error>> {
    const out = new Map<string, WebhookOutcome | Error>();
    if (nodes.length === 0) return out;
    const batches: NodeRef[][] = [];
    for (let i = 0; i < nodes.length; i += this.#o.batchSize) batches.push(nodes.slice(i, i + this.#o.batchSize));
    const failures: Error[] = [];
    await forEachLimited(batches, CONCURRENT_POSTS, async (batch) => {
      let error: Error;
      try {
        const read = readAnswer(await this.#o.client.post(JSON.stringify(buildRequest(batch)), signal));
        if (read.ok) {
          for (const note of read.notes) this.#log.warn({ operation, url: this.#o.url }, `webhook answer: ${note}`);
          const asked = new Set(batch.map((n) => n.name));
          const extra = [...read.outcomes.keys()].filter((k) => !asked.has(k));
          if (extra.length > 0) this.#log.warn({ operation, url: this.#o.url, nodes: extra.slice(0, 10), count: extra.length }, 'webhook answered for nodes it was not asked about; ignored');
          for (const n of batch) out.set(n.name, read.outcomes.get(n.name) ?? new Error(`the webhook gave no answer for node ${n.name}`));
          return;
        }
        error = new Error(`webhook answer refused: ${read.problems.join('; ')}`);
        this.#log.warn({ operation, url: this.#o.url, nodes: batch.length, problems: read.problems }, 'webhook answer does not conform to the v1 schema; the batch waits');
      } catch (err) {
        if (signal?.aborted) throw err;
        error = new Error(`webhook ${this.#o.url}: ${(err as Error).message}`, { cause: err });
        if (!(err instanceof WebhookCallError)) throw err;
        this.#log.warn({ operation, url: this.#o.url, nodes: batch.length, err: err.message, ...(err.status ? { status: err.status } : {}) }, 'webhook call failed; the batch waits');
      }
      failures.push(error);
      for (const n of batch) out.set(n.name, error);
    });
    if (failures.length === batches.length) throw failures[0] as Error;
    return out;
  }

  async #answer<T>(operation: string, nodes: readonly NodeRef[], signal: AbortSignal | undefined, map: (o: WebhookOutcome) => InstanceResult<T>): Promise<Map<string, InstanceResult<T>>> {
    const outcomes = await this.#ask(operation, nodes, signal);
    const out = new Map<string, InstanceResult<T>>();
    for (const [name, o] of outcomes) {
      out.set(name, o instanceof Error ? retryableError(o) : o.kind === 'error' ? retryableError(new Error(`webhook: ${o.message}`)) : map(o));
    }
    return out;
  }

  instancesMetadata(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<InstanceMetadata>>> {
    return this.#answer('instancesMetadata', nodes, signal, (o) => (o.kind === 'found' ? found(o.metadata) : notFound(o.kind === 'notFound' ? o.reason : undefined)));
  }

  /** Gone when the inventory says notFound. */
  instancesExist(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    return this.#answer('instancesExist', nodes, signal, (o) => found(o.kind === 'found'));
  }

  instancesShutdown(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    return this.#answer('instancesShutdown', nodes, signal, (o) => (o.kind === 'found' ? found(o.shutdown) : notFound(o.kind === 'notFound' ? o.reason : undefined)));
  }

  close(): void {
    this.#o.client.close();
  }
}
