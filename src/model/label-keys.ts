// Which label keys a cloud may never set: the one rule, shared by the cloud node controller (which
// skips such labels) and the checks on answers from adapters loaded at run time.

/**
 * Keys in the kubernetes.io / k8s.io namespaces or their subdomains. This is the cloud node
 * controller's rule since kubernetes#126772 (fixing #126453): `(^|\.)(kubernetes|k8s)\.io/` found
 * anywhere in the key. Kubernetes 1.31 and earlier used `(kubernetes|k8s).io/` (any character for
 * the dot, no anchor), which also dropped look-alikes such as `examplek8s.io/a`, `k8s-io/b` or
 * `mykubernetes.io/f` (README, deliberate deviations).
 */
const RESERVED_KEY = /(^|\.)(kubernetes|k8s)\.io\//;

export function isReservedLabelKey(key: string): boolean {
  return RESERVED_KEY.test(key);
}
