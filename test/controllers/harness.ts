// Runs controllers against the API server double over HTTP, each simulated process with its own
// KubeConfig and client.
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { Watcher } from '../../src/kube/watcher.js';
import { NODES, type KubeObject } from '../../src/kube/types.js';
import type { ApiServerDouble } from '../../src/sim/apiserver/server.js';
import type { NodeObject } from '../../src/model/node.js';
import { nodeCacheFromWatcher, nodeWriterFromClient } from '../../src/manager/adapters.js';
import { hasUninitializedTaint } from '../../src/model/node.js';
import { makeNode, type MakeNodeOptions } from './builders.js';

export function connect(api: ApiServerDouble, userAgent = 'node-address-ccm-test') {
  const client = new KubeClient(kubeConfigFromString(api.kubeconfig), { userAgent, writeTimeoutMs: 2000 });
  const watcher = new Watcher<NodeObject & KubeObject>({ client, resource: NODES, staleAfterMs: 5000, backoff: { initialMs: 20, maxMs: 200 } });
  return { client, watcher, nodes: nodeCacheFromWatcher(watcher), writer: nodeWriterFromClient(client) };
}

/** Creates a node as the kubelet does (status included), without server-set fields. */
export function createNode(api: ApiServerDouble, o: MakeNodeOptions): NodeObject {
  const node = makeNode(o);
  delete node.metadata.resourceVersion;
  return api.store.create('nodes', node) as unknown as NodeObject;
}

export function storedNode(api: ApiServerDouble, name: string): NodeObject {
  return api.store.get('nodes', name) as unknown as NodeObject;
}

export function isInitialised(api: ApiServerDouble, name: string): boolean {
  return !hasUninitializedTaint(storedNode(api, name));
}
