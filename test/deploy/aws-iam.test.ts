// The IAM policies in deploy/aws-iam grant exactly the EC2 actions the aws adapter sends in each
// mode, read from the adapter's own source (every SDK command it imports), so a new call cannot be
// added without its policy.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const policy = (name: string): { Version: string; Statement: { Effect: string; Action: string[]; Resource: string }[] } =>
  JSON.parse(readFileSync(path.join(ROOT, 'deploy/aws-iam', name), 'utf8')) as never;
const actions = (name: string): string[] => policy(name).Statement.flatMap((s) => (s.Effect === 'Allow' ? s.Action : [])).sort();

/** ec2:<Action> for every `<Action>Command` the adapter imports from the EC2 SDK. */
function adapterActions(): string[] {
  const src = readFileSync(path.join(ROOT, 'providers/aws/provider.ts'), 'utf8');
  const imported = /import \{([^}]*)\} from '@aws-sdk\/client-ec2'/.exec(src)?.[1] ?? '';
  return [...imported.matchAll(/\b([A-Z][A-Za-z0-9]+)Command\b/g)].map((m) => `ec2:${m[1]}`).sort();
}

describe('deploy/aws-iam policies', () => {
  it('the adapter sends DescribeInstances and AssignIpv6Addresses, nothing else', () => {
    expect(adapterActions()).toEqual(['ec2:AssignIpv6Addresses', 'ec2:DescribeInstances']);
  });

  it('describe-only grants DescribeInstances alone; assign-ipv6-prefix adds AssignIpv6Addresses on network interfaces', () => {
    expect(actions('describe-only.json')).toEqual(['ec2:DescribeInstances']);
    expect(actions('assign-ipv6-prefix.json')).toEqual(adapterActions());
    const assign = policy('assign-ipv6-prefix.json').Statement.find((s) => s.Action.includes('ec2:AssignIpv6Addresses'));
    expect(assign?.Resource).toBe('arn:aws:ec2:*:*:network-interface/*');
    for (const f of ['describe-only.json', 'assign-ipv6-prefix.json']) expect(policy(f).Version).toBe('2012-10-17');
  });
});
