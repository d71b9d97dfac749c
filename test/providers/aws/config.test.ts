import { describe, it, expect } from 'vitest';
import { AWSCloudConfigError, awsRegionOfZone, parseAWSCloudConfig } from '../../../providers/aws/config.js';

describe('parseAWSCloudConfig', () => {
  it('reads the fields we use and reports the others', () => {
    const cfg = parseAWSCloudConfig(`
; cloud.conf as cloud-provider-aws reads it
[Global]
Region = eu-west-1
kubernetesclusterid = "prod-1"   ; names are case-insensitive
NodeIPFamilies = ipv6
NodeIPFamilies = ipv4
DisableSecurityGroupIngress = true
RoleARN = arn:aws:iam::123456789012:role/ccm
# comment
[ServiceOverride "1"]
Service = ec2
[Extra]
Anything = at all
`);
    expect(cfg).toEqual({
      region: 'eu-west-1',
      clusterID: 'prod-1',
      nodeIPFamilies: ['ipv6', 'ipv4'],
      ignored: ['[Global] DisableSecurityGroupIngress', '[Global] RoleARN', '[ServiceOverride "1"] Service', '[Extra]'],
    });
  });

  const table: Array<[string, string, Partial<ReturnType<typeof parseAWSCloudConfig>>]> = [
    ['empty file', '', { nodeIPFamilies: ['ipv4'], ignored: [] }],
    ['legacy cluster tag', '[Global]\nKubernetesClusterTag = old', { clusterID: 'old', nodeIPFamilies: ['ipv4'] }],
    ['tag and id agree', '[Global]\nKubernetesClusterTag = c\nKubernetesClusterID = c', { clusterID: 'c' }],
    // gcfg: a name alone on a line clears a multi-valued key (issue 39, item 3).
    ['a bare key clears the list', '[Global]\nNodeIPFamilies = ipv6\nNodeIPFamilies\nNodeIPFamilies = ipv4', { nodeIPFamilies: ['ipv4'] }],
    ['a bare key last leaves the default', '[Global]\nNodeIPFamilies = ipv6\nNodeIPFamilies', { nodeIPFamilies: ['ipv4'] }],
    ['a repeated single-valued key keeps the last value', '[Global]\nRegion = us-east-1\nregion = eu-west-1', { region: 'eu-west-1' }],
    ['a comment without a space', '[Global]\nRegion = us-east-2;primary\nKubernetesClusterID = c#1', { region: 'us-east-2', clusterID: 'c' }],
    ['quoted value with escapes', '[global]\nKubernetesClusterID = "a\\"b"', { clusterID: 'a"b' }],
    ['comment characters inside quotes', '[Global]\nKubernetesClusterID = "a;b#c" ; real comment', { clusterID: 'a;b#c' }],
    ['CRLF line endings', '[Global]\r\nRegion = us-east-2\r\n', { region: 'us-east-2' }],
    // Zone (issue 39, item 2): the region is derived from it, and it wins over Region.
    ['Zone gives the region', '[Global]\nZone = eu-west-1a', { region: 'eu-west-1' }],
    ['Zone wins over Region', '[Global]\nRegion = us-east-1\nZone = ap-south-1b', { region: 'ap-south-1' }],
    ['an empty Zone leaves Region', '[Global]\nRegion = us-east-1\nZone =', { region: 'us-east-1' }],
    ['prefix assignment on (gcfg boolean words)', '[Global]\nNodeIPFamilies = ipv6\nassignipv6podprefix = Yes', { assignIPv6PodPrefix: true }],
    ['prefix assignment as a bare name', '[Global]\nNodeIPFamilies = ipv4\nNodeIPFamilies = ipv6\nAssignIPv6PodPrefix', { assignIPv6PodPrefix: true }],
    ['a subsection of [Global] is ignored whole, as gcfg does', '[Global "x"]\nRegion = "Not A Region"\n[Global]\nRegion = us-west-2', { region: 'us-west-2', ignored: ['[Global "x"]'] }],
  ];
  it.each(table)('%s', (_name, text, want) => {
    expect(parseAWSCloudConfig(text)).toMatchObject(want);
  });

  it('leaves prefix assignment off unless the key says true (written last)', () => {
    expect(parseAWSCloudConfig('[Global]\nNodeIPFamilies = ipv6').assignIPv6PodPrefix).toBeUndefined();
    expect(parseAWSCloudConfig('[Global]\nNodeIPFamilies = ipv6\nAssignIPv6PodPrefix = off').assignIPv6PodPrefix).toBeUndefined();
    expect(parseAWSCloudConfig('[Global]\nNodeIPFamilies = ipv6\nAssignIPv6PodPrefix = true\nAssignIPv6PodPrefix = false').assignIPv6PodPrefix).toBeUndefined();
  });

  it('an empty Region is no region, as upstream reads it (the SDK chain is asked)', () => {
    expect(parseAWSCloudConfig('[Global]\nRegion =\nZone = ""')).toEqual({ nodeIPFamilies: ['ipv4'], ignored: [] });
  });

  const bad: Array<[string, string, RegExp | string]> = [
    ['unknown family', '[Global]\nNodeIPFamilies = ipv5', /\[Global\] NodeIPFamilies \(line 2\): unknown family "ipv5"/],
    ['comma list', '[Global]\nNodeIPFamilies = ipv4,ipv6', /unknown family "ipv4,ipv6".*repeat the key/],
    ['duplicate family', '[Global]\nNodeIPFamilies = ipv4\nNodeIPFamilies = ipv4', /NodeIPFamilies \(line 3\): "ipv4" listed twice/],
    ['"Name =" adds an empty family', '[Global]\nNodeIPFamilies = ipv4\nNodeIPFamilies =', '[Global] NodeIPFamilies (line 3): an empty family ("NodeIPFamilies =" adds an empty value; the name alone on a line clears the list)'],
    ['tag and id disagree', '[Global]\nKubernetesClusterTag = a\nKubernetesClusterID = b', /KubernetesClusterTag "a" and KubernetesClusterID "b" disagree/],
    ['bad region', '[Global]\nRegion = "Not A Region"', '[Global] Region (line 2): invalid value "Not A Region"'],
    ['a zone that names no region', '[Global]\nRegion = us-east-1\nZone = central', '[Global] Zone (line 3): "central" names no region (a zone is its region and a letter, e.g. eu-west-1a)'],
    ['a zone whose region is not a region name', '[Global]\nZone = US-EAST-1A', /Zone \(line 2\): "US-EAST-1A" gives region "US-EAST-1", which is not a region name/],
    ['a bare Region', '[Global]\nRegion', '[Global] Region (line 2): needs a value ("Region = …")'],
    ['a key upstream types as bool, not a boolean', '[Global]\nDisableSecurityGroupIngress = maybe', '[Global] DisableSecurityGroupIngress (line 2): "maybe" is not a boolean'],
    ['a key upstream types as int32, not a number', '[Global]\nClusterServiceSharedLoadBalancerHealthProbePort = 10256a', /ClusterServiceSharedLoadBalancerHealthProbePort \(line 2\): "10256a" is not an integer/],
    ['key before section', 'Region = a', 'line 1: "Region" appears before any [section] header'],
    ['bad header', '[Global', 'line 1: expected "]" or a quoted subsection name after "[Global"'],
    ['unterminated quote', '[Global]\nRegion = "abc', 'line 2: the quoted value is not terminated'],
    ['invalid escape', '[Global]\nKubernetesClusterID = "a\\qb"', 'line 2: unknown escape sequence "\\q" in a quoted value'],
    ['garbage line', '[Global]\n= x', 'line 2: expected a [section] header or a "name = value" line'],
    ['prefix assignment not a boolean', '[Global]\nNodeIPFamilies = ipv6\nAssignIPv6PodPrefix = maybe', /\[Global\] AssignIPv6PodPrefix \(line 3\): "maybe" is not a boolean/],
    ['prefix assignment without ipv6', '[Global]\nAssignIPv6PodPrefix = true', /\[Global\] AssignIPv6PodPrefix \(line 2\): true needs NodeIPFamilies to include ipv6 .*now ipv4\)/],
  ];
  it.each(bad)('rejects %s', (_name, text, message) => {
    expect(() => parseAWSCloudConfig(text)).toThrow(AWSCloudConfigError);
    expect(() => parseAWSCloudConfig(text)).toThrow(message);
  });
});

describe('awsRegionOfZone', () => {
  // cloud-provider-aws pkg/providers/v1/aws_test.go TestAzToRegion.
  const upstream: Array<[string, string]> = [
    ['us-west-2a', 'us-west-2'],
    ['us-west-2-lax-1a', 'us-west-2'],
    ['ap-northeast-2a', 'ap-northeast-2'],
    ['us-gov-east-1a', 'us-gov-east-1'],
    ['us-iso-east-1a', 'us-iso-east-1'],
    ['us-isob-east-1a', 'us-isob-east-1'],
  ];
  // EC2's own names for a Wavelength Zone and a Local Zone group member.
  const more: Array<[string, string]> = [
    ['us-east-1-wl1-bos-wlz-1', 'us-east-1'],
    ['eu-central-1-ham-1a', 'eu-central-1'],
  ];
  it.each([...upstream, ...more])('%s is in %s', (zone, region) => {
    expect(awsRegionOfZone(zone)).toBe(region);
  });
  it.each(['', 'central', 'us-', '1a', '-us-east-1a'])('%j names no region', (zone) => {
    expect(awsRegionOfZone(zone)).toBeUndefined();
  });
});
