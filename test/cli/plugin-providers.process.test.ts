// Both ways in for an inventory this project does not know, through the real `run` process (the
// built binary) against the API server double: a provider module (the NetBox example, and a
// plugin that throws, hangs, answers for the wrong nodes or with a bad IP) and the webhook
// provider against the reference webhook over HTTPS. A misbehaving plugin or webhook delays the
// node, with an event saying why; it never initialises it wrongly.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../src/serving/certificate.js';
import { freePort } from '../../src/util/free-port.js';
import { startReferenceWebhook, type Intercepted, type ReferenceWebhook } from '../../examples/webhook/server.js';
import { repoRoot, runCli } from '../kit/cli.js';
import { createNode, isInitialised, storedNode, useDouble } from '../kit/double.js';
import { eventually } from '../kit/wait.js';
import { findDuplicateJsonKey } from '../../src/util/json-text.js';

const cluster = useDouble();
let dir: string;
let webhook: ReferenceWebhook | undefined;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ccm-plugins-'));
});
afterEach(async () => {
  await webhook?.close();
  webhook = undefined;
  await rm(dir, { recursive: true, force: true });
});

const runFlags = (provider: string, cloudConfig: string, extra: string[] = []) => [
  'run', `--kubeconfig=${cluster.kubeconfigPath}`, `--cloud-provider=${provider}`, `--cloud-config=${cloudConfig}`,
  '--controllers=cloud-node', '--leader-elect=false', '--secure-port=0', '--node-status-update-frequency=1s', ...extra,
];

function warnings(node: string): string[] {
  return (cluster.api.store.list('events', { namespace: 'default' }) as unknown as { involvedObject: { name: string }; reason: string; message: string; type: string }[])
    .filter((e) => e.involvedObject.name === node && e.type === 'Warning').map((e) => `${e.reason}: ${e.message}`);
}

const MISBEHAVING = path.join(repoRoot, 'test/providers/module/fixtures/misbehaving.mjs');

