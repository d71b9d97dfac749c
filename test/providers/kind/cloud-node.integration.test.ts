// The kind adapter under the real cloud node controller, through the API server double, with the
// Nodes as kind's kubelets register them: --provider-id=kind://docker/<cluster>/<node> and
// --node-ip (the provided-node-ip annotation), tainted. Every node initialises (not only the
// first), and a stopped container leaves its node's addresses alone, without a Warning.
import { describe, expect, it } from 'vitest';
import { DockerClient, KindProvider } from '../../../providers/kind/index.js';
import { CloudNodeController } from '../../../src/controllers/cloudnode/controller.js';
import { hasUninitializedTaint } from '../../../src/model/node.js';
import { DockerEmulator } from '../../emulators/docker/server.js';
import { createNode, isInitialised, storedNode, useDouble } from '../../kit/double.js';
import { ip } from '../../kit/nodes.js';
import { eventually } from '../../kit/wait.js';
import { MemoryEvents } from '../../controllers/memory-nodes.js';

const CLUSTER = 'ccm-';
const LABEL = { 'io.x-k8s.kind.cluster': CLUSTER };
const NODES: Record<string, { v4: string; v6: string }> = {
  'ccm--control-plane': { v4: '172.18.0.2', v6: 'fc00:f853:ccd:e793::2' },
  'ccm--worker': { v4: '172.18.0.3', v6: 'fc00:f853:ccd:e793::3' },
  'ccm--worker2': { v4: '172.18.0.4', v6: 'fc00:f853:ccd:e793::4' },
};

describe('kind adapter under the cloud node controller', () => {
  const cluster = useDouble();

  async function start(): Promise<{ docker: DockerEmulator; events: MemoryEvents; controller: CloudNodeController; cached: (name: string) => boolean }> {
    const docker = new DockerEmulator();
    await docker.start();
    cluster.defer(() => docker.stop());
    for (const [name, { v4, v6 }] of Object.entries(NODES)) {
      docker.addContainer({ name, labels: LABEL, networks: { kind: { IPAddress: v4, GlobalIPv6Address: v6 } } });
    }
    const conn = cluster.connect();
    const events = new MemoryEvents();
    const provider = new KindProvider({ cluster: CLUSTER, dockerSocket: docker.socketPath }, new DockerClient({ socketPath: docker.socketPath }));
    const controller = new CloudNodeController({
      nodes: conn.nodes, writer: conn.writer, provider, events, allowDualStack: true, workers: 2, statusUpdateFrequencyMs: 3_600_000,
    });
    conn.watcher.start();
    controller.start();
    cluster.defer(async () => {
      await controller.stop();
      await conn.close();
    });
    const cached = (name: string): boolean => {
      const n = conn.nodes.get(name);
      return n !== undefined && !hasUninitializedTaint(n);
    };
    return { docker, events, controller, cached };
  }

  it('initialises every node of a cluster named "ccm-"; a stopped container keeps its node\'s addresses, no Warning, every round', async () => {
    const { docker, events, controller, cached } = await start();
    for (const [name, { v4, v6 }] of Object.entries(NODES)) {
      createNode(cluster.api, { name, providerID: `kind://docker/${CLUSTER}/${name}`, nodeIP: `${v4},${v6}`, addresses: [ip(v4), ip(v6), ip(name, 'Hostname')] });
    }
    await eventually(() => Object.keys(NODES).every((n) => isInitialised(cluster.api, n)), { timeoutMs: 10_000, what: 'every kind node initialised' });
    // The refresh reads the controller's cache: it must have seen the untainted nodes too.
    await eventually(() => Object.keys(NODES).every((n) => cached(n)), { timeoutMs: 10_000, what: 'the cache has every node untainted' });
    for (const [name, { v4, v6 }] of Object.entries(NODES)) {
      expect(storedNode(cluster.api, name).spec?.providerID).toBe(`kind://docker/${CLUSTER}/${name}`);
      expect(storedNode(cluster.api, name).status?.addresses).toEqual([ip(v4), ip(v6), ip(name, 'Hostname')]);
    }

    // `docker stop ccm--worker`: Docker clears its IPs. The refresh rounds leave its addresses.
    docker.setState('ccm--worker', 'exited');
    const before = storedNode(cluster.api, 'ccm--worker');
    for (let round = 0; round < 3; round++) {
      expect(await controller.resyncAddresses()).toMatchObject({ nodes: 3, updated: 0, warned: 0, failed: 0 });
    }
    const after = storedNode(cluster.api, 'ccm--worker');
    expect(after.status?.addresses).toEqual(before.status?.addresses);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(events.events.filter((e) => e.type === 'Warning')).toEqual([]);
  });

  it('a tainted node whose container is stopped stays tainted (its --node-ip is no cloud address) and initialises once it runs', async () => {
    const { docker, events } = await start();
    docker.setState('ccm--worker2', 'exited');
    const { v4 } = NODES['ccm--worker2']!;
    createNode(cluster.api, { name: 'ccm--worker2', providerID: `kind://docker/${CLUSTER}/ccm--worker2`, nodeIP: v4, addresses: [ip(v4), ip('ccm--worker2', 'Hostname')] });
    await eventually(() => events.for('ccm--worker2').length > 0, { timeoutMs: 10_000, what: 'an event for ccm--worker2' });
    expect(hasUninitializedTaint(storedNode(cluster.api, 'ccm--worker2'))).toBe(true);
    expect(events.for('ccm--worker2')[0]).toMatchObject({ type: 'Warning', reason: 'ProvidedNodeIPInvalid' });

    docker.setState('ccm--worker2', 'running');
    await eventually(() => isInitialised(cluster.api, 'ccm--worker2'), { timeoutMs: 15_000, what: 'ccm--worker2 initialised after docker start' });
    expect(storedNode(cluster.api, 'ccm--worker2').status?.addresses).toEqual([ip(v4), ip('ccm--worker2', 'Hostname')]);
  });
});
