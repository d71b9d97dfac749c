// `node-address-ccm apiserver` as an operator runs it: the built binary, in the foreground.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { cliPath, repoRoot, runCli } from '../helpers/cli.js';

describe('node-address-ccm apiserver', () => {
  it('prints its URL, writes a usable kubeconfig, and exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'apiserver-cli-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    const child = spawn(process.execPath, [cliPath, 'apiserver', '--port', '0', '--write-kubeconfig', kubeconfig, '--log-level', 'silent'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0]);
        });
        child.on('exit', (c) => reject(new Error(`exited ${c} before printing its URL`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const kc = new KubeConfig();
      kc.loadFromString(readFileSync(kubeconfig, 'utf8'));
      expect(kc.getCurrentCluster()?.server).toBe(url);
      const ns = await kc.makeApiClient(CoreV1Api).listNamespace();
      expect(ns.items.map((n) => n.metadata?.name)).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it.each([
    [['--port', 'abc'], /--port "abc": expected an integer in 0\.\.65535/],
    [['--port', '70000'], /--port "70000"/],
    [['--rbac', '/nonexistent-rbac-dir'], /--rbac \/nonexistent-rbac-dir: rbac: cannot read folder/],
    [['--user', 'nocolon'], /--user "nocolon": expected NAME:TOKEN/],
    [['--history-size', '0'], /--history-size "0"/],
  ])('exits 2 on %j', async (args, message) => {
    const r = await runCli(['apiserver', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
