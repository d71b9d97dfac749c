// With AssignIPv6PodPrefix, AssignIpv6Addresses is made at most once per node even when the `run`
// process dies between the call and the write: real `run` processes (the built binary) against
// the API server double and the EC2 emulator, which assigns the prefix and then never answers.
// The record written on the Node before the call is what the next process (a restart, or a
// follower taking over the Lease) reads; it reads the prefix back from DescribeInstances and
// never asks again.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseRangeRequest } from '../../../src/controllers/nodeipam/range-request.js';
import { CLOUD_RANGE_REQUEST_ANNOTATION, type NodeObject } from '../../../src/model/node.js';
import { EC2Emulator } from '../../emulators/ec2/server.js';
import { createNode, useDouble } from '../../kit/double.js';
import type { CliProcess } from '../../kit/processes.js';
import { eventually } from '../../kit/wait.js';
import { podCIDRsOf } from './harness.js';

const emu = new EC2Emulator();
const cluster = useDouble();
const ID = 'i-0123456789abcdef0';
const ENI = 'eni-0123456789abcdef0';

beforeAll(async () => {
  await emu.start();
});
afterAll(() => emu.stop());
beforeEach(() => {
  emu.reset();
  emu.add({ instanceId: ID, availabilityZone: 'us-east-1a', networkInterfaces: [{ networkInterfaceId: ENI, deviceIndex: 0, privateIps: ['10.0.0.5'], ipv6: ['2600:1f18:0:5::10'], subnetIpv6Cidr: '2600:1f18:0:5::/64' }] });
  // The call assigns the prefix, then its answer never comes.
  emu.loseNextAssignAnswer('hang');
});

function run(extra: string[] = []): CliProcess {
  const conf = path.join(cluster.dir, 'aws.conf');
  writeFileSync(conf, '[Global]\nRegion = us-east-1\nNodeIPFamilies = ipv6\nAssignIPv6PodPrefix = true\n');
  return cluster.start(
    ['run', `--kubeconfig=${cluster.kubeconfigPath}`, '--cloud-provider=aws', `--cloud-config=${conf}`, '--controllers=node-ipam', '--allocate-node-cidrs',
      '--cidr-allocator-type=CloudAllocator', '--secure-port=0', ...extra],
    { env: { AWS_ENDPOINT_URL_EC2: emu.endpoint, AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'fake', AWS_EC2_METADATA_DISABLED: 'true', AWS_MAX_ATTEMPTS: '3' } },
  );
}

const record = () => {
  const v = (cluster.api.store.get('nodes', 'n1') as unknown as NodeObject).metadata.annotations?.[CLOUD_RANGE_REQUEST_ANNOTATION];
  return v === undefined ? undefined : parseRangeRequest(v);
};

describe('one AssignIpv6Addresses per node across restarts and failovers (real run processes)', () => {
  it('SIGKILL between the call and the write, then a restart: the prefix is read back, never asked for again', async () => {
    createNode(cluster.api, { name: 'n1', tainted: false, providerID: `aws:///us-east-1a/${ID}` });
    const first = run(['--leader-elect=false']);
    await eventually(() => emu.assignCalls() === 1, { timeoutMs: 20_000, what: 'the call made', describe: () => first.tail() });
    // The record went to the Node before the call; the prefix is assigned; nothing is written yet.
    expect(record()).toMatchObject({ target: ENI, state: 'asking', attempt: 1 });
    expect(emu.instances.get(ID)!.networkInterfaces![0]!.ipv6Prefixes).toEqual(['2600:1f18:0:5:1::/80']);
    first.kill('SIGKILL');
    await first.exited;
    emu.releaseHeld();
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual([]);

    const second = run(['--leader-elect=false']);
    await eventually(() => podCIDRsOf(cluster.api, 'n1').length > 0, { timeoutMs: 20_000, what: 'n1 written after the restart', describe: () => second.tail() });
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual(['2600:1f18:0:5:1::/80']);
    expect(emu.assignCalls()).toBe(1);
    expect(emu.instances.get(ID)!.networkInterfaces![0]!.ipv6Prefixes).toHaveLength(1);
  }, 60_000);

  it('the leader is killed between the call and the write: the follower takes over, reads the prefix back, never asks', async () => {
    createNode(cluster.api, { name: 'n1', tainted: false, providerID: `aws:///us-east-1a/${ID}` });
    const lease = ['--leader-elect-lease-duration=3s', '--leader-elect-renew-deadline=2s', '--leader-elect-retry-period=250ms'];
    const a = run(lease);
    await a.waitFor((l) => l.msg === 'acquired the lease', 20_000, 'a leads');
    const b = run(lease);
    await b.waitFor((l) => l.msg === 'new leader observed', 20_000, 'b follows');
    await eventually(() => emu.assignCalls() === 1, { timeoutMs: 20_000, what: 'the call made', describe: () => a.tail() });
    expect(record()).toMatchObject({ state: 'asking' });
    a.kill('SIGKILL');
    await a.exited;
    emu.releaseHeld();
    await b.waitFor((l) => l.msg === 'acquired the lease', 20_000, 'b takes over');
    await eventually(() => podCIDRsOf(cluster.api, 'n1').length > 0, { timeoutMs: 20_000, what: 'n1 written by the new leader', describe: () => b.tail() });
    expect(podCIDRsOf(cluster.api, 'n1')).toEqual(['2600:1f18:0:5:1::/80']);
    expect(emu.assignCalls()).toBe(1);
    expect(b.lines.some((l) => l.msg === 'asked the cloud for pod ranges')).toBe(false);
  }, 60_000);
});
