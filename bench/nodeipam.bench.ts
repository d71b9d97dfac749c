// Node IPAM benchmarks (npm run bench nodeipam): 5,000 nodes join at once over 100 ClusterCIDR
// pools (MultiCIDRRangeAllocator) through the API server double in the same process. Measured from
// the moment the nodes are created (the controller is already up) until every node has its
// blocks; API writes per node by this controller. Two cases: node-ipam alone (untainted nodes:
// one PATCH each), and with cloud-node (tainted nodes: the blocks go in cloud-node's untainting
// write, so node-ipam writes nothing extra).
import { FakeProvider } from '../providers/fake/fake.js';
import { nodePodCIDRs, UNINITIALIZED_TAINT_KEY, type NodeObject } from '../src/model/node.js';
import { kubeConfigFromString } from '../src/kube/client.js';
import { ControllerManager } from '../src/manager/manager.js';
import { resolveRunOptions, type RawRunFlags } from '../src/manager/options.js';
import { startApiServerDouble, type ApiServerDouble } from '../src/double/server.js';

const USER_AGENT = 'node-address-ccm-bench-ipam';
const POOLS = 100;

/** 100 pools: 20 select a zone label (/25 blocks), 80 are fallbacks (/24 blocks); 10.<p>.0.0/18 each. */
function pools(api: ApiServerDouble): void {
  for (let p = 0; p < POOLS; p++) {
    const zoned = p < 20;
    api.store.create('clustercidrs.networking.x-k8s.io', {
      apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name: `pool-${String(p).padStart(3, '0')}` },
      spec: {
        perNodeHostBits: zoned ? 7 : 8,
        ipv4: `10.${p + 1}.0.0/18`,
        ...(zoned ? { nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [`z${p % 4}`] }] }] } } : {}),
      },
    });
  }
}

function node(i: number, tainted: boolean): NodeObject {
  const name = `ipam-${String(i).padStart(6, '0')}`;
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(i % 10 === 0 ? { 'topology.kubernetes.io/zone': `z${i % 4}` } : {}) } },
    spec: tainted ? { taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] } : {},
    status: { addresses: [{ type: 'InternalIP', address: `192.168.${(i >> 8) & 255}.${i & 255}` }, { type: 'Hostname', address: name }] },
  };
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function join(count: number, withCloudNode: boolean): Promise<string> {
  const api = await startApiServerDouble({ historySize: count * 4 });
  pools(api);
  const cloud = new FakeProvider();
  if (withCloudNode) for (let i = 0; i < count; i++) cloud.setInstance(node(i, true).metadata.name, { addresses: node(i, true).status!.addresses!.slice(0, 1) });
  const flags: RawRunFlags = {
    controllers: withCloudNode ? 'cloud-node,node-ipam' : 'node-ipam', allocateNodeCidrs: true, cidrAllocatorType: 'MultiCIDRRangeAllocator',
    leaderElect: 'false', concurrentNodeSyncs: '4', nodeStatusUpdateFrequency: '1h', securePort: '0', kubeApiQps: '-1', ...(withCloudNode ? { cloudProvider: 'fake' } : {}),
  };
  const manager = new ControllerManager(resolveRunOptions(flags), { kubeConfig: kubeConfigFromString(api.kubeconfig), userAgent: USER_AGENT, ...(withCloudNode ? { provider: cloud } : {}) });
  const abort = new AbortController();
  const done = manager.run(abort.signal);
  await waitFor(() => manager.controllers().ipam?.ready() === true && (!withCloudNode || manager.controllers().cloudNode !== undefined), 60_000, 'controllers ready');
  await waitFor(() => manager.controllers().ipam!.ledger.poolNames().length === POOLS, 60_000, 'pools loaded');
  api.resetCounters();
  const started = performance.now();
  api.store.createMany('nodes', Array.from({ length: count }, (_, i) => node(i, withCloudNode)));
  const ipam = manager.controllers().ipam!;
  await waitFor(() => ipam.ledger.nodeNames().length >= count, 600_000, 'allocations');
  const nodes = (): NodeObject[] => api.store.list('nodes') as unknown as NodeObject[];
  await waitFor(() => api.count({ verb: 'patch', resource: 'nodes', subresource: '', userAgent: USER_AGENT }) >= count, 600_000, 'node writes');
  await waitFor(() => nodes().every((n) => nodePodCIDRs(n).length > 0), 600_000, 'every node has blocks');
  const wallMs = performance.now() - started;
  const all = nodes().flatMap((n) => nodePodCIDRs(n));
  if (new Set(all).size !== all.length) throw new Error('bench: a pod CIDR was handed out twice');
  // Let stragglers (events) settle before counting writes.
  await new Promise((r) => setTimeout(r, 500));
  abort.abort();
  await done;
  const rows = api.counters().filter((c) => c.userAgent.includes(USER_AGENT));
  await api.stop();
  const per = (verb: string, resource: string, sub: string): string =>
    (rows.filter((r) => r.verb === verb && r.resource === resource && r.subresource === sub).reduce((s, r) => s + r.count, 0) / count).toFixed(3);
  const zoned = Math.ceil(count / 10);
  return `| ${count.toLocaleString('en')} nodes join at once, ${POOLS} ClusterCIDR pools (${zoned} nodes select /25 zone pools), ` +
    `${withCloudNode ? 'cloud-node + node-ipam (tainted nodes)' : 'node-ipam alone (untainted nodes)'} | ${(wallMs / 1000).toFixed(2)} s | ` +
    `per node: PATCH node ${per('patch', 'nodes', '')}, PATCH node/status ${per('patch', 'nodes', 'status')} | ${((wallMs * 1000) / count).toFixed(0)} µs |`;
}

export default async function run(): Promise<void> {
  const count = Number(process.env.BENCH_IPAM_NODES ?? 5000);
  console.log('| case | time until every node has its blocks | API writes (this process) | per node |');
  console.log('| --- | --- | --- | --- |');
  console.log(await join(count, false));
  console.log(await join(count, true));
}
