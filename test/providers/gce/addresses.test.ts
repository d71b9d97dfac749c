import { describe, it, expect } from 'vitest';
import { gceNodeAddresses, gcePodCIDRs, gcePodRanges, type GceInstance, type GceStackType } from '../../../providers/gce/addresses.js';
import { computeInstance, IPV4_ONLY_NIC } from './compute-instance.js';
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
      // cloud-provider-gcp writes {ExternalIP, ""} for it (nodeAddressesFromInstance); skipped here.
      name: 'Compute\'s own JSON of an access config whose external IP is not assigned yet: no empty ExternalIP',
      instance: computeInstance({ accessConfigs: [{ kind: 'compute#accessConfig', type: 'ONE_TO_ONE_NAT', name: 'external-nat', networkTier: 'PREMIUM' }] }),
      stackType: 'IPV4_IPV6',
      want: [I('10.128.0.7'), I('2600:1900:4000:7a1b:0:0:0:0')],
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
  const aliasOnly: GceInstance = { name: 'v4', networkInterfaces: [{ name: 'nic0', networkIP: '10.0.0.2', aliasIpRanges: [{ ipCidrRange: '10.4.1.0/24' }] }] };
  const ipv6Only: GceInstance = { name: 'v6', networkInterfaces: [{ name: 'nic0', networkIP: '10.0.0.2', ipv6Address: 'fd20:0:0:7::' }] };
  const neither: GceInstance = { name: 'bare', networkInterfaces: [{ name: 'nic0', networkIP: '10.0.0.2' }] };
  const cases: { name: string; instance: GceInstance; stackType: GceStackType; want: string[]; missing?: RegExp }[] = [
    // cloud-provider-gcp's TestUpdateCIDRAllocation rows (pkg/controller/nodeipam/ipam/cloud_cidr_allocator_test.go).
    { name: 'reference: empty single stack node, single stack ipv4 cluster', instance: { networkInterfaces: [{ aliasIpRanges: [{ ipCidrRange: '192.168.1.0/24' }] }] }, stackType: 'IPV4', want: ['192.168.1.0/24'] },
    { name: 'reference: empty dual stack node, single stack ipv4 cluster', instance: { networkInterfaces: [{ ipv6Address: '2001:db9::110', aliasIpRanges: [{ ipCidrRange: '192.168.1.0/24' }] }] }, stackType: 'IPV4', want: ['192.168.1.0/24'] },
    { name: 'reference: empty dual stack node, IPv4IPv6 cluster', instance: { networkInterfaces: [{ ipv6Address: '2001:db9::110', aliasIpRanges: [{ ipCidrRange: '192.168.1.0/24' }] }] }, stackType: 'IPV4_IPV6', want: ['192.168.1.0/24', '2001:db9::/112'] },
    { name: 'reference: empty single stack ipv6 node, single stack ipv6 cluster', instance: { networkInterfaces: [{ ipv6Address: '2001:db9::110' }] }, stackType: 'IPV6', want: ['2001:db9::/112'] },
    {
      name: 'reference: incorrect ipv6 cidr instead of address',
      instance: { networkInterfaces: [{ ipv6Address: '2001:db9::/96', aliasIpRanges: [{ ipCidrRange: '192.168.1.0/24' }] }] },
      stackType: 'IPV4_IPV6', want: [], missing: /ipv6Address: "2001:db9::\/96" is not an IPv6 address/,
    },
    {
      name: 'reference: incorrect ipv4 address instead of ipv6 address',
      instance: { networkInterfaces: [{ ipv6Address: '10.10.1.0', aliasIpRanges: [{ ipCidrRange: '192.168.1.0/24' }] }] },
      stackType: 'IPV4_IPV6', want: [], missing: /ipv6Address: "10\.10\.1\.0" is not an IPv6 address/,
    },
    {
      name: 'reference: multiple interfaces, the first not the default: nic0 is used',
      instance: { networkInterfaces: [{ name: 'nic1', aliasIpRanges: [{ ipCidrRange: '172.11.1.0/24' }] }, { name: 'nic0', aliasIpRanges: [{ ipCidrRange: '192.168.1.0/24' }] }] },
      stackType: 'IPV4', want: ['192.168.1.0/24'],
    },
    { name: 'IPV4: nic0 first alias range only', instance: withRanges, stackType: 'IPV4', want: ['10.4.1.0/24'] },
    { name: 'dual stack: IPv4 then /112 from the IPv6 address, canonical text', instance: withRanges, stackType: 'IPV4_IPV6', want: ['10.4.1.0/24', '2600:1900:4000:abcd::/112'] },
    { name: 'IPV6 cluster, dual-stack node: the IPv6 range alone, as upstream', instance: withRanges, stackType: 'IPV6', want: ['2600:1900:4000:abcd::/112'] },
    {
      name: 'no nic0: first interface',
      instance: { networkInterfaces: [{ name: 'eth-a', networkIP: '10.0.0.2', aliasIpRanges: [{ ipCidrRange: '10.8.0.0/24' }] }, { name: 'eth-b', networkIP: '10.0.1.2', aliasIpRanges: [{ ipCidrRange: '10.9.0.0/24' }] }] },
      stackType: 'IPV4',
      want: ['10.8.0.0/24'],
    },
    {
      name: 'external IPv6 gives the /112, masked',
      instance: { networkInterfaces: [{ name: 'nic0', networkIP: '10.0.0.2', aliasIpRanges: [{ ipCidrRange: '10.8.0.0/24' }], ipv6AccessType: 'EXTERNAL', ipv6AccessConfigs: [{ externalIpv6: '2600:1900:1:2:0:0:5:7' }] }] },
      stackType: 'IPV4_IPV6',
      want: ['10.8.0.0/24', '2600:1900:1:2::5:0/112'],
    },
    // A single-family list on a dual-stack cluster could never be completed: spec.podCIDRs is set once.
    { name: 'dual-stack cluster, alias range but no IPv6: none, retried', instance: aliasOnly, stackType: 'IPV4_IPV6', want: [], missing: /^stack-type IPV4_IPV6: nic0 has the alias IP range 10\.4\.1\.0\/24 but no IPv6 address; a dual-stack node needs both$/ },
    { name: 'dual-stack cluster, IPv6 but no alias range: none, retried', instance: ipv6Only, stackType: 'IPV4_IPV6', want: [], missing: /^stack-type IPV4_IPV6: nic0 has the IPv6 address fd20:0:0:7:: but no alias IP range; a dual-stack node needs both$/ },
    { name: 'dual-stack cluster, neither', instance: neither, stackType: 'IPV4_IPV6', want: [], missing: /nic0 has neither an alias IP range nor an IPv6 address/ },
    { name: 'IPv6 cluster, IPv4-only node: none, retried', instance: aliasOnly, stackType: 'IPV6', want: [], missing: /^stack-type IPV6: nic0 has no IPv6 address \(only the alias IP range 10\.4\.1\.0\/24, which an IPV6 cluster does not use\)$/ },
    { name: 'IPv6 cluster, node without anything', instance: neither, stackType: 'IPV6', want: [], missing: /^stack-type IPV6: nic0 has no IPv6 address$/ },
    { name: 'IPv4 cluster, IPv6-only node: none', instance: ipv6Only, stackType: 'IPV4', want: [], missing: /^stack-type IPV4: nic0 has no alias IP range$/ },
    { name: 'IPv6 cluster: an unreadable alias range is not read', instance: { networkInterfaces: [{ name: 'nic0', ipv6Address: 'fd20::', aliasIpRanges: [{ ipCidrRange: 'junk' }] }] }, stackType: 'IPV6', want: ['fd20::/112'] },
    { name: 'an alias range that is not a CIDR: none, naming the field', instance: { name: 'n', networkInterfaces: [{ name: 'nic0', aliasIpRanges: [{ ipCidrRange: '/24' }] }] }, stackType: 'IPV4', want: [], missing: /instance "n": networkInterfaces\[0\]\.aliasIpRanges\[0\]\.ipCidrRange: "\/24" is not a CIDR/ },
    { name: 'an IPv6 alias range: none', instance: { networkInterfaces: [{ name: 'nic0', aliasIpRanges: [{ ipCidrRange: 'fd00::/64' }] }] }, stackType: 'IPV4', want: [], missing: /"fd00::\/64" is not an IPv4 range/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const ranges = gcePodRanges(c.instance, { stackType: c.stackType });
      expect(ranges.podCIDRs).toEqual(c.want);
      expect(gcePodCIDRs(c.instance, { stackType: c.stackType })).toEqual(c.want);
      if (c.missing) expect(ranges.missing).toMatch(c.missing);
      else expect(ranges.missing).toBeUndefined();
      expect(ranges.notes).toEqual([]);
    });
  }

  it('never a single-family list on a dual-stack cluster, never a range of the wrong family (every stack type over shapes of nic0)', () => {
    const variants: GceInstance[] = [withRanges, aliasOnly, ipv6Only, neither, computeInstance(), computeInstance({ aliasIpRanges: [] }), computeInstance(IPV4_ONLY_NIC)];
    for (const instance of variants) {
      for (const stackType of ['IPV4', 'IPV4_IPV6', 'IPV6'] as const) {
        const { podCIDRs, missing } = gcePodRanges(instance, { stackType });
        const families = podCIDRs.map((c) => (c.includes(':') ? 'IPv6' : 'IPv4'));
        const want = { IPV4: ['IPv4'], IPV4_IPV6: ['IPv4', 'IPv6'], IPV6: ['IPv6'] }[stackType];
        if (podCIDRs.length > 0) expect(families).toEqual(want);
        expect(podCIDRs.length === 0).toBe(missing !== undefined);
      }
    }
  });

  it('cloud-provider-gcp\'s alias range with host bits set (10.10.10.10/24): taken as its network, said in a note; the addresses are unaffected', () => {
    // The range TestProjectFromNodeProviderID gives its instance (providers/gce/gce_instances_test.go).
    const instance = computeInstance({ aliasIpRanges: [{ ipCidrRange: '10.10.10.10/24', subnetworkRangeName: 'pods' }] });
    expect(gcePodRanges(instance, { stackType: 'IPV4' })).toEqual({
      podCIDRs: ['10.10.10.0/24'],
      notes: ['the alias IP range 10.10.10.10/24 of nic0 has host bits set; its network 10.10.10.0/24 is the pod range'],
    });
    expect(gcePodRanges(instance, { stackType: 'IPV4_IPV6' }).podCIDRs).toEqual(['10.10.10.0/24', '2600:1900:4000:7a1b::/112']);
    expect(gceNodeAddresses(instance, { stackType: 'IPV4' })).toEqual([I('10.128.0.7'), E('34.72.10.5'), I('2600:1900:4000:7a1b:0:0:0:0')]);
  });

  it('Compute\'s own JSON of a GKE-style dual-stack node: the alias range and the /112 of its external IPv6 /96', () => {
    expect(gcePodRanges(computeInstance(), { stackType: 'IPV4_IPV6' })).toEqual({ podCIDRs: ['10.4.1.0/24', '2600:1900:4000:7a1b::/112'], notes: [] });
  });

  it('an instance without interfaces is bad input', () => {
    expect(() => gcePodRanges({ name: 'x', networkInterfaces: [] }, { stackType: 'IPV4' })).toThrow(/instance "x" has no network interface/);
  });
});
