import { describe, it, expect } from 'vitest';
import { type NodeAddress } from '../../src/model/node-address.js';
import {
  describeStack, explainNodeAddresses, NodeIPError, nodeAddressesFromNodeIP, nodeAddressesFromNodeIPLegacy, parseKubeletNodeIPFlag,
} from '../../src/nodeip/index.js';

const int = (address: string): NodeAddress => ({ type: 'InternalIP', address });
const ext = (address: string): NodeAddress => ({ type: 'ExternalIP', address });
const host = (address: string): NodeAddress => ({ type: 'Hostname', address });
const DUAL = { allowDualStack: true };

/** What the controller does for a kubelet started with `--node-ip flag`. */
function fromKubeletFlag(flag: string | undefined, cloud: NodeAddress[]): { annotation: string | undefined; addresses: NodeAddress[] } {
  const { annotation } = parseKubeletNodeIPFlag(flag);
  const addresses = annotation === undefined ? cloud : nodeAddressesFromNodeIP(annotation, cloud, DUAL);
  return { annotation, addresses };
}

type KepRow = [flag: string | undefined, annotation: string | undefined, result: string[] | { error: string }, stack: string | undefined];

/** A KEP table row against `cloud`: the annotation kubelet writes, then the addresses and their stack, or the error. */
function expectKepRow(cloud: NodeAddress[], [flag, annotation, result, stack]: KepRow): void {
  expect(parseKubeletNodeIPFlag(flag).annotation).toBe(annotation);
  if ('error' in result) {
    expect(() => fromKubeletFlag(flag, cloud)).toThrow(new NodeIPError(result.error));
    return;
  }
  const { addresses } = fromKubeletFlag(flag, cloud);
  expect(addresses).toEqual(result.map(int));
  expect(describeStack(addresses)).toBe(stack);
}

describe('KEP-3705 example: cloud has 1.2.3.4, 5.6.7.8, abcd::1234, abcd::5678', () => {
  const cloud = ['1.2.3.4', '5.6.7.8', 'abcd::1234', 'abcd::5678'].map(int);
  const rows: KepRow[] = [
    [undefined, undefined, ['1.2.3.4', '5.6.7.8', 'abcd::1234', 'abcd::5678'], 'dual-stack IPv4-primary'],
    ['0.0.0.0', undefined, ['1.2.3.4', '5.6.7.8', 'abcd::1234', 'abcd::5678'], 'dual-stack IPv4-primary'],
    ['::', undefined, ['1.2.3.4', '5.6.7.8', 'abcd::1234', 'abcd::5678'], 'dual-stack IPv4-primary'],
    ['1.2.3.4', '1.2.3.4', ['1.2.3.4'], 'single-stack IPv4'],
    ['9.10.11.12', '9.10.11.12', { error: 'failed to get node address from cloud provider that matches ip: 9.10.11.12' }, undefined],
    ['abcd::5678', 'abcd::5678', ['abcd::5678'], 'single-stack IPv6'],
    ['1.2.3.4,abcd::1234', '1.2.3.4,abcd::1234', ['1.2.3.4', 'abcd::1234'], 'dual-stack IPv4-primary'],
  ];
  it.each(rows)('--node-ip %j: annotation %j, addresses %j (%s)', (...row) => expectKepRow(cloud, row));
});

describe('KEP-3705 example: cloud has only 1.2.3.4, 5.6.7.8', () => {
  const cloud = ['1.2.3.4', '5.6.7.8'].map(int);
  const rows: KepRow[] = [
    [undefined, undefined, ['1.2.3.4', '5.6.7.8'], 'single-stack IPv4'],
    ['0.0.0.0', undefined, ['1.2.3.4', '5.6.7.8'], 'single-stack IPv4'],
    ['::', undefined, ['1.2.3.4', '5.6.7.8'], 'single-stack IPv4'],
    ['1.2.3.4', '1.2.3.4', ['1.2.3.4'], 'single-stack IPv4'],
    ['9.10.11.12', '9.10.11.12', { error: 'failed to get node address from cloud provider that matches ip: 9.10.11.12' }, undefined],
    ['abcd::5678', 'abcd::5678', { error: 'failed to get node address from cloud provider that matches ip: abcd::5678' }, undefined],
    ['1.2.3.4,abcd::1234', '1.2.3.4,abcd::1234', { error: 'failed to get node address from cloud provider that matches ip: abcd::1234' }, undefined],
  ];
  it.each(rows)('--node-ip %j: annotation %j, addresses %j (%s)', (...row) => expectKepRow(cloud, row));
});

