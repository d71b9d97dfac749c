// The webhook provider built through the registry, against the reference webhook over real HTTPS
// (a self-signed CA made here, a bearer token): the three outcomes, batching, retries of 5xx and
// timeouts, final 4xx, refused answers, answers for the wrong nodes, token rotation, mutual TLS.
// Errors of every kind make a node an error, its own or its POST's (a BatchError the controllers
// split): none reads as "not found", and no POST's failure lands on another POST's nodes.
import { mkdtemp, rm, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createProvider } from '../../../providers/registry.js';
import { isBatchError, type CloudProvider, type InstanceResult } from '../../../providers/types.js';
import { selfSignedCertificate, type CertificateAndKey } from '../../../src/serving/certificate.js';
import { startReferenceWebhook, type Intercepted, type ReferenceWebhook, type ReferenceWebhookOptions } from '../../../examples/webhook/server.js';

let dir: string;
let webhook: ReferenceWebhook | undefined;
let provider: CloudProvider | undefined;
const serverTLS: CertificateAndKey = selfSignedCertificate({ commonName: 'webhook', hosts: ['127.0.0.1'] });

const inventory = {
  nodes: {
    a: { providerID: 'inv://a', zone: 'z1', region: 'r1', instanceType: 'large', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }, { type: 'InternalIP', address: 'fd00::1' }], podCIDRs: ['10.64.1.0/24'], labels: { 'inv.example/rack': 'r7' } },
    off: { providerID: 'inv://off', addresses: [{ type: 'InternalIP', address: '10.0.0.2' }], shutdown: true },
  } as Record<string, unknown>,
};

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ccm-webhook-'));
  await writeFile(path.join(dir, 'inventory.yaml'), toYaml(inventory));
  await writeFile(path.join(dir, 'ca.crt'), serverTLS.cert);
  await writeFile(path.join(dir, 'token'), 'token-1\n');
  await writeFile(path.join(dir, 'server-token'), 'token-1');
});
afterEach(async () => {
  await provider?.close?.();
  provider = undefined;
  await webhook?.close();
  webhook = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function start(o: Partial<ReferenceWebhookOptions> = {}, config: Record<string, unknown> = {}): Promise<CloudProvider> {
  webhook = await startReferenceWebhook({ inventory: path.join(dir, 'inventory.yaml'), tls: serverTLS, tokenFile: path.join(dir, 'server-token'), ...o });
  const file = path.join(dir, 'webhook.yaml');
  await writeFile(file, toYaml({ url: webhook.url, caFile: path.join(dir, 'ca.crt'), tokenFile: path.join(dir, 'token'), timeout: '2s', attempts: 3, ...config }));
  provider = await createProvider('webhook', { cloudConfig: file });
  return provider;
}

/** The error message of a node's answer, and whether it is its POST's (a BatchError). */
function errorOf(answer: InstanceResult<unknown> | undefined): { message: string; batch: boolean } | undefined {
  return answer?.kind === 'error' ? { message: answer.error.message, batch: isBatchError(answer.error) } : undefined;
}

/** An intercept that applies `faults` to the first requests, in order, then answers normally. */
function faults(...list: (Intercepted | undefined)[]): ReferenceWebhookOptions['intercept'] {
  let i = 0;
  return () => list[i++];
}

describe('the webhook provider', () => {
  it('answers the three questions from one POST each, with every field of the inventory', async () => {
    const p = await start();
    const meta = await p.instancesMetadata([{ name: 'a', labels: { 'kubernetes.io/os': 'linux' } }, { name: 'gone', providerID: 'inv://gone' }]);
    expect(meta.get('a')).toEqual({ kind: 'found', value: { providerID: 'inv://a', zone: 'z1', region: 'r1', instanceType: 'large', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }, { type: 'InternalIP', address: 'fd00::1' }], podCIDRs: ['10.64.1.0/24'], labels: { 'inv.example/rack': 'r7' } } });
    expect(meta.get('gone')).toEqual({ kind: 'notFound', reason: 'gone is not in the inventory' });
    const exist = await p.instancesExist([{ name: 'a' }, { name: 'gone' }]);
    expect([exist.get('a'), exist.get('gone')]).toEqual([{ kind: 'found', value: true }, { kind: 'found', value: false }]);
    const shutdown = await p.instancesShutdown([{ name: 'a' }, { name: 'off' }, { name: 'gone' }]);
    expect([shutdown.get('a'), shutdown.get('off'), shutdown.get('gone')]).toEqual([{ kind: 'found', value: false }, { kind: 'found', value: true }, { kind: 'notFound', reason: 'gone is not in the inventory' }]);
    expect(webhook?.batches).toEqual([['a', 'gone'], ['a', 'gone'], ['a', 'off', 'gone']]);
    expect((await p.instancesMetadata([])).size).toBe(0);
    expect(webhook?.requests).toBe(3);
  });

  it('sends batches of batchSize nodes', async () => {
    const p = await start({}, { batchSize: 100 });
    const nodes = Array.from({ length: 250 }, (_, i) => ({ name: `n${i}` }));
    const answers = await p.instancesMetadata(nodes);
    expect(answers.size).toBe(250);
    expect(webhook?.batches.map((b) => b.length).sort()).toEqual([100, 100, 50]);
  });

  it('a 503 and a timeout are tried again; the answer after them is used', async () => {
    const p = await start({ intercept: faults({ status: 503, body: '{"error":"restarting"}' }, { delayMs: 2_500 }) });
    expect((await p.instancesMetadata([{ name: 'a' }])).get('a')?.kind).toBe('found');
    expect(webhook?.batches).toHaveLength(3);
  });

  it('a 5xx on every attempt is an error of the POST\'s batch, never "not found"', async () => {
    const p = await start({ intercept: () => ({ status: 500, body: 'boom' }) }, { attempts: 2 });
    const e = errorOf((await p.instancesExist([{ name: 'gone' }])).get('gone'));
    expect(e?.message).toMatch(/^webhook https:\/\/127\.0\.0\.1:\d+\/v1\/instances: HTTP 500: boom \(after 2 attempts\)$/);
    expect(e?.batch).toBe(true);
    expect(webhook?.batches).toHaveLength(2);
  });

  it('a 4xx is final: one POST', async () => {
    const p = await start({ intercept: () => ({ status: 400, body: '{"error":"bad"}' }) });
    expect(errorOf((await p.instancesMetadata([{ name: 'a' }])).get('a'))?.message).toMatch(/HTTP 400: \{"error":"bad"\}$/);
    expect(webhook?.batches).toHaveLength(1);
  });

  it('a document that is not a v1 answer fails its POST\'s nodes, with one BatchError; another POST\'s nodes are answered', async () => {
    const p = await start({ intercept: (req) => (req.nodes.some((n) => n.name === 'a') ? { body: '{"apiVersion":"v0"' } : undefined) }, { batchSize: 2 });
    const answers = await p.instancesMetadata([{ name: 'a' }, { name: 'gone' }, { name: 'off' }]);
    const [a, gone] = [answers.get('a'), answers.get('gone')];
    expect(a?.kind === 'error' && gone?.kind === 'error' && a.error === gone.error && isBatchError(a.error)).toBe(true);
    expect(errorOf(a)?.message).toMatch(/^webhook answer refused: not JSON: /);
    expect(answers.get('off')?.kind).toBe('found');
  });

  it('one entry that fails its checks costs that node alone: the rest of the same answer is used', async () => {
    const p = await start({
      intercept: (_req, answer) => ({ body: JSON.stringify({ ...answer, nodes: { ...answer.nodes, a: { found: { providerID: 'inv://a', addresses: [{ type: 'InternalIP', address: '10.0.0.999' }] } } } }) }),
    });
    const answers = await p.instancesMetadata([{ name: 'a' }, { name: 'off' }, { name: 'gone' }]);
    expect(errorOf(answers.get('a'))).toEqual({ message: 'webhook answer refused: nodes.a.found.addresses[0].address: InternalIP must be an IP address (value "10.0.0.999")', batch: false });
    expect(answers.get('off')?.kind).toBe('found');
    expect(answers.get('gone')?.kind).toBe('notFound');
    expect(webhook?.batches).toHaveLength(1);
  });

  it('a malformed answer refuses its batch field by field; the other batch is used', async () => {
    const p = await start({
      intercept: (req, answer) => (req.nodes[0]?.name === 'a'
        ? { body: JSON.stringify({ ...answer, nodes: { a: { found: { providerID: 'inv://a', addresses: [{ type: 'InternalIP', address: '10.0.0.999' }] } } } }) }
        : undefined),
    }, { batchSize: 1 });
    const answers = await p.instancesMetadata([{ name: 'a' }, { name: 'off' }]);
    expect(answers.get('a')).toMatchObject({ kind: 'error', retryable: true });
    expect((answers.get('a') as { error: Error }).error.message).toBe('webhook answer refused: nodes.a.found.addresses[0].address: InternalIP must be an IP address (value "10.0.0.999")');
    expect(answers.get('off')?.kind).toBe('found');
    // Refused answers are not asked again within the call: the next round asks.
    expect(webhook?.batches).toHaveLength(2);
  });

  it('answers for the wrong nodes: the asked node is an error, the others ignored', async () => {
    const p = await start({ intercept: (_req, answer) => ({ body: JSON.stringify({ ...answer, nodes: { intruder: { notFound: {} } } }) }) });
    const answers = await p.instancesShutdown([{ name: 'a' }]);
    expect([...answers.keys()]).toEqual(['a']);
    expect(answers.get('a')).toMatchObject({ kind: 'error', error: new Error('the webhook gave no answer for node a') });
  });

  it('a node the inventory answers with an error is a retryable error', async () => {
    const p = await start({ intercept: (_req, answer) => ({ body: JSON.stringify({ ...answer, nodes: { a: { error: { message: 'hypervisor down' } } } }) }) });
    expect((await p.instancesMetadata([{ name: 'a' }])).get('a')).toEqual({ kind: 'error', error: new Error('webhook: hypervisor down'), retryable: true });
  });

  it('reads the token file again when it changes', async () => {
    const p = await start({}, { attempts: 1 });
    expect((await p.instancesExist([{ name: 'a' }])).get('a')?.kind).toBe('found');
    await writeFile(path.join(dir, 'server-token'), 'token-2');
    expect(errorOf((await p.instancesExist([{ name: 'a' }])).get('a'))?.message).toMatch(/HTTP 401/);
    // Rotated as the kubelet rotates a projected token: a new file renamed over the old one.
    await writeFile(path.join(dir, 'token.new'), 'token-2\n');
    await rename(path.join(dir, 'token.new'), path.join(dir, 'token'));
    expect((await p.instancesExist([{ name: 'a' }])).get('a')?.kind).toBe('found');
  });

  it('a server certificate the CA bundle does not vouch for is an error after the attempts, never "not found"', async () => {
    await writeFile(path.join(dir, 'ca.crt'), selfSignedCertificate({ commonName: 'someone-else', hosts: ['127.0.0.1'] }).cert);
    const p = await start({}, { attempts: 2 });
    expect(errorOf((await p.instancesExist([{ name: 'gone' }])).get('gone'))?.message).toMatch(/self.signed|unable to verify|certificate/i);
    expect(webhook?.requests).toBe(0);
  });

  it('a client certificate, where the server requires one', async () => {
    const client = selfSignedCertificate({ commonName: 'node-address-ccm', hosts: ['node-address-ccm'], usage: 'client' });
    await writeFile(path.join(dir, 'client.crt'), client.cert);
    await writeFile(path.join(dir, 'client.key'), client.key);
    const p = await start({ tls: { ...serverTLS, clientCA: client.cert }, tokenFile: undefined }, { tokenFile: undefined, clientCertFile: path.join(dir, 'client.crt'), clientKeyFile: path.join(dir, 'client.key') });
    expect((await p.instancesMetadata([{ name: 'a' }])).get('a')?.kind).toBe('found');
  });

  it('a CA file that cannot be read is named at start', async () => {
    const file = path.join(dir, 'webhook.yaml');
    await writeFile(file, toYaml({ url: 'https://127.0.0.1:1/', caFile: path.join(dir, 'missing.crt') }));
    await expect(createProvider('webhook', { cloudConfig: file })).rejects.toThrow(`--cloud-config ${file}: caFile ${path.join(dir, 'missing.crt')}: cannot read: no such file`);
  });
});
