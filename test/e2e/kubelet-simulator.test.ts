// The kubelet simulator the e2e suite relies on: the Node it registers for each --node-ip form,
// what a restart changes, and that it goes through a real API server (the double).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeConfigFor, startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import { KubeClient } from '../../src/kube/client.js';
import { NODES } from '../../src/kube/types.js';
import {
  ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH,
  ANNOTATION_NODE_TTL,
  KubeletStartError,
  deleteNode,
  kubeletAddressSetter,
  registerNode,
  registrationNode,
  restartKubelet,
  restartPatch,
  startKubelet,
  type KubeletConfig,
} from '../../src/simulation/kubelet/index.js';
import type { NodeObject } from '../../src/model/node.js';

const ANN = 'alpha.kubernetes.io/provided-node-ip';
const UNINIT = { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' };
const base: KubeletConfig = { name: 'n1', cloudProviderExternal: true, hostIPs: ['10.0.0.5', 'fd00::5', '10.0.0.6'] };

describe('registration Node', () => {
  it('has kubelet labels, annotations, the uninitialized taint and a full status', () => {
    const now = new Date('2026-01-02T03:04:05.678Z');
    const { node, addressError } = registrationNode({ ...base, labels: { role: 'x' }, taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }] }, now);
    expect(addressError).toBeUndefined();
    expect(node.metadata.labels).toEqual({
      'kubernetes.io/hostname': 'n1',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'amd64',
      role: 'x',
    });
    expect(node.metadata.annotations).toEqual({ [ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH]: 'true', [ANNOTATION_NODE_TTL]: '0' });
    expect(node.spec?.taints).toEqual([{ key: 'k', value: 'v', effect: 'NoExecute' }, UNINIT]);
    const status = node.status as Record<string, unknown> & { conditions: { type: string; status: string; lastHeartbeatTime: string }[] };
    expect(status.conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['MemoryPressure=False', 'DiskPressure=False', 'PIDPressure=False', 'Ready=True']);
    expect(status.conditions[0]!.lastHeartbeatTime).toBe('2026-01-02T03:04:05Z');
    expect(status.capacity).toEqual(status.allocatable);
    expect((status.nodeInfo as Record<string, string>).kubeletVersion).toMatch(/^v1\.\d+\.\d+/);
  });

  it('hostname override sets the Hostname address and label, not the name', () => {
    const { node } = registrationNode({ ...base, hostname: 'host-a.example' });
    expect(node.metadata.name).toBe('n1');
    expect(node.metadata.labels?.['kubernetes.io/hostname']).toBe('host-a.example');
    expect(node.status?.addresses).toEqual([{ type: 'Hostname', address: 'host-a.example' }]);
  });

  it('without a cloud provider: no taint, no annotation, kubelet owns the addresses', () => {
    const { node } = registrationNode({ ...base, cloudProviderExternal: false, nodeIP: '10.0.0.6' });
    expect(node.spec?.taints).toBeUndefined();
    expect(node.metadata.annotations?.[ANN]).toBeUndefined();
    expect(node.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.0.0.6' }, { type: 'Hostname', address: 'n1' }]);
  });

  // kubelet 1.31+ with --cloud-provider=external (kubernetes#121028, #125337).
  const table: { nodeIP?: string; annotation?: string; addresses: { type: string; address: string }[] }[] = [
    { nodeIP: undefined, annotation: undefined, addresses: [{ type: 'Hostname', address: 'n1' }] },
    { nodeIP: '', annotation: undefined, addresses: [{ type: 'Hostname', address: 'n1' }] },
    { nodeIP: '0.0.0.0', annotation: undefined, addresses: [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'n1' }] },
    { nodeIP: '::', annotation: undefined, addresses: [{ type: 'InternalIP', address: 'fd00::5' }, { type: 'Hostname', address: 'n1' }] },
    { nodeIP: '10.0.0.6', annotation: '10.0.0.6', addresses: [{ type: 'InternalIP', address: '10.0.0.6' }, { type: 'Hostname', address: 'n1' }] },
    { nodeIP: ' 010.000.000.006 ', annotation: '10.0.0.6', addresses: [{ type: 'InternalIP', address: '10.0.0.6' }, { type: 'Hostname', address: 'n1' }] },
    { nodeIP: 'FD00:0::5', annotation: 'fd00::5', addresses: [{ type: 'InternalIP', address: 'fd00::5' }, { type: 'Hostname', address: 'n1' }] },
    {
      nodeIP: 'fd00::5,10.0.0.5',
      annotation: 'fd00::5,10.0.0.5',
      addresses: [{ type: 'InternalIP', address: 'fd00::5' }, { type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'n1' }],
    },
  ];
  for (const row of table) {
    it(`--node-ip ${JSON.stringify(row.nodeIP)} → annotation ${JSON.stringify(row.annotation)}`, () => {
      const { node } = registrationNode({ ...base, nodeIP: row.nodeIP });
      expect(node.metadata.annotations?.[ANN]).toBe(row.annotation);
      expect(node.status?.addresses).toEqual(row.addresses);
    });
  }

  it('a node IP not on the host fails the address setter: no annotation, no addresses', () => {
    const { node, addressError } = registrationNode({ ...base, nodeIP: '10.9.9.9' });
    expect(addressError).toMatch(/failed to validate nodeIP: .*10\.9\.9\.9.*not found/);
    expect(node.metadata.annotations?.[ANN]).toBeUndefined();
    expect(node.status?.addresses).toBeUndefined();
  });

  it('loopback and link-local node IPs are refused like kubelet does', () => {
    expect(kubeletAddressSetter({ ...base, hostIPs: undefined, nodeIP: '127.0.0.1' }, []).error).toMatch(/loopback/);
    expect(kubeletAddressSetter({ ...base, hostIPs: undefined, nodeIP: 'fe80::1' }, []).error).toMatch(/link-local/);
  });

  it('0.0.0.0 on a host without addresses: no addresses, the error kubelet logs', () => {
    const { node, addressError } = registrationNode({ name: 'n2', cloudProviderExternal: true, nodeIP: '0.0.0.0' });
    expect(addressError).toMatch(/can't get ip address of node n2/);
    expect(node.status?.addresses).toBeUndefined();
  });

  for (const bad of ['10.0.0.1,10.0.0.2', '0.0.0.0,::', '1.2.3.4,abcd::1,5.6.7.8', 'x,10.0.0.1,10.0.0.2']) {
    it(`kubelet refuses to start with --node-ip ${JSON.stringify(bad)}`, () => {
      expect(() => registrationNode({ ...base, nodeIP: bad })).toThrow(KubeletStartError);
    });
  }

  for (const junk of ['x', '10.0.0.0/8']) {
    it(`kubelet ignores --node-ip ${JSON.stringify(junk)} (not an IP) and registers as if it were unset`, () => {
      const { node } = registrationNode({ ...base, nodeIP: junk });
      expect(node.metadata.annotations?.[ANN]).toBeUndefined();
      expect(node.status?.addresses).toEqual(registrationNode({ ...base, nodeIP: undefined }).node.status?.addresses);
    });
  }

  it('refuses an invalid node name', () => {
    expect(() => registrationNode({ ...base, name: 'Not_Valid' })).toThrow(KubeletStartError);
  });
});