describe('KEP-3705 example: InternalIPs 10.0.0.1, 10.0.0.2, fd00::1, fd00::2 and ExternalIP 192.168.0.1', () => {
  const cloud = [int('10.0.0.1'), int('10.0.0.2'), int('fd00::1'), int('fd00::2'), ext('192.168.0.1')];
  it.each<[string, NodeAddress[], string]>([
    ['10.0.0.1', [int('10.0.0.1'), ext('192.168.0.1')], 'single-stack IPv4'],
    ['10.0.0.2', [int('10.0.0.2'), ext('192.168.0.1')], 'single-stack IPv4'],
    // The KEP's prose calls this single-stack IPv4, but its algorithm keeps every InternalIP
    // because only the ExternalIP type is claimed; we follow the algorithm.
    ['192.168.0.1', [ext('192.168.0.1'), int('10.0.0.1'), int('10.0.0.2'), int('fd00::1'), int('fd00::2')], 'dual-stack IPv4-primary'],
    ['10.0.0.2,fd00::2', [int('10.0.0.2'), int('fd00::2'), ext('192.168.0.1')], 'dual-stack IPv4-primary'],
    ['10.0.0.1,fd00::1', [int('10.0.0.1'), int('fd00::1'), ext('192.168.0.1')], 'dual-stack IPv4-primary'],
    ['fd00::1,192.168.0.1', [int('fd00::1'), ext('192.168.0.1')], 'dual-stack IPv6-primary'],
    ['fd00::2,10.0.0.1', [int('fd00::2'), int('10.0.0.1'), ext('192.168.0.1')], 'dual-stack IPv6-primary'],
    // No single-stack IPv6 is possible: the IPv4 ExternalIP stays.
    ['fd00::1', [int('fd00::1'), ext('192.168.0.1')], 'dual-stack IPv6-primary'],
  ])('--node-ip %j gives %j (%s)', (flag, expected, stack) => {
    const { addresses } = fromKubeletFlag(flag, cloud);
    expect(addresses).toEqual(expected);
    expect(describeStack(addresses)).toBe(stack);
  });
});

