// The --node-ip cases the suite checks, with the expected outcome written out by hand from
// KEP-3705's rules (not computed by the code under test):
//
//  * no annotation (--node-ip unset, 0.0.0.0 or ::): the cloud's addresses as they are, plus the
//    kubelet's Hostname when the cloud reports none;
//  * one IP: that address first, every other address of the same type dropped, addresses of other
//    types kept in the cloud's order;
//  * a dual-stack pair: both addresses first in annotation order, then the addresses whose type
//    matches neither;
//  * an IP the cloud does not report, or an annotation the controller cannot parse: the node stays
//    tainted and gets a Warning event.
import type { NodeAddress } from '../../../src/model/node-address.js';

const I = (address: string): NodeAddress => ({ type: 'InternalIP', address });
const E = (address: string): NodeAddress => ({ type: 'ExternalIP', address });
const H = (address: string): NodeAddress => ({ type: 'Hostname', address });

/** KEP-3705's first example: a dual-stack instance with two IPs of each family. */
export const KEP_DUAL: NodeAddress[] = [I('1.2.3.4'), I('5.6.7.8'), I('abcd::1234'), I('abcd::5678')];
/** KEP-3705's second example, with an ExternalIP. */
export const KEP_MIXED: NodeAddress[] = [I('10.0.0.1'), I('10.0.0.2'), I('fd00::1'), I('fd00::2'), E('192.168.0.1')];

/** Event reason of the cloud node controller for an unusable provided-node-ip. */
export const REASON_INVALID_NODE_IP = 'ProvidedNodeIPInvalid';
export const REASON_SYNCED = 'Synced';

export type Expectation =
  | {
      initialised: true;
      /** Exact status.addresses, in order (double: the cloud addresses are known). */
      addresses?: (hostname: string) => NodeAddress[];
      /** Exact InternalIP list, in order (real clusters: from the annotation). */
      internalIPs?: string[];
      /** At least one InternalIP of each family (real clusters, no annotation, dual-stack cloud). */
      dualStackInternalIPs?: boolean;
    }
  | {
      initialised: false;
      reason: string;
      /** Substrings of the Warning event's message. */
      messageIncludes: string[];
    };

export interface NodeIPCase {
  /** Short id, used in node names: `<prefix>-<id>`. */
  id: string;
  title: string;
  /** The raw --node-ip flag given to the simulated kubelet. */
  nodeIP?: string;
  /** The annotation kubelet writes for it (undefined: none). */
  annotation?: string;
  /** The instance's addresses as the cloud (static provider) reports them. */
  cloud: NodeAddress[];
  /** Addresses on the simulated host besides the cloud's (kubelet validates --node-ip against them). */
  extraHostIPs?: string[];
  expect: Expectation;
}

