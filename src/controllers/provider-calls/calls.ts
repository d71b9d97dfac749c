// The one way the controllers ask the provider a batched question, for every provider, built-in
// or not. Every call is counted (cloudprovider_requests_total, …_duration_seconds). A call that
// fails for its batch as a whole (it rejects: a module that throws or hangs past its deadline; or
// nodes share one BatchError: a webhook document that did not parse) is asked again in halves
// (split.ts) until each node that makes calls fail is alone, so every other node gets its own
// answer in the same round. A node found failing alone is remembered (by uid) and asked alone
// from then on, in a call of its own that the rest of its batch does not wait for, until it
// answers: it backs off alone, whatever batch the gather puts it in.
import type { Registry } from 'prom-client';
import { isBatchError, type CloudProvider, type InstanceMetadata, type InstanceResult, type NodeRef } from '../../../providers/types.js';
import { realClock, type Clock } from '../../kube/clock.js';
import { silentLogger, type Logger } from '../../log.js';
import type { NodeObject } from '../../model/node.js';
import { forEachLimited, limiter } from '../../util/limit.js';
import { cloudNodeMetrics, type CloudNodeMetrics } from '../metrics.js';
import { nextRound } from './split.js';

export type BatchedOperation = 'instancesMetadata' | 'instancesExist' | 'instancesShutdown';
export type AnswerOf<O extends BatchedOperation> = O extends 'instancesMetadata' ? InstanceMetadata : boolean;
type Answers<T> = Map<string, InstanceResult<T>>;

/** Calls of one split in flight at once. */
const SPLIT_CONCURRENCY = 4;
/** Calls of nodes asked alone in flight at once, across every batch. */
const ALONE_CONCURRENCY = 8;
/** Nodes remembered as failing alone; past this the oldest are forgotten (they rejoin batches). */
const REMEMBERED_ALONE = 10_000;

export interface ProviderCallsOptions {
  provider: CloudProvider;
  registry?: Registry;
  clock?: Clock;
  logger?: Logger;
}

/** The answers of a batch; the nodes asked alone may still be in flight. */
export interface AskedApart<T> {
  /** Every node not asked alone (a node the provider left out has no entry). */
  answers: Answers<T>;
  /** Nodes that failed alone before, asked alone again: each settles when its own call does (never rejects). */
  alone: Map<string, Promise<InstanceResult<T> | undefined>>;
}

/** What a node is remembered by: its uid (a Node is its uid), its name only when it has none. */
function keyOf(node: NodeObject): string {
  return node.metadata.uid || `\u0000${node.metadata.name}`;
}

