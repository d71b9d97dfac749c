// Checks shared by both targets: a node matches its expected outcome (addresses, taint, pod
// CIDRs, events), polled with a deadline.
import { expect } from 'vitest';
import { PROVIDED_NODE_IP_ANNOTATION } from '../../../src/nodeip/index.js';
import type { Expectation } from './cases.js';
import { REASON_SYNCED } from './cases.js';
import { addressesOf, cidrFamily, cidrWithin, hasTaint, internalIPs, podCIDRsOf, UNINITIALIZED_TAINT_KEY, type CoreEvent, type E2ECluster, type WireNode } from './cluster.js';
import { DOUBLE_CLUSTER_CIDRS } from '../../kit/double.js';
import { consistently, eventually } from '../../kit/wait.js';

/** How often the suite polls the cluster: each probe is a request or two, not worth making more often. */
export const E2E_POLL_MS = 100;

export interface CheckOptions {
  timeoutMs: number;
  /** Pod ranges the node's blocks must come from (one per family); undefined: only shape checks. */
  clusterCIDRs?: string[];
  /** Whether a node that stays tainted still gets pod CIDRs (node-ipam running on its own). */
  podCIDRsWhileTainted: boolean;
  /** Fail on any Warning event about an initialised node (off where the cloud is a real, flaky one). */
  noWarnings: boolean;
  /** Failure context (controller log). */
  describe?: () => string;
}

function isIPv4(s: string): boolean {
  return !s.includes(':');
}

/** Pod CIDRs: spec.podCIDR mirrors podCIDRs[0], at most one per family, inside the cluster ranges. */
export function checkPodCIDRs(node: WireNode, clusterCIDRs: string[] | undefined): void {
  const cidrs = podCIDRsOf(node);
  expect(cidrs.length, `node ${node.metadata.name} pod CIDRs ${JSON.stringify(cidrs)}`).toBeGreaterThan(0);
  expect(node.spec?.podCIDR).toBe(cidrs[0]);
  const families = cidrs.map(cidrFamily);
  expect(new Set(families).size, `one pod CIDR per family: ${JSON.stringify(cidrs)}`).toBe(families.length);
  if (clusterCIDRs) {
    expect(families.sort()).toEqual(clusterCIDRs.map(cidrFamily).sort());
    for (const c of cidrs) {
      expect(clusterCIDRs.some((r) => cidrWithin(c, r)), `${c} inside one of ${clusterCIDRs.join(', ')}`).toBe(true);
    }
  }
}

export async function warningEvent(cluster: E2ECluster, node: string, reason: string, messageIncludes: string[]): Promise<CoreEvent> {
  const events = await cluster.nodeEvents(node);
  const match = events.find((e) => e.type === 'Warning' && e.reason === reason && messageIncludes.every((s) => (e.message ?? '').includes(s)));
  if (!match) {
    throw new Error(`no Warning ${reason} event for node ${node} with ${JSON.stringify(messageIncludes)}; events: ${JSON.stringify(events.map((e) => ({ type: e.type, reason: e.reason, message: e.message })))}`);
  }
  return match;
}

/** The checks on the double, where the pod ranges are known: `describe` is the controller's log tail. */
export function doubleCheckOptions(describe: () => string, noWarnings = true): CheckOptions {
  return { timeoutMs: 20_000, clusterCIDRs: DOUBLE_CLUSTER_CIDRS, podCIDRsWhileTainted: false, noWarnings, describe };
}

/** Waits for the node to reach its expected outcome and checks every part of it. */
export async function expectNodeOutcome(cluster: E2ECluster, name: string, want: Expectation, options: CheckOptions): Promise<WireNode> {
  const wait = { timeoutMs: options.timeoutMs, intervalMs: E2E_POLL_MS, describe: options.describe };
  if (want.initialised) {
    const node = await eventually(async () => {
      const n = await cluster.getNode(name);
      expect(hasTaint(n, UNINITIALIZED_TAINT_KEY), `node ${name} still has the uninitialized taint`).toBe(false);
      if (options.clusterCIDRs) expect(podCIDRsOf(n).length, `node ${name} pod CIDRs`).toBe(options.clusterCIDRs.length);
      return n;
    }, wait);
    if (want.addresses) expect(addressesOf(node)).toEqual(want.addresses(name));
    if (want.internalIPs) expect(internalIPs(node)).toEqual(want.internalIPs);
    if (want.dualStackInternalIPs) {
      const ips = internalIPs(node);
      expect(ips.some(isIPv4), `an IPv4 InternalIP in ${JSON.stringify(ips)}`).toBe(true);
      expect(ips.some((ip) => !isIPv4(ip)), `an IPv6 InternalIP in ${JSON.stringify(ips)}`).toBe(true);
    }
    checkPodCIDRs(node, options.clusterCIDRs);
    await eventually(async () => {
      const events = await cluster.nodeEvents(name);
      expect(events.filter((e) => e.type === 'Normal' && e.reason === REASON_SYNCED).length, `Normal ${REASON_SYNCED} event for ${name}`).toBeGreaterThan(0);
      if (options.noWarnings) expect(events.filter((e) => e.type === 'Warning').map((e) => `${e.reason}: ${e.message}`)).toEqual([]);
    }, wait);
    return node;
  }
  const event = await eventually(() => warningEvent(cluster, name, want.reason, want.messageIncludes), wait);
  expect(event.involvedObject?.kind).toBe('Node');
  // The controller has seen the node and refused it: it must keep refusing while it retries.
  const before = await cluster.getNode(name);
  await consistently(async () => {
    const n = await cluster.getNode(name);
    expect(hasTaint(n, UNINITIALIZED_TAINT_KEY), `node ${name} lost the uninitialized taint`).toBe(true);
    expect(addressesOf(n)).toEqual(addressesOf(before));
    if (!options.podCIDRsWhileTainted) expect(podCIDRsOf(n)).toEqual([]);
  }, 1_500);
  const node = await cluster.getNode(name);
  if (options.podCIDRsWhileTainted) {
    await eventually(async () => checkPodCIDRs(await cluster.getNode(name), options.clusterCIDRs), wait);
  }
  return node;
}

export function annotationOf(node: WireNode): string | undefined {
  return node.metadata.annotations?.[PROVIDED_NODE_IP_ANNOTATION];
}
