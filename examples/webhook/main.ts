// The reference webhook as a process:
//   node dist/examples/webhook/main.js --inventory nodes.yaml [--port 8443] [--host 127.0.0.1]
//     [--tls-cert server.crt --tls-key server.key [--client-ca clients.crt]] [--token-file token]
// Without --tls-cert it serves plain HTTP, for a loopback sidecar only.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startReferenceWebhook } from './server.js';

const { values } = parseArgs({
  options: {
    inventory: { type: 'string' }, host: { type: 'string', default: '127.0.0.1' }, port: { type: 'string', default: '8443' },
    'tls-cert': { type: 'string' }, 'tls-key': { type: 'string' }, 'client-ca': { type: 'string' }, 'token-file': { type: 'string' },
  },
});
if (!values.inventory) {
  process.stderr.write('--inventory: required (a YAML or JSON file in the static provider\'s format)\n');
  process.exit(2);
}
if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) {
  process.stderr.write('--tls-cert and --tls-key go together\n');
  process.exit(2);
}
const webhook = await startReferenceWebhook({
  inventory: values.inventory,
  host: values.host as string,
  port: Number(values.port),
  ...(values['tls-cert'] ? { tls: { cert: readFileSync(values['tls-cert'], 'utf8'), key: readFileSync(values['tls-key'] as string, 'utf8'), ...(values['client-ca'] ? { clientCA: readFileSync(values['client-ca'], 'utf8') } : {}) } } : {}),
  ...(values['token-file'] ? { tokenFile: values['token-file'] } : {}),
});
process.stdout.write(`reference webhook at ${webhook.url}\n`);
const stop = (): void => void webhook.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
