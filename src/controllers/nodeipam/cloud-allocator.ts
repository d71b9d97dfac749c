// CloudAllocator: a node's pod ranges are the ones the cloud gives its instance (cloud-ranges.ts
// reads them from the provider). Nodes waiting for ranges are looked up in batches, one provider
// call per batch as the cloud node controller batches its lookups; each node's ranges are checked
// against the ledger (a clash with a pool, another node or a Service range is reported, never
// silently accepted), written, and then the NetworkUnavailable condition is cleared.
import { forEachLimited } from '../../util/limit.js';
import { runBatchWorkers, type BatchResult, type WorkerPool } from '../../kube/workqueue.js';
import { CLOUD_POOL, nodePodCIDRs, type NodeObject } from '../../model/node.js';
import { CIDRAllocatorLoop, IPAMEventReason, type Blocks, type CIDRAllocatorOptions } from './cidr-allocator.js';
import { CLOUD_RANGES_BATCH, CloudRangeIndex, networkAvailable, networkAvailablePatch, recordCloudRanges, type CloudRangeResult, type CloudRanges } from './cloud-ranges.js';

/** Node writes in flight at once per batch of looked-up nodes. */
const WRITES_PER_BATCH = 8;

export interface CloudAllocatorOptions extends CIDRAllocatorOptions {
  ranges: CloudRanges;
  /** Current Service ranges, for clash reports of ranges outside every pool. */
  serviceRanges: () => string[];
  /** Strategic-merge patch of node/status (the NetworkUnavailable condition). */
  patchStatus: (name: string, patch: unknown) => Promise<unknown>;
  /** How long a batch waits for the next node before its provider call (default 0). */
  gatherMs?: number;
  /** The longest a batch gathers, however steadily nodes arrive (default gatherMs). */
  gatherMaxMs?: number;
}

export class CloudAllocator extends CIDRAllocatorLoop {
  readonly #cloud: CloudAllocatorOptions;
  /** Every node's cloud ranges, for node-vs-node clashes outside every pool. */
  readonly #index = new CloudRangeIndex();

  constructor(options: CloudAllocatorOptions) {
    super(options);
    this.#cloud = options;
  }

  protected override runWorkers(): WorkerPool {
    const { gatherMs = 0, gatherMaxMs = 0, workers = 1 } = this.#cloud;
    return runBatchWorkers(this.queue, workers, CLOUD_RANGES_BATCH, (names) => this.#syncBatch(names), { logger: this.log, gatherMs, gatherMaxMs });
  }

  protected override record(node: NodeObject): boolean {
    const podCIDRs = nodePodCIDRs(node);
    if (podCIDRs.length === 0) return false;
    // The cloud's ranges need no pool: only clashes are reported.
    const { clashes } = recordCloudRanges(this.ledger, this.#index, node.metadata.name, podCIDRs, this.#cloud.serviceRanges());
    this.#reportClashes(node, clashes.map((c) => c.message));
    return true;
  }

  protected override observe(node: NodeObject): void {
    if (this.record(node)) {
      // Blocks written but the condition not yet (a failed status write, a restart).
      if (!networkAvailable(node)) this.queue.add(node.metadata.name);
      return;
    }
    this.queue.add(node.metadata.name);
  }

  protected override nodeGone(name: string): void {
    this.#index.remove(name);
  }

  #reportClashes(node: NodeObject, messages: string[]): void {
    if (!this.isNewConflict(node.metadata.name, messages.join('\n'))) return;
    for (const m of messages) {
      this.options.events.emit(node, 'Warning', IPAMEventReason.CloudRangeClash, m);
      this.warn(IPAMEventReason.CloudRangeClash, { node: node.metadata.name, message: m });
    }
  }

  /** The nodes waiting in the queue (up to 500) are looked up in one provider call, then written a few at a time. */
  async #syncBatch(names: string[]): Promise<BatchResult<string>> {
    const lookup = names.map((n) => this.options.nodes.get(n)).filter((n): n is NodeObject => n !== undefined && nodePodCIDRs(n).length === 0);
    const answers = await this.#cloud.ranges.rangesFor(lookup);
    const failed = new Map<string, unknown>();
    await forEachLimited(names, WRITES_PER_BATCH, async (name) => {
      try {
        await this.#sync(name, answers.get(name));
      } catch (err) {
        failed.set(name, err);
      }
    });
    return { failed };
  }

  /** `answer`: the node's ranges from the batch's provider call. */
  async #sync(name: string, answer: CloudRangeResult | undefined): Promise<void> {
    // The batch's answer serves the first attempt; a retry after a conflict asks again.
    const node = await this.writePodCIDRs(name, (n, attempt) => this.#choose(n, attempt === 0 ? answer : undefined));
    // After the spec write (never in it: status is its own subresource), the condition. A failure
    // here retries this step only: the blocks are already written.
    if (node && !networkAvailable(node)) await this.#cloud.patchStatus(name, networkAvailablePatch(new Date(this.clock.now())));
  }

  /** The cloud's ranges, recorded and checked; throws when there are none yet. */
  async #choose(node: NodeObject, answer: CloudRangeResult | undefined): Promise<Blocks> {
    const name = node.metadata.name;
    const r = answer ?? (await this.#cloud.ranges.rangesFor([node])).get(name) ?? { kind: 'error', error: new Error(`no answer for node ${name}`) };
    if (r.kind !== 'ranges') {
      const why = r.kind === 'none' ? r.reason : r.error.message;
      this.options.events.emit(node, 'Warning', IPAMEventReason.CloudRangeNotAvailable, `no pod range from the cloud: ${why}`);
      throw r.kind === 'none' ? new Error(why) : r.error;
    }
    const { podCIDRs, clashes } = recordCloudRanges(this.ledger, this.#index, name, r.podCIDRs, this.#cloud.serviceRanges());
    this.#reportClashes(node, clashes.map((c) => c.message));
    if (podCIDRs.length === 0) throw new Error(clashes.map((c) => c.message).join('; '));
    return { podCIDRs, pool: CLOUD_POOL };
  }
}
