// `--cloud-provider webhook`: the three batched questions answered by any inventory (NetBox, a
// CMDB, a hypervisor's API) behind one HTTPS endpoint. Each batch of up to batchSize nodes is one
// POST (protocol.ts); one answer serves all three methods, since it carries the shutdown state.
// Every node gets the outcome of its own POST and its own entry: an entry that fails its checks
// costs that node alone; a POST that fails (no answer, an HTTP error, a document that is not a v1
// answer) costs the nodes of that POST, each given the same BatchError, which the controllers
// split until a node that keeps failing is alone. No POST's failure is given to another's nodes.
import { forEachLimited } from '../../src/util/limit.js';
import { BatchError, found, notFound, retryableError, type CloudProvider, type InstanceMetadata, type InstanceResult, type NodeRef, type ProviderLogger } from '../types.js';
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
   * Every node's outcome, or the Error that cost it its answer: its own (a refused entry, no
   * entry) or its POST's (a BatchError shared by that POST's nodes only). Rejects only when the
   * signal aborts.
   */
  async #ask(operation: string, nodes: readonly NodeRef[], signal: AbortSignal | undefined): Promise<Map<string, WebhookOutcome | Error>> {
    const out = new Map<string, WebhookOutcome | Error>();
    if (nodes.length === 0) return out;
    const batches: NodeRef[][] = [];
    for (let i = 0; i < nodes.length; i += this.#o.batchSize) batches.push(nodes.slice(i, i + this.#o.batchSize));
    await forEachLimited(batches, CONCURRENT_POSTS, async (batch) => {
      let error: BatchError;
      try {
        const read = readAnswer(await this.#o.client.post(JSON.stringify(buildRequest(batch)), signal));
        if (read.ok) {
          this.#use(operation, batch, read.outcomes, read.notes, out);
          return;
        }
        error = new BatchError(`webhook answer refused: ${read.problems.join('; ')}`);
        this.#log.warn({ operation, url: this.#o.url, nodes: batch.length, problems: read.problems }, 'webhook answer is not a v1 answer: the nodes of this POST are asked again in halves');
      } catch (err) {
        if (signal?.aborted) throw err;
        if (!(err instanceof WebhookCallError)) throw err;
        error = new BatchError(`webhook ${this.#o.url}: ${err.message}`, { cause: err });
        this.#log.warn({ operation, url: this.#o.url, nodes: batch.length, err: err.message, ...(err.status ? { status: err.status } : {}) }, 'webhook call failed: the nodes of this POST are asked again in halves');
      }
      for (const n of batch) out.set(n.name, error);
    });
    return out;
  }

  /** The outcomes of one POST's answer, each for its own node. */
  #use(operation: string, batch: readonly NodeRef[], outcomes: Map<string, WebhookOutcome>, notes: readonly string[], out: Map<string, WebhookOutcome | Error>): void {
    for (const note of notes) this.#log.warn({ operation, url: this.#o.url }, `webhook answer: ${note}`);
    const asked = new Set(batch.map((n) => n.name));
    const extra = [...outcomes.keys()].filter((k) => !asked.has(k));
    if (extra.length > 0) this.#log.warn({ operation, url: this.#o.url, nodes: extra.slice(0, 10), count: extra.length }, 'webhook answered for nodes it was not asked about; ignored');
    const refused: string[] = [];
    for (const n of batch) {
      const o = outcomes.get(n.name);
      if (o?.kind === 'refused') {
        refused.push(n.name);
        out.set(n.name, new Error(`webhook answer refused: ${o.problems.join('; ')}`));
      } else {
        out.set(n.name, o ?? new Error(`the webhook gave no answer for node ${n.name}`));
      }
    }
    if (refused.length > 0) {
      const first = outcomes.get(refused[0] as string) as { problems: string[] };
      this.#log.warn({ operation, url: this.#o.url, nodes: refused.slice(0, 10), count: refused.length, problems: first.problems }, 'webhook entries that fail their checks are refused; those nodes wait, the rest of the answer is used');
    }
  }

  async #answer<T>(operation: string, nodes: readonly NodeRef[], signal: AbortSignal | undefined, map: (o: WebhookOutcome) => InstanceResult<T>): Promise<Map<string, InstanceResult<T>>> {
    const outcomes = await this.#ask(operation, nodes, signal);
    const out = new Map<string, InstanceResult<T>>();
    for (const [name, o] of outcomes) {
      out.set(name, o instanceof Error ? retryableError(o) : o.kind === 'error' ? retryableError(new Error(`webhook: ${o.message}`)) : o.kind === 'refused' ? retryableError(new Error(`webhook answer refused: ${o.problems.join('; ')}`)) : map(o));
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
