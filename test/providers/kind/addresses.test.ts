import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { kindNodeAddresses, type DockerContainerInspect } from '../../../providers/kind/addresses.js';
import { parseKindOverrides, type KindAddressOverride } from '../../../providers/kind/overrides.js';
import { formatKindProviderID, parseKindProviderID } from '../../../providers/kind/provider-id.js';
import { parseKindConfig } from '../../../providers/kind/config.js';
import type { NodeAddress } from '../../../src/model/node-address.js';
import { kindWorkerOnCustomNetworkAndBridge, stopped } from './docker-inspect.js';

const H = (address: string): NodeAddress => ({ type: 'Hostname', address });
const I = (address: string): NodeAddress => ({ type: 'InternalIP', address });
const E = (address: string): NodeAddress => ({ type: 'ExternalIP', address });

function container(networks: DockerContainerInspect['NetworkSettings'], name = '/kind-worker', extra: Partial<DockerContainerInspect> = {}): DockerContainerInspect {
  return { Name: name, Config: { Labels: { 'io.x-k8s.kind.cluster': 'kind' } }, State: { Status: 'running', Running: true }, HostConfig: { NetworkMode: 'kind' }, NetworkSettings: networks, ...extra };
}
const exited = { State: { Status: 'exited', Running: false } };

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
      name: 'Docker\'s default bridge comes after every other network, whatever its name',
      c: container({ Networks: { bridge: { IPAddress: '172.17.0.4' }, kind: { IPAddress: '172.18.0.4' }, zeta: { IPAddress: '10.99.0.4' }, backup: { IPAddress: '10.5.0.4' } } }),
      want: [H('kind-worker'), I('172.18.0.4'), I('10.5.0.4'), I('10.99.0.4'), I('172.17.0.4')],
    },
    {
      name: 'primary network from HostConfig.NetworkMode (KIND_EXPERIMENTAL_DOCKER_NETWORK), before kind and bridge',
      c: container({ Networks: { bridge: { IPAddress: '172.17.0.4' }, kind: { IPAddress: '172.18.0.4' }, mynet: { IPAddress: '10.77.0.4', GlobalIPv6Address: 'fd77::4' } } }, '/kind-worker', { HostConfig: { NetworkMode: 'mynet' } }),
      want: [H('kind-worker'), I('10.77.0.4'), I('172.18.0.4'), I('172.17.0.4'), I('fd77::4')],
    },
    {
      name: 'a NetworkMode the container is not on (podman reports "bridge") falls back to kind first',
      c: container({ Networks: { alpha: { IPAddress: '10.50.0.4' }, kind: { IPAddress: '172.18.0.4' } } }, '/kind-worker', { HostConfig: { NetworkMode: 'bridge' } }),
      want: [H('kind-worker'), I('172.18.0.4'), I('10.50.0.4')],
    },
    {
      name: 'kind started on bridge itself (KIND_EXPERIMENTAL_DOCKER_NETWORK=bridge): bridge is the primary',
      c: container({ Networks: { bridge: { IPAddress: '172.17.0.4' }, extra: { IPAddress: '10.1.0.4' } } }, '/kind-worker', { HostConfig: { NetworkMode: 'bridge' } }),
      want: [H('kind-worker'), I('172.17.0.4'), I('10.1.0.4')],
    },
    {
      name: 'a stopped container (no IP anywhere): no addresses, so the node keeps its own',
      c: container({ Networks: { kind: { IPAddress: '', GlobalIPv6Address: '' } } }, '/kind-worker', exited),
      want: [],
    },
    {
      name: 'a stopped container with an append override: still no addresses',
      c: container({ Networks: { kind: { IPAddress: '' } } }, '/kind-worker', exited),
      overrides: { mode: 'append', addresses: [E('203.0.113.7')] },
      want: [],
    },
    ...['created', 'dead', 'restarting', 'removing'].map((Status) => ({
      name: `state ${Status} without IPs: no addresses`,
      c: container({ Networks: { kind: { IPAddress: '' } } }, '/kind-worker', { State: { Status, Running: Status === 'restarting' } }),
      want: [],
    })),
    {
      name: 'a paused container keeps its IPs',
      c: container({ Networks: { kind: { IPAddress: '172.18.0.2' } } }, '/kind-worker', { State: { Status: 'paused', Running: true } }),
      want: [H('kind-worker'), I('172.18.0.2')],
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
      name: 'replace override works for a stopped container',
      c: container({ Networks: { kind: { IPAddress: '' } } }, '/kind-worker', exited),
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

  it('Docker\'s own inspect body: the primary network (HostConfig.NetworkMode) before bridge, which sorts first by name', () => {
    const body = kindWorkerOnCustomNetworkAndBridge();
    expect(Object.keys((body.NetworkSettings as { Networks: object }).Networks)).toEqual(['bridge', 'ccm-net']);
    expect(kindNodeAddresses(body as unknown as DockerContainerInspect)).toEqual([H('ccm-custom-worker'), I('172.20.0.3'), I('172.17.0.2'), I('fd00:c0de:ccc::3')]);
  });

  it('Docker\'s own inspect body of that container stopped: no addresses, no error', () => {
    expect(kindNodeAddresses(stopped(kindWorkerOnCustomNetworkAndBridge()) as unknown as DockerContainerInspect)).toEqual([]);
  });

  const errors: { name: string; c: unknown; overrides?: unknown; message: RegExp }[] = [
    { name: 'no name', c: { Name: '', NetworkSettings: { Networks: {} } }, message: /container\.Name: "" is not a container name/ },
    { name: 'not an object', c: 'kind-worker', message: /expected a Docker container inspect object, got string/ },
    { name: 'running without an IP anywhere', c: container({ Networks: { kind: { IPAddress: '', GlobalIPv6Address: '' } } }), message: /container kind-worker: no IP address on any network, though Docker reports it running/ },
    { name: 'running on no network', c: container(null), message: /no IP address on any network/ },
    { name: 'no State and no IP', c: { Name: '/kind-worker', NetworkSettings: { Networks: {} } }, message: /no IP address on any network/ },
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

describe('kind providerID', () => {
  // What kind writes into every kubelet's --provider-id (kind://<node provider>/<cluster>/<node>).
  const kinds: [string, { cluster: string; node: string; nodeProvider: string }][] = [
    ['kind://docker/kind/kind-worker', { nodeProvider: 'docker', cluster: 'kind', node: 'kind-worker' }],
    ['kind://docker/kind/kind-control-plane', { nodeProvider: 'docker', cluster: 'kind', node: 'kind-control-plane' }],
    ['kind://podman/kind/kind-worker', { nodeProvider: 'podman', cluster: 'kind', node: 'kind-worker' }],
    ['kind://nerdctl/kind/kind-worker3', { nodeProvider: 'nerdctl', cluster: 'kind', node: 'kind-worker3' }],
    ['kind://docker/ccm-custom/ccm-custom-worker', { nodeProvider: 'docker', cluster: 'ccm-custom', node: 'ccm-custom-worker' }],
    ['kind://docker/node-address-ccm/node-address-ccm-worker5', { nodeProvider: 'docker', cluster: 'node-address-ccm', node: 'node-address-ccm-worker5' }],
    // Cluster names kind accepts: a trailing "-", dots, digits first.
    ['kind://docker/ccm-/ccm--worker', { nodeProvider: 'docker', cluster: 'ccm-', node: 'ccm--worker' }],
    ['kind://docker/a.b/a.b-control-plane', { nodeProvider: 'docker', cluster: 'a.b', node: 'a.b-control-plane' }],
    ['kind://docker/1st/1st-worker2', { nodeProvider: 'docker', cluster: '1st', node: '1st-worker2' }],
    // A cluster named "kind-x" whose nodes are kind-x-*: the node name says which segment is the cluster.
    ['kind://docker/kind-x/kind-x-worker', { nodeProvider: 'docker', cluster: 'kind-x', node: 'kind-x-worker' }],
  ];
  for (const [text, want] of kinds) {
    it(`reads kind's ${text}`, () => {
      expect(parseKindProviderID(text)).toEqual(want);
      expect(formatKindProviderID(want)).toBe(text);
    });
  }

  // cloud-provider-kind's form (and this adapter's own before), kept on nodes that were given it.
  const legacy: [string, { cluster: string; node: string }][] = [
    ['kind://kind/kind/kind-control-plane', { cluster: 'kind', node: 'kind-control-plane' }],
    ['kind://e2e/kind/e2e-worker2', { cluster: 'e2e', node: 'e2e-worker2' }],
    // A cluster named like a node provider: its nodes are docker-*, not kind-*.
    ['kind://docker/kind/docker-worker', { cluster: 'docker', node: 'docker-worker' }],
    ['kind://ccm-/kind/ccm--worker', { cluster: 'ccm-', node: 'ccm--worker' }],
  ];
  for (const [text, want] of legacy) {
    it(`reads cloud-provider-kind's ${text}`, () => {
      expect(parseKindProviderID(text)).toEqual(want);
      expect(formatKindProviderID(want)).toBe(text);
    });
  }

  it('property: for every cluster name kind accepts and every node kind names, both forms read back the same cluster and node', () => {
    const cluster = fc.string({ unit: fc.constantFrom(...'abz09.-'), minLength: 1, maxLength: 12 }).filter((c) => /^[a-z0-9]/.test(c));
    const role = fc.constantFrom('control-plane', 'worker', 'external-load-balancer');
    const suffix = fc.constantFrom('', '2', '3', '10');
    const nodeProvider = fc.constantFrom('docker', 'podman', 'nerdctl');
    fc.assert(
      fc.property(cluster, role, suffix, nodeProvider, (c, r, n, p) => {
        const node = `${c}-${r}${n}`;
        expect(parseKindProviderID(`kind://${p}/${c}/${node}`)).toEqual({ nodeProvider: p, cluster: c, node });
        expect(parseKindProviderID(`kind://${c}/kind/${node}`)).toMatchObject({ cluster: c, node });
        expect(() => parseKindConfig(`cluster: "${c}"\n`, 'c', {})).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });

  const bad: [string, RegExp][] = [
    ['gce://p/z/n', /does not start with kind:\/\//],
    ['kind://kind/kind', /is neither kind:\/\/<node provider>\/<cluster>\/<node> \(kind's\) or kind:\/\/<cluster>\/kind\/<node>/],
    ['kind://docker/kind/kind-worker/x', /is neither/],
    ['kind://docker//kind-worker', /is neither/],
    ['kind://kind/kind/', /is neither/],
    ['kind://Docker/kind/kind-worker', /invalid node provider "Docker"/],
    ['kind://docker/Kind/Kind-worker', /invalid node name "Kind-worker"/],
    ['kind://docker/-x/-x-worker', /invalid node name "-x-worker"/],
    ['kind://docker/kind/other-worker', /node "other-worker" is not a node of kind cluster "kind" \(kind names them kind-<role>\)/],
    ['kind://kind/docker/n', /node "n" is not a node of kind cluster "docker"/],
  ];
  for (const [text, message] of bad) {
    it(`rejects ${text}`, () => expect(() => parseKindProviderID(text)).toThrow(message));
  }
});

describe('kind config', () => {
  it('config defaults and validation', () => {
    expect(parseKindConfig('cluster: kind\n', 'c', {})).toEqual({ cluster: 'kind', dockerSocket: '/var/run/docker.sock' });
    expect(parseKindConfig('cluster: kind\n', 'c', { DOCKER_HOST: 'unix:///run/user/1000/docker.sock' }).dockerSocket).toBe('/run/user/1000/docker.sock');
    expect(parseKindConfig('cluster: kind\ndockerSocket: /d.sock\n', 'c', { DOCKER_HOST: 'tcp://10.0.0.1:2375' }).dockerSocket).toBe('/d.sock');
    expect(() => parseKindConfig('cluster: kind\n', 'c', { DOCKER_HOST: 'tcp://10.0.0.1:2375' })).toThrow(/DOCKER_HOST: "tcp:\/\/10\.0\.0\.1:2375" is not a unix:\/\/ socket/);
    expect(parseKindConfig('cluster: e2e\noverridesConfigMap: {name: addr}\n').overridesConfigMap).toEqual({ namespace: 'kube-system', name: 'addr', key: 'overrides.yaml' });
    expect(() => parseKindConfig('{}', 'kind.yaml')).toThrow(/kind\.yaml: cluster:/);
    expect(() => parseKindConfig('cluster: Kind_1\n')).toThrow(/cluster: must be a kind cluster name/);
    // kind's own rule, ^[a-z0-9.-]+$ (pkg/internal/apis/config/validate.go), with a first
    // character Docker accepts in the node containers' names.
    for (const name of ['ccm-', 'a.', 'a--b', '1', 'x.y-z']) expect(parseKindConfig(`cluster: "${name}"\n`, 'c', {}).cluster).toBe(name);
    for (const name of ['-ccm', '.x', 'a_b', 'a/b', '']) expect(() => parseKindConfig(`cluster: "${name}"\n`, 'c', {})).toThrow(/cluster: must be a kind cluster name/);
    expect(() => parseKindConfig('cluster: k\nsocket: /x\n')).toThrow(/socket/);
    expect(() => parseKindConfig('cluster: k\noverridesFile: /a\noverridesConfigMap: {name: b}\n')).toThrow(/exclusive/);
  });
});
