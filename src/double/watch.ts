// Watch hub: a bounded history of change events (for resuming watches from a resourceVersion)
// and live fan-out to subscribers. Objects in events are the store's immutable snapshots.
import type { KObject } from './resource-def.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ChangeEvent {
  type: EventType;
  /** The resourceVersion this write produced. */
  rv: number;
  /** Resource id, `plural` or `plural.group`. */
  resource: string;
  namespace: string;
  object: KObject;
  /** The previous state, for MODIFIED (lets filtered watches see objects enter or leave). */
  previous?: KObject;
}

export interface Subscriber {
  resource: string;
  /** Receives each event of its resource in resourceVersion order. */
  deliver(event: ChangeEvent): void;
}

export class WatchHub {
  private readonly history: ChangeEvent[] = [];
  private head = 0;
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private paused = false;
  private readonly pending: ChangeEvent[] = [];
  /** Every event after this resourceVersion is still in history. */
  compactedRv: number;

  constructor(
    private readonly historySize: number,
    startRv: number,
  ) {
    if (!Number.isInteger(historySize) || historySize < 1) throw new Error(`historySize: must be a positive integer, got ${historySize}`);
    this.compactedRv = startRv;
  }

  publish(event: ChangeEvent): void {
    this.history.push(event);
    if (this.history.length - this.head > this.historySize) {
      this.compactedRv = this.history[this.head].rv;
      this.head++;
      // Drop the consumed prefix in batches so publish stays O(1) amortised.
      if (this.head > 4096 && this.head > this.history.length / 2) {
        this.history.splice(0, this.head);
        this.head = 0;
      }
    }
    if (this.paused) this.pending.push(event);
    else this.fanOut(event);
  }

  private fanOut(event: ChangeEvent): void {
    const subs = this.subscribers.get(event.resource);
    if (!subs) return;
    for (const s of subs) s.deliver(event);
  }

  /** Events of `resource` newer than `rv`, or undefined when some of them were compacted away. */
  since(resource: string, rv: number): ChangeEvent[] | undefined {
    if (rv < this.compactedRv) return undefined;
    // Binary search for the first event with a larger resourceVersion.
    let lo = this.head;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.history[mid].rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    const out: ChangeEvent[] = [];
    // Events not yet delivered (paused) are not replayed either: the watcher gets them on resume.
    const limit = this.pending.length > 0 ? this.pending[0].rv : Infinity;
    for (let i = lo; i < this.history.length && this.history[i].rv < limit; i++) {
      if (this.history[i].resource === resource) out.push(this.history[i]);
    }
    return out;
  }

  subscribe(sub: Subscriber): () => void {
    let set = this.subscribers.get(sub.resource);
    if (!set) this.subscribers.set(sub.resource, (set = new Set()));
    set.add(sub);
    return () => set.delete(sub);
  }

  /** Forgets all history: any watch resuming from an older resourceVersion gets 410 Expired. */
  compact(currentRv: number): void {
    this.history.length = 0;
    this.head = 0;
    this.compactedRv = currentRv;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    const queued = this.pending.splice(0);
    for (const e of queued) this.fanOut(e);
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** The newest resourceVersion every subscriber has been sent (older than the store's while paused). */
  deliveredRv(currentRv: number): number {
    return this.pending.length > 0 ? this.pending[0].rv - 1 : currentRv;
  }

  subscriberCount(): number {
    let n = 0;
    for (const s of this.subscribers.values()) n += s.size;
    return n;
  }
}
