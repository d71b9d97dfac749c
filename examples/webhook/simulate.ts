// `npm run start:webhook`: `npm start`'s simulated cluster, with the controllers asking the
// reference webhook over HTTPS (a self-signed CA made here, a bearer token) instead of reading
// the static file: the webhook serves that same file, so the outcome table is the same, and the
// node lifecycle demo's edits reach the controllers through the webhook.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createProvider } from '../../providers/registry.js';
import { selfSignedCertificate } from '../../src/serving/certificate.js';
import { runSimulation } from '../../src/simulation/cluster/run.js';
import { startReferenceWebhook, type ReferenceWebhook } from './server.js';

const dir = await mkdtemp(path.join(tmpdir(), 'node-address-ccm-webhook-sim-'));
let webhook: ReferenceWebhook | undefined;
try {
  const tls = selfSignedCertificate({ commonName: 'reference-webhook', hosts: ['127.0.0.1'] });
  const caFile = path.join(dir, 'ca.crt');
  const tokenFile = path.join(dir, 'token');
  const cloudConfig = path.join(dir, 'webhook.yaml');
  await writeFile(caFile, tls.cert);
  await writeFile(tokenFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
  const result = await runSimulation({
    nodes: 12,
    out: process.stdout,
    cloud: {
      describe: 'the reference webhook (HTTPS, bearer token) serving the static inventory',
      async open(inventory) {
        webhook = await startReferenceWebhook({ inventory, tls, tokenFile });
        await writeFile(cloudConfig, `url: ${webhook.url}\ncaFile: ${caFile}\ntokenFile: ${tokenFile}\ntimeout: 5s\nbatchSize: 100\n`);
        process.stdout.write(`reference webhook at ${webhook.url}; cloud-config:\n  ${(`url: ${webhook.url}\ncaFile: ${caFile}\ntokenFile: ${tokenFile}\ntimeout: 5s\nbatchSize: 100`).split('\n').join('\n  ')}\n`);
        return createProvider('webhook', { cloudConfig });
      },
    },
  });
  process.stdout.write(`reference webhook: ${webhook?.requests ?? 0} POSTs answered\n`);
  process.exitCode = result.converged && result.asExpected ? 0 : 1;
} finally {
  await webhook?.close();
  await rm(dir, { recursive: true, force: true });
}
