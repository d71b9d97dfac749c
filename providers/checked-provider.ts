// A provider this project did not write, behind the same rules as the built-ins: each call has a
// deadline (a plugin that hangs never holds the controller's worker), each answer is checked
// (answers.ts), and whatever it throws becomes an Error for the batch. The controllers ask the
// nodes of a rejected call again in halves until a node that keeps failing is alone; its error is
// retryable, never "not found".
import { abortable, linkSignals } from '../src/util/abort.js';
import { checkBooleanAnswers, checkMetadataAnswers, showValue, type CheckedAnswers } from './answers.js';
import type {
  CloudProvider, InstanceMetadata, InstanceResult, NodeRef, PodCIDRRequest, PodCIDRRequestOutcome, ProviderLogger,
} from './types.js';

export interface CheckedProviderOptions {
  /** How long one call may take before the batch is given up (the call is also aborted). */
  timeoutMs: number;
  logger?: ProviderLogger;
}

function asError(err: unknown, provider: string, operation: string): Error {
  if (err instanceof Error) return err;
  return new Error(`provider ${provider} ${operation} failed with ${showValue(err)}`);
}

/** The refs as the adapter gets them: its own copies, so an edit it makes cannot change what is checked. */
function copyRefs(nodes: readonly NodeRef[]): NodeRef[] {
  return nodes.map((n) => ({ ...n, ...(n.labels ? { labels: { ...n.labels } } : {}) }));
}

/** Wraps `inner`; the wrapper is what the controllers see. */
export class CheckedProvider implements CloudProvider {
  readonly name: string;
  readonly #inner: CloudProvider;
  readonly #o: CheckedProviderOptions;

  constructor(inner: CloudProvider, options: CheckedProviderOptions) {
    this.#inner = inner;
    this.name = inner.name;
    this.#o = options;
    if (inner.requestPodCIDRs) this.requestPodCIDRs = (node, request, signal) => this.#request(node, request, signal);
    if (inner.instanceKey) this.instanceKey = (providerID) => this.#instanceKey(providerID);
  }

  instanceKey?: (providerID: string) => string | undefined;

  /** The adapter's key, or undefined (compared as written) when it throws or answers something that is not a non-empty string. */
  #instanceKey(providerID: string): string | undefined {
    try {
      const key = this.#inner.instanceKey?.(providerID);
      return typeof key === 'string' && key !== '' ? key : undefined;
    } catch {
      return undefined;
    }
  }

  /** `call` with the deadline; rejects with a one-line reason when it passes or the call throws. */
  async #withDeadline<T>(operation: string, call: (signal: AbortSignal) => unknown, signal: AbortSignal | undefined): Promise<T> {
    const deadline = new AbortController();
    const { signal: linked, unlink } = linkSignals(signal, deadline.signal);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new Error(`provider ${this.name} did not answer ${operation} within ${this.#o.timeoutMs / 1000}s`);
        deadline.abort(err);
        reject(err);
      }, this.#o.timeoutMs);
    });
    // Also a call that throws at once, or hands back something that is not a promise.
    const answer = (async () => {
      try {
        return (await call(linked as AbortSignal)) as T;
      } catch (err) {
        throw asError(err, this.name, operation);
      }
    })();
    try {
      return await abortable(Promise.race([answer, timeout]), signal);
    } finally {
      clearTimeout(timer);
      unlink();
    }
  }

  #report<T>(operation: string, checked: CheckedAnswers<T>): Map<string, InstanceResult<T>> {
    for (const note of checked.notes) this.#o.logger?.warn({ provider: this.name, operation }, `answer checked: ${note}`);
    return checked.results;
  }

  async instancesMetadata(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<InstanceMetadata>>> {
    const answers = await this.#withDeadline('instancesMetadata', (s) => this.#inner.instancesMetadata(copyRefs(nodes), s), signal);
    return this.#report('instancesMetadata', checkMetadataAnswers(this.name, nodes, answers));
  }

  async instancesExist(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    const answers = await this.#withDeadline('instancesExist', (s) => this.#inner.instancesExist(copyRefs(nodes), s), signal);
    return this.#report('instancesExist', checkBooleanAnswers(this.name, nodes, answers));
  }

  async instancesShutdown(nodes: readonly NodeRef[], signal?: AbortSignal): Promise<Map<string, InstanceResult<boolean>>> {
    const answers = await this.#withDeadline('instancesShutdown', (s) => this.#inner.instancesShutdown(copyRefs(nodes), s), signal);
    return this.#report('instancesShutdown', checkBooleanAnswers(this.name, nodes, answers));
  }

  familyHint(family: 'IPv4' | 'IPv6'): string | undefined {
    try {
      const hint = this.#inner.familyHint?.(family);
      return typeof hint === 'string' ? hint : undefined;
    } catch {
      return undefined;
    }
  }

  requestPodCIDRs?: (node: NodeRef, request: PodCIDRRequest, signal?: AbortSignal) => Promise<PodCIDRRequestOutcome>;

  /** Not idempotent: past the deadline or on a strange answer the outcome is `unknown` (read back, never asked again). */
  async #request(node: NodeRef, request: PodCIDRRequest, signal?: AbortSignal): Promise<PodCIDRRequestOutcome> {
    let outcome: unknown;
    try {
      outcome = await this.#withDeadline('requestPodCIDRs', (s) => this.#inner.requestPodCIDRs!(node, request, s), signal);
    } catch (err) {
      return { kind: 'unknown', error: asError(err, this.name, 'requestPodCIDRs') };
    }
    const o = outcome as Partial<PodCIDRRequestOutcome> | null;
    if (o?.kind === 'done' && typeof o.detail === 'string') return { kind: 'done', detail: o.detail };
    if (o?.kind === 'not-applied' && typeof o.retry === 'boolean') return { kind: 'not-applied', retry: o.retry, error: asError(o.error, this.name, 'requestPodCIDRs') };
    if (o?.kind === 'unknown') return { kind: 'unknown', error: asError(o.error, this.name, 'requestPodCIDRs') };
    return { kind: 'unknown', error: new Error(`provider ${this.name} answered requestPodCIDRs with ${showValue(outcome)}`) };
  }

  async close(): Promise<void> {
    try {
      await this.#inner.close?.();
    } catch (err) {
      this.#o.logger?.warn({ provider: this.name, err: asError(err, this.name, 'close').message }, 'provider close failed');
    }
  }
}
