// The cloud-node-lifecycle controller end to end through the API server double: the whole process
// with the static provider reading its file live (a removed entry → the Node deleted within two
// periods and its pod CIDRs released; `shutdown: true` → tainted; Ready again → untainted), the
// kind provider against the Docker emulator, and the uid-guarded DELETE against a re-created Node.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify as toYAML } from 'yaml';
import { StaticProvider } from '../../../providers/static/provider.js';
import { DockerClient, KindProvider } from '../../../providers/kind/index.js';
import { FakeProvider } from '../../../providers/fake/fake.js';
import { CloudNodeLifecycleController } from '../../../src/controllers/nodelifecycle/controller.js';
import { hasShutdownTaint, SHUTDOWN_TAINT_KEY } from '../../../src/controllers/nodelifecycle/decide.js';
import { hasUninitializedTaint, nodePodCIDRs, type NodeObject } from '../../../src/model/node.js';
import type { NodeDeleter } from '../../../src/controllers/seams.js';
import type { EventObject } from '../../../src/kube/types.js';
import { nodeDeleterFromClient } from '../../../src/manager/adapters.js';
import { resolveRunOptions } from '../../../src/manager/options.js';
import type { ApiServerDouble } from '../../../src/double/server.js';
import { DockerEmulator } from '../../emulators/docker/server.js';
import { createNode, storedNode, useDouble } from '../../kit/double.js';
import { MemoryEvents } from '../memory-nodes.js';
import { eventually } from '../../kit/wait.js';
import { FakeClock } from '../../../src/kube/clock.js';

const PERIOD_MS = 500;

function setReady(api: ApiServerDouble, name: string, status: 'True' | 'False' | 'Unknown'): void {
  const node = storedNode(api, name) as NodeObject & { status: { conditions?: unknown[] } };
  node.status.conditions = [{ type: 'Ready', status, reason: status === 'True' ? 'KubeletReady' : 'NodeStatusUnknown' }];
  api.store.update('nodes', node, { subresource: 'status' });
}

function exists(api: ApiServerDouble, name: string): boolean {
  return api.store.peek('nodes', name) !== undefined;
}

function nodeEvents(api: ApiServerDouble, name: string): EventObject[] {
  return (api.store.list('events', { namespace: 'default' }) as unknown as EventObject[]).filter((e) => e.involvedObject.name === name);
}

