// An in-memory, programmable CloudProvider for controller tests and benchmarks. Everything is
// synchronous to set up and observable afterwards: which methods were called, with how many nodes,
// and in what order. Failures are injected per call ("the next N calls fail") or per node.
import type { CloudProvider, InstanceMetadata, InstanceResult, NodeRef } from '../types.js';
import { BatchError, found, notFound, retryableError } from '../types.js';
import { sleep } from '../../src/util/sleep.js';

export type FakeMethod = 'instancesMetadata' | 'instancesExist' | 'instancesShutdown';

export interface FakeCall {
  method: FakeMethod;
  /** Node names in the order they were asked for. */
  nodes: string[];
}

/** What setInstance accepts: providerID defaults to `fake://<name>`. */
export type FakeInstanceInput = Omit<InstanceMetadata, 'providerID'> & { providerID?: string; shutdown?: boolean };

interface FakeInstance {
  metadata: InstanceMetadata;
  shutdown: boolean;
}

interface NodeFailure {
  error: Error;
  /** Remaining failing calls; Infinity until cleared. */
  remaining: number;
}

/** How a call that asks about a poisoned node fails, for every node in it. */
export type BatchPoison = 'reject' | 'batch-error' | 'hang';

interface CallFailure {
  error: Error;
  remaining: number;
  /** true: the promise rejects; false: every node gets a retryable error result. */
  reject: boolean;
}

function toError(err: Error | string | undefined, fallback: string): Error {
  if (err instanceof Error) return err;
  return new Error(err ?? fallback);
}

function cloneMetadata(m: InstanceMetadata): InstanceMetadata {
  return {
    ...m,
    addresses: m.addresses.map((a) => ({ ...a })),
    ...(m.podCIDRs ? { podCIDRs: [...m.podCIDRs] } : {}),
    ...(m.labels ? { labels: { ...m.labels } } : {}),
  };
}

export class FakeProvider implements CloudProvider {
  readonly name: string;
  /** Delay added to every call, in milliseconds (honours the abort signal). */
  latencyMs = 0;
  /** Every call, in order. Reset with resetCalls(). */
  readonly calls: FakeCall[] = [];
  /** Set once close() has been called. */
  closed = false;

  private readonly instances = new Map<string, FakeInstance>();
  private readonly nodeFailures = new Map<string, NodeFailure>();
  private callFailures: CallFailure[] = [];
  private readonly poisons = new Map<string, { how: BatchPoison; error: Error }>();

  constructor(options: { name?: string; latencyMs?: number; instances?: Record<string, FakeInstanceInput> } = {}) {
    this.name = options.name ?? 'fake';
    this.latencyMs = options.latencyMs ?? 0;
    for (const [name, input] of Object.entries(options.instances ?? {})) this.setInstance(name, input);
  }

  // ---- programming the cloud ----

  /** Adds or replaces the instance behind node `name`. Returns `this` for chaining. */
  setInstance(name: string, input: FakeInstanceInput): this {
    const { shutdown, ...rest } = input;
    const metadata = cloneMetadata({ ...rest, providerID: input.providerID ?? `fake://${name}` });
    this.instances.set(name, { metadata, shutdown: shutdown ?? false });
    return this;
  }

  /** Changes part of an existing instance (e.g. only its addresses). Throws if unknown. */
  updateInstance(name: string, patch: Partial<FakeInstanceInput>): this {
    const current = this.instances.get(name);
    if (!current) throw new Error(`FakeProvider.updateInstance: no instance for node "${name}"`);
    const { shutdown, ...rest } = patch;
    current.metadata = cloneMetadata({ ...current.metadata, ...rest });
    if (shutdown !== undefined) current.shutdown = shutdown;
    return this;
  }

  /** The instance disappears: later calls answer notFound for this node. */
  removeInstance(name: string): this {
    this.instances.delete(name);
    return this;
  }

  /** Alias of removeInstance that reads better in tests. */
  setNotFound(name: string): this {
    return this.removeInstance(name);
  }

  setShutdown(name: string, shutdown = true): this {
    return this.updateInstance(name, { shutdown });
  }

  /** A copy of what the fake currently holds for node `name`. */
  getInstance(name: string): InstanceMetadata | undefined {
    const i = this.instances.get(name);
    return i ? cloneMetadata(i.metadata) : undefined;
  }

  instanceNames(): string[] {
    return [...this.instances.keys()];
  }

  /** Removes every instance, failure and recorded call. */
  reset(): this {
    this.instances.clear();
    this.nodeFailures.clear();
    this.callFailures = [];
    this.calls.length = 0;
    return this;
  }

  // ---- failures ----

  /** The next `n` calls answer a retryable error for every node they are asked about. */
  failNext(n = 1, err?: Error | string): this {
    this.callFailures.push({ error: toError(err, 'fake: injected call failure'), remaining: n, reject: false });
    return this;
  }

