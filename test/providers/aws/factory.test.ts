import { describe, it, expect, afterAll, beforeAll } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createProvider } from '../../../providers/index.js';
import { AwsProvider } from '../../../providers/aws/provider.js';
import { EC2Emulator } from '../../emulators/ec2/server.js';

const emu = new EC2Emulator();
let dir = '';
const envKeys = ['AWS_ENDPOINT_URL_EC2', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION', 'AWS_MAX_ATTEMPTS', 'AWS_RETRY_MODE', 'AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_PROFILE', 'AWS_DEFAULT_REGION'];
const savedEnv = new Map(envKeys.map((k) => [k, process.env[k]]));

beforeAll(async () => {
  const endpoint = await emu.start();
  dir = await mkdtemp(path.join(tmpdir(), 'aws-conf-'));
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_EC2: endpoint,
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'fake-secret',
    AWS_MAX_ATTEMPTS: '1',
    AWS_RETRY_MODE: 'standard',
    // Keep a developer's own ~/.aws files out of the test.
    AWS_CONFIG_FILE: path.join(dir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'no-aws-credentials'),
  });
  for (const k of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE']) delete process.env[k];
});
afterAll(async () => {
  for (const [k, v] of savedEnv) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await emu.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('--cloud-provider aws', () => {
  it('reads cloud.conf and answers through the SDK default chain', async () => {
    const conf = path.join(dir, 'cloud.conf');
    await writeFile(conf, '[Global]\nRegion = us-east-1\nKubernetesClusterID = c1\nNodeIPFamilies = ipv6\nNodeIPFamilies = ipv4\nZone = ap-south-1a ; wins over Region, as in cloud-provider-aws\n');
    emu.add({
      instanceId: 'i-0123456789abcdef0',
      availabilityZone: 'ap-south-1a',
      privateDnsName: 'ip-10-0-0-1.ap-south-1.compute.internal',
      tags: { 'kubernetes.io/cluster/c1': 'owned' },
      networkInterfaces: [{ deviceIndex: 0, privateIps: ['10.0.0.1'], ipv6: ['2406:da1a::1'] }],
    });
    const p = await createProvider('aws', { cloudConfig: conf });
    try {
      expect(p).toBeInstanceOf(AwsProvider);
      const res = await p.instancesMetadata([{ name: 'ip-10-0-0-1.ap-south-1.compute.internal' }]);
      expect(res.get('ip-10-0-0-1.ap-south-1.compute.internal')).toMatchObject({
        kind: 'found',
        value: {
          providerID: 'aws:///ap-south-1a/i-0123456789abcdef0',
          region: 'ap-south-1',
          addresses: [
            { type: 'InternalIP', address: '2406:da1a::1' },
            { type: 'InternalIP', address: '10.0.0.1' },
            { type: 'InternalDNS', address: 'ip-10-0-0-1.ap-south-1.compute.internal' },
            { type: 'Hostname', address: 'ip-10-0-0-1.ap-south-1.compute.internal' },
          ],
        },
      });
    } finally {
      await p.close?.();
    }
  });

  it('fails clearly on a bad cloud.conf or a missing region', async () => {
    const conf = path.join(dir, 'bad.conf');
    await writeFile(conf, '[Global]\nNodeIPFamilies = ipv7\n');
    await expect(createProvider('aws', { cloudConfig: conf })).rejects.toThrow(`--cloud-config ${conf}: [Global] NodeIPFamilies (line 2): unknown family "ipv7"`);
    const missing = path.join(dir, 'missing.conf');
    await expect(createProvider('aws', { cloudConfig: missing })).rejects.toThrow(`--cloud-config ${missing}: cannot read: no such file`);
    const noRegion = path.join(dir, 'no-region.conf');
    await writeFile(noRegion, '[Global]\nKubernetesClusterID = c1\n');
    await expect(createProvider('aws', { cloudConfig: noRegion })).rejects.toThrow(/no region/);
  });

  it('takes a blank cloud.conf as every default, as cloud-provider-aws does', async () => {
    const blank = path.join(dir, 'blank.conf');
    await writeFile(blank, '\n');
    process.env.AWS_REGION = 'eu-west-1';
    try {
      const p = await createProvider('aws', { cloudConfig: blank });
      expect(p).toMatchObject({ region: 'eu-west-1', nodeIPFamilies: ['ipv4'], clusterID: undefined });
      await p.close?.();
    } finally {
      delete process.env.AWS_REGION;
    }
  });
});
