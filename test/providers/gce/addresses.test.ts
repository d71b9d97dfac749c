import { describe, it, expect } from 'vitest';
import { gceNodeAddresses, gcePodCIDRs, type GceInstance, type GceStackType } from '../../../providers/gce/addresses.js';
import type { NodeAddress } from '../../../src/model/node-address.js';

const I = (address: string): NodeAddress => ({ type: 'InternalIP', address });
const E = (address: string): NodeAddress => ({ type: 'ExternalIP', address });

const twoNics: GceInstance = {
  name: 'node-a',
  networkInterfaces: [
    { name: 'nic0', networkIP: '10.0.0.2', accessConfigs: [{ natIP: '34.1.2.3' }], ipv6Address: 'fd20:1:2:3::', ipv6AccessType: 'INTERNAL' },
    { name: 'nic1', networkIP: '10.1.0.2', accessConfigs: [{ natIP: '' }, { natIP: '35.9.9.9' }], ipv6AccessType: 'EXTERNAL', ipv6AccessConfigs: [{ externalIpv6: '2600:1900:4000:1::' }] },
  ],
};

describe('gceNodeAddresses', () => {
  const cases: { name: string; instance: GceInstance; stackType: GceStackType; want: NodeAddress[] }[] = [
    {
      name: 'single interface, internal only (no access config)',
      instance: { networkInterfaces: [{ networkIP: '10.0.0.5' }] },
      stackType: 'IPV4',
      want: [I('10.0.0.5')],
    },
    {
      name: 'access config without natIP is skipped (missing external IP)',
      instance: { networkInterfaces: [{ networkIP: '10.0.0.5', accessConfigs: [{ natIP: null }, { type: 'ONE_TO_ONE_NAT' }] }] },
      stackType: 'IPV4',
      want: [I('10.0.0.5')],
    },
    {
      name: 'IPV4 stack: IPv4 in interface order (several external IPs), then the IPv6 of dual-stack interfaces',
      instance: twoNics,
      stackType: 'IPV4',
      want: [I('10.0.0.2'), E('34.1.2.3'), I('10.1.0.2'), E('35.9.9.9'), I('fd20:1:2:3::'), I('2600:1900:4000:1::')],
    },
    {
      name: 'dual stack: IPv4 entries first, then IPv6, each in interface order',
      instance: twoNics,
      stackType: 'IPV4_IPV6',
      want: [I('10.0.0.2'), E('34.1.2.3'), I('10.1.0.2'), E('35.9.9.9'), I('fd20:1:2:3::'), I('2600:1900:4000:1::')],
    },
    // cloud-provider-gcp's TestNodeAddresses rows, instance n1 (internal IPv6) and n2 (external IPv6).
    ...(['IPV4', 'IPV4_IPV6'] as const).map((stackType) => ({
      name: `reference: internal dual stack instance with cluster stack type ${stackType}`,
      instance: { networkInterfaces: [{ networkIP: '10.1.1.1', ipv6Address: '2001:2d00::0:1' }] },
      stackType,
      want: [I('10.1.1.1'), I('2001:2d00::0:1')],
    })),
    {
      name: 'reference: internal dual stack instance with cluster stack type IPV6',
      instance: { networkInterfaces: [{ networkIP: '10.1.1.1', ipv6Address: '2001:2d00::0:1' }] },
      stackType: 'IPV6',
      want: [I('2001:2d00::0:1'), I('10.1.1.1')],
    },
    ...(['IPV4', 'IPV4_IPV6'] as const).map((stackType) => ({
      name: `reference: external dual stack instance with cluster stack type ${stackType}`,
      instance: { networkInterfaces: [{ networkIP: '10.1.1.2', ipv6AccessType: 'EXTERNAL', ipv6AccessConfigs: [{ externalIpv6: '2001:1900::0:2' }], accessConfigs: [{ natIP: '20.1.1.2' }] }] },
      stackType,
      want: [I('10.1.1.2'), E('20.1.1.2'), I('2001:1900::0:2')],
    })),
    {
      name: 'reference: external dual stack instance with cluster stack type IPV6',
      instance: { networkInterfaces: [{ networkIP: '10.1.1.2', ipv6AccessType: 'EXTERNAL', ipv6AccessConfigs: [{ externalIpv6: '2001:1900::0:2' }], accessConfigs: [{ natIP: '20.1.1.2' }] }] },
      stackType: 'IPV6',
      want: [I('2001:1900::0:2'), I('10.1.1.2'), E('20.1.1.2')],
    },
    {
      name: 'IPv6-only interface on an IPV4 cluster: its address is still reported',
      instance: { networkInterfaces: [{ ipv6Address: 'fd00::1' }] },
      stackType: 'IPV4',
      want: [I('fd00::1')],
    },
    {
      name: 'IPV6 stack: all IPv6 entries first, order within each family kept',
      instance: twoNics,
      stackType: 'IPV6',
      want: [I('fd20:1:2:3::'), I('2600:1900:4000:1::'), I('10.0.0.2'), E('34.1.2.3'), I('10.1.0.2'), E('35.9.9.9')],
    },
    {
      name: 'internal IPv6 wins over external access config',
      instance: { networkInterfaces: [{ networkIP: '10.0.0.5', ipv6Address: 'fd00::5', ipv6AccessType: 'EXTERNAL', ipv6AccessConfigs: [{ externalIpv6: '2600::5' }] }] },
      stackType: 'IPV4_IPV6',
      want: [I('10.0.0.5'), I('fd00::5')],
    },
    {
      name: 'external IPv6 ignored when the access type is INTERNAL',
      instance: { networkInterfaces: [{ networkIP: '10.0.0.5', ipv6AccessType: 'INTERNAL', ipv6AccessConfigs: [{ externalIpv6: '2600::5' }] }] },
      stackType: 'IPV4_IPV6',
      want: [I('10.0.0.5')],
    },
    {
      name: 'IPv6-only interface (no networkIP)',
      instance: { networkInterfaces: [{ networkIP: '', ipv6Address: 'fd00::9' }] },
      stackType: 'IPV6',
      want: [I('fd00::9')],
    },
    {
      name: 'text passes through as the API wrote it',
      instance: { networkInterfaces: [{ networkIP: '10.0.0.5', ipv6Address: 'FD00:0:0:0::9' }] },
      stackType: 'IPV4_IPV6',
      want: [I('10.0.0.5'), I('FD00:0:0:0::9')],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(gceNodeAddresses(c.instance, { stackType: c.stackType })).toEqual(c.want);
    });
  }

  const errors: { name: string; instance: unknown; stackType?: unknown; message: RegExp }[] = [
    { name: 'no network interface', instance: { name: 'x', networkInterfaces: [] }, message: /instance "x" has no network interface/ },
    { name: 'networkInterfaces missing', instance: { name: 'x' }, message: /no network interface/ },
    { name: 'networkInterfaces not an array', instance: { name: 'x', networkInterfaces: {} }, message: /networkInterfaces must be an array/ },
    { name: 'bad networkIP', instance: { networkInterfaces: [{ networkIP: '10.0.0' }] }, message: /networkInterfaces\[0\]\.networkIP: "10\.0\.0"/ },
    { name: 'IPv6 in natIP', instance: { networkInterfaces: [{ networkIP: '10.0.0.1', accessConfigs: [{ natIP: '::1' }] }] }, message: /accessConfigs\[0\]\.natIP: "::1" is not an IPv4/ },
    { name: 'bad ipv6Address', instance: { networkInterfaces: [{ networkIP: '10.0.0.1', ipv6Address: '10.0.0.9' }] }, stackType: 'IPV4_IPV6', message: /networkInterfaces\[0\]\.ipv6Address: "10\.0\.0\.9"/ },
    { name: 'no address on any interface', instance: { name: 'bare', networkInterfaces: [{ name: 'nic0' }] }, message: /instance "bare": no network interface has an address/ },
    { name: 'unknown stack type', instance: { networkInterfaces: [{ networkIP: '10.0.0.1' }] }, stackType: 'DUAL', message: /stackType: "DUAL" is not one of/ },
    { name: 'not an object', instance: null, message: /expected a compute v1 Instance object, got null/ },
  ];
  for (const c of errors) {
    it(`rejects: ${c.name}`, () => {
      expect(() => gceNodeAddresses(c.instance as GceInstance, { stackType: (c.stackType ?? 'IPV4') as GceStackType })).toThrow(c.message);
    });
  }
});

