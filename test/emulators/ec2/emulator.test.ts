import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
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
    networkInterfaces: [{ deviceIndex: 0, privateIps: ['10.0.0.1', '10.0.0.2'], publicIp: '1.2.3.4', ipv6: ['2600:1f18::1'] }, { privateIps: ['10.0.1.1'], status: 'available' }],
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
      Status: 'in-use',
      Attachment: { DeviceIndex: 0 },
      Association: { PublicIp: '1.2.3.4' },
      PrivateIpAddresses: [{ PrivateIpAddress: '10.0.0.1' }, { PrivateIpAddress: '10.0.0.2' }],
      Ipv6Addresses: [{ Ipv6Address: '2600:1f18::1' }],
    });
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
