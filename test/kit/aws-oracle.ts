// cloud-provider-aws's own code as a test oracle (test/controlplane/aws/cmd/awsoracle: its
// InstancesV2 and NodeAddressesByProviderID at k8s.io/cloud-provider-aws v1.35.3), asked over
// stdin/stdout one JSON line per question, for the live differential against the aws adapter.
// Skipped like the real-server tier when Go is missing (controlPlaneUnavailable()).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { NodeAddress } from '../../src/model/node-address.js';
import { buildControlPlane } from './controlplane.js';

export interface AWSOracleRequest {
  /** The cloud.conf text: must override EC2's endpoint and set VPC, SubnetID and KubernetesClusterID. */
  config: string;
  node: { name: string; providerID?: string; labels?: Record<string, string> };
}

export interface AWSOracleAnswer {
  metadata?: { providerID: string; instanceType: string; zone: string; region: string; addresses: NodeAddress[] };
  metadataError?: string;
  exists?: boolean;
  existsError?: string;
  shutdown?: boolean;
  shutdownError?: string;
  addressesByProviderID?: NodeAddress[];
  addressesByProviderIDError?: string;
  /** The request itself failed (a bad config). */
  error?: string;
}

export interface AWSOracle {
  ask(requests: readonly AWSOracleRequest[]): Promise<AWSOracleAnswer[]>;
  stop(): Promise<void>;
}

/** cloud.conf for the oracle: EC2 at `endpoint`, no instance metadata service needed. */
export function awsOracleConfig(endpoint: string, o: { region: string; clusterID: string; nodeIPFamilies?: readonly string[]; zone?: string }): string {
  return [
    '[Global]',
    o.zone ? `Zone = ${o.zone}` : `Region = ${o.region}`,
    // VPC with SubnetID and a cluster ID: the cloud does not look itself up in EC2 (aws.go newAWSCloud2).
    'VPC = vpc-0123456789abcdef0',
    'SubnetID = subnet-0123456789abcdef0',
    `KubernetesClusterID = ${o.clusterID}`,
    ...(o.nodeIPFamilies ?? []).map((f) => `NodeIPFamilies = ${f}`),
    '[ServiceOverride "ec2"]',
    'Service = EC2',
    `Region = ${o.region}`,
    `URL = ${endpoint}`,
    `SigningRegion = ${o.region}`,
    '',
  ].join('\n');
}

export function startAWSOracle(): AWSOracle {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // Static credentials (the emulator never checks them), no instance metadata service, and no
    // shared config or credentials files of whoever runs the tests.
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
  };
  for (const k of ['AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_EC2', 'AWS_ROLE_ARN', 'AWS_WEB_IDENTITY_TOKEN_FILE']) delete env[k];
  const child: ChildProcess = spawn(buildControlPlane('awsoracle'), [], { stdio: ['pipe', 'pipe', 'ignore'], env });
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    ask: (requests) => {
      const answers = requests.map(() => new Promise<AWSOracleAnswer>((resolve) => waiting.push((line) => resolve(JSON.parse(line) as AWSOracleAnswer))));
      child.stdin!.write(requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
      return Promise.all(answers);
    },
    stop: async () => {
      child.stdin!.end();
      await exited;
    },
  };
}
