import { describe, it, expect } from 'vitest';
import { parseApiEndpoint, parseGceConfig, parseIni } from '../../../providers/gce/config.js';
import { formatGceProviderID, gceInstanceNameForNode, gceRegionOfZone, parseGceProviderID } from '../../../providers/gce/provider-id.js';

describe('parseGceConfig', () => {
  it('reads the used keys of a reference gce.conf and ignores the rest', () => {
    const text = [
      '# written by kube-up',
      '[Global]',
      'project-id = my-proj',
      'network-project-id = net-proj',
      'node-tags = k8s-node',
      'multizone = true',
      'zones = us-central1-a, us-central1-b',
      'zones = us-central1-a',
      'api-endpoint = "http://127.0.0.1:8089/compute/v1/"  ; emulator',
      'stack-type = IPV4_IPV6',
    ].join('\n');
    expect(parseGceConfig(text)).toEqual({
      project: 'my-proj',
      zones: ['us-central1-a', 'us-central1-b'],
      apiEndpoint: 'http://127.0.0.1:8089/compute/v1/',
      stackType: 'IPV4_IPV6',
    });
  });

  it('defaults: IPV4, no zones, library endpoint', () => {
    expect(parseGceConfig('[global]\nproject-id = p-1\n')).toEqual({ project: 'p-1', zones: [], apiEndpoint: undefined, stackType: 'IPV4' });
  });

  // cloud-provider-gcp providers/gce/gce_test.go TestReadConfigFile's file: every key it reads.
  it('reads upstream\'s own test file', () => {
    const text = '[Global]\ntoken-url = my-token-url\ntoken-body = my-token-body\nproject-id = my-project\nnetwork-project-id = my-network-project\nnetwork-name = my-network\nsubnetwork-name = my-subnetwork\nsecondary-range-name = my-secondary-range\nnode-tags = my-node-tag1\nnode-instance-prefix = my-prefix\nmultizone = true\nregional = true\n   ';
    expect(parseGceConfig(text)).toEqual({ project: 'my-project', zones: [], apiEndpoint: undefined, stackType: 'IPV4' });
  });

  // gcfg's rules as cloud-provider-gcp reads gce.conf (issue 42, item 8).
  const gcfg: Array<[string, string, Partial<ReturnType<typeof parseGceConfig>>]> = [
    // gce_test.go TestExtraKeyInConfig: an unknown key is ignored, the rest still read.
    ['an unknown key', '[Global]\nproject-id = my-project\nunknown-key = abc\nnetwork-name = my-network\n', { project: 'my-project' }],
    ['an unknown section', '[global]\nproject-id = p\n[extra]\na = b\nproject-id = q\n', { project: 'p' }],
    ['a subsection of [global]', '[global]\nproject-id = p\n[global "x"]\nproject-id = q\n', { project: 'p' }],
    ['a repeated single-valued key keeps the last value', '[global]\nproject-id = a\nPROJECT-ID = b\n', { project: 'b' }],
    ['";" starts a comment without a space', '[global]\nproject-id = p;note\nstack-type = IPV6#v6 only\n', { project: 'p', stackType: 'IPV6' }],
    ['a bare zones clears the list', '[global]\nproject-id = p\nzones = us-central1-a\nzones\nzones = europe-west4-b\n', { zones: ['europe-west4-b'] }],
    ['an empty stack-type is the default', '[global]\nproject-id = p\nstack-type =\n', { stackType: 'IPV4' }],
    ['gcfg booleans', '[global]\nproject-id = p\nregional = YES\nmultizone\n', { project: 'p' }],
  ];
  it.each(gcfg)('gcfg: %s', (_name, text, want) => {
    expect(parseGceConfig(text)).toMatchObject(want);
  });

  const errors: [string, string, RegExp | string][] = [
    ['missing project', '[global]\nzones = us-central1-a\n', /project-id: required/],
    ['empty project', '[global]\nproject-id =\n', /project-id: required/],
    ['bad project', '[global]\nproject-id = My_Proj\n', '[global] project-id (line 2): "My_Proj" is not a GCP project ID'],
    ['bad stack type', '[global]\nproject-id = p\nstack-type = dual\n', '[global] stack-type (line 3): "dual" is not one of IPV4, IPV4_IPV6, IPV6'],
    // cloud-provider-gcp compares stack-type exactly: "ipv6" there is not IPV6 but IPv4 order.
    ['stack type in lower case', '[global]\nproject-id = p\nstack-type = ipv4_ipv6\n', '[global] stack-type (line 3): "ipv4_ipv6" is not one of IPV4, IPV4_IPV6, IPV6 (cloud-provider-gcp compares it case-sensitively: write IPV4_IPV6)'],
    ['bad zone', '[global]\nproject-id = p\nzones = central\n', '[global] zones (line 3): "central" is not a zone name'],
    ['an invalid bool, even of a key not used here', '[global]\nproject-id = p\nmultizone = maybe\n', '[global] multizone (line 3): "maybe" is not a boolean'],
    ['a bare string key', '[global]\nproject-id\n', '[global] project-id (line 2): needs a value'],
    ['key before section', 'project-id = p\n', 'line 1: "project-id" appears before any [section] header'],
    ['garbage line', '[global]\n= p\n', 'line 2: expected a [section] header or a "name = value" line'],
    ['unterminated quote', '[global]\nproject-id = "p\n', 'line 2: the quoted value is not terminated'],
    ['endpoint scheme', '[global]\nproject-id = p\napi-endpoint = ftp://x\n', /api-endpoint: "ftp:\/\/x" must be http/],
  ];
  for (const [name, text, message] of errors) {
    it(`rejects: ${name}`, () => expect(() => parseGceConfig(text)).toThrow(message));
  }

  it('parseIni (deprecated): gcfg syntax, no schema; bare keys read "true"', () => {
    const s = parseIni('[global]\nregional\nnode-tags = "a \\"b\\" # c"\nnode-tags = d;e\n[Sub "X"]\nk = v\n');
    expect(s.get('global')?.get('regional')).toEqual(['true']);
    expect(s.get('global')?.get('node-tags')).toEqual(['a "b" # c', 'd']);
    expect(s.get('sub "X"')?.get('k')).toEqual(['v']);
    expect(() => parseIni('[global]\nk = "x\n')).toThrow('cloud-config line 2: the quoted value is not terminated');
  });

  it('parseApiEndpoint splits scheme, host and port', () => {
    expect(parseApiEndpoint('http://127.0.0.1:8089/compute/v1/')).toEqual({ protocol: 'http', host: '127.0.0.1', port: 8089 });
    expect(parseApiEndpoint('https://compute.googleapis.com')).toEqual({ protocol: 'https', host: 'compute.googleapis.com', port: 443 });
    expect(parseApiEndpoint('http://[::1]:8089')).toEqual({ protocol: 'http', host: '[::1]', port: 8089 });
  });
});