describe('restart patch', () => {
  const existing = (annotation: string | undefined, addresses: { type: 'InternalIP' | 'Hostname'; address: string }[]): NodeObject => ({
    metadata: { name: 'n1', annotations: annotation === undefined ? {} : { [ANN]: annotation } },
    status: { addresses },
  });
  const initialised = [{ type: 'InternalIP' as const, address: '10.0.0.5' }, { type: 'Hostname' as const, address: 'n1' }];

  it('sets a new annotation and leaves existing addresses to the cloud provider', () => {
    expect(restartPatch({ ...base, nodeIP: '10.0.0.6' }, existing(undefined, initialised)).patch).toEqual({ metadata: { annotations: { [ANN]: '10.0.0.6' } } });
  });

  it('removes a stale annotation when --node-ip is unset or unspecified', () => {
    for (const nodeIP of [undefined, '0.0.0.0', '::']) {
      expect(restartPatch({ ...base, nodeIP }, existing('10.0.0.6', initialised)).patch).toEqual({ metadata: { annotations: { [ANN]: null } } });
    }
  });

  it('changes nothing when the flag is unchanged', () => {
    expect(restartPatch({ ...base, nodeIP: '10.0.0.6' }, existing('10.0.0.6', initialised)).patch).toBeUndefined();
  });

  it('fills addresses when the node has none', () => {
    expect(restartPatch({ ...base, nodeIP: '10.0.0.6' }, existing('10.0.0.6', [])).patch).toEqual({
      status: { addresses: [{ type: 'InternalIP', address: '10.0.0.6' }, { type: 'Hostname', address: 'n1' }] },
    });
  });
});