describe('nodeAddressesFromNodeIP', () => {
  it.each<[string, string, NodeAddress[], NodeAddress[]]>([
    [
      'matches are compared as IPs and keep the cloud text',
      '10.0.0.2',
      [int('10.0.0.1'), int('010.000.000.002'), host('node-a')],
      [int('010.000.000.002'), host('node-a')],
    ],
    [
      'an IPv4-mapped cloud address matches its IPv4 node IP',
      '10.0.0.2',
      [int('10.0.0.1'), int('::ffff:10.0.0.2')],
      [int('::ffff:10.0.0.2')],
    ],
    [
      'every cloud entry equal to the node IP comes first, whatever its type',
      '10.0.0.2',
      [host('node-a'), int('10.0.0.1'), ext('10.0.0.2'), int('10.0.0.2'), ext('192.168.0.1')],
      [ext('10.0.0.2'), int('10.0.0.2'), host('node-a')],
    ],
    [
      'duplicates of a matched address are all kept',
      'fd00::2',
      [int('fd00::2'), int('fd00::1'), int('FD00::2')],
      [int('fd00::2'), int('FD00::2')],
    ],
    [
      'unclaimed types follow in cloud order, interleaved as the cloud gave them',
      '10.0.0.2',
      [{ type: 'InternalDNS', address: 'a.internal' }, ext('192.168.0.1'), int('10.0.0.2'), host('node-a'), { type: 'ExternalDNS', address: 'a.example' }],
      [int('10.0.0.2'), { type: 'InternalDNS', address: 'a.internal' }, ext('192.168.0.1'), host('node-a'), { type: 'ExternalDNS', address: 'a.example' }],
    ],
    [
      'a pair fills the node IPs in annotation order, not cloud order',
      'fd00::2,10.0.0.2',
      [int('10.0.0.2'), int('fd00::2')],
      [int('fd00::2'), int('10.0.0.2')],
    ],
    [
      'a Hostname that is an IP text can match the node IP',
      '10.0.0.2',
      [int('10.0.0.2'), host('10.0.0.2'), host('node-a')],
      [int('10.0.0.2'), host('10.0.0.2')],
    ],
    [
      'a single unspecified node IP matches only an unspecified cloud address',
      '0.0.0.0',
      [int('10.0.0.1'), int('0.0.0.0'), ext('192.168.0.1')],
      [int('0.0.0.0'), ext('192.168.0.1')],
    ],
  ])('%s', (_name, annotation, cloud, expected) => {
    expect(nodeAddressesFromNodeIP(annotation, cloud, DUAL)).toEqual(expected);
  });

  it.each<[string, { allowDualStack: boolean }, NodeAddress[], string]>([
    ['', DUAL, [int('10.0.0.1')], 'failed to parse node IP "": could not parse ""'],
    [' 10.0.0.1', DUAL, [int('10.0.0.1')], 'failed to parse node IP " 10.0.0.1": could not parse " 10.0.0.1"'],
    ['10.0.0.1\t', DUAL, [int('10.0.0.1')], 'failed to parse node IP "10.0.0.1\\t": could not parse "10.0.0.1\\t"'],
    ['10.0.0.1,fd00::1', { allowDualStack: false }, [int('10.0.0.1'), int('fd00::1')], 'failed to parse node IP "10.0.0.1,fd00::1": dual-stack not supported in this configuration'],
    ['10.0.0.1,10.0.0.2', DUAL, [int('10.0.0.1'), int('10.0.0.2')], 'failed to parse node IP "10.0.0.1,10.0.0.2": must contain either a single IP or a dual-stack pair of IPs'],
    ['::,10.0.0.1', DUAL, [int('10.0.0.1')], `failed to parse node IP "::,10.0.0.1": dual-stack node IP cannot include '0.0.0.0' or '::'`],
    // Kubernetes treats a lone unspecified annotation as a literal IP to find, which clouds never list.
    ['0.0.0.0', DUAL, [int('10.0.0.1'), int('fd00::1')], 'failed to get node address from cloud provider that matches ip: 0.0.0.0'],
    ['::', DUAL, [int('10.0.0.1'), int('fd00::1')], 'failed to get node address from cloud provider that matches ip: ::'],
    // The error names the canonical IP; the first missing one wins.
    ['010.0.0.9', DUAL, [int('10.0.0.1')], 'failed to get node address from cloud provider that matches ip: 10.0.0.9'],
    ['FD00::9,10.0.0.9', DUAL, [int('10.0.0.1')], 'failed to get node address from cloud provider that matches ip: fd00::9'],
    ['10.0.0.1', DUAL, [], 'failed to get node address from cloud provider that matches ip: 10.0.0.1'],
    ['10.0.0.1', DUAL, [host('10.0.0.1.example')], 'failed to get node address from cloud provider that matches ip: 10.0.0.1'],
  ])('%j fails', (annotation, options, cloud, message) => {
    expect(() => nodeAddressesFromNodeIP(annotation, cloud, options)).toThrow(new NodeIPError(message));
  });

  it('does not modify the cloud list', () => {
    const cloud = [int('10.0.0.1'), int('10.0.0.2')];
    const copy = structuredClone(cloud);
    nodeAddressesFromNodeIP('10.0.0.2', cloud, DUAL);
    expect(cloud).toEqual(copy);
  });
});

describe('nodeAddressesFromNodeIPLegacy', () => {
  const cloud = [int('10.0.0.1'), int('fd00::1'), host('node-a'), ext('fd00::99'), ext('192.168.0.1')];
  it.each<[string | undefined, NodeAddress[]]>([
    [undefined, cloud],
    ['0.0.0.0', [int('10.0.0.1'), host('node-a'), ext('192.168.0.1'), int('fd00::1'), ext('fd00::99')]],
    ['::', [int('fd00::1'), host('node-a'), ext('fd00::99'), int('10.0.0.1'), ext('192.168.0.1')]],
    ['::ffff:0.0.0.0', [int('10.0.0.1'), host('node-a'), ext('192.168.0.1'), int('fd00::1'), ext('fd00::99')]],
    ['192.168.0.1', [ext('192.168.0.1'), int('10.0.0.1'), int('fd00::1'), host('node-a')]],
    ['fd00::1', [int('fd00::1'), host('node-a'), ext('fd00::99'), ext('192.168.0.1')]],
  ])('node IP %j gives %j', (nodeIP, expected) => {
    expect(nodeAddressesFromNodeIPLegacy(nodeIP, cloud)).toEqual(expected);
  });

  it.each([
    ['bogus', 'failed to parse node IP "bogus": could not parse "bogus"'],
    ['10.0.0.1,fd00::1', 'failed to parse node IP "10.0.0.1,fd00::1": could not parse "10.0.0.1,fd00::1"'],
    ['10.9.9.9', 'failed to get node address from cloud provider that matches ip: 10.9.9.9'],
  ])('node IP %j fails', (nodeIP, message) => {
    expect(() => nodeAddressesFromNodeIPLegacy(nodeIP, cloud)).toThrow(new NodeIPError(message));
  });
});

