import { describe, it, expect } from 'vitest';
import { parseApiEndpoint, parseGceConfig, parseIni } from '../../../providers/gce/config.js';
import { formatGceProviderID, gceInstanceNameForNode, gceRegionOfZone, parseGceProviderID } from '../../../providers/gce/provider-id.js';

describe('parseGceConfig', () => {
  it('reads the used keys of a reference gce.conf and tolerates the rest', () => {
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
      'stack-type = ipv4_ipv6',
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

  const errors: [string, string, RegExp][] = [
    ['missing project', '[global]\nzones = us-central1-a\n', /project-id: required/],
    ['bad project', '[global]\nproject-id = My_Proj\n', /project-id: "My_Proj" is not a GCP project ID/],
    ['project twice', '[global]\nproject-id = a\nproject-id = b\n', /project-id: given 2 times/],
    ['bad stack type', '[global]\nproject-id = p\nstack-type = dual\n', /stack-type: "DUAL" is not one of IPV4, IPV4_IPV6, IPV6/],
    ['bad zone', '[global]\nproject-id = p\nzones = central\n', /zones: "central" is not a zone name/],
    ['unknown key', '[global]\nproject-id = p\nprojectid = q\n', /unknown key "projectid"/],
    ['unknown section', '[global]\nproject-id = p\n[extra]\na = b\n', /unknown section \[extra\]/],
    ['key before section', 'project-id = p\n', /line 1: "project-id" appears before any \[section\]/],
    ['garbage line', '[global]\n= p\n', /line 2: cannot parse "= p"/],
    ['unterminated quote', '[global]\nproject-id = "p\n', /line 2: unterminated quoted value/],
    ['endpoint scheme', '[global]\nproject-id = p\napi-endpoint = ftp://x\n', /api-endpoint: "ftp:\/\/x" must be http/],
  ];
  for (const [name, text, message] of errors) {
    it(`rejects: ${name}`, () => expect(() => parseGceConfig(text)).toThrow(message));
  }

  it('parseIni: bare keys are true, quoted escapes are honoured', () => {
    const s = parseIni('[global]\nregional\nnode-tags = "a \\"b\\" # c"\n');
    expect(s.get('global')?.get('regional')).toEqual(['true']);
    expect(s.get('global')?.get('node-tags')).toEqual(['a "b" # c']);
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
