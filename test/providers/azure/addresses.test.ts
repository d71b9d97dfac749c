// Address selection for Azure instances. Rows marked "reference" re-express cases of
// cloud-provider-azure's own tests (kubernetes-sigs/cloud-provider-azure):
//   pkg/provider/azure_instances_test.go, TestNodeAddresses: the ARM path (one NIC, one
//     configuration, an attached public IP) and the instance-metadata path of a dual-stack VM
//     (the first IPv4 and first IPv6 address of the first interface, each with its public IP);
//   pkg/provider/azure_standard_test.go, TestGetPrimaryIPConfig and TestGetIPConfigByIPFamily: which
//     configuration is primary, and configurations told apart by family;
//   pkg/provider/azure_standard.go, getPrimaryInterfaceID: which NIC is primary.
import { describe, expect, it } from 'vitest';
import { azureNodeAddresses, orderedIPConfigurations, orderedNics, type AzureNetworkInterface, type AzurePublicIP } from '../../../providers/azure/addresses.js';
import type { NodeAddress } from '../../../src/model/node-address.js';
import type { IPFamily } from '../../../src/nodeip/ip.js';

const I = (address: string): NodeAddress => ({ type: 'InternalIP', address });
const E = (address: string): NodeAddress => ({ type: 'ExternalIP', address });
const H = (address: string): NodeAddress => ({ type: 'Hostname', address });

const NIC = (name: string) => `/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/${name}`;
const PIP = (name: string) => `/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/${name}`;

function input(nics: { ref: { id: string; primary?: boolean }; nic: AzureNetworkInterface }[], pips: AzurePublicIP[] = [], nodeName = 'vm1') {
  return {
    nodeName,
    nics: nics.map((n) => n.ref),
    interfaces: new Map(nics.map((n) => [n.ref.id.toLowerCase(), n.nic])),
    publicIPs: new Map(pips.map((p) => [p.id!.toLowerCase(), p])),
  };
}

// The reference ARM-path VM: one NIC "nic", one configuration, public IP pip1.
const referenceVM = input(
  [{ ref: { id: NIC('nic'), primary: true }, nic: { id: NIC('nic'), name: 'nic', ipConfigurations: [{ privateIPAddress: '172.1.0.3', publicIPAddress: { id: PIP('pip1') } }] } }],
  [{ id: PIP('pip1'), ipAddress: '192.168.1.12' }],
);

// A dual-stack VM as the reference's instance-metadata case has it (its IPv6 literals are not valid
// addresses, so valid ones stand in), with a second NIC, a second IPv4 and a second IPv6
// configuration, in the shape ARM lists them (primary flags and privateIPAddressVersion on each).
const dualStack = input(
  [
    { ref: { id: NIC('nic-b'), primary: false }, nic: { id: NIC('nic-b'), name: 'nic-b', ipConfigurations: [{ name: 'b1', primary: true, privateIPAddress: '10.241.0.7', privateIPAddressVersion: 'IPv4' }] } },
    {
      ref: { id: NIC('nic-a'), primary: true },
      nic: {
        id: NIC('nic-a'), name: 'nic-a', ipConfigurations: [
          { name: 'v6', primary: false, privateIPAddress: '1111:1111::1111:1111:0:111', privateIPAddressVersion: 'IPv6', publicIPAddress: { id: PIP('pip6') } },
          { name: 'v4', primary: true, privateIPAddress: '10.240.0.1', privateIPAddressVersion: 'IPv4', publicIPAddress: { id: PIP('pip4') } },
          { name: 'v4-second', primary: false, privateIPAddress: '10.240.0.9', privateIPAddressVersion: 'IPv4' },
          { name: 'v6-second', primary: false, privateIPAddress: 'fd00::9', privateIPAddressVersion: 'IPv6' },
        ],
      },
    },
  ],
  [{ id: PIP('pip4'), ipAddress: '192.168.1.12' }, { id: PIP('pip6'), ipAddress: '2222:2222::2222:2222:0:111' }],
);

