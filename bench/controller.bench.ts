// Controller benchmarks (npm run bench controller): initialise 5,000 tainted nodes through the API
// server double with the fake provider (no latency), and one address refresh over 50,000
// initialised nodes. The double runs in the same process, so RSS covers both.
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { FakeProvider } from '../providers/fake/fake.js';
import { hasUninitializedTaint, nodePodCIDRs, UNINITIALIZED_TAINT_KEY, type NodeObject } from '../src/model/node.js';
import { kubeConfigFromString } from '../src/kube/client.js';
import { ControllerManager } from '../src/manager/manager.js';
import { resolveRunOptions } from '../src/manager/options.js';
import { startApiServerDouble, type ApiServerDouble } from '../src/double/server.js';
import type { NodeAddress } from '../src/model/node-address.js';

const USER_AGENT = 'node-address-ccm-bench';

function addressesOf(i: number): NodeAddress[] {
  return [
    { type: 'InternalIP', address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
    { type: 'InternalIP', address: `fd00::${i.toString(16)}` },
  ];
}

function node(i: number, tainted: boolean): NodeObject {
  const name = `bench-${String(i).padStart(6, '0')}`;
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name }, annotations: i % 2 === 0 ? { 'alpha.kubernetes.io/provided-node-ip': addressesOf(i).map((a) => a.address).join(',') } : {} },
    spec: tainted ? { taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] } : { providerID: `fake://${name}` },
    status: { addresses: tainted ? [{ type: 'Hostname', address: name }] : [...addressesOf(i), { type: 'Hostname', address: name }] },
  };
}

interface Sampler {
  stop(): number;
}

function sampleRss(): Sampler {
  let peak = process.memoryUsage().rss;
  const t = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  return {
    stop() {
      clearInterval(t);
      return Math.max(peak, process.memoryUsage().rss);
    },
  };
}

/** Bytes in use in V8's old generation (every space but the young one and read-only). */
function oldGenerationUsed(): number {
  return getHeapSpaceStatistics().filter((s) => s.space_name !== 'new_space' && s.space_name !== 'read_only_space').reduce((n, s) => n + s.space_used_size, 0);
}

/** Counts full (mark-compact) collections from now until stop(). */
function countMajorGCs(): { stop: () => number } {
  let count = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (((e as PerformanceEntry & { detail?: { kind?: number } }).detail)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) count++;
  });
  observer.observe({ entryTypes: ['gc'] });
  return { stop: () => (observer.disconnect(), count) };
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function startManager(api: ApiServerDouble, cloud: FakeProvider, extra: Record<string, string> = {}) {
  const options = resolveRunOptions({
    // Throughput of the controllers themselves: no client-side limit (--kube-api-qps=-1).
    kubeApiQps: '-1',
    cloudProvider: 'fake', allocateNodeCidrs: true, clusterCidr: '10.64.0.0/10', leaderElect: 'false',
    concurrentNodeSyncs: '4', nodeStatusUpdateFrequency: '1h', ...extra,
  });
  const manager = new ControllerManager(options, { kubeConfig: kubeConfigFromString(api.kubeconfig), provider: cloud, userAgent: USER_AGENT, eventRate: null });
  const abort = new AbortController();
  const done = manager.run(abort.signal);
  return { manager, stop: async () => { abort.abort(); await done; } };
}

const mb = (b: number): string => `${(b / 1024 / 1024).toFixed(0)} MiB`;

