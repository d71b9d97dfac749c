// Throughput of the API server double: is it fast enough not to be the bottleneck of the
// controller benchmarks (50,000 nodes, several watchers, thousands of writes per second)?
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { kubeConfigFor, startApiServerDouble, type ApiServerDouble } from '../src/double/index.js';

function node(i: number): object {
  const name = `node-${String(i).padStart(5, '0')}`;
  return {
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'topology.kubernetes.io/zone': `zone-${i % 3}`, 'node.kubernetes.io/instance-type': 'm5.large' },
      annotations: { 'alpha.kubernetes.io/provided-node-ip': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
    },
    spec: { taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' }] },
    status: {
      addresses: [
        { type: 'InternalIP', address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
        { type: 'Hostname', address: name },
      ],
      conditions: ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({ type, status: type === 'Ready' ? 'True' : 'False', reason: 'Kubelet', message: 'ok', lastHeartbeatTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' })),
      nodeInfo: { kubeletVersion: 'v1.33.0', containerRuntimeVersion: 'containerd://2.0.0', osImage: 'Linux', kernelVersion: '6.8', architecture: 'amd64', operatingSystem: 'linux', machineID: '', systemUUID: '', bootID: '', kubeProxyVersion: '' },
    },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** A raw watch that counts events without parsing more than needed. */
function countingWatch(s: ApiServerDouble, rv: number): { count: () => number; close: () => void } {
  let events = 0;
  const req = http.get(`${s.url}/api/v1/nodes?watch=true&resourceVersion=${rv}`, { headers: { Authorization: `Bearer ${s.adminToken}` } }, (res) => {
    res.on('data', (d: Buffer) => {
      for (const b of d) if (b === 10) events++;
    });
  });
  req.on('error', () => undefined);
  return { count: () => events, close: () => req.destroy() };
}

async function timeList(s: ApiServerDouble, runs: number, query = ''): Promise<{ ms: number; bytes: number }> {
  const core = kubeConfigFor(s).makeApiClient(CoreV1Api);
  await core.listNode(); // warm-up
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = await fetch(`${s.url}/api/v1/nodes${query}`, { headers: { Authorization: `Bearer ${s.adminToken}` } });
    bytes = (await r.arrayBuffer()).byteLength;
    times.push(performance.now() - t0);
  }
  return { ms: median(times), bytes };
}

export default async function run(): Promise<void> {
  const rows: string[][] = [];

  // LIST of 5,000 nodes: raw HTTP and through client-node (which deserialises into classes).
  const small = await startApiServerDouble();
  small.store.createMany('nodes', Array.from({ length: 5000 }, (_, i) => node(i)));
  const raw5k = await timeList(small, 10);
  rows.push(['LIST 5,000 nodes, HTTP (median of 10)', `${raw5k.ms.toFixed(1)} ms`, `${(raw5k.bytes / 1e6).toFixed(1)} MB body`]);
  const core = kubeConfigFor(small).makeApiClient(CoreV1Api);
  const cn: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await core.listNode();
    cn.push(performance.now() - t0);
  }
  rows.push(['LIST 5,000 nodes, client-node listNode (median of 5)', `${median(cn).toFixed(1)} ms`, 'includes client-side deserialisation']);
  await small.stop();

  // 50,000 nodes seeded directly into the store.
  const big = await startApiServerDouble({ historySize: 100_000 });
  let t0 = performance.now();
  big.store.createMany('nodes', Array.from({ length: 50_000 }, (_, i) => node(i)));
  const seedMs = performance.now() - t0;
  rows.push(['seed 50,000 nodes (store.createMany)', `${seedMs.toFixed(0)} ms`, `${Math.round(50_000 / (seedMs / 1000))} objects/s`]);
  const raw50k = await timeList(big, 3);
  rows.push(['LIST 50,000 nodes, HTTP (median of 3)', `${raw50k.ms.toFixed(0)} ms`, `${(raw50k.bytes / 1e6).toFixed(0)} MB body`]);
  const paged = await timeList(big, 10, '?limit=500');
  rows.push(['LIST 50,000 nodes, first page of 500 (median of 10)', `${paged.ms.toFixed(1)} ms`, '']);
  const selected = await timeList(big, 5, '?labelSelector=topology.kubernetes.io/zone%3Dzone-1');
  rows.push(['LIST 50,000 nodes with a label selector (1/3 match)', `${selected.ms.toFixed(0)} ms`, '']);

  // Writes over HTTP with 4 watchers of all nodes connected.
  const watchers = Array.from({ length: 4 }, () => countingWatch(big, big.store.resourceVersion));
  await new Promise((r) => setTimeout(r, 200));
  const writers = 16;
  const perWriter = 250;
  const clients = Array.from({ length: writers }, () => kubeConfigFor(big).makeApiClient(CoreV1Api));
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  t0 = performance.now();
  await Promise.all(
    clients.map(async (c, w) => {
      for (let i = 0; i < perWriter; i++) {
        const n = (w * perWriter + i) % 50_000;
        await c.patchNode({ name: `node-${String(n).padStart(5, '0')}`, body: { metadata: { labels: { step: String(i) } } } }, merge);
      }
    }),
  );
  const writeMs = performance.now() - t0;
  const total = writers * perWriter;
  rows.push([`${total} merge patches via client-node, ${writers} concurrent writers, 4 watchers`, `${Math.round(total / (writeMs / 1000))} writes/s`, `${writeMs.toFixed(0)} ms`]);
  // Raw HTTP writes: the server's own ceiling, without client-node's per-call overhead.
  const agent = new http.Agent({ keepAlive: true, maxSockets: writers });
  t0 = performance.now();
  await Promise.all(
    Array.from({ length: writers }, (_, w) =>
      (async () => {
        for (let i = 0; i < perWriter; i++) {
          const name = `node-${String((w * perWriter + i + 7) % 50_000).padStart(5, '0')}`;
          await new Promise<void>((resolve, reject) => {
            const req = http.request(`${big.url}/api/v1/nodes/${name}`, { method: 'PATCH', agent, headers: { Authorization: `Bearer ${big.adminToken}`, 'Content-Type': 'application/merge-patch+json' } }, (res) => {
              res.resume();
              res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PATCH ${name}: ${res.statusCode}`))));
            });
            req.on('error', reject);
            req.end(JSON.stringify({ metadata: { labels: { raw: String(i) } } }));
          });
        }
      })(),
    ),
  );
  const rawWriteMs = performance.now() - t0;
  rows.push([`${total} merge patches via raw HTTP keep-alive, ${writers} writers, 4 watchers`, `${Math.round(total / (rawWriteMs / 1000))} writes/s`, `${rawWriteMs.toFixed(0)} ms`]);
  const deadline = Date.now() + 10_000;
  while (watchers.some((w) => w.count() < 2 * total) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  rows.push(['events delivered to each of 4 watchers', watchers.map((w) => w.count()).join(' / '), `expected ${2 * total} each`]);
  for (const w of watchers) w.close();
  await big.stop();
  agent.destroy();

  console.log('| case | result | notes |');
  console.log('| --- | --- | --- |');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}
