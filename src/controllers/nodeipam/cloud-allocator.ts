// CloudAllocator: a node's pod ranges are the ones the cloud gives its instance (cloud-ranges.ts
// reads them from the provider). Nodes waiting for ranges are looked up in batches, one provider
// call per batch as the cloud node controller batches its lookups; each node's ranges are checked
// against the ledger (a clash with a pool, another node or a Service range is reported, never
// silently accepted; ranges the cloud marks exclusive are refused instead), written, and then the
// NetworkUnavailable condition is cleared. Where the provider can ask the cloud for ranges (AWS
// with AssignIPv6PodPrefix), a node without them gets one request, ever: range-request.ts decides
// from the record written on the Node before the call.
import { randomUUID } from 'node:crypto';
import type { PodCIDRRequest } from '../../../providers/types.js';
import { forEachLimited } from '../../util/limit.js';
import { isConflict, isNotFound, writeOutcome } from '../../kube/errors.js';
import { runBatchWorkers, type BatchResult, type WorkerPool } from '../../kube/workqueue.js';
import { CLOUD_POOL, CLOUD_RANGE_REQUEST_ANNOTATION, nodePodCIDRs, type NodeObject } from '../../model/node.js';
import { CIDRAllocatorLoop, IPAMEventReason, type Blocks, type CIDRAllocatorOptions } from './cidr-allocator.js';
import { CLOUD_RANGES_BATCH, CloudRangeIndex, networkAvailable, networkAvailablePatch, recordCloudRanges, type CloudRangeResult, type CloudRanges } from './cloud-ranges.js';
import { decideRangeRequest, formatRangeRequest, parseRangeRequest, type RangeRequestRecord, type RangeRequestState } from './range-request.js';

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
  /** Who writes range-request records (the process's leader-election identity). */
  identity?: string;
}

/** Attempts at writing a range-request record when the node keeps changing under it. */
const RECORD_WRITE_ATTEMPTS = 5;

