// Which live Node holds which instance: the cache's Nodes by the instance their spec.providerID
// names (CloudProvider.instanceKey, so two spellings of one instance are one entry), kept from the
// node cache's events, plus the providerIDs the cloud node controller is about to write (claims),
// so two nodes of one batch answered with one instance cannot both get it before the watch shows
// the first. Records are the cache's own Node objects and uids: a Node is its uid, and a Node
// re-created under the same name is another holder. No I/O.
import type { CloudProvider } from '../../../providers/types.js';
import type { NodeObject } from '../../model/node.js';
import type { NodeCache } from '../seams.js';
import type { InstanceHolder, InstanceIdentity } from './decide.js';

/** The instance a providerID names, as a Map key. */
export type InstanceKeyOf = (providerID: string) => string;

/**
 * The provider's instanceKey as a total function: a providerID it does not know (or when it
 * throws) is compared as written, kept apart from its own keys.
 */
export function instanceKeyOf(provider: Pick<CloudProvider, 'instanceKey'>): InstanceKeyOf {
  if (!provider.instanceKey) return (id) => id;
  const key = provider.instanceKey.bind(provider);
  return (id) => {
    let k: unknown;
    try {
      k = key(id);
    } catch {
      k = undefined;
    }
    return typeof k === 'string' && k !== '' ? k : `\u0000${id}`;
  };
}

/** The same Node: by uid when both have one (a Node is its uid), by name otherwise. */
function sameNode(a: NodeObject, b: NodeObject): boolean {
  const ua = a.metadata.uid;
  const ub = b.metadata.uid;
  return ua && ub ? ua === ub : a.metadata.name === b.metadata.name;
}

function idOf(node: NodeObject): string | undefined {
  return node.spec?.providerID || undefined;
}

interface Claim {
  node: NodeObject;
  key: string;
  providerID: string;
}

export class ProviderIDIndex implements InstanceIdentity {
  readonly keyOf: InstanceKeyOf;
  /** Instance → the live Nodes whose providerID names it (nearly always one). */
  readonly #byKey = new Map<string, NodeObject | NodeObject[]>();
  /** Instance → the node a write of ours is giving it, not yet shown by the cache. */
  readonly #claimed = new Map<string, Claim>();
  /** Node (uid, or name without one) → the instance it claims. */
  readonly #claims = new Map<string, string>();

  constructor(keyOf: InstanceKeyOf) {
    this.keyOf = keyOf;
  }

  /** Keeps the index from `cache`'s events (its Nodes now, as adds, and every change after). */
  attach(cache: NodeCache): this {
    cache.addHandlers({
      add: (node) => this.#add(node),
      update: (old, node) => {
        this.#remove(old);
        this.#add(node);
      },
      delete: (node) => {
        this.#remove(node);
        this.release(node);
      },
    });
    return this;
  }

  /** Nodes held in the index (for tests and metrics of memory). */
  get size(): number {
    let n = 0;
    for (const v of this.#byKey.values()) n += Array.isArray(v) ? v.length : 1;
    return n;
  }

  /** A live Node other than `node` holding the instance `key`, or one a write of ours is giving it. */
  holderOf(node: NodeObject, key: string): InstanceHolder | undefined {
    const held = this.#byKey.get(key);
    for (const other of Array.isArray(held) ? held : held ? [held] : []) {
      if (!sameNode(other, node)) return { name: other.metadata.name, providerID: idOf(other) as string };
    }
    const claim = this.#claimed.get(key);
    if (claim && !sameNode(claim.node, node)) return { name: claim.node.metadata.name, providerID: claim.providerID };
    return undefined;
  }

  /** A live Node other than `node` holding the instance `providerID` names. */
  otherHolder(node: NodeObject, providerID: string): InstanceHolder | undefined {
    return this.holderOf(node, this.keyOf(providerID));
  }

  /** A write of ours is giving `node` this providerID: until the cache shows it, no other node may have that instance. */
  claim(node: NodeObject, providerID: string): void {
    const key = this.keyOf(providerID);
    const held = this.#claimed.get(key);
    // Another node's claim stands (the caller asked otherHolder first and was told of it).
    if (held && !sameNode(held.node, node)) return;
    this.release(node);
    this.#claimed.set(key, { node, key, providerID });
    this.#claims.set(claimKey(node), key);
  }

  /** The claim of `node`, if any, is void (the answer was refused, the node is gone, or the cache shows its providerID). */
  release(node: NodeObject): void {
    if (this.#claims.size === 0) return;
    const k = claimKey(node);
    const key = this.#claims.get(k);
    if (key === undefined) return;
    this.#claims.delete(k);
    const held = this.#claimed.get(key);
    if (held && sameNode(held.node, node)) this.#claimed.delete(key);
  }

  #add(node: NodeObject): void {
    const id = idOf(node);
    if (id === undefined) return;
    // The cache shows the providerID now: it speaks for the node from here on.
    this.release(node);
    const key = this.keyOf(id);
    const held = this.#byKey.get(key);
    if (held === undefined) this.#byKey.set(key, node);
    else if (Array.isArray(held)) held.push(node);
    else this.#byKey.set(key, [held, node]);
  }

  #remove(node: NodeObject): void {
    const id = idOf(node);
    if (id === undefined) return;
    const key = this.keyOf(id);
    const held = this.#byKey.get(key);
    if (held === undefined) return;
    if (!Array.isArray(held)) {
      if (sameNode(held, node)) this.#byKey.delete(key);
      return;
    }
    const i = held.findIndex((n) => sameNode(n, node));
    if (i >= 0) held.splice(i, 1);
    if (held.length === 1) this.#byKey.set(key, held[0] as NodeObject);
    else if (held.length === 0) this.#byKey.delete(key);
  }
}

function claimKey(node: NodeObject): string {
  return node.metadata.uid || `\u0000${node.metadata.name}`;
}
