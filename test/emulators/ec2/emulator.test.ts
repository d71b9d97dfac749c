import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { AssignIpv6AddressesCommand, DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { EC2Emulator } from './server.js';

const emu = new EC2Emulator();
let client: EC2Client;

beforeAll(async () => {
  const endpoint = await emu.start();
  client = new EC2Client({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake' }, maxAttempts: 1 });
  emu.add({
    instanceId: 'i-0123456789abcdef0',
    state: 'running',
    instanceType: 'm5.large',
    availabilityZone: 'us-east-1b',
    privateDnsName: 'ip-10-0-0-1.ec2.internal',
    publicDnsName: 'ec2-1-2-3-4.compute-1.amazonaws.com',
    publicIp: '1.2.3.4',
    privateIp: '10.0.0.1',
    tags: { 'kubernetes.io/cluster/c1': 'owned', Name: 'a & b' },
    networkInterfaces: [
      { networkInterfaceId: 'eni-0aaa', deviceIndex: 0, networkCardIndex: 0, privateIps: ['10.0.0.1', '10.0.0.2'], publicIp: '1.2.3.4', ipv6: ['2600:1f18::1'], ipv4Prefixes: ['10.0.5.16/28', '10.0.5.32/28'], subnetIpv6Cidr: '2600:1f18:0:7::/64', ipv6PrefixLimit: 2 },
      { privateIps: ['10.0.1.1'], status: 'available' },
    ],
  });
});
afterAll(async () => {
  client.destroy();
  await emu.stop();
});

describe('EC2 emulator wire format', () => {
  it('is parsed by the real SDK into the Instance shape', async () => {
    const out = await client.send(new DescribeInstancesCommand({ InstanceIds: ['i-0123456789abcdef0'] }));
    const inst = out.Reservations?.[0]?.Instances?.[0];
    expect(out.Reservations).toHaveLength(1);
    expect(inst).toMatchObject({
      InstanceId: 'i-0123456789abcdef0',
      State: { Name: 'running', Code: 16 },
      InstanceType: 'm5.large',
      Placement: { AvailabilityZone: 'us-east-1b' },
      PrivateDnsName: 'ip-10-0-0-1.ec2.internal',
      PublicDnsName: 'ec2-1-2-3-4.compute-1.amazonaws.com',
      PublicIpAddress: '1.2.3.4',
      PrivateIpAddress: '10.0.0.1',
    });
    expect(inst?.Tags).toEqual([
      { Key: 'kubernetes.io/cluster/c1', Value: 'owned' },
      { Key: 'Name', Value: 'a & b' },
    ]);
    expect(inst?.NetworkInterfaces?.[0]).toMatchObject({
      NetworkInterfaceId: 'eni-0aaa',
      Status: 'in-use',
      Attachment: { DeviceIndex: 0, NetworkCardIndex: 0 },
      Ipv4Prefixes: [{ Ipv4Prefix: '10.0.5.16/28' }, { Ipv4Prefix: '10.0.5.32/28' }],
      Association: { PublicIp: '1.2.3.4' },
      PrivateIpAddresses: [{ PrivateIpAddress: '10.0.0.1' }, { PrivateIpAddress: '10.0.0.2' }],
      Ipv6Addresses: [{ Ipv6Address: '2600:1f18::1' }],
    });
    expect(inst?.NetworkInterfaces?.[0]?.Ipv6Prefixes).toEqual([]);
    expect(inst?.NetworkInterfaces?.[1]?.Attachment).toBeUndefined();
    expect(inst?.NetworkInterfaces?.[1]?.Status).toBe('available');
    expect(emu.requests.at(-1)).toMatchObject({ action: 'DescribeInstances', instanceIds: ['i-0123456789abcdef0'], status: 200 });
  });

  it('decodes error bodies into SDK errors with code, message and status', async () => {
    const err = await client.send(new DescribeInstancesCommand({ InstanceIds: ['i-00000000', 'i-11111111'] })).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'InvalidInstanceID.NotFound', message: "The instance IDs 'i-00000000, i-11111111' do not exist", $metadata: { httpStatusCode: 400 } });
    const bad = await client.send(new DescribeInstancesCommand({ InstanceIds: ['i-nothex'] })).catch((e: unknown) => e);
    expect(bad).toMatchObject({ name: 'InvalidInstanceID.Malformed', message: 'Invalid id: "i-nothex"' });
    emu.throttleNext(1);
    const throttled = await client.send(new DescribeInstancesCommand({})).catch((e: unknown) => e);
    expect(throttled).toMatchObject({ name: 'RequestLimitExceeded', $metadata: { httpStatusCode: 503 } });
  });

  it('filters and paginates with MaxResults and NextToken', async () => {
    for (let n = 0; n < 12; n++) emu.add({ instanceId: `i-${n.toString(16).padStart(8, '0')}a`.slice(0, 10), privateDnsName: `node-${n}` });
    const filters = [{ Name: 'private-dns-name', Values: ['node-1', 'node-3', 'node-5', 'node-7', 'node-9', 'node-11'] }];
    const first = await client.send(new DescribeInstancesCommand({ Filters: filters, MaxResults: 5 }));
    expect(first.Reservations).toHaveLength(5);
    expect(first.NextToken).toBeTruthy();
    const second = await client.send(new DescribeInstancesCommand({ Filters: filters, MaxResults: 5, NextToken: first.NextToken }));
    expect(second.Reservations).toHaveLength(1);
    expect(second.NextToken).toBeUndefined();
    expect(emu.requests.at(-1)?.filters).toEqual([{ name: 'private-dns-name', values: filters[0]!.Values }]);
  });
});

describe('EC2 emulator: AssignIpv6Addresses with Ipv6PrefixCount', () => {
  const prefixesOf = async (): Promise<string[]> => {
    const out = await client.send(new DescribeInstancesCommand({ InstanceIds: ['i-0123456789abcdef0'] }));
    return (out.Reservations?.[0]?.Instances?.[0]?.NetworkInterfaces?.[0]?.Ipv6Prefixes ?? []).map((p) => p.Ipv6Prefix!);
  };

  it('delegates a /80 from the subnet, answers it, and shows it in DescribeInstances; the interface limit and bad IDs are refused', async () => {
    const out = await client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: 'eni-0aaa', Ipv6PrefixCount: 1 }));
    expect(out).toMatchObject({ NetworkInterfaceId: 'eni-0aaa', AssignedIpv6Prefixes: ['2600:1f18:0:7:1::/80'] });
    expect(await prefixesOf()).toEqual(['2600:1f18:0:7:1::/80']);
    expect(emu.requests.at(-2)).toMatchObject({ action: 'AssignIpv6Addresses', networkInterfaceId: 'eni-0aaa', ipv6PrefixCount: 1, status: 200 });
    const limit = await client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: 'eni-0aaa', Ipv6PrefixCount: 2 })).catch((e: unknown) => e);
    expect(limit).toMatchObject({ name: 'PrivateIpAddressLimitExceeded', $metadata: { httpStatusCode: 400 } });
    const missing = await client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: 'eni-0404', Ipv6PrefixCount: 1 })).catch((e: unknown) => e);
    expect(missing).toMatchObject({ name: 'InvalidNetworkInterfaceID.NotFound', message: "The networkInterface ID 'eni-0404' does not exist" });
    expect(await prefixesOf()).toEqual(['2600:1f18:0:7:1::/80']);
  });

  it('throttles without assigning; loses the answer after assigning; shows a new prefix only after the read-back lag', async () => {
    emu.throttleNextAssign(1);
    const throttled = await client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: 'eni-0aaa', Ipv6PrefixCount: 1 })).catch((e: unknown) => e);
    expect(throttled).toMatchObject({ name: 'RequestLimitExceeded', $metadata: { httpStatusCode: 503 } });
    expect(await prefixesOf()).toEqual(['2600:1f18:0:7:1::/80']);

    emu.assignLag = 1;
    emu.loseNextAssignAnswer('reset');
    const lost = await client.send(new AssignIpv6AddressesCommand({ NetworkInterfaceId: 'eni-0aaa', Ipv6PrefixCount: 1 })).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(Error);
    expect((lost as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBeUndefined();
    expect(emu.requests.at(-1)).toMatchObject({ action: 'AssignIpv6Addresses', status: 0 });
    // Assigned all the same, but missing from the next answer.
    expect(await prefixesOf()).toEqual(['2600:1f18:0:7:1::/80']);
    expect(await prefixesOf()).toEqual(['2600:1f18:0:7:1::/80', '2600:1f18:0:7:2::/80']);
    expect(emu.assignCalls('eni-0aaa')).toBe(4);
    expect(emu.assignCalls()).toBe(5);
  });
});