export class CloudAllocator extends CIDRAllocatorLoop {
  readonly #cloud: CloudAllocatorOptions;
  /** Every node's cloud ranges, for node-vs-node clashes outside every pool. */
  readonly #index = new CloudRangeIndex();
  /** Per node: the range-request records this process wrote, and those it made the call for. */
  readonly #own = new Map<string, { written: Set<string>; called: Set<string> }>();
  /** Nodes already told how their ranges were chosen. */
  readonly #noted = new Set<string>();

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
    const { clashes } = recordCloudRanges(this.ledger, this.#index, node.metadata.name, podCIDRs, this.#cloud.serviceRanges(), { uid: node.metadata.uid });
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

  protected override needsLeader(node: NodeObject): boolean {
    // As observe(): no ranges yet, or written without the NetworkUnavailable condition cleared.
    return nodePodCIDRs(node).length === 0 || !networkAvailable(node);
  }

  protected override nodeGone(name: string): void {
    this.#index.remove(name);
    this.#own.delete(name);
    this.#noted.delete(name);
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
      const asked = r.kind === 'none' && r.request && this.#cloud.ranges.request ? await this.#request(node, r.request) : undefined;
      this.options.events.emit(node, 'Warning', IPAMEventReason.CloudRangeNotAvailable, `no pod range from the cloud: ${why}${asked ? `; ${asked}` : ''}`);
      throw r.kind === 'none' ? new Error(why) : r.error;
    }
    const { podCIDRs, clashes } = recordCloudRanges(this.ledger, this.#index, name, r.podCIDRs, this.#cloud.serviceRanges(), { exclusive: r.exclusive === true, uid: node.metadata.uid });
    this.#reportClashes(node, clashes.map((c) => c.message));
    if (podCIDRs.length === 0) throw new Error(clashes.map((c) => c.message).join('; '));
    if (r.notes && !this.#noted.has(name)) {
      this.#noted.add(name);
      for (const note of r.notes) this.options.events.emit(node, 'Normal', IPAMEventReason.CloudRangeChosen, note);
    }
    return { podCIDRs, pool: CLOUD_POOL };
  }

  /**
   * One step of the request protocol for a node the cloud gives no ranges: write a record on the
   * Node (guarded), then make the call, at most once per record; otherwise wait. Returns what the
   * node's event says about it.
   */
  async #request(node: NodeObject, request: PodCIDRRequest): Promise<string> {
    const name = node.metadata.name;
    let current: NodeObject | undefined = node;
    for (let attempt = 0; current && attempt < RECORD_WRITE_ATTEMPTS; attempt++) {
      const own = this.#own.get(name) ?? { written: new Set<string>(), called: new Set<string>() };
      this.#own.set(name, own);
      const step = decideRangeRequest({ request, annotation: current.metadata.annotations?.[CLOUD_RANGE_REQUEST_ANNOTATION], own });
      if (step.kind === 'wait') return step.message;
      let record: RangeRequestRecord;
      if (step.kind === 'call') record = step.record;
      else {
        record = { target: request.target, what: request.what, id: randomUUID(), by: this.#cloud.identity ?? 'node-address-ccm', at: this.#now(), state: 'asking', attempt: step.attempt };
        // Counted as written before the PATCH goes out: an answer lost on the way back may hide a write that landed.
        own.written.add(record.id);
        try {
          await this.options.writer.patch(name, { metadata: { resourceVersion: current.metadata.resourceVersion, annotations: { [CLOUD_RANGE_REQUEST_ANNOTATION]: formatRangeRequest(record) } } });
        } catch (err) {
          if (isNotFound(err)) return 'the node is gone';
          // A conflict, or no answer: read the node and decide again from what it holds.
          if (!isConflict(err) && writeOutcome(err) !== 'unknown') throw err;
          current = await this.#readNode(name);
          continue;
        }
      }
      own.called.add(record.id);
      return this.#call(node, request, record);
    }
    return current ? `the request record could not be written after ${RECORD_WRITE_ATTEMPTS} attempts (the node kept changing); retried later` : 'the node is gone';
  }

  /** The call itself, for a record this process wrote; its outcome is recorded on the Node, best effort. */
  async #call(node: NodeObject, request: PodCIDRRequest, record: RangeRequestRecord): Promise<string> {
    const name = node.metadata.name;
    const outcome = await this.#cloud.ranges.request!(node, request);
    const state: RangeRequestState = outcome.kind === 'done' ? 'done' : outcome.kind === 'unknown' ? 'unknown' : outcome.retry ? 'throttled' : 'refused';
    const detail = outcome.kind === 'done' ? outcome.detail : outcome.error.message;
    this.log.info({ node: name, target: request.target, attempt: record.attempt, state, detail }, 'asked the cloud for pod ranges');
    // If this write fails, the record keeps saying `asking`: the node then waits for the cloud to
    // show the ranges and is never asked for again, the safe side of a throttled call.
    await this.#recordOutcome(name, record.id, state, detail).catch((err: unknown) => this.log.warn({ node: name, err: (err as Error).message }, 'could not record the outcome of the range request'));
    if (state === 'done' || state === 'unknown') {
      this.options.events.emit(node, 'Normal', IPAMEventReason.CloudRangeRequested, `asked the cloud for ${request.what} on ${request.target} (${state === 'done' ? detail : `outcome unknown: ${detail}`}); the pod CIDRs are written once the cloud shows it, and it is never asked for again`);
    }
    const said = state === 'throttled' ? 'throttled, nothing was done; asked again after a backoff' : state === 'refused' ? `refused: ${detail}; not asking again` : state;
    return `asked the cloud for ${request.what} on ${request.target}: ${said}`;
  }

  async #recordOutcome(name: string, id: string, state: RangeRequestState, detail: string): Promise<void> {
    for (let attempt = 0; attempt < RECORD_WRITE_ATTEMPTS; attempt++) {
      const node = await this.#readNode(name);
      const value = node?.metadata.annotations?.[CLOUD_RANGE_REQUEST_ANNOTATION];
      const record = value === undefined ? undefined : parseRangeRequest(value);
      // Only our own record, still open: anything else was written by someone who knows better.
      if (!node || typeof record !== 'object' || record === null || record.id !== id || record.state !== 'asking') return;
      try {
        await this.options.writer.patch(name, { metadata: { resourceVersion: node.metadata.resourceVersion, annotations: { [CLOUD_RANGE_REQUEST_ANNOTATION]: formatRangeRequest({ ...record, state, detail }) } } });
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
  }

  async #readNode(name: string): Promise<NodeObject | undefined> {
    try {
      return await this.options.writer.get(name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  #now(): string {
    return new Date(this.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}
