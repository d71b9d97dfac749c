// The API server side of `npm run bench scale`, in its own process (it holds 100,000 Node objects
// of about 12 KB each, several GB of heap): the API server double filled with realistic initialised
// nodes, and the static cloud's config listing them and the nodes that will join. Driven by the
// benchmark over stdin/stdout, one JSON object a line.
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { hasUninitializedTaint, nodePodCIDRs, type NodeObject } from '../src/model/node.js';
import { startApiServerDouble } from '../src/double/server.js';
import { realisticNode } from '../src/simulation/realistic-node.js';

const [kubeconfigPath, cloudConfigPath, nodesText, joinText] = process.argv.slice(2);
const NODES = Number(nodesText);
const JOIN = Number(joinText);
const USER_AGENT = 'node-address-ccm';

/** /27 number i of 100.64.0.0/10: room for 131,072 nodes. */
function podCIDR(i: number): string {
  // A /16 holds 2,048 /27s: the second octet moves every 2,048 nodes.
  return `100.${64 + (i >> 11)}.${(i >> 3) & 255}.${(i & 7) * 32}/27`;
}

function send(msg: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

const api = await startApiServerDouble({ historySize: 50_000, bookmarkIntervalMs: 1000 });
const started = Date.now();
const cloud: Record<string, unknown> = {};
for (let i = 0; i < NODES; i++) {
  const n = realisticNode(`node-${String(i).padStart(6, '0')}`, { index: i, podCIDRs: [podCIDR(i)] });
  cloud[n.metadata.name] = { providerID: n.spec!.providerID, zone: `zone-${i % 3}`, region: 'region-1', instanceType: 'm6i.2xlarge', addresses: n.status!.addresses!.filter((a) => a.type === 'InternalIP') };
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
for (const n of api.store.listRefs('nodes')) api.store.encodeBytes(n);
writeFileSync(kubeconfigPath!, api.kubeconfig);
writeFileSync(cloudConfigPath!, JSON.stringify({ nodes: cloud }));
send({ ready: true, nodes: NODES, fillMs: Date.now() - started, rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20) });

let joinedAt = 0;
const counts = () => ({
  patchNodes: api.count({ verb: 'patch', resource: 'nodes', subresource: '', userAgent: USER_AGENT }),
  patchStatus: api.count({ verb: 'patch', resource: 'nodes', subresource: 'status', userAgent: USER_AGENT }),
  updateNodes: api.count({ verb: 'update', resource: 'nodes', userAgent: USER_AGENT }),
  createEvents: api.count({ verb: 'create', resource: 'events', userAgent: USER_AGENT }),
  patchEvents: api.count({ verb: 'patch', resource: 'events', userAgent: USER_AGENT }),
  listNodes: api.count({ verb: 'list', resource: 'nodes', userAgent: USER_AGENT }),
});

for await (const line of createInterface({ input: process.stdin })) {
  const cmd = JSON.parse(line) as { cmd: string };
  if (cmd.cmd === 'join') {
    // All 10,000 appear at once: created in one loop with the watch held, then released together.
    // (Without the hold, the first few hundred events got out while the loop ran and the rest
    // seconds later: a stall no real API server makes, and not part of the join.)
    const createStarted = Date.now();
    api.store.hub.pause();
    // createRef stores a JSON copy (flat strings, as a decoded request body has) and returns it
    // without a second copy.
    for (const n of joining) api.store.createRef('nodes', n as never);
    joining.length = 0;
    const createMs = Date.now() - createStarted;
    joinedAt = Date.now();
    api.store.hub.resume();
    send({ joined: JOIN, counts: counts(), createMs });
  } else if (cmd.cmd === 'status') {
    let pending = 0;
    for (const name of joinNames) {
      const n = api.store.peek('nodes', name) as unknown as NodeObject | undefined;
      if (!n || hasUninitializedTaint(n) || nodePodCIDRs(n).length === 0) pending++;
    }
    send({ pending, sinceJoinMs: joinedAt ? Date.now() - joinedAt : 0, counts: counts() });
  } else if (cmd.cmd === 'stop') {
    await api.stop();
    send({ stopped: true });
    process.exit(0);
  }
}