describe('cloud-node-lifecycle in the whole process, static provider', () => {
  const cluster = useDouble();
  let dir: string | undefined;
  let provider: StaticProvider | undefined;
  afterEach(async () => {
    provider?.close();
    provider = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('an entry removed from the file: Node deleted within three periods (two answers a period apart), DeletingNode event, pod CIDRs released; shutdown: true → tainted; Ready → untainted', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'lifecycle-static-'));
    const file = path.join(dir, 'cloud-config.yaml');
    const entry = (n: number) => ({ addresses: [{ type: 'InternalIP', address: `10.0.0.${n}` }] });
    await writeFile(file, toYAML({ nodes: { s1: entry(1), s2: entry(2), s3: entry(3) } }));
    provider = await StaticProvider.open({ path: file, debounceMs: 20, pollMs: 0 });
    const running = cluster.runManager(resolveRunOptions({
      cloudProvider: 'static', cloudConfig: file, controllers: '*,cloud-node-lifecycle', nodeMonitorPeriod: `${PERIOD_MS}ms`, nodeStartupGracePeriod: '0s',
      allocateNodeCidrs: true, clusterCidr: '10.244.0.0/16', leaderElect: false, securePort: '0',
    }), { provider, identity: 'lc', userAgent: 'ccm-lifecycle' });
    // Registered by kubelets that then stopped reporting: not Ready.
    for (const name of ['s1', 's2', 's3']) {
      createNode(cluster.api, { name, ready: 'Unknown' });
    }
    const api = cluster.api;
    await eventually(() => ['s1', 's2', 's3'].every((n) => !hasUninitializedTaint(storedNode(api, n)) && nodePodCIDRs(storedNode(api, n)).length > 0), { timeoutMs: 10_000, what: 'nodes initialised with pod CIDRs' });
    const ipam = () => running.manager.controllers().ipam!;
    expect(ipam().ledger.stats()[0]!.nodes).toBe(3);
    expect(running.manager.controllers().lifecycle).toBeDefined();

    // The machine behind s2 is decommissioned: its entry leaves the file.
    let reloadedAt = 0;
    provider.onReload(() => (reloadedAt = Date.now()));
    await writeFile(file, toYAML({ nodes: { s1: entry(1), s3: entry(3) } }));
    await eventually(() => reloadedAt > 0, { timeoutMs: 5000, what: 'the static provider to reload the file' });
    await eventually(() => !exists(api, 's2'), { timeoutMs: 8 * PERIOD_MS, what: 's2 deleted' });
    expect(Date.now() - reloadedAt).toBeLessThanOrEqual(3 * PERIOD_MS);
    await eventually(() => ipam().ledger.stats()[0]!.nodes === 2, { timeoutMs: 2000, what: 'the pod CIDRs of s2 released' });
    const deleting = () => nodeEvents(api, 's2').filter((e) => e.reason === 'DeletingNode');
    await eventually(() => deleting().length > 0, { timeoutMs: 3000, what: 'the DeletingNode event' });
    expect(deleting().map((e) => [e.type, e.message])).toEqual([['Normal', 'Deleting node s2: its instance no longer exists in cloud provider static']]);
    expect(exists(api, 's1') && exists(api, 's3')).toBe(true);

    // s3 is powered off: the file says so.
    reloadedAt = 0;
    await writeFile(file, toYAML({ nodes: { s1: entry(1), s3: { ...entry(3), shutdown: true } } }));
    await eventually(() => reloadedAt > 0, { timeoutMs: 5000, what: 'reload' });
    await eventually(() => hasShutdownTaint(storedNode(api, 's3')), { timeoutMs: 4 * PERIOD_MS, what: 's3 tainted' });
    expect(Date.now() - reloadedAt).toBeLessThanOrEqual(2 * PERIOD_MS);
    expect(storedNode(api, 's3').spec!.taints).toEqual([{ key: SHUTDOWN_TAINT_KEY, effect: 'NoSchedule' }]);
    expect(hasShutdownTaint(storedNode(api, 's1'))).toBe(false);

    // Powered on again, its kubelet reports Ready: the taint goes.
    setReady(api, 's3', 'True');
    await eventually(() => !hasShutdownTaint(storedNode(api, 's3')), { timeoutMs: 4 * PERIOD_MS, what: 's3 untainted' });
    // The counters move when the write's response arrives, which the store may show first.
    const metrics = await eventually(async () => {
      const text = await running.manager.registry.metrics();
      return /action="untaint",result="success"/.test(text) && text;
    }, { timeoutMs: 2500, intervalMs: 50, what: 'the untaint counted' });
    expect(metrics).toMatch(/cloud_node_lifecycle_actions_total\{action="delete",result="success"\} 1/);
    expect(metrics).toMatch(/cloud_node_lifecycle_actions_total\{action="taint",result="success"\} 1/);
    expect(metrics).toMatch(/cloud_node_lifecycle_actions_total\{action="untaint",result="success"\} 1/);
    expect(metrics).toMatch(/cloudprovider_requests_total\{provider="static",operation="instancesExist",result="success"\} \d+/);
  });

  it('leader-elected with the other controllers: only the leader runs it', async () => {
    const clouds = [new FakeProvider(), new FakeProvider()];
    const lease = { leaderElectLeaseDuration: '1500ms', leaderElectRenewDeadline: '1s', leaderElectRetryPeriod: '200ms' };
    const managers = clouds.map((cloud, i) => cluster.runManager(resolveRunOptions({
      cloudProvider: 'fake', controllers: 'cloud-node-lifecycle', nodeMonitorPeriod: '200ms', nodeStartupGracePeriod: '0s', securePort: '0', ...lease,
    }), { provider: cloud, identity: `m${i}`, userAgent: `ccm-m${i}` }));
    createNode(cluster.api, { name: 'down', tainted: false, ready: 'False' });
    await eventually(() => !exists(cluster.api, 'down'), { timeoutMs: 10_000, what: 'the leader deletes the node' });
    const leaders = managers.filter((m) => m.manager.isLeading());
    expect(leaders).toHaveLength(1);
    const follower = managers.find((m) => !m.manager.isLeading())!;
    expect(follower.manager.controllers().lifecycle).toBeUndefined();
    expect(clouds[managers.indexOf(follower)]!.callCount()).toBe(0);
  });

  it('not named in --controllers: not running, even with every other controller', async () => {
    const cloud = new FakeProvider();
    const running = cluster.runManager(resolveRunOptions({ cloudProvider: 'fake', controllers: '*', leaderElect: false, securePort: '0' }), { provider: cloud });
    createNode(cluster.api, { name: 'gone', ready: 'False' });
    await eventually(() => running.manager.controllers().cloudNode !== undefined, { timeoutMs: 5000, what: 'controllers started' });
    // A window of a monitor period and more in which it would have started and acted.
    await new Promise((r) => setTimeout(r, 300));
    expect(running.manager.controllers().lifecycle).toBeUndefined();
    expect(cloud.callCount('instancesExist')).toBe(0);
    expect(exists(cluster.api, 'gone')).toBe(true);
  });
});

