// One node's answer fails in a batch of 500 (npm run bench batch-failure): 500 tainted nodes join
// at once; the provider fails every call that holds one of them (it throws, answers null, hangs
// past its deadline, or, for the webhook, the POST holding it gets a document that is not JSON).
// Measured: the time from the start of the controller manager (in this process, against the API
// server double over loopback, --concurrent-node-syncs 1 as by default) until the other 499 are
// initialised, and the provider calls it took. The providers are built here (a module's checks,
// a webhook server of a few lines) so the bench runs on code from before issue 38 as well.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { CheckedProvider } from '../providers/checked-provider.js';
import { FakeProvider } from '../providers/fake/fake.js';
import type { CloudProvider, NodeRef } from '../providers/types.js';
import { createProvider } from '../providers/registry.js';
import { hasUninitializedTaint, UNINITIALIZED_TAINT_KEY, type NodeObject } from '../src/model/node.js';
import { kubeConfigFromString } from '../src/kube/client.js';
import { ControllerManager } from '../src/manager/manager.js';
import { resolveRunOptions } from '../src/manager/options.js';
import { startApiServerDouble, type ApiServerDouble } from '../src/double/server.js';

const NODES = 500;
const BAD = 'bench-000321';
/** How long a case may take before it is reported as not done. */
const GIVE_UP_MS = Number(process.env.BENCH_GIVE_UP_MS ?? 60_000);

const nameOf = (i: number): string => `bench-${String(i).padStart(6, '0')}`;
const addressOf = (i: number): string => `10.1.${(i >> 8) & 255}.${i & 255}`;

function tainted(i: number): NodeObject {
  const name = nameOf(i);
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: { taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] },
    status: { addresses: [{ type: 'Hostname', address: name }] },
  };
}

function cloud(): FakeProvider {
  const fake = new FakeProvider();
  for (let i = 0; i < NODES; i++) fake.setInstance(nameOf(i), { addresses: [{ type: 'InternalIP', address: addressOf(i) }], zone: 'z1' });
  return fake;
}

type Failure = 'throw' | 'null' | 'hang';

/** A module's provider that fails every call holding BAD, behind the checks a module gets. */
function badModule(how: Failure, timeoutMs: number): { provider: CloudProvider; calls: () => number } {
  const fake = cloud();
  let calls = 0;
  const answer = (nodes: readonly NodeRef[], signal?: AbortSignal) => {
    calls++;
    if (!nodes.some((n) => n.name === BAD)) return fake.instancesMetadata(nodes, signal);
    if (how === 'throw') return Promise.reject(new Error(`the inventory chokes on ${BAD}`));
    if (how === 'null') return Promise.resolve(null as never);
    return new Promise<never>(() => {});
  };
  const inner: CloudProvider = {
    name: 'bench-module',
    instancesMetadata: answer,
    instancesExist: (n, s) => fake.instancesExist(n, s),
    instancesShutdown: (n, s) => fake.instancesShutdown(n, s),
  };
  return { provider: new CheckedProvider(inner, { timeoutMs }), calls: () => calls };
}

/** The webhook provider against a v1 server of the fake's instances; the POST holding BAD gets a body that is not JSON. */
async function badWebhook(dir: string): Promise<{ provider: CloudProvider; calls: () => number; close: () => Promise<void> }> {
  const fake = cloud();
  let posts = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts++;
      const nodes = (JSON.parse(Buffer.concat(chunks).toString()) as { nodes: NodeRef[] }).nodes;
      if (nodes.some((n) => n.name === BAD)) {
        res.end('{"apiVersion": "webhook.node-address-ccm.io/v1", "nodes": {');
        return;
      }
      void fake.instancesMetadata(nodes).then((answers) => {
        const out: Record<string, unknown> = {};
        for (const [name, a] of answers) out[name] = a.kind === 'found' ? { found: a.value } : { notFound: {} };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'webhook.node-address-ccm.io/v1', kind: 'InstancesResponse', nodes: out }));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const conf = path.join(dir, 'webhook.yaml');
  await writeFile(conf, `url: http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/instances\ninsecurePlainHTTP: true\nbatchSize: 100\nattempts: 1\n`);
  const provider = await createProvider('webhook', { cloudConfig: conf });
  return { provider, calls: () => posts, close: () => new Promise((r) => server.close(() => r())) };
}

