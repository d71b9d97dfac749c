import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import type { Instance, InstanceNetworkInterface } from '@aws-sdk/client-ec2';
import { awsNodeAddresses } from '../../../providers/aws/addresses.js';
import type { NodeAddress } from '../../../src/model/node-address.js';

const eni = (deviceIndex: number | undefined, privateIps: string[], extra: Partial<InstanceNetworkInterface> = {}): InstanceNetworkInterface => ({
  Status: 'in-use',
  ...(deviceIndex === undefined ? {} : { Attachment: { DeviceIndex: deviceIndex } }),
  PrivateIpAddresses: privateIps.map((PrivateIpAddress) => ({ PrivateIpAddress })),
  ...extra,
});
const v6 = (...ips: string[]) => ({ Ipv6Addresses: ips.map((Ipv6Address) => ({ Ipv6Address })) });
const I = (address: string): NodeAddress => ({ type: 'InternalIP', address });
const DNS = (name: string): NodeAddress[] => [
  { type: 'InternalDNS', address: name },
  { type: 'Hostname', address: name },
];

const base: Instance = {
  InstanceId: 'i-0123456789abcdef0',
  State: { Name: 'running' },
  PrivateDnsName: 'ip-10-0-0-1.ec2.internal',
  PublicDnsName: 'ec2-54-1-2-3.compute-1.amazonaws.com',
  PublicIpAddress: '54.1.2.3',
  PrivateIpAddress: '10.0.0.1',
};

describe('awsNodeAddresses', () => {
  const table: Array<[string, Instance, string[], NodeAddress[]]> = [
    [
      'one interface, several private IPs, public IP and DNS names',
      { ...base, NetworkInterfaces: [eni(0, ['10.0.0.1', '10.0.0.2', '10.0.0.3'])] },
      ['ipv4'],
      [I('10.0.0.1'), I('10.0.0.2'), I('10.0.0.3'), { type: 'ExternalIP', address: '54.1.2.3' }, ...DNS('ip-10-0-0-1.ec2.internal'), { type: 'ExternalDNS', address: 'ec2-54-1-2-3.compute-1.amazonaws.com' }],
    ],
    [
      'interfaces sorted by device index, unattached last, not-in-use skipped',
      {
        ...base,
        PublicIpAddress: undefined,
        PublicDnsName: '',
        NetworkInterfaces: [eni(undefined, ['10.0.9.9']), eni(2, ['10.0.2.1']), eni(0, ['10.0.0.1']), eni(1, ['10.0.1.1'], { Status: 'detaching' }), eni(1, ['10.0.1.2'])],
      },
      ['ipv4'],
      [I('10.0.0.1'), I('10.0.1.2'), I('10.0.2.1'), I('10.0.9.9'), ...DNS('ip-10-0-0-1.ec2.internal')],
    ],
    [
      'no public IP, no DNS names, top-level private IP ignored',
      { InstanceId: 'i-12345678', PrivateIpAddress: '10.9.9.9', PrivateDnsName: '', NetworkInterfaces: [eni(0, ['10.0.0.5'])] },
      ['ipv4'],
      [I('10.0.0.5')],
    ],
    [
      // cloud-provider-aws reads only the instance's PublicIpAddress (extractIPv4NodeAddresses).
      'no ExternalIP from an interface association when the instance has no public IP',
      { InstanceId: 'i-12345678', NetworkInterfaces: [eni(1, ['10.0.1.1'], { Association: { PublicIp: '3.3.3.3' } }), eni(0, ['10.0.0.1'], { Association: { PublicIp: '54.0.0.1' } })] },
      ['ipv4'],
      [I('10.0.0.1'), I('10.0.1.1')],
    ],
    [
      'IPv6 ignored unless the family is configured',
      { ...base, PublicIpAddress: undefined, PublicDnsName: undefined, PrivateDnsName: undefined, NetworkInterfaces: [eni(0, ['10.0.0.1'], v6('2600:1f18::1'))] },
      ['ipv4'],
      [I('10.0.0.1')],
    ],
    [
      'dual-stack IPv4 first: first IPv6 of each interface, canonicalised',
      {
        ...base,
        PublicIpAddress: undefined,
        PublicDnsName: undefined,
        NetworkInterfaces: [eni(1, ['10.0.1.1'], v6('2600:1F18:0:0::B')), eni(0, ['10.0.0.1'], v6('2600:1f18::a', '2600:1f18::aa')), eni(2, ['10.0.2.1'])],
      },
      ['ipv4', 'ipv6'],
      [I('10.0.0.1'), I('10.0.1.1'), I('10.0.2.1'), ...DNS('ip-10-0-0-1.ec2.internal'), I('2600:1f18::a'), I('2600:1f18::b')],
    ],
    [
      'dual-stack IPv6 first',
      { ...base, PublicDnsName: undefined, NetworkInterfaces: [eni(0, ['10.0.0.1'], v6('2600:1f18::a'))] },
      ['ipv6', 'ipv4'],
      [I('2600:1f18::a'), I('10.0.0.1'), { type: 'ExternalIP', address: '54.1.2.3' }, ...DNS('ip-10-0-0-1.ec2.internal')],
    ],
    [
      // cloud-provider-aws keeps EC2's order here (it sorts only on its IPv4 path); README's deviations.
      'dual-stack IPv6 first, IPv6 on several interfaces listed out of order: device-index order',
      { ...base, PublicDnsName: undefined, PublicIpAddress: undefined, NetworkInterfaces: [eni(2, ['10.0.2.1'], v6('2600:1f18::c')), eni(0, ['10.0.0.1'], v6('2600:1f18::a')), eni(1, ['10.0.1.1'], v6('2600:1f18::b'))] },
      ['ipv6', 'ipv4'],
      [I('2600:1f18::a'), I('2600:1f18::b'), I('2600:1f18::c'), I('10.0.0.1'), I('10.0.1.1'), I('10.0.2.1'), ...DNS('ip-10-0-0-1.ec2.internal')],
    ],
    [
      'IPv6 only: no IPv4 addresses or DNS names',
      { ...base, NetworkInterfaces: [eni(0, ['10.0.0.1'], v6('2600:1f18::a')), eni(1, [], { ...v6('2600:1f18::c'), Status: 'available' })] },
      ['ipv6'],
      [I('2600:1f18::a')],
    ],
    [
      'stopped instance: no public address, private addresses kept',
      { ...base, State: { Name: 'stopped' }, PublicIpAddress: undefined, PublicDnsName: '', NetworkInterfaces: [eni(0, ['10.0.0.1'])] },
      ['ipv4'],
      [I('10.0.0.1'), ...DNS('ip-10-0-0-1.ec2.internal')],
    ],
    [
      'terminated instance: interfaces gone, nothing but what EC2 still lists',
      { InstanceId: 'i-12345678', State: { Name: 'terminated' }, PrivateDnsName: '', NetworkInterfaces: [] },
      ['ipv4', 'ipv6'],
      [],
    ],
    [
      'empty private IP entries are skipped, missing device index counts as 0',
      { InstanceId: 'i-12345678', NetworkInterfaces: [eni(1, ['10.0.1.1']), { Status: 'in-use', Attachment: {}, PrivateIpAddresses: [{}, { PrivateIpAddress: '10.0.0.1' }] }] },
      ['ipv4'],
      [I('10.0.0.1'), I('10.0.1.1')],
    ],
  ];
  it.each(table)('%s', (_name, instance, families, want) => {
    expect(awsNodeAddresses(instance, { nodeIPFamilies: families })).toEqual(want);
  });

  it('defaults to IPv4 and does not reorder the caller\'s interfaces', () => {
    const nis = [eni(1, ['10.0.1.1']), eni(0, ['10.0.0.1'])];
    const instance: Instance = { InstanceId: 'i-12345678', NetworkInterfaces: nis };
    expect(awsNodeAddresses(instance)).toEqual([I('10.0.0.1'), I('10.0.1.1')]);
    expect(instance.NetworkInterfaces).toEqual(nis);
    expect(instance.NetworkInterfaces![0]!.Attachment?.DeviceIndex).toBe(1);
  });

  const bad: Array<[string, Instance, string[], RegExp]> = [
    ['invalid private IP', { InstanceId: 'i-1', NetworkInterfaces: [eni(0, ['10.0.0.300'])] }, ['ipv4'], /i-1: invalid private IPv4 address "10.0.0.300"/],
    ['invalid public IP', { InstanceId: 'i-1', PublicIpAddress: 'nope' }, ['ipv4'], /invalid public IPv4 address "nope"/],
    ['invalid IPv6', { InstanceId: 'i-1', NetworkInterfaces: [eni(0, [], v6('2600::zz'))] }, ['ipv6'], /invalid IPv6 address "2600::zz"/],
    ['unknown family', { InstanceId: 'i-1' }, ['ipv4', 'inet6'], /unknown family "inet6"/],
    ['empty families', { InstanceId: 'i-1' }, [], /at least one/],
    ['duplicate family', { InstanceId: 'i-1' }, ['ipv4', 'ipv4'], /"ipv4" listed twice/],
  ];
  it.each(bad)('throws on %s', (_name, instance, families, message) => {
    expect(() => awsNodeAddresses(instance, { nodeIPFamilies: families })).toThrow(message);
  });
});