/** Cases for the double, where the suite registers the nodes and writes the cloud's answers. */
export const DOUBLE_CASES: NodeIPCase[] = [
  {
    id: 'unset',
    title: '--node-ip unset: no annotation, every cloud address',
    cloud: KEP_DUAL,
    expect: { initialised: true, addresses: (h) => [...KEP_DUAL, H(h)] },
  },
  {
    id: 'any4',
    title: '--node-ip 0.0.0.0: no annotation, every cloud address',
    nodeIP: '0.0.0.0',
    cloud: KEP_MIXED,
    expect: { initialised: true, addresses: (h) => [...KEP_MIXED, H(h)] },
  },
  {
    id: 'any6',
    title: '--node-ip ::: no annotation, every cloud address',
    nodeIP: '::',
    cloud: KEP_DUAL,
    expect: { initialised: true, addresses: (h) => [...KEP_DUAL, H(h)] },
  },
  {
    id: 'ipv4',
    title: '--node-ip 10.0.0.2: that InternalIP only, the ExternalIP kept',
    nodeIP: '10.0.0.2',
    annotation: '10.0.0.2',
    cloud: KEP_MIXED,
    expect: { initialised: true, addresses: (h) => [I('10.0.0.2'), E('192.168.0.1'), H(h)] },
  },
  {
    id: 'ipv4-sloppy',
    title: '--node-ip 010.000.000.001: kubelet canonicalises it to 10.0.0.1',
    nodeIP: '010.000.000.001',
    annotation: '10.0.0.1',
    cloud: KEP_MIXED,
    expect: { initialised: true, addresses: (h) => [I('10.0.0.1'), E('192.168.0.1'), H(h)] },
  },
  {
    id: 'ipv4-junk',
    title: '--node-ip 10.0.0.2,bogus: kubelet ignores "bogus" and writes 10.0.0.2',
    nodeIP: '10.0.0.2,bogus',
    annotation: '10.0.0.2',
    cloud: KEP_MIXED,
    expect: { initialised: true, addresses: (h) => [I('10.0.0.2'), E('192.168.0.1'), H(h)] },
  },
  {
    id: 'only-junk',
    title: '--node-ip 1.2.3.4/24: not an IP, ignored by kubelet: no annotation, every cloud address',
    nodeIP: '1.2.3.4/24',
    cloud: KEP_DUAL,
    expect: { initialised: true, addresses: (h) => [...KEP_DUAL, H(h)] },
  },
  {
    id: 'ipv6',
    title: '--node-ip abcd::5678: single-stack IPv6',
    nodeIP: 'abcd::5678',
    annotation: 'abcd::5678',
    cloud: KEP_DUAL,
    expect: { initialised: true, addresses: (h) => [I('abcd::5678'), H(h)] },
  },
  {
    id: 'ipv6-mixed',
    title: '--node-ip fd00::1 with an IPv4 ExternalIP: stays dual-stack (KEP-3705)',
    nodeIP: 'fd00::1',
    annotation: 'fd00::1',
    cloud: KEP_MIXED,
    expect: { initialised: true, addresses: (h) => [I('fd00::1'), E('192.168.0.1'), H(h)] },
  },
  {
    id: 'dual4',
    title: '--node-ip 1.2.3.4,abcd::1234: dual-stack IPv4-primary',
    nodeIP: '1.2.3.4,abcd::1234',
    annotation: '1.2.3.4,abcd::1234',
    cloud: KEP_DUAL,
    expect: { initialised: true, addresses: (h) => [I('1.2.3.4'), I('abcd::1234'), H(h)] },
  },
  {
    id: 'dual4-spaces',
    title: "--node-ip ' 10.0.0.2 , fd00::2 ': kubelet trims; IPv4-primary, ExternalIP kept",
    nodeIP: ' 10.0.0.2 , fd00::2 ',
    annotation: '10.0.0.2,fd00::2',
    cloud: KEP_MIXED,
    expect: { initialised: true, addresses: (h) => [I('10.0.0.2'), I('fd00::2'), E('192.168.0.1'), H(h)] },
  },
  {
    id: 'dual6',
    title: '--node-ip abcd::5678,5.6.7.8: dual-stack IPv6-primary',
    nodeIP: 'abcd::5678,5.6.7.8',
    annotation: 'abcd::5678,5.6.7.8',
    cloud: KEP_DUAL,
    expect: { initialised: true, addresses: (h) => [I('abcd::5678'), I('5.6.7.8'), H(h)] },
  },
  {
    id: 'dual6-external',
    title: '--node-ip fd00::1,192.168.0.1: IPv6-primary with the ExternalIP as the IPv4 node IP',
    nodeIP: 'fd00::1,192.168.0.1',
    annotation: 'fd00::1,192.168.0.1',
    cloud: KEP_MIXED,
    expect: { initialised: true, addresses: (h) => [I('fd00::1'), E('192.168.0.1'), H(h)] },
  },
  {
    id: 'lacking',
    title: '--node-ip 9.10.11.12, an IP the cloud does not report: stays tainted',
    nodeIP: '9.10.11.12',
    annotation: '9.10.11.12',
    cloud: KEP_DUAL,
    extraHostIPs: ['9.10.11.12'],
    expect: { initialised: false, reason: REASON_INVALID_NODE_IP, messageIncludes: ['9.10.11.12'] },
  },
  {
    id: 'lacking-v6',
    title: '--node-ip 1.2.3.4,abcd::ef01: the IPv6 half is not the cloud\'s: stays tainted',
    nodeIP: '1.2.3.4,abcd::ef01',
    annotation: '1.2.3.4,abcd::ef01',
    cloud: KEP_DUAL,
    extraHostIPs: ['abcd::ef01'],
    expect: { initialised: false, reason: REASON_INVALID_NODE_IP, messageIncludes: ['abcd::ef01'] },
  },
];

/**
 * --node-ip values kubelet refuses to start with (no Node is ever registered). Items that are not
 * IPs at all are not among them: kubelet logs and ignores those (see the `*-junk` cases).
 */
export const MALFORMED_NODE_IPS: { value: string; why: string }[] = [
  { value: '10.0.0.1,10.0.0.2', why: 'two IPs of one family' },
  { value: '1.2.3.4,abcd::1234,5.6.7.8', why: 'three IPs' },
  { value: '0.0.0.0,::', why: 'a dual-stack pair of unspecified addresses' },
  { value: '10.0.0.1,bogus,10.0.0.2', why: 'two IPs of one family once the junk is ignored' },
];

/**
 * The case names deploy/kind/e2e.sh gives its six nodes (NODE_CASE there), for a real kind cluster
 * when no E2E_NODE_CASES_FILE is given. Keep in step with e2e.sh.
 */
export function kindNodeCases(cluster: string): Record<string, string> {
  return {
    [`${cluster}-control-plane`]: 'unset',
    [`${cluster}-worker`]: 'ipv4',
    [`${cluster}-worker2`]: 'ipv6',
    [`${cluster}-worker3`]: 'dual-ipv4-primary',
    [`${cluster}-worker4`]: 'dual-ipv6-primary',
    [`${cluster}-worker5`]: 'ip-the-node-lacks',
  };
}

/**
 * What a real-cluster node with that case must look like, given the annotation kubelet wrote
 * (the cloud's addresses are not known to the suite, only their shape: kind reports one InternalIP
 * per family).
 */
export function realClusterExpectation(caseName: string, annotation: string | undefined): Expectation {
  switch (caseName) {
    case 'unset':
      return { initialised: true, dualStackInternalIPs: true };
    case 'ipv4':
    case 'ipv6':
    case 'dual-ipv4-primary':
    case 'dual-ipv6-primary':
      if (annotation === undefined) throw new Error(`case ${caseName}: the node has no provided-node-ip annotation; was kubelet restarted with --node-ip?`);
      return { initialised: true, internalIPs: annotation.split(',') };
    case 'ip-the-node-lacks':
      if (annotation === undefined) throw new Error(`case ${caseName}: the node has no provided-node-ip annotation`);
      return { initialised: false, reason: REASON_INVALID_NODE_IP, messageIncludes: [annotation] };
    default:
      throw new Error(`unknown node case ${JSON.stringify(caseName)} (known: unset, ipv4, ipv6, dual-ipv4-primary, dual-ipv6-primary, ip-the-node-lacks)`);
  }
}