export function nodeRef(node: NodeObject): NodeRef {
  const ref: NodeRef = { name: node.metadata.name };
  if (node.spec?.providerID) ref.providerID = node.spec.providerID;
  if (node.metadata.labels) ref.labels = node.metadata.labels;
  return ref;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

export class ProviderCalls {
  readonly provider: CloudProvider;
  readonly #metrics: CloudNodeMetrics | undefined;
  readonly #clock: Clock;
  readonly #log: Logger;
  /** Nodes whose last answer was a failure met alone, after others of their batch were answered: key → name. */
  readonly #alone = new Map<string, string>();
  readonly #aloneGate = limiter(ALONE_CONCURRENCY);

  constructor(options: ProviderCallsOptions) {
    this.provider = options.provider;
    this.#metrics = options.registry ? cloudNodeMetrics(options.registry) : undefined;
    this.#clock = options.clock ?? realClock;
    this.#log = options.logger ?? silentLogger;
  }

  /** Nodes remembered as failing alone (for tests and logs). */
  aloneCount(): number {
    return this.#alone.size;
  }

  /** Forgets a node (it was deleted). */
  forget(node: NodeObject): void {
    this.#alone.delete(keyOf(node));
  }

  /** One answer per node (a node the provider left out has none), the nodes asked alone included. */
  async ask<O extends BatchedOperation>(operation: O, nodes: readonly NodeObject[], signal?: AbortSignal): Promise<Answers<AnswerOf<O>>> {
    const { answers, alone } = await this.askApart(operation, nodes, signal);
    for (const [name, pending] of alone) {
      const answer = await pending;
      if (answer) answers.set(name, answer);
    }
    return answers;
  }

  /**
   * The batch's answers, without waiting for the nodes asked alone. `onAnswer` hears each answer as
   * soon as the call that gives it returns, so the healthy half of a split batch need not wait for
   * the other half's timeouts.
   */
  async askApart<O extends BatchedOperation>(
    operation: O,
    nodes: readonly NodeObject[],
    signal?: AbortSignal,
    onAnswer?: (node: NodeObject, answer: InstanceResult<AnswerOf<O>> | undefined) => void,
  ): Promise<AskedApart<AnswerOf<O>>> {
    const alone = new Map<string, Promise<InstanceResult<AnswerOf<O>> | undefined>>();
    let batch = nodes;
    if (this.#alone.size > 0) {
      const rest: NodeObject[] = [];
      for (const node of nodes) {
        if (!this.#alone.has(keyOf(node))) {
          rest.push(node);
          continue;
        }
        const name = node.metadata.name;
        alone.set(name, this.#aloneGate(async () => (await this.#batch<AnswerOf<O>>(operation, [node], signal)).get(name)));
      }
      batch = rest;
    }
    const answers = batch.length > 0 ? await this.#batch(operation, batch, signal, onAnswer) : new Map<string, InstanceResult<AnswerOf<O>>>();
    return { answers, alone };
  }

  /** One call of `group`, counted; a failure of the call as a whole is returned as its Error. */
  async #call<T>(operation: BatchedOperation, group: readonly NodeObject[], signal: AbortSignal | undefined): Promise<Answers<T> | Error> {
    const provider = this.provider.name;
    const started = this.#clock.now();
    try {
      const answers = (await this.provider[operation](group.map(nodeRef), signal)) as Answers<T>;
      // `error`: no node got anything but an error (the call failed, though it resolved);
      // `partial`: some did.
      let errors = 0;
      for (const node of group) if ((answers.get(node.metadata.name)?.kind ?? 'error') === 'error') errors++;
      this.#metrics?.cloudCalls.inc({ provider, operation, result: errors === 0 ? 'success' : errors === group.length ? 'error' : 'partial' });
      return answers;
    } catch (err) {
      this.#metrics?.cloudCalls.inc({ provider, operation, result: 'error' });
      return asError(err);
    } finally {
      this.#metrics?.cloudCallDuration.observe({ provider, operation }, (this.#clock.now() - started) / 1000);
    }
  }

  /** The batch's answers, splitting what fails as a whole. */
  async #batch<T>(
    operation: BatchedOperation,
    nodes: readonly NodeObject[],
    signal: AbortSignal | undefined,
    onAnswer?: (node: NodeObject, answer: InstanceResult<T> | undefined) => void,
  ): Promise<Answers<T>> {
    let out: Answers<T> | undefined;
    let groups: readonly (readonly NodeObject[])[] = [nodes];
    let calls = 0;
    let answeredInAll = 0;
    /** Nodes that failed alone after a split: remembered if the provider answered anyone in this batch. */
    const isolated: NodeObject[] = [];
    const deliver = (node: NodeObject, answer: InstanceResult<T> | undefined): void => {
      if (answer) out!.set(node.metadata.name, answer);
      onAnswer?.(node, answer);
    };
    for (let round = 0; ; round++) {
      let answered = 0;
      const failed: { group: readonly NodeObject[]; error: Error }[] = [];
      await forEachLimited(groups, SPLIT_CONCURRENCY, async (group) => {
        const r = await this.#call<T>(operation, group, signal);
        if (r instanceof Error) {
          failed.push({ group, error: r });
          return;
        }
        // The common case, a whole batch answered at once: the provider's own Map, as it is.
        if (round === 0 && !hasBatchError(r, group)) {
          out = r;
          for (const node of group) this.#answered(node, r.get(node.metadata.name), onAnswer);
          answered += group.length;
          return;
        }
        out ??= new Map();
        let shared: Map<Error, NodeObject[]> | undefined;
        for (const node of group) {
          const answer = r.get(node.metadata.name);
          if (answer?.kind === 'error' && isBatchError(answer.error)) {
            shared ??= new Map();
            const list = shared.get(answer.error);
            if (list) list.push(node);
            else shared.set(answer.error, [node]);
            continue;
          }
          answered++;
          this.#answered(node, answer, deliver);
        }
        for (const [error, g] of shared ?? []) failed.push({ group: g, error });
      });
      calls += groups.length;
      answeredInAll += answered;
      if (failed.length === 0) break;
      out ??= new Map();
      if (signal?.aborted) {
        // Stopping: no news about any node, and nothing more is asked.
        for (const { group, error } of failed) for (const node of group) deliver(node, { kind: 'error', error, retryable: true });
        break;
      }
      for (const { group, error } of failed) {
        if (group.length !== 1) continue;
        // Alone, the failure is the node's own.
        const node = group[0] as NodeObject;
        deliver(node, { kind: 'error', error, retryable: true });
        if (round > 0 || nodes.length > 1) isolated.push(node);
      }
      const next = nextRound({ calls: groups.length, answered, failed: failed.map((f) => f.group) });
      if (next.kind === 'split') {
        groups = next.groups;
        continue;
      }
      if (next.kind === 'outage') {
        for (const { group, error } of failed) {
          if (group.length < 2) continue;
          const e = new Error(`${error.message} (the provider failed for every node of its batch of ${group.length})`, { cause: error });
          for (const node of group) deliver(node, { kind: 'error', error: e, retryable: true });
        }
        this.#log.info({ provider: this.provider.name, operation, nodes: nodes.length, calls }, 'provider calls failed for every node of a batch, in halves too: the provider fails for everyone; the batch is asked again after its backoff');
      }
      break;
    }
    // Evidence that the fault is the node's: the provider answered others of the same batch.
    if (answeredInAll > 0 && isolated.length > 0) {
      for (const node of isolated) this.#remember(node);
      this.#log.warn(
        { provider: this.provider.name, operation, nodes: nodes.length, calls, isolated: isolated.slice(0, 10).map((n) => n.metadata.name), count: isolated.length },
        'a provider call failed for its batch: asked again in halves, the failing nodes are alone now and are asked alone until they answer; the others have their answers',
      );
    }
    return out ?? new Map();
  }

  /** An answer of the node's own: it is no longer asked alone. */
  #answered<T>(node: NodeObject, answer: InstanceResult<T> | undefined, deliver: ((node: NodeObject, answer: InstanceResult<T> | undefined) => void) | undefined): void {
    if (this.#alone.size > 0) this.#alone.delete(keyOf(node));
    deliver?.(node, answer);
  }

  #remember(node: NodeObject): void {
    const key = keyOf(node);
    this.#alone.delete(key);
    this.#alone.set(key, node.metadata.name);
    if (this.#alone.size > REMEMBERED_ALONE) this.#alone.delete(this.#alone.keys().next().value as string);
  }
}

function hasBatchError<T>(answers: Answers<T>, group: readonly NodeObject[]): boolean {
  for (const node of group) {
    const a = answers.get(node.metadata.name);
    if (a?.kind === 'error' && isBatchError(a.error)) return true;
  }
  return false;
}
