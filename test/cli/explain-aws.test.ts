// `explain --aws-instance`: an EC2 instance document as the AWS CLI prints it gives the node's
// cloud addresses and the pod CIDRs CloudAllocator would take from its delegated prefixes (through
// the built binary, as an operator runs it).
import { describe, expect, it } from 'vitest';
import { runCli } from '../kit/cli.js';

const ENI = 'eni-0a1b2c3d4e5f60718';
const doc = (prefixes: { v4?: string[]; v6?: string[] }) => JSON.stringify({
  Reservations: [{
    Instances: [{
      InstanceId: 'i-0123456789abcdef0',
      PrivateDnsName: 'ip-10-0-1-5.ec2.internal',
      NetworkInterfaces: [
        { NetworkInterfaceId: 'eni-1', Status: 'in-use', Attachment: { DeviceIndex: 1 }, Ipv4Prefixes: [{ Ipv4Prefix: '10.0.7.0/28' }] },
        {
          NetworkInterfaceId: ENI, Status: 'in-use', Attachment: { DeviceIndex: 0, NetworkCardIndex: 0 },
          PrivateIpAddresses: [{ PrivateIpAddress: '10.0.1.5', Primary: true }], Ipv6Addresses: [{ Ipv6Address: '2a05:d018:1:2::5' }],
          Ipv4Prefixes: (prefixes.v4 ?? []).map((Ipv4Prefix) => ({ Ipv4Prefix })), Ipv6Prefixes: (prefixes.v6 ?? []).map((Ipv6Prefix) => ({ Ipv6Prefix })),
        },
      ],
    }],
  }],
});

describe('node-address-ccm explain --aws-instance', () => {
  it('prints the addresses and the pod CIDRs from the primary interface, in the NodeIPFamilies order', async () => {
    const r = await runCli(['explain', '--aws-instance', '-', '--node-ip-families', 'ipv6,ipv4'], { stdin: doc({ v4: ['10.0.8.16/28', '10.0.8.0/28', '10.0.9.32/28'], v6: ['2a05:d018:1:2:9::/80'] }) });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines).toContain('Stack:       dual-stack IPv6-primary (2a05:d018:1:2::5, 10.0.1.5)');
    expect(lines).toContain(`Pod CIDRs (CloudAllocator, --cloud-provider aws), from the prefixes delegated to ${ENI} (device index 0):`);
    expect(lines).toContain('  IPv6    2a05:d018:1:2:9::/80  2a05:d018:1:2:9::/80');
    expect(lines).toContain('  IPv4    10.0.8.0/27           10.0.8.16/28, 10.0.8.0/28 (not used: 10.0.9.32/28)');
    expect(lines).toContain('Pod result:  spec.podCIDRs 2a05:d018:1:2:9::/80, 10.0.8.0/27');
  });

  it('a missing family: no pod CIDRs, the interface and family named, and what AssignIPv6PodPrefix would ask for (json)', async () => {
    const r = await runCli(['explain', '--aws-instance', '-', '--node-ip-families', 'ipv4,ipv6', '-o', 'json'], { stdin: doc({ v4: ['10.0.8.16/28'] }) });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { podCIDRs: unknown; stack: string };
    expect(out.stack).toBe('dual-stack IPv4-primary');
    expect(out.podCIDRs).toEqual({
      podCIDRs: [],
      interfaceId: ENI,
      families: [
        { family: 'IPv4', podCIDR: '10.0.8.16/28', from: ['10.0.8.16/28'], unused: [], note: null, missing: null },
        { family: 'IPv6', podCIDR: null, from: [], unused: [], note: null, missing: `interface ${ENI} (device index 0) of instance i-0123456789abcdef0 has no IPv6 prefix (Ipv6Prefixes is empty)` },
      ],
      assign: `AssignIpv6Addresses with Ipv6PrefixCount 1 on ${ENI}, once (the pod CIDRs are written when DescribeInstances shows the prefix)`,
    });
  });

  const bad: [string, string[], string, RegExp][] = [
    ['an unknown family', ['--node-ip-families', 'ipv4,ipv5'], doc({}), /^error: --node-ip-families "ipv4,ipv5": unknown family "ipv5" \(known: ipv4, ipv6\)\n$/],
    ['two instances', [], JSON.stringify({ Reservations: [{ Instances: [{}, {}] }] }), /^error: --aws-instance "-": Reservations: expected exactly one instance, found 2/],
    ['interfaces that are not a list', [], JSON.stringify({ NetworkInterfaces: {} }), /^error: --aws-instance "-": NetworkInterfaces: expected a list, got \{\}\n$/],
    ['a prefix that is not a CIDR', [], JSON.stringify({ NetworkInterfaces: [{ Attachment: { DeviceIndex: 0 }, Ipv4Prefixes: [{ Ipv4Prefix: '10.0.0.0/40' }] }] }), /NetworkInterfaces\[0\]\.Ipv4Prefixes\[0\]\.Ipv4Prefix: invalid CIDR "10\.0\.0\.0\/40"/],
    ['--address with it', ['--address', 'InternalIP=10.0.0.1'], doc({}), /^error: --aws-instance gives the cloud addresses: it cannot be used with --address or --cloud-addresses\n$/],
  ];
  it.each(bad)('refuses %s (exit 2), naming the field and the value', async (_name, args, stdin, message) => {
    const r = await runCli(['explain', '--aws-instance', '-', ...args], { stdin });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });

  it('--node-ip-families alone is a usage error', async () => {
    const r = await runCli(['explain', '--node-ip-families', 'ipv6', '--address', 'InternalIP=10.0.0.1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: --node-ip-families needs --aws-instance\n');
  });
});
