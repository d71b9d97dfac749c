// The ConfigMap reader behind `overridesConfigMap`: client-node's CoreV1Api. Named imports in a
// module of their own, so a bundle keeps only CoreV1Api (not every API group) and only in the
// kind provider's chunk.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

/** Minimal ConfigMap reader, so the loader works with any client that has this one call. */
export interface ConfigMapReader {
  readNamespacedConfigMap(param: { name: string; namespace: string }): Promise<{ data?: Record<string, string> }>;
}

/** CoreV1Api from --cloud-config's kubeconfig, or client-node's default chain when absent. */
export function configMapReader(kubeconfig?: string): ConfigMapReader {
  const kc = new KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  return kc.makeApiClient(CoreV1Api);
}