describe('azureNodeAddresses, nodeIPConfigurations primary (the default, as cloud-provider-azure)', () => {
  const cases: { name: string; input: ReturnType<typeof input>; families: IPFamily[]; want: NodeAddress[] }[] = [
    {
      name: 'reference (TestNodeAddresses, ARM path): InternalIP, Hostname, then the ExternalIP of the attached public IP',
      input: referenceVM,
      families: [4],
      want: [I('172.1.0.3'), H('vm1'), E('192.168.1.12')],
    },
    {
      name: 'IPv4 cluster: the primary NIC\'s primary configuration only (GetIPByNodeName), never a second NIC or configuration',
      input: dualStack,
      families: [4],
      want: [I('10.240.0.1'), H('vm1'), E('192.168.1.12')],
    },
    {
      name: 'reference (TestNodeAddresses, instance metadata of a dual-stack VM): the first IPv6 configuration of the primary NIC and its public IP added',
      input: dualStack,
      families: [4, 6],
      want: [I('10.240.0.1'), I('1111:1111::1111:1111:0:111'), H('vm1'), E('192.168.1.12'), E('2222:2222::2222:2222:0:111')],
    },
    {
      name: 'IPv6 first: the same addresses, IPv6 first within each kind',
      input: dualStack,
      families: [6, 4],
      want: [I('1111:1111::1111:1111:0:111'), I('10.240.0.1'), H('vm1'), E('2222:2222::2222:2222:0:111'), E('192.168.1.12')],
    },
    {
      name: 'IPv6 alone: the primary NIC\'s first IPv6 configuration (getIPConfigByIPFamily)',
      input: dualStack,
      families: [6],
      want: [I('1111:1111::1111:1111:0:111'), H('vm1'), E('2222:2222::2222:2222:0:111')],
    },
    {
      name: 'dual-stack families on a VM without IPv6: its IPv4 answer',
      input: referenceVM,
      families: [4, 6],
      want: [I('172.1.0.3'), H('vm1'), E('192.168.1.12')],
    },
    {
      name: 'a second NIC missing from the listing does not matter: only the primary one is read',
      input: { ...dualStack, interfaces: new Map([...dualStack.interfaces].filter(([id]) => id === NIC('nic-a').toLowerCase())) },
      families: [4],
      want: [I('10.240.0.1'), H('vm1'), E('192.168.1.12')],
    },
    {
      name: 'reference (TestGetIPConfigByIPFamily): configurations told apart by privateIPAddressVersion',
      input: input([{ ref: { id: NIC('nic') }, nic: { id: NIC('nic'), name: 'nic', ipConfigurations: [
        { name: 'ipconfig1', primary: true, privateIPAddress: '10.10.0.12', privateIPAddressVersion: 'IPv4' },
        { name: 'ipconfig2', primary: false, privateIPAddress: 'fd00::eef0', privateIPAddressVersion: 'IPv6' },
      ] } }]),
      families: [6],
      want: [I('fd00::eef0'), H('vm1')],
    },
  ];
  it.each(cases)('$name', ({ input: i, families, want }) => {
    expect(azureNodeAddresses(i, { ipFamilies: families })).toEqual(want);
    expect(azureNodeAddresses(i, { ipFamilies: families, ipConfigurations: 'primary' })).toEqual(want);
  });
});

describe('azureNodeAddresses, nodeIPConfigurations all', () => {
  const cases: { name: string; input: ReturnType<typeof input>; families: IPFamily[]; want: NodeAddress[] }[] = [
    {
      name: 'reference (TestNodeAddresses, ARM path): InternalIP, Hostname, then the ExternalIP of the attached public IP',
      input: referenceVM,
      families: [4],
      want: [I('172.1.0.3'), H('vm1'), E('192.168.1.12')],
    },
    {
      name: 'a public IP not listed (or not yet allocated) gives no ExternalIP',
      input: { ...referenceVM, publicIPs: new Map([[PIP('pip1').toLowerCase(), { id: PIP('pip1') }]]) },
      families: [4],
      want: [I('172.1.0.3'), H('vm1')],
    },
    {
      name: 'dual-stack VM, IPv4 cluster: every IPv4 configuration, IPv6 ones left out',
      input: dualStack,
      families: [4],
      want: [I('10.240.0.1'), I('10.240.0.9'), I('10.241.0.7'), H('vm1'), E('192.168.1.12')],
    },
    {
      name: 'dual-stack, IPv4 primary: primary NIC first, primary configuration first, each kind IPv4 then IPv6',
      input: dualStack,
      families: [4, 6],
      want: [I('10.240.0.1'), I('10.240.0.9'), I('10.241.0.7'), I('1111:1111::1111:1111:0:111'), I('fd00::9'), H('vm1'), E('192.168.1.12'), E('2222:2222::2222:2222:0:111')],
    },
    {
      name: 'dual-stack, IPv6 primary: the IPv6 addresses of each kind first',
      input: dualStack,
      families: [6, 4],
      want: [I('1111:1111::1111:1111:0:111'), I('fd00::9'), I('10.240.0.1'), I('10.240.0.9'), I('10.241.0.7'), H('vm1'), E('2222:2222::2222:2222:0:111'), E('192.168.1.12')],
    },
    {
      name: 'reference (TestGetIPConfigByIPFamily): configurations told apart by family',
      input: input([{ ref: { id: NIC('nic') }, nic: { id: NIC('nic'), name: 'nic', ipConfigurations: [
        { name: 'ipconfig1', primary: true, privateIPAddress: '10.10.0.12', privateIPAddressVersion: 'IPv4' },
        { name: 'ipconfig2', primary: false, privateIPAddress: 'fd00::eef0', privateIPAddressVersion: 'IPv6' },
      ] } }]),
      families: [6],
      want: [I('fd00::eef0'), H('vm1')],
    },
    {
      name: 'NIC and public IP IDs match whatever their case',
      input: { ...referenceVM, nics: [{ id: NIC('NIC').toUpperCase(), primary: true }], interfaces: new Map([[NIC('nic').toLowerCase(), { name: 'nic', ipConfigurations: [{ privateIPAddress: '172.1.0.3', publicIPAddress: { id: PIP('PIP1') } }] }]]) },
      families: [4],
      want: [I('172.1.0.3'), H('vm1'), E('192.168.1.12')],
    },
  ];
  it.each(cases)('$name', ({ input: i, families, want }) => {
    expect(azureNodeAddresses(i, { ipFamilies: families, ipConfigurations: 'all' })).toEqual(want);
  });

  it('a second NIC missing from the listing is an error then', () => {
    const missing = { ...dualStack, interfaces: new Map([...dualStack.interfaces].filter(([id]) => id === NIC('nic-a').toLowerCase())) };
    expect(() => azureNodeAddresses(missing, { ipFamilies: [4], ipConfigurations: 'all' })).toThrow(/network interface .*\/nic-b of "vm1" is not in the listing/);
  });
});