describe('run --cloud-provider-module', () => {
  it('the NetBox example initialises its VM (built JS, loaded by path)', async () => {
    const file = path.join(dir, 'vms.json');
    await writeFile(file, JSON.stringify({ results: [{ id: 7, name: 'worker-1', site: { slug: 'fra1' }, primary_ip4: { address: '10.1.0.7/24' }, primary_ip6: { address: '2001:db8::7/64' } }] }));
    createNode(cluster.api, { name: 'worker-1', nodeIP: '10.1.0.7' });
    const run = cluster.start([...runFlags('netbox', file), '--cloud-provider-module', 'dist/examples/provider-module/netbox.js']);
    await eventually(() => isInitialised(cluster.api, 'worker-1'), { timeoutMs: 15_000, what: 'worker-1 initialised', describe: () => run.tail(20) });
    const node = storedNode(cluster.api, 'worker-1');
    expect(node.spec?.providerID).toBe('netbox://7');
    expect(node.metadata.labels?.['topology.kubernetes.io/zone']).toBe('fra1');
    expect(node.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.1.0.7' }, { type: 'Hostname', address: 'worker-1' }]);
  });

  it('a plugin that throws, hangs, answers for the wrong node or with a bad IP: the node waits with the reason, then initialises', async () => {
    const conf = path.join(dir, 'misbehaving.json');
    const mode = (m: string) => writeFile(conf, JSON.stringify({ mode: m, nodes: { n1: { providerID: 'm://n1', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } } }));
    await mode('throw');
    createNode(cluster.api, { name: 'n1', nodeIP: null });
    const run = cluster.start([...runFlags('misbehaving', conf), `--cloud-provider-module=${MISBEHAVING}`]);
    const expectWarning = (text: string) => eventually(() => warnings('n1').some((w) => w.includes(text)), { timeoutMs: 15_000, what: `a Warning saying "${text}"`, describe: () => `${warnings('n1').join('\n')}\n${run.tail(10)}` });
    await expectWarning('CloudProviderError: failed to get instance metadata from cloud provider misbehaving: the inventory is on fire');
    await mode('hang');
    await expectWarning('provider misbehaving did not answer instancesMetadata within 1s');
    await mode('wrong-nodes');
    await expectWarning('provider misbehaving gave no answer for node n1');
    await mode('bad-ip');
    await expectWarning('addresses[0].address: InternalIP must be an IP address (value "10.0.0.300")');
    expect(isInitialised(cluster.api, 'n1')).toBe(false);
    // The kubelet's Hostname only: nothing the plugin or webhook said reached the node.
    expect(storedNode(cluster.api, 'n1').status?.addresses).toEqual([{ type: 'Hostname', address: 'n1' }]);
    await mode('ok');
    await eventually(() => isInitialised(cluster.api, 'n1'), { timeoutMs: 15_000, what: 'n1 initialised', describe: () => run.tail(20) });
    expect(storedNode(cluster.api, 'n1').spec?.providerID).toBe('m://n1');
  });

  it.each([
    ['throws', 'poison-throw', 'the inventory chokes on m-bad'],
    ['answers null', 'poison-null', 'provider misbehaving answered with null, not a Map of node name to outcome'],
    ['hangs', 'poison-hang', 'provider misbehaving did not answer instancesMetadata within 1s'],
  ])('a module that %s whenever a batch holds m-bad: the other nodes are initialised, m-bad alone waits with its own event', async (_name, mode, says) => {
    const conf = path.join(dir, 'poison.json');
    const vm = (name: string, address: string) => ({ providerID: `m://${name}`, addresses: [{ type: 'InternalIP', address }] });
    await writeFile(conf, JSON.stringify({ mode, poison: 'm-bad', nodes: { 'm-bad': vm('m-bad', '10.0.0.9'), 'm-ok-1': vm('m-ok-1', '10.0.0.1'), 'm-ok-2': vm('m-ok-2', '10.0.0.2') } }));
    // Created together: they share the first call.
    for (const name of ['m-bad', 'm-ok-1', 'm-ok-2']) createNode(cluster.api, { name, nodeIP: null });
    const run = cluster.start([...runFlags('misbehaving', conf), `--cloud-provider-module=${MISBEHAVING}`]);
    await eventually(() => isInitialised(cluster.api, 'm-ok-1') && isInitialised(cluster.api, 'm-ok-2'), { timeoutMs: 15_000, what: 'the healthy nodes initialised', describe: () => run.tail(20) });
    await eventually(() => warnings('m-bad').some((w) => w.includes(says)), { timeoutMs: 15_000, what: `m-bad warned: ${says}`, describe: () => `${warnings('m-bad').join('\n')}\n${run.tail(10)}` });
    expect(isInitialised(cluster.api, 'm-bad')).toBe(false);
    expect(warnings('m-ok-1')).toEqual([]);
    expect(warnings('m-ok-2')).toEqual([]);
    expect(storedNode(cluster.api, 'm-ok-1').status?.addresses?.[0]).toEqual({ type: 'InternalIP', address: '10.0.0.1' });
  });

  it('an answered providerID another live Node has, or another instance than the node\'s own, leaves the node tainted with a Warning naming both; each log line holds each key once', async () => {
    const conf = path.join(dir, 'pids.json');
    const vm = (providerID: string, address: string) => ({ providerID, addresses: [{ type: 'InternalIP', address }] });
    // reserved-label: every answer carries a kubernetes.io label, which the checks drop with a
    // warning line from the provider's logger (the line that carried "provider" twice).
    await writeFile(conf, JSON.stringify({ mode: 'reserved-label', nodes: { 'm-holder': vm('acme://m-holder', '10.0.0.1'), 'm-pid-dup': vm('acme://m-holder', '10.0.0.2'), 'm-pid-mismatch': vm('acme://vm-elsewhere', '10.9.9.9') } }));
    createNode(cluster.api, { name: 'm-holder', nodeIP: null });
    const run = cluster.start([...runFlags('misbehaving', conf), `--cloud-provider-module=${MISBEHAVING}`]);
    await eventually(() => isInitialised(cluster.api, 'm-holder'), { timeoutMs: 15_000, what: 'm-holder initialised', describe: () => run.tail(20) });
    createNode(cluster.api, { name: 'm-pid-dup', nodeIP: null });
    createNode(cluster.api, { name: 'm-pid-mismatch', nodeIP: null, providerID: 'acme://m-pid-mismatch' });
    const expectWarning = (node: string, text: string) => eventually(() => warnings(node).includes(text), { timeoutMs: 15_000, what: `${node}: ${text}`, describe: () => `${warnings(node).join('\n')}\n${run.tail(10)}` });
    await expectWarning('m-pid-dup', 'ProviderIDInUse: cloud provider misbehaving answered for node "m-pid-dup" with providerID "acme://m-holder", the instance node "m-holder" already has ("acme://m-holder"); two Nodes cannot be one instance, so nothing of the answer is written');
    await expectWarning('m-pid-mismatch', 'ProviderIDMismatch: cloud provider misbehaving answered for node "m-pid-mismatch" with providerID "acme://vm-elsewhere", another instance than the node\'s own "acme://m-pid-mismatch"; nothing of that answer is written');
    for (const name of ['m-pid-dup', 'm-pid-mismatch']) {
      expect(isInitialised(cluster.api, name)).toBe(false);
      // The kubelet's Hostname only: not the other VM's 10.9.9.9, nor the holder's.
      expect(storedNode(cluster.api, name).status?.addresses).toEqual([{ type: 'Hostname', address: name }]);
    }
    expect(storedNode(cluster.api, 'm-pid-dup').spec?.providerID).toBeUndefined();
    // The provider's warning is there, with "provider" once; no line of the process repeats a key.
    const checked = run.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('answer checked: '));
    expect(checked).toMatchObject({ provider: 'misbehaving', operation: 'instancesMetadata' });
    const lines = run.stdout.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.map((l) => [findDuplicateJsonKey(l)?.key, l]).filter(([dup]) => dup !== undefined)).toEqual([]);
  });

  it.each([
    ['a missing file', () => ['./plugins/none.mjs', 'x'], 'error: --cloud-provider-module ./plugins/none.mjs: cannot read: no such file\n'],
    ['a built-in name', () => [MISBEHAVING, 'static'], `error: --cloud-provider-module ${MISBEHAVING}: --cloud-provider static is a built-in provider; a module's provider needs a name of its own\n`],
    ['another name than the module\'s', () => [MISBEHAVING, 'other'], `error: --cloud-provider-module ${MISBEHAVING}: defines provider "misbehaving", but --cloud-provider names "other"\n`],
  ])('%s exits 2 with one line', async (_name, args, stderr) => {
    const [spec, name] = args();
    const r = await runCli([...runFlags(name as string, cluster.cloudConfigPath), '--cloud-provider-module', spec as string]);
    expect(r.stderr).toBe(stderr);
    expect(r.code).toBe(2);
  });

  it('a module that does not parse exits 2 with Node\'s SyntaxError in one line', async () => {
    const file = path.join(dir, 'broken.mjs');
    await writeFile(file, "export default {\n  name: 'broken',\n");
    const r = await runCli([...runFlags('broken', cluster.cloudConfigPath), '--cloud-provider-module', file]);
    expect(r.stderr).toMatch(new RegExp(`^error: --cloud-provider-module ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: cannot import: SyntaxError: [^\\n]+\\n$`));
    expect(r.code).toBe(2);
  });
});

