// Adapters from the client runtime (src/kube) to the controllers' narrow seams.
import type { KubeClient } from '../kube/client.js';
import type { Watcher } from '../kube/watcher.js';
import { NODES, type KubeObject } from '../kube/types.js';
import type { NodeObject } from '../model/node.js';
import type { NodeCache, NodeDeleter, NodeHandlers, NodeWriter } from '../controllers/seams.js';

type WatchedNode = NodeObject & KubeObject;

/** A NodeCache over the supervised node watcher. */
export function nodeCacheFromWatcher(watcher: Watcher<WatchedNode>): NodeCache {
  return {
    get: (name) => watcher.get(name),
    list: () => watcher.list(),
    addHandlers(h: NodeHandlers) {
      if (h.add) {
        const add = h.add;
        watcher.on('add', (n) => add(n));
        for (const n of watcher.list()) add(n);
      }
      if (h.update) {
        const update = h.update;
        watcher.on('update', (n, old) => update(old, n));
      }
      if (h.delete) {
        const del = h.delete;
        watcher.on('delete', (n) => del(n));
      }
    },
  };
}

/**
 * Node writes as JSON merge patches (status through the status subresource). A status write's
 * answer goes through the node cache's transform: the controller holds it across its next write,
 * and the cached form is all it reads of it. A spec write's answer is drained unparsed: nobody
 * reads it, and parsing a 12 KB Node per joining node is most of the garbage a join makes.
 */
export function nodeWriterFromClient(client: KubeClient, transform: <T extends NodeObject>(node: T) => T = (n) => n): NodeWriter {
  return {
    get: async (name) => transform(await client.get<WatchedNode>(NODES, name)),
    patch: async (name, patch) => {
      await client.patch(NODES, name, patch, 'merge', { discardResult: true });
    },
    patchStatus: async (name, patch) => transform(await client.patch<WatchedNode>(NODES, name, patch, 'merge', { subresource: 'status' })),
  };
}

/** Guarded node deletion: the API server refuses (409) when the name now holds another uid. */
export function nodeDeleterFromClient(client: KubeClient): NodeDeleter {
  return {
    delete: async (name, uid) => {
      await client.delete(NODES, name, { preconditions: { uid } });
    },
  };
}