describe('azureNodeAddresses errors (either mode)', () => {
  it.each([
    ['no NIC at all', input([]), /instance "vm1" has no network interface/],
    ['several NICs, none primary (getPrimaryInterfaceID)', input([
      { ref: { id: NIC('a') }, nic: { id: NIC('a'), ipConfigurations: [{ privateIPAddress: '10.0.0.1' }] } },
      { ref: { id: NIC('b'), primary: false }, nic: { id: NIC('b'), ipConfigurations: [{ privateIPAddress: '10.0.0.2' }] } },
    ]), /failed to find a primary nic for the vm\. vmname="vm1"/],
    ['reference (TestGetPrimaryIPConfig): several configurations, none primary', input([{ ref: { id: NIC('nic') }, nic: { id: NIC('nic'), name: 'nic', ipConfigurations: [
      { name: 'ipconfig1', primary: false }, { name: 'ipconfig2', primary: false },
    ] } }]), /failed to determine the primary ipconfig\. nicname="nic"/],
    ['a referenced NIC missing from the listing', { ...referenceVM, interfaces: new Map() }, /network interface .*\/nic of "vm1" is not in the listing/],
    ['no private address of the families asked for', referenceVM, /has no private address of IPv6/, [6] as IPFamily[]],
    ['a private address that is no IP', input([{ ref: { id: NIC('nic') }, nic: { id: NIC('nic'), name: 'nic', ipConfigurations: [{ name: 'c', privateIPAddress: '10.0.0.300' }] } }]), /ipconfig "c": privateIPAddress "10\.0\.0\.300" is not an IP address/],
  ] as const)('%s is an error', (_name, i, message, families: readonly IPFamily[] = [4]) => {
    expect(() => azureNodeAddresses(i, { ipFamilies: families })).toThrow(message);
    expect(() => azureNodeAddresses(i, { ipFamilies: families, ipConfigurations: 'all' })).toThrow(message);
  });

  it('rejects a bad family list', () => {
    expect(() => azureNodeAddresses(referenceVM, { ipFamilies: [] })).toThrow(/ipFamilies/);
    expect(() => azureNodeAddresses(referenceVM, { ipFamilies: [4, 4] })).toThrow(/ipFamilies/);
  });
});

describe('primary NIC and configuration (reference: getPrimaryInterfaceID, TestGetPrimaryIPConfig)', () => {
  it('one NIC or one configuration is primary whatever its flag', () => {
    expect(orderedNics([{ id: 'a', primary: false }], 'vm')).toEqual([{ id: 'a', primary: false }]);
    expect(orderedIPConfigurations({ name: 'nic', ipConfigurations: [{ name: 'c', primary: false }] })).toEqual([{ name: 'c', primary: false }]);
  });
  it('the primary one first, the others in their order', () => {
    expect(orderedNics([{ id: 'a' }, { id: 'b' }, { id: 'c', primary: true }], 'vm').map((n) => n.id)).toEqual(['c', 'a', 'b']);
    expect(orderedIPConfigurations({ ipConfigurations: [{ name: 'x' }, { name: 'p', primary: true }, { name: 'y' }] }).map((c) => c.name)).toEqual(['p', 'x', 'y']);
  });
});