describe('run --cloud-provider webhook', () => {
  it('initialises from the reference webhook over HTTPS; a malformed answer or a 503 delays the node, never initialises it wrongly', async () => {
    const tls = selfSignedCertificate({ commonName: 'webhook', hosts: ['127.0.0.1'] });
    const inventory = path.join(dir, 'inventory.yaml');
    await writeFile(inventory, toYaml({ nodes: { n1: { providerID: 'inv://n1', zone: 'z1', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } } }));
    await writeFile(path.join(dir, 'ca.crt'), tls.cert);
    await writeFile(path.join(dir, 'token'), 'secret');
    let fault: 'malformed' | 'unavailable' | undefined = 'malformed';
    webhook = await startReferenceWebhook({
      inventory, tls, tokenFile: path.join(dir, 'token'),
      intercept: (_req, answer) => {
        if (fault === 'malformed') return { body: JSON.stringify({ ...answer, nodes: { n1: { found: { providerID: 'inv://n1', addresses: [{ type: 'InternalIP', address: '10.0.0.1', scope: 'x' }] } } } }) };
        if (fault === 'unavailable') return { status: 503, body: 'maintenance' };
        return undefined;
      },
    });
    const conf = path.join(dir, 'webhook.yaml');
    await writeFile(conf, toYaml({ url: webhook.url, caFile: path.join(dir, 'ca.crt'), tokenFile: path.join(dir, 'token'), timeout: '2s', attempts: 2 }));
    createNode(cluster.api, { name: 'n1', nodeIP: null });
    const port = await freePort();
    const run = cluster.start([...runFlags('webhook', conf), `--secure-port=${port}`, '--insecure-plain-http']);
    const expectWarning = (text: string) => eventually(() => warnings('n1').some((w) => w.includes(text)), { timeoutMs: 15_000, what: `a Warning saying "${text}"`, describe: () => `${warnings('n1').join('\n')}\n${run.tail(10)}` });
    await expectWarning('webhook answer refused: nodes.n1.found.addresses[0].scope: unknown field (value "x")');
    fault = 'unavailable';
    await expectWarning('HTTP 503: maintenance (after 2 attempts)');
    expect(isInitialised(cluster.api, 'n1')).toBe(false);
    // The kubelet's Hostname only: nothing the plugin or webhook said reached the node.
    expect(storedNode(cluster.api, 'n1').status?.addresses).toEqual([{ type: 'Hostname', address: 'n1' }]);
    // The calls are counted under the same names as every provider's.
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/cloudprovider_requests_total\{provider="webhook",operation="instancesMetadata",result="error"\} [1-9]/);
    expect(metrics).toMatch(/cloudprovider_request_duration_seconds_count\{provider="webhook",operation="instancesMetadata"\} [1-9]/);
    fault = undefined;
    await eventually(() => isInitialised(cluster.api, 'n1'), { timeoutMs: 15_000, what: 'n1 initialised', describe: () => run.tail(20) });
    expect(storedNode(cluster.api, 'n1').metadata.labels?.['topology.kubernetes.io/zone']).toBe('z1');
  });

  it('batchSize 1, four nodes failing for four reasons: each node\'s events name its own problem and no other\'s; a healthy node joins meanwhile', async () => {
    const entry = (name: string, ip: string) => ({ providerID: `inv://${name}`, addresses: [{ type: 'InternalIP', address: ip }] });
    const inventory = path.join(dir, 'inventory.yaml');
    await writeFile(inventory, toYaml({ nodes: { 'w-json': entry('w-json', '10.0.0.1'), 'w-version': entry('w-version', '10.0.0.2'), 'w-slow': entry('w-slow', '10.0.0.3'), 'w-503': entry('w-503', '10.0.0.4'), 'w-ok': entry('w-ok', '10.0.0.5') } }));
    // What each node's POST gets, and the words its events must carry.
    const faults: Record<string, { fault: (answer: object) => Intercepted; says: string }> = {
      'w-json': { fault: () => ({ body: '{"apiVersion": "webhook.node-address-ccm.io/v1", "nodes": {' }), says: 'webhook answer refused: not JSON: ' },
      'w-version': { fault: (answer) => ({ body: JSON.stringify({ ...answer, apiVersion: 'webhook.node-address-ccm.io/v2' }) }), says: 'apiVersion: must be "webhook.node-address-ccm.io/v1" (value "webhook.node-address-ccm.io/v2")' },
      'w-slow': { fault: () => ({ delayMs: 2_500 }), says: 'no answer within 1s' },
      'w-503': { fault: () => ({ status: 503, body: 'inventory shard 3 is down' }), says: 'HTTP 503: inventory shard 3 is down' },
    };
    webhook = await startReferenceWebhook({ inventory, intercept: (req, answer) => faults[req.nodes[0]!.name]?.fault(answer) });
    const conf = path.join(dir, 'webhook.yaml');
    await writeFile(conf, toYaml({ url: webhook.url, insecurePlainHTTP: true, batchSize: 1, timeout: '1s', attempts: 1 }));
    for (const name of Object.keys(faults)) createNode(cluster.api, { name, nodeIP: null });
    const run = cluster.start(runFlags('webhook', conf));
    const own = () => Object.entries(faults).every(([name, f]) => warnings(name).some((w) => w.includes(f.says)));
    const all = () => Object.keys(faults).map((n) => `${n}:\n  ${warnings(n).join('\n  ')}`).join('\n');
    await eventually(own, { timeoutMs: 20_000, what: 'each node warned of its own problem', describe: () => `${all()}\n${run.tail(10)}` });
    createNode(cluster.api, { name: 'w-ok', nodeIP: null });
    await eventually(() => isInitialised(cluster.api, 'w-ok'), { timeoutMs: 15_000, what: 'w-ok initialised', describe: () => run.tail(20) });
    // The failing nodes were asked again meanwhile (their backoff is short yet): still their own.
    for (const [name, f] of Object.entries(faults)) {
      const mine = warnings(name);
      expect(mine.length, all()).toBeGreaterThan(0);
      for (const w of mine) {
        expect(w, all()).toMatch(/^CloudProviderError: failed to get instance metadata from cloud provider webhook: /);
        expect(w, all()).toContain(f.says);
        for (const [other, g] of Object.entries(faults)) if (other !== name) expect(w, all()).not.toContain(g.says);
      }
      expect(isInitialised(cluster.api, name)).toBe(false);
    }
  });

  it('plain HTTP without insecurePlainHTTP exits 2 naming the field and the value', async () => {
    const conf = path.join(dir, 'webhook.yaml');
    await writeFile(conf, 'url: http://127.0.0.1:9/v1/instances\n');
    const r = await runCli(runFlags('webhook', conf));
    expect(r.stderr).toBe(`error: --cloud-config ${conf}: url: plain http:// needs insecurePlainHTTP: true (and a loopback address); use https:// (value "http://127.0.0.1:9/v1/instances")\n`);
    expect(r.code).toBe(2);
  });
});
