// Found while building the chaos test: the write gate was asked before KubeClient awaited the
// kubeconfig's credentials (token files, exec plugins), and the request's timer started only
// after that, with the time left computed before it. A slow credential (or a process frozen in
// that await) let a write the gate allowed with 200 ms left reach the API server after the
// deadline, after a successor may have taken the Lease. The gate is now asked again once the
// credentials are in hand, with nothing awaited between that answer and the send.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeClient, kubeConfigFromString } from '../../src/kube/client.js';
import { startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';

let api: ApiServerDouble | undefined;
let dir: string | undefined;
afterEach(async () => {
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('fencing of writes', () => {
  it('a write the gate allowed never reaches the API server after the gate\'s deadline, however slow the credentials', async () => {
    api = await startApiServerDouble({ users: [{ name: 'writer', token: 'tok-writer' }] });
    api.store.create('nodes', { metadata: { name: 'n1' } });
    dir = mkdtempSync(path.join(tmpdir(), 'fencing-'));
    const plugin = path.join(dir, 'slow-credential.sh');
    // An exec credential plugin that takes 1.5 s, as a cloud's token helper can.
    writeFileSync(plugin, `#!/bin/sh\nsleep 1.5\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-writer"}}'\n`);
    chmodSync(plugin, 0o755);
    const kubeconfig = [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: "${api.url}", insecure-skip-tls-verify: true}}]`,
      `users: [{name: writer, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ${plugin}, interactiveMode: Never}}}]`,
      'contexts: [{name: c, context: {cluster: c, user: writer}}]',
      'current-context: c',
      '',
    ].join('\n');
    const deadline = Date.now() + 200;
    const client = new KubeClient(kubeConfigFromString(kubeconfig), {
      writeGate: () => {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error('fenced');
        return left;
      },
    });
    let arrived: number | undefined;
    api.onRequest((info) => {
      if (info.verb === 'patch') arrived = Date.now();
    });
    await client.request({ method: 'PATCH', path: '/api/v1/nodes/n1', body: { metadata: { labels: { late: 'write' } } }, contentType: 'application/merge-patch+json' }).catch(() => undefined);
    // Either refused before sending, or sent before the deadline.
    if (arrived !== undefined) expect(arrived).toBeLessThanOrEqual(deadline);
    expect(api.store.get('nodes', 'n1').metadata?.labels?.late).toBeUndefined();
  });
});
