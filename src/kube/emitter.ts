// A small typed event emitter. A listener that throws is reported to `onListenerError` instead of
// breaking the component that emits (a controller bug must not stop the watch feeding it).

export type Listener<A extends unknown[]> = (...args: A) => void;

export class TypedEmitter<E extends { [K in keyof E]: unknown[] }> {
  readonly #listeners = new Map<keyof E, Set<Listener<never[]>>>();
  readonly #onListenerError: (event: keyof E, err: unknown) => void;

  constructor(onListenerError: (event: keyof E, err: unknown) => void) {
    this.#onListenerError = onListenerError;
  }

  /** Subscribes; returns a function that unsubscribes. */
  on<K extends keyof E>(event: K, listener: Listener<E[K]>): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    set.add(listener as unknown as Listener<never[]>);
    return () => this.off(event, listener);
  }

  off<K extends keyof E>(event: K, listener: Listener<E[K]>): void {
    this.#listeners.get(event)?.delete(listener as unknown as Listener<never[]>);
  }

  emit<K extends keyof E>(event: K, ...args: E[K]): void {
    const set = this.#listeners.get(event);
    if (!set) return;
    for (const l of [...set]) {
      try {
        (l as unknown as Listener<E[K]>)(...args);
      } catch (err) {
        this.#onListenerError(event, err);
      }
    }
  }

  listenerCount<K extends keyof E>(event: K): number {
    return this.#listeners.get(event)?.size ?? 0;
  }
}