async function measure(api: ApiServerDouble, provider: CloudProvider): Promise<{ half?: number; all?: number; bad: string }> {
  api.store.createMany('nodes', Array.from({ length: NODES }, (_, i) => tainted(i)));
  const options = resolveRunOptions({ kubeApiQps: '-1', cloudProvider: 'fake', leaderElect: 'false', controllers: 'cloud-node', nodeStatusUpdateFrequency: '1h' });
  const manager = new ControllerManager(options, { kubeConfig: kubeConfigFromString(api.kubeconfig), provider, eventRate: null });
  const abort = new AbortController();
  const started = performance.now();
  const done = manager.run(abort.signal);
  let half: number | undefined;
  let all: number | undefined;
  while (performance.now() - started < GIVE_UP_MS) {
    const others = (api.store.list('nodes') as unknown as NodeObject[]).filter((n) => n.metadata.name !== BAD && !hasUninitializedTaint(n)).length;
    if (half === undefined && others >= (NODES - 1) / 2) half = performance.now() - started;
    if (others === NODES - 1) {
      all = performance.now() - started;
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const untainted = (api.store.list('nodes') as unknown as NodeObject[]).filter((n) => n.metadata.name !== BAD && !hasUninitializedTaint(n)).length;
  const badNode = api.store.get('nodes', BAD) as unknown as NodeObject;
  const badEvents = () => (api.store.list('events', { namespace: 'default' }) as unknown as { involvedObject: { name: string }; message: string }[]).filter((e) => e.involvedObject.name === BAD);
  // Its own answer may come last (the hang: its last call times out with its sibling's answer).
  for (let waited = 0; badEvents().length === 0 && waited < 3_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  const events = badEvents();
  abort.abort();
  await done;
  const bad = `${hasUninitializedTaint(badNode) ? 'tainted' : 'INITIALISED'}; its event: ${events[0]?.message.replace(/^failed to get instance metadata from cloud provider [^:]+: /, '').slice(0, 60) ?? 'none'}${all === undefined ? `; others initialised: ${untainted} of ${NODES - 1}` : ''}`;
  return { ...(half !== undefined ? { half } : {}), ...(all !== undefined ? { all } : {}), bad };
}

const s = (ms: number | undefined): string => (ms === undefined ? `not within ${GIVE_UP_MS / 1000} s` : `${(ms / 1000).toFixed(2)} s`);

export default async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-webhook-'));
  console.log(`load average before: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('| case | the other 499 initialised | half of them | provider calls / POSTs | the bad node |');
  console.log('| --- | --- | --- | --- | --- |');
  const cases: Array<[string, () => Promise<{ provider: CloudProvider; calls: () => number; close?: () => Promise<void> }>]> = [
    ['no bad node (baseline): a module answering all 500', async () => {
      const fake = cloud();
      return { provider: new CheckedProvider(fake, { timeoutMs: 60_000 }), calls: () => fake.callCount('instancesMetadata') };
    }],
    ['a module whose calls holding the node throw', async () => badModule('throw', 60_000)],
    ['a module whose calls holding the node answer null', async () => badModule('null', 60_000)],
    ['a module whose calls holding the node hang past timeoutSeconds 1', async () => badModule('hang', 1_000)],
    ['the webhook (batchSize 100), the POST holding the node answered with a document that is not JSON', async () => badWebhook(dir)],
  ];
  for (const [name, make] of cases) {
    const api = await startApiServerDouble({ historySize: NODES * 8 });
    const p = await make();
    const r = await measure(api, p.provider);
    await p.provider.close?.();
    await p.close?.();
    await api.stop();
    console.log(`| ${name} | ${s(r.all)} | ${s(r.half)} | ${p.calls()} | ${r.bad} |`);
  }
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await rm(dir, { recursive: true, force: true });
}