  /** The next `n` calls reject their promise (a transport failure rather than per-node answers). */
  rejectNext(n = 1, err?: Error | string): this {
    this.callFailures.push({ error: toError(err, 'fake: injected call rejection'), remaining: n, reject: true });
    return this;
  }

  /** Node `name` answers a retryable error for `times` calls (default: until clearFailures). */
  failNode(name: string, err?: Error | string, times = Infinity): this {
    this.nodeFailures.set(name, { error: toError(err, `fake: injected failure for node ${name}`), remaining: times });
    return this;
  }

  /**
   * Every call that asks about node `name` fails for its whole batch, as a plugin that chokes on
   * one record does: it rejects, answers a BatchError for every node, or hangs until its signal
   * aborts. Until clearFailures.
   */
  poisonBatches(name: string, how: BatchPoison = 'reject', err?: Error | string): this {
    this.poisons.set(name, { how, error: toError(err, `fake: a batch with node ${name} in it fails`) });
    return this;
  }

  /** Clears node failures and poisons for `name`, or every failure (node, call, poison) when no name is given. */
  clearFailures(name?: string): this {
    if (name !== undefined) {
      this.nodeFailures.delete(name);
      this.poisons.delete(name);
    } else {
      this.nodeFailures.clear();
      this.poisons.clear();
      this.callFailures = [];
    }
    return this;
  }

  // ---- observing calls ----

  /** Number of calls, for one method or all. */
  callCount(method?: FakeMethod): number {
    return method ? this.calls.filter((c) => c.method === method).length : this.calls.length;
  }

  /** Number of nodes in each call, in call order. */
  nodesPerCall(method?: FakeMethod): number[] {
    return this.calls.filter((c) => !method || c.method === method).map((c) => c.nodes.length);
  }

  /** How many times node `name` was asked about. */
  lookupsOf(name: string, method?: FakeMethod): number {
    let n = 0;
    for (const c of this.calls) if (!method || c.method === method) for (const x of c.nodes) if (x === name) n++;
    return n;
  }

  resetCalls(): this {
    this.calls.length = 0;
    return this;
  }

  // ---- CloudProvider ----

  instancesMetadata(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<InstanceMetadata>>> {
    return this.answer('instancesMetadata', nodes, signal, (i) => cloneMetadata(i.metadata));
  }

  instancesExist(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    // A missing instance is a definite "false", not notFound: that is what the question asks.
    return this.answer('instancesExist', nodes, signal, () => true, () => found(false));
  }

  instancesShutdown(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    return this.answer('instancesShutdown', nodes, signal, (i) => i.shutdown);
  }

  close(): void {
    this.closed = true;
  }

  private async answer<T>(
    method: FakeMethod,
    nodes: readonly NodeRef[],
    signal: AbortSignal | undefined,
    value: (i: FakeInstance) => T,
    missing: (name: string) => InstanceResult<T> = (name) => notFound(`fake: no instance for node ${name}`),
  ): Promise<Map<string, InstanceResult<T>>> {
    this.calls.push({ method, nodes: nodes.map((n) => n.name) });
    // Failures are decided when the call starts, so a test's failNext() applies to the call it
    // expects even when latency makes calls overlap.
    const callFailure = this.takeCallFailure();
    const nodeErrors = new Map<string, Error>();
    for (const n of nodes) {
      const e = this.takeNodeFailure(n.name);
      if (e) nodeErrors.set(n.name, e);
    }
    const poison = this.poisons.size > 0 ? nodes.map((n) => this.poisons.get(n.name)).find((p) => p !== undefined) : undefined;
    await this.delay(signal);
    if (callFailure?.reject) throw callFailure.error;
    if (poison?.how === 'reject') throw poison.error;
    if (poison?.how === 'hang') {
      await new Promise<never>((_, reject) => {
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    if (poison?.how === 'batch-error') {
      const error = new BatchError(poison.error.message);
      return new Map(nodes.map((n) => [n.name, { kind: 'error', error, retryable: true } as const]));
    }
    const out = new Map<string, InstanceResult<T>>();
    for (const n of nodes) {
      const err = callFailure?.error ?? nodeErrors.get(n.name);
      if (err) {
        out.set(n.name, retryableError(err));
        continue;
      }
      const inst = this.instances.get(n.name);
      out.set(n.name, inst ? found(value(inst)) : missing(n.name));
    }
    return out;
  }

  private takeCallFailure(): CallFailure | undefined {
    const f = this.callFailures[0];
    if (!f) return undefined;
    f.remaining--;
    if (f.remaining <= 0) this.callFailures.shift();
    return f;
  }

  private takeNodeFailure(name: string): Error | undefined {
    const f = this.nodeFailures.get(name);
    if (!f) return undefined;
    f.remaining--;
    if (f.remaining <= 0) this.nodeFailures.delete(name);
    return f.error;
  }

  private delay(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    return this.latencyMs <= 0 ? Promise.resolve() : sleep(this.latencyMs, signal);
  }
}
