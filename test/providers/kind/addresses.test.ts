import { describe, it, expect } from 'vitest';
import { kindNodeAddresses, type DockerContainerInspect } from '../../../providers/kind/addresses.js';
import { parseKindOverrides, type KindAddressOverride } from '../../../providers/kind/overrides.js';
import { formatKindProviderID, parseKindProviderID } from '../../../providers/kind/provider-id.js';
import { parseKindConfig } from '../../../providers/kind/config.js';
import type { NodeAddress } from '../../../src/model/node-address.js';

const H = (address: string): NodeAddress => ({ type: 'Hostname', address });
const I = (address: string): NodeAddress => ({ type: 'InternalIP', address });
const E = (address: string): NodeAddress => ({ type: 'ExternalIP', address });

function container(networks: DockerContainerInspect['NetworkSettings'], name = '/kind-worker'): DockerContainerInspect {
  return { Name: name, Config: { Labels: { 'io.x-k8s.kind.cluster': 'kind' } }, NetworkSettings: networks };
}

describe('kindNodeAddresses', () => {
  const cases: { name: string; c: DockerContainerInspect; overrides?: KindAddressOverride; want: NodeAddress[] }[] = [
    {
      name: 'single-stack IPv4 on the kind network',
      c: container({ Networks: { kind: { IPAddress: '172.18.0.2', GlobalIPv6Address: '' } } }),
      want: [H('kind-worker'), I('172.18.0.2')],
    },
    {
      name: 'dual stack: IPv4 before IPv6',
      c: container({ Networks: { kind: { IPAddress: '172.18.0.2', GlobalIPv6Address: 'fc00:f853:ccd:e793::2' } } }),
      want: [H('kind-worker'), I('172.18.0.2'), I('fc00:f853:ccd:e793::2')],
    },
    {
      name: 'IPv6-only kind network',
      c: container({ Networks: { kind: { IPAddress: '', GlobalIPv6Address: 'fc00::3' } } }),
      want: [H('kind-worker'), I('fc00::3')],
    },
    {
      name: 'two networks: kind first, then others by name; all IPv4 before all IPv6',
      c: container({
        Networks: {
          zeta: { IPAddress: '10.99.0.4', GlobalIPv6Address: 'fd99::4' },
          alpha: { IPAddress: '10.50.0.4', GlobalIPv6Address: '' },
          kind: { IPAddress: '172.18.0.4', GlobalIPv6Address: 'fc00::4' },
        },
      }),
      want: [H('kind-worker'), I('172.18.0.4'), I('10.50.0.4'), I('10.99.0.4'), I('fc00::4'), I('fd99::4')],
    },
    {
      name: 'append override: extra entries of each family after the discovered ones, duplicates dropped',
      c: container({ Networks: { kind: { IPAddress: '172.18.0.2' } } }),
      overrides: { mode: 'append', addresses: [I('172.18.0.2'), I('10.200.0.2'), E('203.0.113.7'), I('fd00:200::2'), E('2001:db8::7')] },
      want: [H('kind-worker'), I('172.18.0.2'), I('10.200.0.2'), E('203.0.113.7'), I('fd00:200::2'), E('2001:db8::7')],
    },
    {
      name: 'replace override: exactly the given list, even an IP the container lacks',
      c: container({ Networks: { kind: { IPAddress: '172.18.0.2' } } }),
      overrides: { mode: 'replace', addresses: [I('192.0.2.10'), H('custom-host')] },
      want: [I('192.0.2.10'), H('custom-host')],
    },
    {
      name: 'replace override works for a container without IPs',
      c: container({ Networks: { kind: { IPAddress: '' } } }),
      overrides: { mode: 'replace', addresses: [I('192.0.2.10')] },
      want: [I('192.0.2.10')],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(kindNodeAddresses(c.c, { overrides: c.overrides })).toEqual(c.want);
    });
  }

  it('takes the node entry from a whole overrides document, by container name', () => {
    const doc = parseKindOverrides('nodes:\n  kind-worker:\n    addresses: [{type: ExternalIP, address: 198.51.100.1}]\n  other: {mode: replace, addresses: [{type: InternalIP, address: 10.0.0.1}]}\n');
    const c = container({ Networks: { kind: { IPAddress: '172.18.0.2' } } });
    expect(kindNodeAddresses(c, { overrides: doc })).toEqual([H('kind-worker'), I('172.18.0.2'), E('198.51.100.1')]);
  });

  const errors: { name: string; c: unknown; overrides?: unknown; message: RegExp }[] = [
    { name: 'no name', c: { Name: '', NetworkSettings: { Networks: {} } }, message: /container\.Name: "" is not a container name/ },
    { name: 'not an object', c: 'kind-worker', message: /expected a Docker container inspect object, got string/ },
    { name: 'no IP anywhere (stopped)', c: container({ Networks: { kind: { IPAddress: '', GlobalIPv6Address: '' } } }), message: /container kind-worker: no IP address on any network/ },
    { name: 'no networks', c: container(null), message: /no IP address on any network/ },
    { name: 'bad IPv4', c: container({ Networks: { kind: { IPAddress: '172.18.0' } } }), message: /Networks\.kind\.IPAddress: "172\.18\.0" is not an IPv4 address/ },
    { name: 'bad IPv6', c: container({ Networks: { kind: { IPAddress: '172.18.0.2', GlobalIPv6Address: '172.18.0.3' } } }), message: /Networks\.kind\.GlobalIPv6Address: "172\.18\.0\.3" is not an IPv6/ },
    { name: 'Networks is an array', c: container({ Networks: [] as never }), message: /NetworkSettings\.Networks must be an object/ },
    {
      name: 'override with a non-IP InternalIP',
      c: container({ Networks: { kind: { IPAddress: '172.18.0.2' } } }),
      overrides: { mode: 'append', addresses: [{ type: 'InternalIP', address: 'kind-worker' }] },
      message: /overrides for kind-worker: addresses\[0\]\.address: "kind-worker" is not an IP address/,
    },
    {
      name: 'empty replace override',
      c: container({ Networks: { kind: { IPAddress: '172.18.0.2' } } }),
      overrides: { mode: 'replace', addresses: [] },
      message: /mode replace needs at least one address/,
    },
  ];
  for (const c of errors) {
    it(`rejects: ${c.name}`, () => {
      expect(() => kindNodeAddresses(c.c as DockerContainerInspect, { overrides: c.overrides as KindAddressOverride })).toThrow(c.message);
    });
  }
});

