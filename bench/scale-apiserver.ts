// The API server side of `npm run bench scale` and `npm run bench failover`, in its own process (it
// holds 100,000 Node objects of about 12 KB each, several GB of heap): the API server double filled
// with realistic initialised nodes, and the static cloud's config listing them and the nodes that
// will join. Driven by the benchmark over stdin/stdout, one JSON object a line. Besides the admin's
// kubeconfig it writes one per replica user (`<kubeconfig>.replica-a`, `.replica-b`), so that the
// requests of each replica can be counted apart.
//
// Two shapes (the fifth argument):
// - `join` (the default): initialised nodes holding a /27 of 100.64.0.0/10 with the pool
//   annotation, AWS providerIDs, and a cloud-config listing them with one address each; tainted
//   nodes prepared for the join.
// - `migrated` (issue 41): a cluster taken over from kube-controller-manager. Every node holds a
//   /26 of 100.0.0.0/9 WITHOUT the pool annotation, has providerID static://<name>, a
//   provided-node-ip annotation, and InternalIP + Hostname + InternalDNS addresses (40 images:
//   12.9 KB of JSON each as stored); the cloud-config lists every node with its zone, region,
//   instance type, InternalIP and InternalDNS. Variants of the cloud-config are written beside it:
//   `<cloud-config>.one` (the InternalIP alone) and `<cloud-config>.empty` (no nodes).
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { hasUninitializedTaint, nodePodCIDRs, type NodeObject } from '../src/model/node.js';
import { startApiServerDouble } from '../src/double/server.js';
import { realisticNode } from '../src/simulation/realistic-node.js';

const [kubeconfigPath, cloudConfigPath, nodesText, joinText, shapeText] = process.argv.slice(2);
const NODES = Number(nodesText);
const JOIN = Number(joinText);
const SHAPE = shapeText ?? 'join';
if (SHAPE !== 'join' && SHAPE !== 'migrated') throw new Error(`scale-apiserver: unknown shape ${SHAPE} (join, migrated)`);
const USER_AGENT = 'node-address-ccm';

/** /27 number i of 100.64.0.0/10: room for 131,072 nodes. */
function podCIDR(i: number): string {
  // A /16 holds 2,048 /27s: the second octet moves every 2,048 nodes.
  return `100.${64 + (i >> 11)}.${(i >> 3) & 255}.${(i & 7) * 32}/27`;
}

/** /26 number i of 100.0.0.0/9: room for 131,072 nodes (the migrated shape). */
function podCIDR26(i: number): string {
  // A /16 holds 1,024 /26s.
  return `100.${i >> 10}.${(i >> 2) & 255}.${(i & 3) * 64}/26`;
}