describe('GCE providerID', () => {
  it('round-trips', () => {
    const id = parseGceProviderID('gce://my-proj/europe-west4-b/node-7');
    expect(id).toEqual({ project: 'my-proj', zone: 'europe-west4-b', name: 'node-7' });
    expect(formatGceProviderID(id)).toBe('gce://my-proj/europe-west4-b/node-7');
  });
  it('accepts domain-scoped projects', () => {
    expect(parseGceProviderID('gce://example.com:proj/us-east1-c/n').project).toBe('example.com:proj');
  });
  const bad: [string, RegExp][] = [
    ['aws:///us-east-1a/i-1', /does not start with gce:\/\//],
    ['gce://p/us-east1-c', /is not gce:\/\/<project>\/<zone>\/<instance>/],
    ['gce://p/us-east1-c/n/x', /is not gce:\/\//],
    ['gce://p/useast1/n', /invalid zone "useast1"/],
    ['gce://p/us-east1-c/Node_1', /invalid instance name "Node_1"/],
    ['gce://P!/us-east1-c/n', /invalid project "P!"/],
  ];
  for (const [text, message] of bad) {
    it(`rejects ${text}`, () => expect(() => parseGceProviderID(text)).toThrow(message));
  }
  it('instance name is the first label of the node name; region drops the zone letter', () => {
    expect(gceInstanceNameForNode('node-1.c.proj.internal')).toBe('node-1');
    expect(gceRegionOfZone('us-central1-a')).toBe('us-central1');
    expect(() => gceRegionOfZone('zone')).toThrow(/zone: "zone" has no region part/);
  });
});