describe('cloud-node-lifecycle through the API double', () => {
  const cluster = useDouble();

  // No start-up grace: the Nodes here are seconds old. A missing instance is still trusted only
  // on a second answer a period after the first.
  async function run(provider: ConstructorParameters<typeof CloudNodeLifecycleController>[0]['provider'], deleter?: (real: NodeDeleter) => NodeDeleter, clock?: FakeClock) {
    const conn = cluster.connect();
    const events = new MemoryEvents();
    const real = nodeDeleterFromClient(conn.client);
    const controller = new CloudNodeLifecycleController({
      nodes: conn.nodes, writer: conn.writer, deleter: deleter ? deleter(real) : real, provider, events, monitorPeriodMs: PERIOD_MS, startupGraceMs: 0,
      ...(clock ? { clock } : {}),
    });
    conn.watcher.start();
    await conn.watcher.synced;
    cluster.defer(() => controller.stop());
    return { controller, events, conn };
  }

  it('kind: a stopped container gets the shutdown taint and loses it when it runs (and is Ready) again; a removed one is deleted', async () => {
    const docker = new DockerEmulator();
    await docker.start();
    cluster.defer(() => docker.stop());
    const label = { 'io.x-k8s.kind.cluster': 'kind' };
    docker.addContainer({ name: 'kind-worker', labels: label, networks: { kind: { IPAddress: '172.18.0.2' } } });
    docker.addContainer({ name: 'kind-worker2', labels: label, networks: { kind: { IPAddress: '172.18.0.4' } } });
    for (const name of ['kind-worker', 'kind-worker2']) createNode(cluster.api, { name, tainted: false, ready: 'True', providerID: `kind://docker/kind/${name}` });
    const kind = new KindProvider({ cluster: 'kind', dockerSocket: docker.socketPath }, new DockerClient({ socketPath: docker.socketPath }));
    const { controller, events } = await run(kind);
    controller.start();

    // `docker stop kind-worker`: the kubelet stops posting, the node goes Unknown.
    docker.setState('kind-worker', 'exited');
    setReady(cluster.api, 'kind-worker', 'Unknown');
    await eventually(() => hasShutdownTaint(storedNode(cluster.api, 'kind-worker')), { timeoutMs: 4 * PERIOD_MS, what: 'kind-worker tainted' });
    expect(exists(cluster.api, 'kind-worker')).toBe(true);

    // `docker start kind-worker`: running, and Ready once its kubelet reports.
    docker.setState('kind-worker', 'running');
    setReady(cluster.api, 'kind-worker', 'True');
    await eventually(() => !hasShutdownTaint(storedNode(cluster.api, 'kind-worker')), { timeoutMs: 4 * PERIOD_MS, what: 'kind-worker untainted' });

    // `docker rm -f kind-worker2`: gone.
    docker.removeContainer('kind-worker2');
    setReady(cluster.api, 'kind-worker2', 'Unknown');
    // Two answers a period apart: the second pass after the one that first found it gone.
    await eventually(() => !exists(cluster.api, 'kind-worker2'), { timeoutMs: 8 * PERIOD_MS, what: 'kind-worker2 deleted' });
    // The event follows the DELETE's response, which the watch may beat.
    await eventually(() => events.for('kind-worker2').some((e) => e.reason === 'DeletingNode'), { timeoutMs: 2000, what: 'the DeletingNode event' });
    expect(events.for('kind-worker2').map((e) => e.reason)).toEqual(['DeletingNodeDeferred', 'DeletingNode']);
    expect(events.for('kind-worker')).toEqual([]);
  });

  it('the DELETE is guarded by the uid: a Node re-created under the same name meanwhile is not deleted', async () => {
    const old = createNode(cluster.api, { name: 'reused', tainted: false, ready: 'False' });
    let recreated: NodeObject | undefined;
    // Between the decision (made on the cached, old Node) and the DELETE, the name is reused.
    const clock = new FakeClock(Date.now());
    const { controller, events } = await run(new FakeProvider(), (real) => ({
      delete: async (name, uid) => {
        expect(uid).toBe(old.metadata.uid);
        cluster.api.store.delete('nodes', name);
        recreated = createNode(cluster.api, { name, tainted: false, ready: 'False' });
        await real.delete(name, uid);
      },
    }), clock);
    // The first answer that the instance is gone, then the second a period later: the DELETE.
    expect((await controller.monitorNodes()).deferred).toBe(1);
    clock.advance(PERIOD_MS);
    const stats = await controller.monitorNodes();
    expect(stats.deleted).toBe(0);
    expect(stats.failed).toBe(0);
    expect(recreated!.metadata.uid).not.toBe(old.metadata.uid);
    expect(storedNode(cluster.api, 'reused').metadata.uid).toBe(recreated!.metadata.uid);
    expect(events.events.map((e) => e.reason)).toEqual(['DeletingNodeDeferred']);
  });
});