async function initialise(count: number): Promise<string[]> {
  const api = await startApiServerDouble({ historySize: count * 4 });
  const cloud = new FakeProvider();
  for (let i = 0; i < count; i++) cloud.setInstance(node(i, true).metadata.name, { addresses: addressesOf(i), zone: `z${i % 3}`, region: 'r', instanceType: 'bench.large' });
  api.store.createMany('nodes', Array.from({ length: count }, (_, i) => node(i, true)));
  global.gc?.();
  const rss = sampleRss();
  const started = performance.now();
  const m = startManager(api, cloud);
  const nodes = (): NodeObject[] => api.store.list('nodes') as unknown as NodeObject[];
  // Poll the cheap request counter; check the stored nodes once at the end.
  await waitFor(() => api.count({ verb: 'patch', resource: 'nodes', subresource: '', userAgent: USER_AGENT }) >= count, 600_000, 'initialisation');
  const wallMs = performance.now() - started;
  const bad = nodes().filter((n) => hasUninitializedTaint(n) || nodePodCIDRs(n).length === 0).length;
  if (bad > 0) throw new Error(`bench: ${bad} nodes not initialised with pod CIDRs after ${count} guarded patches`);
  await waitFor(() => api.count({ verb: 'create', resource: 'events', userAgent: USER_AGENT }) >= count, 300_000, 'events');
  const peak = rss.stop();
  await m.stop();
  const rows = api.counters().filter((c) => c.userAgent.includes(USER_AGENT));
  await api.stop();
  const per = (verb: string, resource: string, sub?: string): string =>
    (rows.filter((r) => r.verb === verb && r.resource === resource && (sub === undefined || r.subresource === sub)).reduce((s, r) => s + r.count, 0) / count).toFixed(3);
  return [
    `| initialise ${count.toLocaleString('en')} tainted nodes (fake provider, no latency, --concurrent-node-syncs 4, --allocate-node-cidrs) | ${(wallMs / 1000).toFixed(2)} s | ` +
      `per node: PATCH status ${per('patch', 'nodes', 'status')}, PATCH node ${per('patch', 'nodes', '')}, PUT node ${per('update', 'nodes')}, ` +
      `POST event ${per('create', 'events')}, PATCH event ${per('patch', 'events')}; cloud calls ${cloud.callCount('instancesMetadata')} | ${mb(peak)} |`,
  ];
}

async function resync(count: number, changedEvery: number): Promise<string[]> {
  const api = await startApiServerDouble({ historySize: 1000 });
  const cloud = new FakeProvider();
  for (let i = 0; i < count; i++) {
    const addrs = addressesOf(i);
    if (i % changedEvery === 0) addrs.push({ type: 'ExternalIP', address: `203.0.${(i >> 8) & 255}.${i & 255}` });
    cloud.setInstance(node(i, false).metadata.name, { addresses: addrs });
  }
  api.store.createMany('nodes', Array.from({ length: count }, (_, i) => node(i, false)));
  const m = startManager(api, cloud, { allocateNodeCidrs: 'false' });
  await m.manager.watcher.synced;
  await waitFor(() => m.manager.controllers().cloudNode !== undefined, 60_000, 'controller start');
  global.gc?.();
  const rss = sampleRss();
  api.resetCounters();
  // What the round leaves in the old generation: garbage there costs full collections and RSS
  // (on Node 20, spread-then-extended objects did: docs/benchmarks.md "Object spread on Node 20").
  const oldBefore = oldGenerationUsed();
  const majors = countMajorGCs();
  const started = performance.now();
  const stats = await m.manager.controllers().cloudNode!.resyncAddresses();
  const wallMs = performance.now() - started;
  const oldGrowth = oldGenerationUsed() - oldBefore;
  const majorGCs = majors.stop();
  const peak = rss.stop();
  await m.stop();
  const writes = api.count({ verb: 'patch', resource: 'nodes', userAgent: USER_AGENT });
  await api.stop();
  return [
    `| address refresh of ${count.toLocaleString('en')} initialised nodes, 1 in ${changedEvery} changed | ${(wallMs / 1000).toFixed(2)} s | ` +
      `${stats.updated.toLocaleString('en')} status PATCHes (${writes} seen by the API), ${cloud.callCount('instancesMetadata')} provider calls of ≤500 nodes | ${mb(peak)}; old generation ${oldGrowth >= 0 ? '+' : ''}${(oldGrowth / 2 ** 20).toFixed(1)} MiB (${Math.round(oldGrowth / count)} B per node), ${majorGCs} full collections in the round |`,
  ];
}

export default async function run(): Promise<void> {
  const init = Number(process.env.BENCH_INIT_NODES ?? 5000);
  const big = Number(process.env.BENCH_RESYNC_NODES ?? 50_000);
  console.log('| case | wall time | API requests | peak RSS (process, incl. API double) |');
  console.log('| --- | --- | --- | --- |');
  for (const l of await initialise(init)) console.log(l);
  for (const l of await resync(big, 100)) console.log(l);
}