describe('parseKindOverrides', () => {
  it('defaults mode to append; empty document means no overrides', () => {
    expect(parseKindOverrides('nodes:\n  n1:\n    addresses:\n      - {type: InternalIP, address: 10.1.1.1}\n')).toEqual({
      nodes: { n1: { mode: 'append', addresses: [I('10.1.1.1')] } },
    });
    expect(parseKindOverrides('')).toEqual({ nodes: {} });
    expect(parseKindOverrides('nodes: {}\n')).toEqual({ nodes: {} });
  });
  const errors: [string, string, RegExp][] = [
    ['bad YAML', 'nodes: [\n', /f\.yaml: not valid YAML/],
    ['unknown top-level key', 'node: {}\n', /f\.yaml: \(root\):.*node/],
    ['bad mode', 'nodes: {n1: {mode: merge, addresses: []}}\n', /f\.yaml: nodes\.n1\.mode:/],
    ['bad type', 'nodes: {n1: {addresses: [{type: PublicIP, address: 1.2.3.4}]}}\n', /nodes\.n1\.addresses\[0\]\.type: "PublicIP" is not one of/],
    ['bad IP', 'nodes: {n1: {addresses: [{type: ExternalIP, address: 1.2.3}]}}\n', /nodes\.n1\.addresses\[0\]\.address: "1\.2\.3" is not an IP address/],
    ['empty replace', 'nodes: {n1: {mode: replace, addresses: []}}\n', /nodes\.n1: mode replace needs at least one address/],
  ];
  for (const [name, text, message] of errors) {
    it(`rejects: ${name}`, () => expect(() => parseKindOverrides(text, 'f.yaml')).toThrow(message));
  }
});

describe('kind providerID and config', () => {
  it('round-trips the providerID', () => {
    expect(parseKindProviderID('kind://kind/kind/kind-control-plane')).toEqual({ cluster: 'kind', node: 'kind-control-plane' });
    expect(formatKindProviderID({ cluster: 'e2e', node: 'e2e-worker2' })).toBe('kind://e2e/kind/e2e-worker2');
  });
  const bad: [string, RegExp][] = [
    ['gce://p/z/n', /does not start with kind:\/\//],
    ['kind://kind/docker/n', /is not kind:\/\/<cluster>\/kind\/<node>/],
    ['kind://kind/kind', /is not kind:\/\//],
    ['kind://Kind/kind/n', /invalid cluster name "Kind"/],
    ['kind://kind/kind/', /invalid node name ""/],
  ];
  for (const [text, message] of bad) {
    it(`rejects ${text}`, () => expect(() => parseKindProviderID(text)).toThrow(message));
  }
  it('config defaults and validation', () => {
    expect(parseKindConfig('cluster: kind\n', 'c', {})).toEqual({ cluster: 'kind', dockerSocket: '/var/run/docker.sock' });
    expect(parseKindConfig('cluster: kind\n', 'c', { DOCKER_HOST: 'unix:///run/user/1000/docker.sock' }).dockerSocket).toBe('/run/user/1000/docker.sock');
    expect(parseKindConfig('cluster: kind\ndockerSocket: /d.sock\n', 'c', { DOCKER_HOST: 'tcp://10.0.0.1:2375' }).dockerSocket).toBe('/d.sock');
    expect(() => parseKindConfig('cluster: kind\n', 'c', { DOCKER_HOST: 'tcp://10.0.0.1:2375' })).toThrow(/DOCKER_HOST: "tcp:\/\/10\.0\.0\.1:2375" is not a unix:\/\/ socket/);
    expect(parseKindConfig('cluster: e2e\noverridesConfigMap: {name: addr}\n').overridesConfigMap).toEqual({ namespace: 'kube-system', name: 'addr', key: 'overrides.yaml' });
    expect(() => parseKindConfig('{}', 'kind.yaml')).toThrow(/kind\.yaml: cluster:/);
    expect(() => parseKindConfig('cluster: Kind_1\n')).toThrow(/cluster: must be a kind cluster name/);
    expect(() => parseKindConfig('cluster: k\nsocket: /x\n')).toThrow(/socket/);
    expect(() => parseKindConfig('cluster: k\noverridesFile: /a\noverridesConfigMap: {name: b}\n')).toThrow(/exclusive/);
  });
});
