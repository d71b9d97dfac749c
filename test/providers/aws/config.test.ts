import { describe, it, expect } from 'vitest';
import { AWSCloudConfigError, parseAWSCloudConfig } from '../../../providers/aws/config.js';

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
# comment
[ServiceOverride "1"]
Service = ec2
`);
    expect(cfg).toEqual({
      region: 'eu-west-1',
      clusterID: 'prod-1',
      nodeIPFamilies: ['ipv6', 'ipv4'],
      ignored: ['[Global] DisableSecurityGroupIngress', '[ServiceOverride "1"] Service'],
    });
  });

  const table: Array<[string, string, Partial<ReturnType<typeof parseAWSCloudConfig>>]> = [
    ['empty file', '', { nodeIPFamilies: ['ipv4'], ignored: [] }],
    ['legacy cluster tag', '[Global]\nKubernetesClusterTag = old', { clusterID: 'old', nodeIPFamilies: ['ipv4'] }],
    ['tag and id agree', '[Global]\nKubernetesClusterTag = c\nKubernetesClusterID = c', { clusterID: 'c' }],
    ['empty value resets a list', '[Global]\nNodeIPFamilies = ipv4\nNodeIPFamilies =\nNodeIPFamilies = ipv6', { nodeIPFamilies: ['ipv6'] }],
    ['quoted value with escapes', '[global]\nKubernetesClusterID = "a\\"b"', { clusterID: 'a"b' }],
    ['comment characters inside quotes', '[Global]\nKubernetesClusterID = "a;b#c" ; real comment', { clusterID: 'a;b#c' }],
    ['CRLF line endings', '[Global]\r\nRegion = us-east-2\r\n', { region: 'us-east-2' }],
    ['prefix assignment on (gcfg boolean words)', '[Global]\nNodeIPFamilies = ipv6\nassignipv6podprefix = Yes', { assignIPv6PodPrefix: true }],
    ['prefix assignment as a bare name', '[Global]\nNodeIPFamilies = ipv4\nNodeIPFamilies = ipv6\nAssignIPv6PodPrefix', { assignIPv6PodPrefix: true }],
  ];
  it.each(table)('%s', (_name, text, want) => {
    expect(parseAWSCloudConfig(text)).toMatchObject(want);
  });

  it('leaves prefix assignment off unless the key says true', () => {
    expect(parseAWSCloudConfig('[Global]\nNodeIPFamilies = ipv6').assignIPv6PodPrefix).toBeUndefined();
    expect(parseAWSCloudConfig('[Global]\nNodeIPFamilies = ipv6\nAssignIPv6PodPrefix = off').assignIPv6PodPrefix).toBeUndefined();
  });

  const bad: Array<[string, string, RegExp]> = [
    ['unknown family', '[Global]\nNodeIPFamilies = ipv5', /\[Global\] NodeIPFamilies \(line 2\): unknown family "ipv5"/],
    ['comma list', '[Global]\nNodeIPFamilies = ipv4,ipv6', /unknown family "ipv4,ipv6".*repeat the key/],
    ['duplicate family', '[Global]\nNodeIPFamilies = ipv4\nNodeIPFamilies = ipv4', /"ipv4" listed twice/],
    ['families emptied', '[Global]\nNodeIPFamilies = ipv4\nNodeIPFamilies =', /leaves no family/],
    ['tag and id disagree', '[Global]\nKubernetesClusterTag = a\nKubernetesClusterID = b', /KubernetesClusterTag "a" and KubernetesClusterID "b" disagree/],
    ['region twice', '[Global]\nRegion = a\nRegion = b', /\[Global\] Region \(line 3\): set more than once/],
    ['bad region', '[Global]\nRegion = "Not A Region"', /\[Global\] Region: invalid value "Not A Region"/],
    ['key before section', 'Region = a', /line 1: "Region" appears before any \[section\]/],
    ['bad header', '[Global', /line 1: invalid section header/],
    ['unterminated quote', '[Global]\nRegion = "abc', /line 2: unterminated quoted value/],
    ['invalid escape', '[Global]\nKubernetesClusterID = "a\\qb"', /line 2: invalid escape "\\q"/],
    ['garbage line', '[Global]\n= x', /line 2: expected "Name = value"/],
    ['prefix assignment not a boolean', '[Global]\nNodeIPFamilies = ipv6\nAssignIPv6PodPrefix = maybe', /\[Global\] AssignIPv6PodPrefix \(line 3\): "maybe" is not a boolean \(true or false\)/],
    ['prefix assignment without ipv6', '[Global]\nAssignIPv6PodPrefix = true', /\[Global\] AssignIPv6PodPrefix \(line 2\): true needs NodeIPFamilies to include ipv6 .*now ipv4\)/],
    ['prefix assignment twice', '[Global]\nNodeIPFamilies = ipv6\nAssignIPv6PodPrefix = true\nAssignIPv6PodPrefix = false', /AssignIPv6PodPrefix \(line 4\): set more than once/],
  ];
  it.each(bad)('rejects %s', (_name, text, message) => {
    expect(() => parseAWSCloudConfig(text)).toThrow(AWSCloudConfigError);
    expect(() => parseAWSCloudConfig(text)).toThrow(message);
  });
});
