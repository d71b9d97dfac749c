// Restore benchmark (npm run bench restore): the node IPAM loop's start-up restore of N existing
// nodes whose blocks conflict pairwise (every block held by two nodes, as after two allocators ran
// at once), plus one legacy node whose /12 contains the pool. Measured: time from start() until
// blocks may be handed out, and the longest event-loop stall meanwhile (a ticker every 1 ms), since
// a stall longer than the renew deadline loses the Lease. The cache, writer and event sink are in
// memory: this measures the controller and the allocator, not the API server.
import { performance } from 'node:perf_hooks';
import { RangeAllocator } from '../src/controllers/nodeipam/range-allocator.js';
import { FlagsPoolSource } from '../src/controllers/nodeipam/pool-source.js';
import type { NodeObject } from '../src/model/node.js';
import type { NodeCache, NodeHandlers } from '../src/controllers/seams.js';

function nodes(count: number): NodeObject[] {
  const out: NodeObject[] = [];
  for (let i = 0; i < count; i++) {
    const block = i >> 1; // two holders per block
    const name = `n-${String(i).padStart(6, '0')}`;
    const ts = new Date(Date.UTC(2026, 0, 1, 0, 0, 0) + i * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const podCIDR = `10.${block >> 8}.${block & 255}.0/24`;
    out.push({ apiVersion: 'v1', kind: 'Node', metadata: { name, creationTimestamp: ts, resourceVersion: '1' }, spec: { podCIDR, podCIDRs: [podCIDR] } });
  }
  out.push({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'legacy', creationTimestamp: '2025-01-01T00:00:00Z', resourceVersion: '1' }, spec: { podCIDRs: ['10.0.0.0/12'] } });
  return out;
}

function cache(list: NodeObject[]): NodeCache {
  const byName = new Map(list.map((n) => [n.metadata.name, n]));
  return {
    get: (name) => byName.get(name),
    list: () => [...byName.values()],
    addHandlers: (h: NodeHandlers) => {
      for (const n of byName.values()) h.add?.(n);
    },
  };
}

async function restore(count: number): Promise<string> {
  const list = nodes(count);
  let events = 0;
  const controller = new RangeAllocator({
    nodes: cache(list),
    writer: { get: () => Promise.reject(new Error('no writes in this bench')), patch: () => Promise.reject(new Error('no writes')), patchStatus: () => Promise.reject(new Error('no writes')) },
    events: { emit: () => void events++ },
    sources: [new FlagsPoolSource({ clusterCIDR: '10.0.0.0/8' })],
    leaveTaintedNodes: false,
    fenceMs: 0,
    relist: async () => {},
  });
  let last = performance.now();
  let maxStall = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    maxStall = Math.max(maxStall, now - last);
    last = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 20));
  last = performance.now();
  maxStall = 0;
  const started = performance.now();
  await controller.start();
  const ms = performance.now() - started;
  // One more tick, so a stall at the very end is counted.
  await new Promise((r) => setTimeout(r, 5));
  clearInterval(ticker);
  await controller.stop();
  const heldOk = controller.ledger.nodeNames().length === list.length;
  return `| ${count.toLocaleString('en-US')} conflicting nodes + 1 legacy /12 | ${ms.toFixed(0)} ms | ${maxStall.toFixed(0)} ms | ${events.toLocaleString('en-US')} | ${heldOk ? 'every node held' : 'NOT every node held'} |`;
}

export default async function run(): Promise<void> {
  const counts = (process.env.BENCH_RESTORE_NODES ?? '20000,100000').split(',').map(Number);
  console.log('| restore of | start() until ready | longest event-loop stall | PodCIDRConflict events | ledger |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const c of counts) console.log(await restore(c));
}