describe('describeStack', () => {
  it.each<[NodeAddress[], string]>([
    [[], 'none'],
    [[host('node-a'), { type: 'InternalDNS', address: 'a.internal' }], 'none'],
    // Only InternalIP and ExternalIP count; an IP-looking Hostname does not.
    [[host('10.0.0.1'), int('fd00::1')], 'single-stack IPv6'],
    [[int('not-an-ip'), int('10.0.0.1')], 'single-stack IPv4'],
    [[int('10.0.0.1'), ext('192.168.0.1')], 'single-stack IPv4'],
    [[ext('fd00::1')], 'single-stack IPv6'],
    [[int('::ffff:10.0.0.1')], 'single-stack IPv4'],
    [[int('10.0.0.1'), int('fd00::1')], 'dual-stack IPv4-primary'],
    // Every InternalIP before every ExternalIP, whatever the order (GetNodeHostIPs).
    [[ext('fd00::1'), int('10.0.0.1')], 'dual-stack IPv4-primary'],
    [[ext('10.0.0.9'), int('fd00::1'), ext('fd00::9')], 'dual-stack IPv6-primary'],
    [[host('node-a'), int('fd00::1'), int('10.0.0.1'), int('fd00::2')], 'dual-stack IPv6-primary'],
  ])('%j is %s', (addresses, stack) => {
    expect(describeStack(addresses)).toBe(stack);
  });
});

describe('explainNodeAddresses', () => {
  const cloud = [int('10.0.0.1'), int('10.0.0.2'), int('fd00::1'), int('fd00::2'), ext('192.168.0.1')];

  it('gives a reason for every kept and every dropped address', () => {
    const result = explainNodeAddresses('10.0.0.2,fd00::2', cloud, DUAL);
    expect(result.nodeIPs).toEqual(['10.0.0.2', 'fd00::2']);
    expect(result.stack).toBe('dual-stack IPv4-primary');
    expect(result.addresses.map(({ address, code, nodeIP, cloudIndex }) => ({ address, code, nodeIP, cloudIndex }))).toEqual([
      { address: '10.0.0.2', code: 'matched-node-ip', nodeIP: '10.0.0.2', cloudIndex: 1 },
      { address: 'fd00::2', code: 'matched-node-ip', nodeIP: 'fd00::2', cloudIndex: 3 },
      { address: '192.168.0.1', code: 'type-not-claimed', nodeIP: undefined, cloudIndex: 4 },
    ]);
    expect(result.addresses[0]!.reason).toBe('matches node IP 10.0.0.2 (first in the annotation)');
    expect(result.addresses[2]!.reason).toBe('kept: type ExternalIP is not claimed by any node IP');
    expect(result.dropped.map(({ address, claimedBy, cloudIndex }) => ({ address, claimedBy, cloudIndex }))).toEqual([
      { address: '10.0.0.1', claimedBy: ['10.0.0.2', 'fd00::2'], cloudIndex: 0 },
      { address: 'fd00::1', claimedBy: ['10.0.0.2', 'fd00::2'], cloudIndex: 2 },
    ]);
    expect(result.dropped[0]!.reason).toBe('dropped: type InternalIP is claimed by node IPs 10.0.0.2 and fd00::2, and this address is not a node IP');
  });

  it('keeps everything, in order, when there is no annotation', () => {
    const result = explainNodeAddresses(undefined, cloud, DUAL);
    expect(result.annotation).toBeUndefined();
    expect(result.addresses.map((a) => a.code)).toEqual(Array(5).fill('no-node-ip'));
    expect(result.addresses.map(({ type, address }) => ({ type, address }))).toEqual(cloud);
    expect(result.dropped).toEqual([]);
  });

  it('names a single claiming node IP', () => {
    const result = explainNodeAddresses('192.168.0.1', [ext('192.168.0.1'), ext('203.0.113.9'), int('10.0.0.1')], DUAL);
    expect(result.addresses[0]!.reason).toBe('matches node IP 192.168.0.1');
    expect(result.dropped.map((d) => d.reason)).toEqual(['dropped: type ExternalIP is claimed by node IP 192.168.0.1, and this address is not a node IP']);
  });
});
