// Kubelet simulator: registers, restarts and removes Nodes the way kubelet does with
// --cloud-provider=external, against any API server (the double, or a real cluster for fake
// nodes). The Node shapes come from ./node.ts; this file only does the API calls.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../kube/client.js';
import { isAlreadyExists, isNotFound } from '../../kube/errors.js';
import { NODES } from '../../kube/types.js';
import type { NodeObject } from '../../model/node.js';
import { registrationNode, restartPatch, type KubeletConfig } from './node.js';

export {
  ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH,
  ANNOTATION_NODE_TTL,
  DEFAULT_KUBELET_VERSION,
  KubeletStartError,
  LABEL_ARCH,
  LABEL_ARCH_BETA,
  LABEL_HOSTNAME,
  LABEL_OS,
  LABEL_OS_BETA,
  UNINITIALIZED_TAINT,
  checkKubeletConfig,
  kubeletAddressSetter,
  readNodeIPFlag,
  registrationNode,
  restartPatch,
} from './node.js';
export type { AddressSetterResult, KubeletConfig } from './node.js';

/** Where the simulated kubelet sends its requests. */
export type KubeletTarget = KubeClient | KubeConfig;

type WireNode = NodeObject & { metadata: NodeObject['metadata'] & { name: string } };

function clientFor(target: KubeletTarget): { client: KubeClient; owned: boolean } {
  if (target instanceof KubeClient) return { client: target, owned: false };
  return { client: new KubeClient(target, { userAgent: 'kubelet-simulator' }), owned: true };
}

async function withClient<T>(target: KubeletTarget, fn: (c: KubeClient) => Promise<T>): Promise<T> {
  const { client, owned } = clientFor(target);
  try {
    return await fn(client);
  } finally {
    if (owned) client.close();
  }
}

export interface RegisterResult {
  node: NodeObject;
  /** The address setter's failure, logged by kubelet (the node is registered regardless). */
  addressError?: string;
}

/**
 * Registers a Node as kubelet does on first start. Throws KubeletStartError where kubelet refuses
 * to start (an invalid --node-ip), and the API error (e.g. AlreadyExists) when the create fails:
 * use restartKubelet for a node that exists.
 */
export async function registerNode(target: KubeletTarget, config: KubeletConfig): Promise<RegisterResult> {
  const { node, addressError } = registrationNode(config);
  const created = await withClient(target, (c) => c.create<WireNode>(NODES, node as WireNode));
  return addressError ? { node: created, addressError } : { node: created };
}

export interface RestartResult {
  node: NodeObject;
  /** Whether kubelet registered the Node anew (it did not exist). */
  registered: boolean;
  addressError?: string;
}

/**
 * Restarts the simulated kubelet with a (possibly new) configuration: an existing Node gets the
 * provided-node-ip annotation set, changed or removed (and addresses only when it has none), as
 * kubelet's first status sync does; taints and labels given at registration are not re-applied.
 * A missing Node is registered anew.
 */
export async function restartKubelet(target: KubeletTarget, config: KubeletConfig): Promise<RestartResult> {
  return withClient(target, async (c) => {
    let existing: WireNode;
    try {
      existing = await c.get<WireNode>(NODES, config.name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const reg = await registerNode(c, config);
      return { ...reg, registered: true };
    }
    const { patch, addressError } = restartPatch(config, existing);
    const node = patch ? await c.patch<WireNode>(NODES, config.name, patch, 'merge', { subresource: 'status' }) : existing;
    return addressError ? { node, registered: false, addressError } : { node, registered: false };
  });
}

/** Deletes a Node (as `kubectl delete node` does); a missing node is not an error. Returns whether it existed. */
export async function deleteNode(target: KubeletTarget, name: string): Promise<boolean> {
  return withClient(target, async (c) => {
    try {
      await c.delete(NODES, name);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  });
}

/** Registers, or restarts when the Node already exists (kubelet's usual start on a known host). */
export async function startKubelet(target: KubeletTarget, config: KubeletConfig): Promise<RestartResult> {
  return withClient(target, async (c) => {
    try {
      const reg = await registerNode(c, config);
      return { ...reg, registered: true };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      return restartKubelet(c, config);
    }
  });
}
