import { afterAll, beforeAll, beforeEach, describe, it, expect } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DockerEmulator } from '../../emulators/docker/server.js';
import { DockerClient, fileOverridesLoader, KindProvider, overridesLoaderFor } from '../../../providers/kind/index.js';
import { createProvider } from '../../../providers/index.js';
import type { CloudProvider, InstanceResult } from '../../../providers/types.js';

const LABEL = 'io.x-k8s.kind.cluster';
/** The providerID kind gives the kubelet of node `name` (--provider-id=kind://<node provider>/<cluster>/<node>). */
const kindID = (name: string, cluster = 'kind') => `kind://docker/${cluster}/${name}`;
/** A kind node as its kubelet registers it. */
const node = (name: string, cluster = 'kind') => ({ name, providerID: kindID(name, cluster) });

function summary<T>(m: Map<string, InstanceResult<T>>): Record<string, unknown> {
  return Object.fromEntries([...m].map(([k, v]) => [k, v.kind === 'found' ? v.value : v.kind]));
}

describe('kind provider against the Docker Engine API emulator', () => {
  const docker = new DockerEmulator();
  let dir: string;
  let overridesPath: string;
  let kind: KindProvider;

  beforeAll(async () => {
    await docker.start();
    dir = await mkdtemp(path.join(tmpdir(), 'kind-prov-'));
    overridesPath = path.join(dir, 'overrides.yaml');
  });
  afterAll(async () => {
    await docker.stop();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    for (const n of ['kind-control-plane', 'kind-worker', 'kind-worker2', 'other-control-plane', 'unrelated']) docker.removeContainer(n);
    docker.addContainer({ name: 'kind-control-plane', labels: { [LABEL]: 'kind' }, networks: { kind: { IPAddress: '172.18.0.3', GlobalIPv6Address: 'fc00:f853:ccd:e793::3' } } });
    docker.addContainer({
      name: 'kind-worker',
      labels: { [LABEL]: 'kind' },
      networks: { kind: { IPAddress: '172.18.0.2', GlobalIPv6Address: 'fc00:f853:ccd:e793::2' }, extra: { IPAddress: '10.77.0.2' } },
    });
    docker.addContainer({ name: 'kind-worker2', labels: { [LABEL]: 'kind' }, networks: { kind: { IPAddress: '172.18.0.4' } }, state: 'exited' });
    docker.addContainer({ name: 'other-control-plane', labels: { [LABEL]: 'other' }, networks: { kind: { IPAddress: '172.18.0.9' } } });
    docker.addContainer({ name: 'unrelated', networks: { bridge: { IPAddress: '172.17.0.2' } } });
    await writeFile(overridesPath, '');
    docker.requests.length = 0;
    kind = new KindProvider({ cluster: 'kind', dockerSocket: docker.socketPath }, new DockerClient({ socketPath: docker.socketPath }), fileOverridesLoader(overridesPath));
  });

  it('maps node containers, a container on two networks included, with one listing for the batch', async () => {
    const res = await kind.instancesMetadata([node('kind-control-plane'), node('kind-worker'), { name: 'other-control-plane' }, node('kind-missing')]);
    expect(summary(res)).toEqual({
      'kind-control-plane': {
        providerID: 'kind://docker/kind/kind-control-plane',
        instanceType: 'kind-node',
        addresses: [
          { type: 'Hostname', address: 'kind-control-plane' },
          { type: 'InternalIP', address: '172.18.0.3' },
          { type: 'InternalIP', address: 'fc00:f853:ccd:e793::3' },
        ],
      },
      'kind-worker': {
        providerID: 'kind://docker/kind/kind-worker',
        instanceType: 'kind-node',
        addresses: [
          { type: 'Hostname', address: 'kind-worker' },
          { type: 'InternalIP', address: '172.18.0.2' },
          { type: 'InternalIP', address: '10.77.0.2' },
          { type: 'InternalIP', address: 'fc00:f853:ccd:e793::2' },
        ],
      },
      // Another cluster's container is not ours.
      'other-control-plane': 'notFound',
      'kind-missing': 'notFound',
    });
    expect(docker.count('list')).toBe(1);
    expect(docker.count('inspect')).toBe(2);
    const list = docker.requests.find((r) => r.path === '/containers/json');
    expect(JSON.parse(list!.query.filters)).toEqual({ label: [`${LABEL}=kind`] });
    expect(list!.query.all).toBe('1');
  });

  it('a stopped node container: exists, is shut down, and its metadata has no addresses (the node keeps its own), not an error', async () => {
    const nodes = [node('kind-worker'), node('kind-worker2'), node('kind-gone')];
    expect(summary(await kind.instancesExist(nodes))).toEqual({ 'kind-worker': true, 'kind-worker2': true, 'kind-gone': false });
    expect(summary(await kind.instancesShutdown(nodes))).toEqual({ 'kind-worker': false, 'kind-worker2': true, 'kind-gone': 'notFound' });
    const md = (await kind.instancesMetadata([node('kind-worker2')])).get('kind-worker2');
    expect(md).toEqual({ kind: 'found', value: { providerID: 'kind://docker/kind/kind-worker2', instanceType: 'kind-node', addresses: [] } });
    expect(docker.count('inspect')).toBe(1);
    // `docker start`: its addresses are back.
    docker.setState('kind-worker2', 'running');
    const back = (await kind.instancesMetadata([node('kind-worker2')])).get('kind-worker2');
    expect(back?.kind === 'found' && back.value.addresses).toEqual([{ type: 'Hostname', address: 'kind-worker2' }, { type: 'InternalIP', address: '172.18.0.4' }]);
  });

  it('a running container with no IP on any network is a retryable error', async () => {
    docker.setNetworks('kind-worker', {});
    const md = (await kind.instancesMetadata([node('kind-worker')])).get('kind-worker');
    expect(md).toMatchObject({ kind: 'error', error: { message: expect.stringMatching(/kind: node kind-worker: container kind-worker: no IP address on any network, though Docker reports it running/) } });
  });

  it('a custom primary network (KIND_EXPERIMENTAL_DOCKER_NETWORK) comes before bridge, which a node was connected to later', async () => {
    docker.addContainer({
      name: 'ccm-custom-worker',
      labels: { [LABEL]: 'ccm-custom' },
      networkMode: 'ccm-net',
      networks: { bridge: { IPAddress: '172.17.0.2' }, 'ccm-net': { IPAddress: '172.20.0.3', GlobalIPv6Address: 'fd00:c0de:ccc::3' } },
    });
    try {
      const custom = new KindProvider({ cluster: 'ccm-custom', dockerSocket: docker.socketPath }, new DockerClient({ socketPath: docker.socketPath }));
      const md = (await custom.instancesMetadata([node('ccm-custom-worker', 'ccm-custom')])).get('ccm-custom-worker');
      expect(md?.kind === 'found' && md.value).toEqual({
        providerID: 'kind://docker/ccm-custom/ccm-custom-worker',
        instanceType: 'kind-node',
        addresses: [
          { type: 'Hostname', address: 'ccm-custom-worker' },
          { type: 'InternalIP', address: '172.20.0.3' },
          { type: 'InternalIP', address: '172.17.0.2' },
          { type: 'InternalIP', address: 'fd00:c0de:ccc::3' },
        ],
      });
    } finally {
      docker.removeContainer('ccm-custom-worker');
    }
  });

  it('a cluster whose name ends in "-" (kind accepts it): its nodes are found by kind\'s providerID', async () => {
    docker.addContainer({ name: 'ccm--worker', labels: { [LABEL]: 'ccm-' }, networks: { kind: { IPAddress: '172.18.0.7' } } });
    try {
      const dash = new KindProvider({ cluster: 'ccm-', dockerSocket: docker.socketPath }, new DockerClient({ socketPath: docker.socketPath }));
      const md = (await dash.instancesMetadata([node('ccm--worker', 'ccm-')])).get('ccm--worker');
      expect(md?.kind === 'found' && md.value.addresses).toEqual([{ type: 'Hostname', address: 'ccm--worker' }, { type: 'InternalIP', address: '172.18.0.7' }]);
      expect(summary(await dash.instancesExist([node('ccm--worker', 'ccm-')]))).toEqual({ 'ccm--worker': true });
    } finally {
      docker.removeContainer('ccm--worker');
    }
  });

  it('the other providerIDs: podman\'s, cloud-provider-kind\'s form kept on older nodes, and none (a kubelet without --provider-id)', async () => {
    const res = await kind.instancesMetadata([
      { name: 'kind-control-plane', providerID: 'kind://podman/kind/kind-control-plane' },
      { name: 'kind-worker', providerID: 'kind://kind/kind/kind-worker' },
      { name: 'kind-worker2' },
    ]);
    const ids = Object.fromEntries([...res].map(([k, v]) => [k, v.kind === 'found' ? v.value.providerID : v.kind]));
    expect(ids).toEqual({
      // The node's own providerID is answered back; a node without one gets cloud-provider-kind's form.
      'kind-control-plane': 'kind://podman/kind/kind-control-plane',
      'kind-worker': 'kind://kind/kind/kind-worker',
      'kind-worker2': 'kind://kind/kind/kind-worker2',
    });
  });

  it('applies overrides from the file, re-read every round', async () => {
    await writeFile(
      overridesPath,
      [
        'nodes:',
        '  kind-worker:',
        '    addresses:',
        '      - {type: InternalIP, address: 10.200.0.2}',
        '      - {type: ExternalIP, address: 203.0.113.2}',
        '      - {type: ExternalIP, address: "2001:db8::2"}',
        '  kind-control-plane:',
        '    mode: replace',
        '    addresses: [{type: InternalIP, address: 192.0.2.99}]',
      ].join('\n'),
    );
    const res = await kind.instancesMetadata([node('kind-worker'), node('kind-control-plane')]);
    const worker = res.get('kind-worker');
    expect(worker?.kind === 'found' && worker.value.addresses.slice(-3)).toEqual([
      { type: 'InternalIP', address: '10.200.0.2' },
      { type: 'ExternalIP', address: '203.0.113.2' },
      { type: 'ExternalIP', address: '2001:db8::2' },
    ]);
    const cp = res.get('kind-control-plane');
    expect(cp?.kind === 'found' && cp.value.addresses).toEqual([{ type: 'InternalIP', address: '192.0.2.99' }]);

    await writeFile(overridesPath, 'nodes: {}\n');
    const after = (await kind.instancesMetadata([node('kind-control-plane')])).get('kind-control-plane');
    expect(after?.kind === 'found' && after.value.addresses.map((a) => a.address)).toEqual(['kind-control-plane', '172.18.0.3', 'fc00:f853:ccd:e793::3']);
  });

  it('a broken overrides file makes the round an error instead of dropping the overrides', async () => {
    await writeFile(overridesPath, 'nodes:\n  kind-worker:\n    addresses: [{type: InternalIP, address: nope}]\n');
    const res = await kind.instancesMetadata([node('kind-worker'), node('kind-control-plane')]);
    for (const r of res.values()) {
      expect(r).toMatchObject({ kind: 'error', error: { message: expect.stringContaining(`${overridesPath}: nodes.kind-worker.addresses[0].address: "nope" is not an IP address`) } });
    }
  });

  it('Docker errors: a failed listing fails the round, a vanished container is notFound', async () => {
    docker.failNext({ status: 500, message: 'daemon busy' });
    const res = await kind.instancesExist([node('kind-worker')]);
    expect(res.get('kind-worker')).toMatchObject({ kind: 'error', error: { message: 'docker GET /containers/json: HTTP 500: daemon busy' } });

    // Listing succeeds, the inspect finds the container gone.
    const racing = new KindProvider({ cluster: 'kind', dockerSocket: docker.socketPath }, new DockerClient({ socketPath: docker.socketPath }));
    docker.afterNextList(() => docker.removeContainer('kind-worker'));
    const listed = docker.requests.length;
    expect((await racing.instancesMetadata([node('kind-worker')])).get('kind-worker')).toEqual({ kind: 'notFound', reason: 'kind: container kind-worker is gone' });
    expect(docker.requests.length - listed).toBe(2);
  });

  it('an aborted round rejects instead of reporting per-node errors', async () => {
    const ac = new AbortController();
    ac.abort(new Error('resync cancelled'));
    await expect(kind.instancesMetadata([node('kind-worker')], ac.signal)).rejects.toThrow(/resync cancelled/);
    await expect(kind.instancesShutdown([node('kind-worker')], ac.signal)).rejects.toThrow(/resync cancelled/);
  });

  it('refuses a providerID of another cluster, or none kind writes, per node; never as gone', async () => {
    const nodes = [
      { name: 'other-control-plane', providerID: 'kind://docker/other/other-control-plane' },
      { name: 'x', providerID: 'kind://other/kind/other-control-plane' },
      { name: 'kind-worker2', providerID: 'kind://docker/kind/other-worker' },
      node('kind-worker'),
    ];
    const res = await kind.instancesMetadata(nodes);
    expect(res.get('other-control-plane')).toMatchObject({ kind: 'error', error: { message: expect.stringMatching(/kind: node other-control-plane: providerID kind:\/\/docker\/other\/other-control-plane belongs to kind cluster other, this adapter serves kind/) } });
    expect(res.get('x')).toMatchObject({ kind: 'error', error: { message: expect.stringMatching(/belongs to kind cluster other, this adapter serves kind/) } });
    expect(res.get('kind-worker2')).toMatchObject({ kind: 'error', error: { message: expect.stringMatching(/node "other-worker" is not a node of kind cluster "kind"/) } });
    expect(res.get('kind-worker')?.kind).toBe('found');
    const exist = await kind.instancesExist(nodes);
    expect(summary(exist)).toEqual({ 'other-control-plane': 'error', x: 'error', 'kind-worker2': 'error', 'kind-worker': true });
  });

  it('a missing socket is a retryable error naming the socket', async () => {
    const nowhere = path.join(dir, 'no.sock');
    const p = new KindProvider({ cluster: 'kind', dockerSocket: nowhere }, new DockerClient({ socketPath: nowhere }));
    const r = (await p.instancesExist([node('kind-worker')])).get('kind-worker');
    expect(r).toMatchObject({ kind: 'error', error: { message: expect.stringContaining(nowhere) } });
  });

  it('is built from a cloud-config file the way --cloud-provider kind builds it', async () => {
    const conf = path.join(dir, 'kind.yaml');
    await writeFile(conf, `cluster: kind\ndockerSocket: ${docker.socketPath}\noverridesFile: ${overridesPath}\n`);
    const provider: CloudProvider = await createProvider('kind', { cloudConfig: conf });
    expect(provider.name).toBe('kind');
    expect(summary(await provider.instancesExist([node('kind-control-plane')]))).toEqual({ 'kind-control-plane': true });
    await expect(createProvider('kind', {})).rejects.toThrow(/--cloud-config: required/);
  });
});