describe('awsNodeAddresses properties', () => {
  it('does not depend on the API order of attached interfaces with distinct device indexes', () => {
    const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `10.${a}.${b}.${c}`);
    const ipv6 = fc.tuple(fc.nat(0xffff), fc.nat(0xffff)).map(([a, b]) => `2600:1f18::${a.toString(16)}:${b.toString(16)}`);
    const iface = fc.record({ ips: fc.array(ipv4, { maxLength: 3 }), v6: fc.array(ipv6, { maxLength: 2 }), inUse: fc.boolean() });
    fc.assert(
      fc.property(fc.array(iface, { maxLength: 5 }), fc.boolean(), (list, ipv6First) => {
        const nis = list.map((x, k) => eni(k, x.ips, { ...v6(...x.v6), Status: x.inUse ? 'in-use' : 'available' }));
        const families = ipv6First ? ['ipv6', 'ipv4'] : ['ipv4', 'ipv6'];
        const forward = awsNodeAddresses({ InstanceId: 'i-1', NetworkInterfaces: nis }, { nodeIPFamilies: families });
        const reversed = awsNodeAddresses({ InstanceId: 'i-1', NetworkInterfaces: [...nis].reverse() }, { nodeIPFamilies: families });
        expect(reversed).toEqual(forward);
        const inUse = list.filter((x) => x.inUse);
        expect(forward.length).toBe(inUse.reduce((n, x) => n + x.ips.length + (x.v6.length > 0 ? 1 : 0), 0));
      }),
    );
  });
});