describe('through the API server double', () => {
  let server: ApiServerDouble;
  let client: KubeClient;

  beforeAll(async () => {
    server = await startApiServerDouble();
    client = new KubeClient(kubeConfigFor(server));
  });

  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it('registers, restarts with a new --node-ip, and deletes', async () => {
    const reg = await registerNode(client, { ...base, name: 'sim-a', nodeIP: '10.0.0.6' });
    expect(reg.node.metadata.uid).toBeTruthy();
    const stored = await client.get<NodeObject & { metadata: { name: string } }>(NODES, 'sim-a');
    expect(stored.metadata.annotations?.[ANN]).toBe('10.0.0.6');
    expect(stored.spec?.taints).toEqual([UNINIT]);
    expect(stored.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.0.0.6' }, { type: 'Hostname', address: 'sim-a' }]);

    await expect(registerNode(client, { ...base, name: 'sim-a' })).rejects.toMatchObject({ reason: 'AlreadyExists' });

    const r1 = await restartKubelet(kubeConfigFor(server), { ...base, name: 'sim-a', nodeIP: 'fd00::5,10.0.0.5' });
    expect(r1.registered).toBe(false);
    expect(r1.node.metadata.annotations?.[ANN]).toBe('fd00::5,10.0.0.5');
    // The addresses already set stay: the cloud provider owns them now.
    expect(r1.node.status?.addresses).toEqual(stored.status?.addresses);

    const r2 = await restartKubelet(client, { ...base, name: 'sim-a' });
    expect(r2.node.metadata.annotations?.[ANN]).toBeUndefined();
    expect(r2.node.metadata.annotations?.[ANNOTATION_CONTROLLER_MANAGED_ATTACH_DETACH]).toBe('true');

    await expect(restartKubelet(client, { ...base, name: 'sim-a', nodeIP: '10.0.0.1,10.0.0.2' })).rejects.toBeInstanceOf(KubeletStartError);
    expect((await client.get<NodeObject & { metadata: { name: string } }>(NODES, 'sim-a')).metadata.annotations?.[ANN]).toBeUndefined();

    expect(await deleteNode(client, 'sim-a')).toBe(true);
    expect(await deleteNode(client, 'sim-a')).toBe(false);
  });

  it('restart of a deleted node registers it again; startKubelet registers or restarts', async () => {
    const r = await restartKubelet(client, { ...base, name: 'sim-b' });
    expect(r.registered).toBe(true);
    expect(r.node.spec?.taints).toEqual([UNINIT]);
    const s = await startKubelet(client, { ...base, name: 'sim-b', nodeIP: '10.0.0.5' });
    expect(s.registered).toBe(false);
    expect(s.node.metadata.annotations?.[ANN]).toBe('10.0.0.5');
    await deleteNode(client, 'sim-b');
  });
});