describe('kind overrides from a ConfigMap', () => {
  let server: Server;
  let dir: string;
  let body: { status: number; json: unknown };
  const seen: string[] = [];

  beforeAll(async () => {
    // Answers GET configmap the way the API server does; the real client-node talks to it.
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(body.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body.json));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    dir = await mkdtemp(path.join(tmpdir(), 'kind-cm-'));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the key, treats a missing ConfigMap as no overrides, and names the ConfigMap in errors', async () => {
    const port = (server.address() as AddressInfo).port;
    const kubeconfig = path.join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "http://127.0.0.1:' + port + '", insecure-skip-tls-verify: true}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    const load = await overridesLoaderFor({ cluster: 'kind', dockerSocket: '/unused', kubeconfig, overridesConfigMap: { namespace: 'kube-system', name: 'addr', key: 'o.yaml' } });

    body = { status: 200, json: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'addr', namespace: 'kube-system' }, data: { 'o.yaml': 'nodes: {n1: {addresses: [{type: ExternalIP, address: 198.51.100.4}]}}' } } };
    expect(await load()).toEqual({ nodes: { n1: { mode: 'append', addresses: [{ type: 'ExternalIP', address: '198.51.100.4' }] } } });
    expect(seen.at(-1)).toBe('GET /api/v1/namespaces/kube-system/configmaps/addr');

    body = { status: 200, json: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'addr' }, data: { other: 'x' } } };
    expect(await load()).toEqual({ nodes: {} });

    body = { status: 404, json: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'configmaps "addr" not found' } };
    expect(await load()).toEqual({ nodes: {} });

    body = { status: 200, json: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'addr' }, data: { 'o.yaml': 'nodes: {n1: {mode: swap, addresses: []}}' } } };
    await expect(load()).rejects.toThrow(/ConfigMap kube-system\/addr key o\.yaml: nodes\.n1\.mode/);

    body = { status: 403, json: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'forbidden' } };
    await expect(load()).rejects.toThrow(/ConfigMap kube-system\/addr key o\.yaml:/);
  });
});
