import { describe, it, expect } from 'vitest';
import { gceNodeAddresses, kindNodeAddresses, parseGceProviderID, parseKindProviderID } from '../../../src/index.js';
import { knownProviders } from '../../../providers/index.js';

describe('package root', () => {
  it('exports the pure mappings and providerID parsers', () => {
    expect(gceNodeAddresses({ networkInterfaces: [{ networkIP: '10.1.2.3', accessConfigs: [{ natIP: '34.5.6.7' }] }] }, { stackType: 'IPV4' })).toEqual([
      { type: 'InternalIP', address: '10.1.2.3' },
      { type: 'ExternalIP', address: '34.5.6.7' },
    ]);
    expect(kindNodeAddresses({ Name: '/kind-worker', NetworkSettings: { Networks: { kind: { IPAddress: '172.18.0.2' } } } })).toEqual([
      { type: 'Hostname', address: 'kind-worker' },
      { type: 'InternalIP', address: '172.18.0.2' },
    ]);
    expect(parseGceProviderID('gce://p/us-west1-b/n').zone).toBe('us-west1-b');
    expect(parseKindProviderID('kind://docker/kind/kind-worker').node).toBe('kind-worker');
  });
  it('registers gce and kind for --cloud-provider', () => {
    expect(knownProviders()).toEqual(expect.arrayContaining(['gce', 'kind']));
  });
});