describe('gcePodCIDRs', () => {
  const withRanges: GceInstance = {
    name: 'n',
    networkInterfaces: [
      { name: 'nic1', networkIP: '10.9.0.2', aliasIpRanges: [{ ipCidrRange: '10.200.0.0/24' }], ipv6Address: 'fd99::' },
      { name: 'nic0', networkIP: '10.0.0.2', aliasIpRanges: [{ ipCidrRange: '10.4.1.0/24' }, { ipCidrRange: '10.4.9.0/24' }], ipv6Address: '2600:1900:4000:abcd:0:0:0:0' },
    ],
  };
  const cases: { name: string; instance: GceInstance; stackType: GceStackType; want: string[] }[] = [
    { name: 'IPV4: nic0 first alias range only', instance: withRanges, stackType: 'IPV4', want: ['10.4.1.0/24'] },
    { name: 'dual stack: IPv4 then /112 from the IPv6 address, canonical text', instance: withRanges, stackType: 'IPV4_IPV6', want: ['10.4.1.0/24', '2600:1900:4000:abcd::/112'] },
    { name: 'IPV6: IPv6 range first', instance: withRanges, stackType: 'IPV6', want: ['2600:1900:4000:abcd::/112', '10.4.1.0/24'] },
    {
      name: 'no nic0: first interface',
      instance: { networkInterfaces: [{ name: 'eth-a', networkIP: '10.0.0.2', aliasIpRanges: [{ ipCidrRange: '10.8.0.0/24' }] }, { name: 'eth-b', networkIP: '10.0.1.2', aliasIpRanges: [{ ipCidrRange: '10.9.0.0/24' }] }] },
      stackType: 'IPV4',
      want: ['10.8.0.0/24'],
    },
    {
      name: 'external IPv6 gives the /112, masked',
      instance: { networkInterfaces: [{ name: 'nic0', networkIP: '10.0.0.2', ipv6AccessType: 'EXTERNAL', ipv6AccessConfigs: [{ externalIpv6: '2600:1900:1:2:0:0:5:7' }] }] },
      stackType: 'IPV4_IPV6',
      want: ['2600:1900:1:2::5:0/112'],
    },
    { name: 'no alias range, no IPv6: none', instance: { networkInterfaces: [{ name: 'nic0', networkIP: '10.0.0.2' }] }, stackType: 'IPV4_IPV6', want: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(gcePodCIDRs(c.instance, { stackType: c.stackType })).toEqual(c.want);
    });
  }
  it('rejects an alias range that is not a CIDR, naming the field', () => {
    expect(() => gcePodCIDRs({ name: 'n', networkInterfaces: [{ name: 'nic0', aliasIpRanges: [{ ipCidrRange: '/24' }] }] }, { stackType: 'IPV4' })).toThrow(
      /instance "n": networkInterfaces\[0\]\.aliasIpRanges\[0\]\.ipCidrRange: "\/24" is not a CIDR/,
    );
  });
  it('rejects an alias range with host bits set', () => {
    expect(() => gcePodCIDRs({ networkInterfaces: [{ name: 'nic0', aliasIpRanges: [{ ipCidrRange: '10.4.1.7/24' }] }] }, { stackType: 'IPV4' })).toThrow(/host bits set/);
  });
});
