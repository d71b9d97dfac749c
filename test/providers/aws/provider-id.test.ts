import { describe, it, expect } from 'vitest';
import { AWSProviderIDError, formatAWSProviderID, instanceIDFromNodeName, parseAWSProviderID } from '../../../providers/aws/provider-id.js';

describe('parseAWSProviderID', () => {
  const good: Array<[string, { instanceID: string; zone?: string }]> = [
    ['aws:///us-east-1a/i-0123456789abcdef0', { instanceID: 'i-0123456789abcdef0', zone: 'us-east-1a' }],
    ['aws:////i-0123456789abcdef0', { instanceID: 'i-0123456789abcdef0' }],
    ['aws:///i-12345678', { instanceID: 'i-12345678' }],
    ['i-12345678', { instanceID: 'i-12345678' }],
    ['us-east-1a/i-12345678', { instanceID: 'i-12345678', zone: 'us-east-1a' }],
    ['aws:///us-east-1a/i-12345678/', { instanceID: 'i-12345678', zone: 'us-east-1a' }],
    ['aws:///us-east-1a/i-12345678?x=1', { instanceID: 'i-12345678', zone: 'us-east-1a' }],
    // cloud-provider-aws only checks the "i-" prefix; EC2 itself judges the rest.
    ['aws:////i-not-hex', { instanceID: 'i-not-hex' }],
    ['aws:///zone/i-%61bc', { instanceID: 'i-abc', zone: 'zone' }],
    // More path segments: the last one is the instance, as upstream's MapToAWSInstanceID takes it
    // (issue 39, item 1). instances_v2_test.go and aws_test.go use this form for EC2 nodes.
    ['aws:///us-west-2c/1abc-2def/i-abc', { instanceID: 'i-abc', zone: 'us-west-2c' }],
    ['aws:///us-west-2c/1abc-2def/i-00000000000000000', { instanceID: 'i-00000000000000000', zone: 'us-west-2c' }],
    ['aws:///us-west-2c//i-0123456789abcdef0', { instanceID: 'i-0123456789abcdef0', zone: 'us-west-2c' }],
    ['aws:///us-west-2c/a/b/c/i-12345678', { instanceID: 'i-12345678', zone: 'us-west-2c' }],
    ['aws:///us-west-2c/x%2Fy/i-12345678', { instanceID: 'i-12345678', zone: 'us-west-2c' }],
    ['us-west-2c/1abc-2def/i-12345678', { instanceID: 'i-12345678', zone: 'us-west-2c' }],
  ];
  it.each(good)('accepts %s', (text, want) => {
    expect(parseAWSProviderID(text)).toEqual(want);
  });

  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['aws://123456789012/us-east-1a/i-12345678', /unexpected host "123456789012"/],
    ['aws://i-12345678', /unexpected host "i-12345678"/],
    ['aws:///us-east-1a/vol-12345678', /"vol-12345678" is not an instance ID/],
    ['aws:///us-east-1a/i-12345678/suffix', /"suffix" is not an instance ID/],
    ['aws:///', /"" is not an instance ID/],
    // Upstream reads these as bare paths whose last segment is i-1; refused here (README's deviations).
    ['gce://project/zone/i-1', /scheme "gce" is not aws/],
    ['kind://docker/kind/i-1', /scheme "kind" is not aws/],
    ['static://node-a', /scheme "static" is not aws/],
    ['aws:///zone/i-%zz', /percent-encoding/],
    ['i-12\n345678', /control characters/],
  ];
  it.each(bad)('rejects %j naming the value', (text, reason) => {
    let err: unknown;
    try {
      parseAWSProviderID(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AWSProviderIDError);
    expect((err as Error).message).toMatch(reason);
    expect((err as Error).message).toContain(JSON.stringify(text));
  });

  // cloud-provider-aws pkg/providers/v1/instances_test.go TestMapToAWSInstanceIDs, as data. Its two
  // Fargate rows (aws:///us-west-2c/1abc-2def/fargate-…) are refused here: this adapter serves EC2
  // instances only, and a Fargate pod's node is not one.
  const upstream: Array<[string, string | undefined]> = [
    ['aws:///us-east-1a/i-12345678', 'i-12345678'],
    ['aws:////i-12345678', 'i-12345678'],
    ['i-12345678', 'i-12345678'],
    ['aws:///us-east-1a/i-12345678abcdef01', 'i-12345678abcdef01'],
    ['aws:////i-12345678abcdef01', 'i-12345678abcdef01'],
    ['i-12345678abcdef01', 'i-12345678abcdef01'],
    ['vol-123456789', undefined],
    ['aws:///us-east-1a/vol-12345678abcdef01', undefined],
    ['aws://accountid/us-east-1a/vol-12345678abcdef01', undefined],
    ['aws:///us-east-1a/vol-12345678abcdef01/suffix', undefined],
    ['', undefined],
  ];
  it.each(upstream)('upstream table: %j -> %s', (text, want) => {
    if (want === undefined) expect(() => parseAWSProviderID(text)).toThrow(AWSProviderIDError);
    else expect(parseAWSProviderID(text).instanceID).toBe(want);
  });

  it('formats the providerID the adapter reports and reads it back', () => {
    expect(formatAWSProviderID('eu-west-1b', 'i-0123456789abcdef0')).toBe('aws:///eu-west-1b/i-0123456789abcdef0');
    expect(parseAWSProviderID(formatAWSProviderID('eu-west-1b', 'i-0123456789abcdef0'))).toEqual({ instanceID: 'i-0123456789abcdef0', zone: 'eu-west-1b' });
    expect(parseAWSProviderID(formatAWSProviderID(undefined, 'i-12345678'))).toEqual({ instanceID: 'i-12345678' });
  });
});

describe('instanceIDFromNodeName', () => {
  const table: Array<[string, string | undefined]> = [
    ['i-0123456789abcdef0', 'i-0123456789abcdef0'],
    ['i-0123456789abcdef0.eu-west-1.compute.internal', 'i-0123456789abcdef0'],
    ['i-12345678.ec2.internal', 'i-12345678'],
    ['ip-10-0-0-1.ec2.internal', undefined],
    ['i-node-a', undefined],
    ['i-0123456789ABCDEF0', undefined],
    ['i-123456789', undefined],
    ['node-a', undefined],
  ];
  it.each(table)('%s → %s', (name, want) => {
    expect(instanceIDFromNodeName(name)).toBe(want);
  });
});