/** Node i's InternalIP (10.0.0.0/8, unique below 16 million nodes). */
function nodeIP(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

/** Node i's private DNS name, as EC2 names an instance by its IP. */
function internalDNS(i: number): string {
  return `ip-${nodeIP(i).replaceAll('.', '-')}.region-1.compute.internal`;
}

function send(msg: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

const REPLICA_USERS = ['replica-a', 'replica-b'];
const api = await startApiServerDouble({ historySize: 50_000, bookmarkIntervalMs: 1000, users: REPLICA_USERS.map((name) => ({ name, token: `bench-${name}` })) });
const started = Date.now();
const cloud: Record<string, unknown> = {};
/** The migrated shape's cloud-config with the InternalIP alone per entry. */
const cloudOne: Record<string, unknown> = {};
for (let i = 0; i < NODES; i++) {
  const name = `node-${String(i).padStart(6, '0')}`;
  let n: NodeObject;
  if (SHAPE === 'migrated') {
    n = realisticNode(name, { index: i, podCIDRs: [podCIDR26(i)], poolAnnotation: false, nodeIP: nodeIP(i), providerID: `static://${name}`, internalDNS: internalDNS(i), images: 40 });
    const place = { zone: `zone-${i % 3}`, region: 'region-1', instanceType: 'm6i.2xlarge' };
    cloud[name] = { ...place, addresses: [{ type: 'InternalIP', address: nodeIP(i) }, { type: 'InternalDNS', address: internalDNS(i) }] };
    cloudOne[name] = { ...place, addresses: [{ type: 'InternalIP', address: nodeIP(i) }] };
  } else {
    n = realisticNode(name, { index: i, podCIDRs: [podCIDR(i)] });
    cloud[name] = { providerID: n.spec!.providerID, zone: `zone-${i % 3}`, region: 'region-1', instanceType: 'm6i.2xlarge', addresses: n.status!.addresses!.filter((a) => a.type === 'InternalIP') };
  }
  delete n.metadata.resourceVersion;
  delete n.metadata.uid;
  delete n.metadata.creationTimestamp;
  api.store.createRef('nodes', n as never);
}
const joinNames: string[] = [];
// The joining Nodes as their kubelets will send them, built now so that the join measures the
// API server taking them in and the controller, not the bench making 10,000 objects.
const joining: NodeObject[] = [];
for (let j = 0; j < JOIN; j++) {
  const i = NODES + j;
  const name = `join-${String(j).padStart(6, '0')}`;
  joinNames.push(name);
  cloud[name] = { providerID: `aws:///zone-${i % 3}/i-${i.toString(16).padStart(17, '0')}`, zone: `zone-${i % 3}`, region: 'region-1', instanceType: 'm6i.2xlarge', addresses: [{ type: 'InternalIP', address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }] };
  const n = realisticNode(name, { index: i, tainted: true, nodeIP: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` });
  delete n.metadata.resourceVersion;
  delete n.metadata.uid;
  delete n.metadata.creationTimestamp;
  delete n.spec!.providerID;
  n.status!.addresses = [{ type: 'Hostname', address: n.metadata.name }];
  joining.push(n);
}
// Encode every Node once now, as a warm kube-apiserver has them serialized: the first LIST then
// measures the controller, not the double's first JSON.stringify of 1.2 GB.
let encoded = 0;
for (const n of api.store.listRefs('nodes')) encoded += api.store.encodeListItemBytes(n).length;
writeFileSync(kubeconfigPath!, api.kubeconfig);
for (const user of REPLICA_USERS) writeFileSync(`${kubeconfigPath!}.${user}`, api.kubeconfigFor(user));
writeFileSync(cloudConfigPath!, JSON.stringify({ nodes: cloud }));
if (SHAPE === 'migrated') {
  writeFileSync(`${cloudConfigPath!}.one`, JSON.stringify({ nodes: cloudOne }));
  writeFileSync(`${cloudConfigPath!}.empty`, JSON.stringify({ nodes: {} }));
}
send({ ready: true, nodes: NODES, fillMs: Date.now() - started, rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20), nodeBytes: Math.round(encoded / Math.max(1, NODES)) });

let joinedAt = 0;
const counts = () => ({
  patchNodes: api.count({ verb: 'patch', resource: 'nodes', subresource: '', userAgent: USER_AGENT }),
  patchStatus: api.count({ verb: 'patch', resource: 'nodes', subresource: 'status', userAgent: USER_AGENT }),
  updateNodes: api.count({ verb: 'update', resource: 'nodes', userAgent: USER_AGENT }),
  createEvents: api.count({ verb: 'create', resource: 'events', userAgent: USER_AGENT }),
  patchEvents: api.count({ verb: 'patch', resource: 'events', userAgent: USER_AGENT }),
  listNodes: api.count({ verb: 'list', resource: 'nodes', userAgent: USER_AGENT }),
});

// When each replica's node writes arrive (the failover bench's trace: client delay or server time).
const writeArrivals: { user: string; verb: string; name: string; at: number }[] = [];
api.onRequest((info) => {
  if (info.resource === 'nodes' && (info.verb === 'patch' || info.verb === 'update') && writeArrivals.length < 1000) writeArrivals.push({ user: info.user, verb: info.verb, name: info.name, at: Date.now() });
});

/** Every request of one user, by verb and resource ("list nodes": 3), and the node LIST pages among them. */
function requestsOf(user: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of api.detailedCounters()) {
    if (r.user !== user) continue;
    const key = `${r.verb} ${r.resource}${r.subresource ? '/' + r.subresource : ''}`;
    out[key] = (out[key] ?? 0) + r.count;
  }
  return out;
}

/**
 * Kubelet-like status updates: `perSecond` nodes a second, round robin, each a new heartbeat on
 * its Ready condition (a real cluster's kubelets report every 5 min when nothing changes, so N/300
 * a second). Every watch of nodes sees them, as it would in a real cluster.
 */
let churnTimer: NodeJS.Timeout | undefined;
function churn(perSecond: number): void {
  clearInterval(churnTimer);
  if (perSecond <= 0) return;
  const names = (api.store.listRefs('nodes') as unknown as NodeObject[]).map((n) => n.metadata.name);
  let next = 0;
  let owed = 0;
  churnTimer = setInterval(() => {
    owed += perSecond / 10;
    for (; owed >= 1; owed--) {
      const name = names[next++ % names.length]!;
      const cur = api.store.peek('nodes', name) as unknown as NodeObject | undefined;
      if (!cur) continue;
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const conditions = ((cur.status?.conditions ?? []) as { type: string }[]).map((c) => (c.type === 'Ready' ? { ...c, lastHeartbeatTime: now } : c));
      // updateRef with a new object the store may own (metadata copied: the store stamps it),
      // without update()'s two copies of 12 KB: the double's own cost is not the benchmark's.
      api.store.updateRef('nodes', { ...cur, metadata: { ...cur.metadata }, status: { ...cur.status, conditions } }, { owned: true });
    }
  }, 100);
}

for await (const line of createInterface({ input: process.stdin })) {
  const cmd = JSON.parse(line) as { cmd: string; count?: number; perSecond?: number; user?: string };
  if (cmd.cmd === 'join') {
    // All 10,000 appear at once: created in one loop with the watch held, then released together.
    // (Without the hold, the first few hundred events got out while the loop ran and the rest
    // seconds later: a stall no real API server makes, and not part of the join.) `count`: only
    // the next so many of the prepared nodes (the failover bench joins one at a time).
    const createStarted = Date.now();
    api.store.hub.pause();
    // createRef stores a JSON copy (flat strings, as a decoded request body has) and returns it
    // without a second copy.
    const batch = joining.splice(0, cmd.count ?? joining.length);
    for (const n of batch) api.store.createRef('nodes', n as never);
    const createMs = Date.now() - createStarted;
    joinedAt = Date.now();
    api.store.hub.resume();
    send({ joined: batch.length, counts: counts(), createMs });
  } else if (cmd.cmd === 'churn') {
    churn(cmd.perSecond ?? 0);
    send({ churn: cmd.perSecond ?? 0 });
  } else if (cmd.cmd === 'writes') {
    send({ writes: writeArrivals.filter((w) => w.user === cmd.user) });
  } else if (cmd.cmd === 'requests') {
    send({ requests: requestsOf(cmd.user ?? '') });
  } else if (cmd.cmd === 'status') {
    let pending = 0;
    for (const name of joinNames) {
      const n = api.store.peek('nodes', name) as unknown as NodeObject | undefined;
      if (!n || hasUninitializedTaint(n) || nodePodCIDRs(n).length === 0) pending++;
    }
    send({ pending, sinceJoinMs: joinedAt ? Date.now() - joinedAt : 0, counts: counts() });
  } else if (cmd.cmd === 'stop') {
    clearInterval(churnTimer);
    await api.stop();
    send({ stopped: true });
    process.exit(0);
  }
}
