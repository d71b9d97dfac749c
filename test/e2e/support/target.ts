// The cluster the e2e suite runs against.
//
//   default                      the API server double, started by the suite, with the controller
//                                manager run from the built binary and nodes registered by the
//                                kubelet simulator;
//   E2E_REAL_CLUSTER=1           the cluster of $KUBECONFIG's current context, which must be listed
//                                in E2E_ALLOWED_CONTEXTS (comma separated). deploy/kind/e2e.sh
//                                sets both and runs the controllers itself.
//
// Against a real cluster the suite only reads what it did not create, gives everything it
// creates a random prefix and the run label, taints fake nodes NoSchedule, and deletes only what
// it recorded creating.
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';

export type TargetKind = 'double' | 'real';

/** Label put on every object the suite creates; the value is the run prefix. */
export const RUN_LABEL = 'e2e.node-address-ccm.io/run';
/** NoSchedule taint put on every fake node the suite registers, so nothing ever runs there. */
export const FAKE_NODE_TAINT_KEY = 'e2e.node-address-ccm.io/fake-node';

export class TargetRefusedError extends Error {
  override name = 'TargetRefusedError';
}

export function targetKind(env: NodeJS.ProcessEnv = process.env): TargetKind {
  const v = env.E2E_REAL_CLUSTER;
  if (v === undefined || v === '' || v === '0' || v === 'false') return 'double';
  if (v === '1' || v === 'true') return 'real';
  throw new TargetRefusedError(`E2E_REAL_CLUSTER must be 1/true or 0/false/unset, got ${JSON.stringify(v)}`);
}

/** The allow-listed contexts; empty entries are ignored. */
export function allowedContexts(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.E2E_ALLOWED_CONTEXTS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * Refuses (throws TargetRefusedError) unless `current` is exactly one of the allowed contexts.
 * An empty allow-list refuses everything: there is no default cluster the suite may touch.
 */
export function checkAllowedContext(current: string | undefined, allowed: readonly string[]): string {
  if (allowed.length === 0) {
    throw new TargetRefusedError('E2E_REAL_CLUSTER=1 but E2E_ALLOWED_CONTEXTS is empty: name the kubeconfig context(s) this suite may modify');
  }
  if (!current) throw new TargetRefusedError('the kubeconfig has no current-context; refusing to guess a cluster');
  if (!allowed.includes(current)) {
    throw new TargetRefusedError(`kubeconfig current-context ${JSON.stringify(current)} is not in E2E_ALLOWED_CONTEXTS (${allowed.map((c) => JSON.stringify(c)).join(', ')}); refusing to run against it`);
  }
  return current;
}

/** Loads $KUBECONFIG (or ~/.kube/config) and checks its current context against the allow-list. */
export function loadRealClusterConfig(env: NodeJS.ProcessEnv = process.env): { kubeConfig: KubeConfig; context: string } {
  const kc = new KubeConfig();
  if (env.KUBECONFIG) kc.loadFromFile(env.KUBECONFIG.split(':')[0] as string);
  else kc.loadFromDefault();
  const context = checkAllowedContext(kc.getCurrentContext(), allowedContexts(env));
  return { kubeConfig: kc, context };
}

/** A DNS-label-safe random prefix for this run: `e2e-` and 8 hex digits. */
export function runPrefix(): string {
  return `e2e-${randomBytes(4).toString('hex')}`;
}
