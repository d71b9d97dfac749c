// client-node glue: a KubeConfig for a running double, for tests and the embedded cluster.
import { KubeConfig } from '@kubernetes/client-node';
import type { ApiServerDouble } from './server.js';

/** A KubeConfig that talks to the double as `user` (default: the admin, group system:masters). */
export function kubeConfigFor(server: ApiServerDouble, user?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(user === undefined ? server.kubeconfig : server.kubeconfigFor(user));
  return kc;
}
