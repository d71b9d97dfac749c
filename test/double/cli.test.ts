// `node-address-ccm apiserver` as an operator runs it: the built binary, in the foreground.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { runCli } from '../kit/cli.js';
import { Processes, type ApiserverProcess } from '../kit/processes.js';

// Every test's temporary folder, removed at the end (kubeconfigs, fault plans).
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

const ps = new Processes();
afterEach(() => ps.cleanup());

/** Starts `node-address-ccm apiserver ARGS` in the foreground and waits for the URL it prints first. */
async function startApiserver(args: string[]): Promise<ApiserverProcess> {
  const started = await ps.apiserver([...args, '--log-level', 'silent']);
  expect(started.proc.stdout.split('\n')[0], 'the first line printed').toBe(started.url);
  return started;
}

describe('node-address-ccm apiserver', () => {
  it('prints its URL, writes a usable kubeconfig, and exits 0 on SIGTERM', async () => {
    const dir = tempDir('apiserver-cli-');
    const kubeconfig = path.join(dir, 'kubeconfig');
    const { proc, url } = await startApiserver(['--port', '0', '--write-kubeconfig', kubeconfig]);
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const kc = new KubeConfig();
      kc.loadFromString(readFileSync(kubeconfig, 'utf8'));
      expect(kc.getCurrentCluster()?.server).toBe(url);
      const ns = await kc.makeApiClient(CoreV1Api).listNamespace();
      expect(ns.items.map((n) => n.metadata?.name)).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await proc.exited).toBe(0);
  });

  // kubectl sends the kubeconfig's token over HTTPS only (client-go drops it on plain HTTP): --https.
  it('applies --faults at start; kubectl reads and replaces the plan at /_double/faults with the admin kubeconfig', async () => {
    const dir = tempDir('apiserver-faults-');
    const kubeconfig = path.join(dir, 'kubeconfig');
    const planFile = path.join(dir, 'faults.yaml');
    writeFileSync(planFile, 'seed: 4\nrules:\n  - verb: list\n    resource: namespaces\n    status: 503\n    retryAfterSeconds: 0\n');
    const { proc } = await startApiserver(['--https', '--write-kubeconfig', kubeconfig, '--faults', planFile]);
    try {
      const kc = new KubeConfig();
      kc.loadFromString(readFileSync(kubeconfig, 'utf8'));
      const core = kc.makeApiClient(CoreV1Api);
      await expect(core.listNamespace()).rejects.toMatchObject({ code: 503 });
      const kubectl = (...args: string[]) => new Promise<string>((resolve, reject) => {
        execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 15_000 }, (err, stdout, stderr) => (err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout)));
      });
      if (!existsSync('/usr/bin/kubectl')) return;
      const before = JSON.parse(await kubectl('get', '--raw', '/_double/faults')) as { plan: unknown; rules: { fired: number }[] };
      expect(before.plan).toEqual({ seed: 4, rules: [{ verb: 'list', resource: 'namespaces', status: 503, retryAfterSeconds: 0 }] });
      expect(before.rules[0].fired).toBeGreaterThanOrEqual(1);
      writeFileSync(planFile, JSON.stringify({ rules: [{ verb: 'get', resource: 'namespaces', status: 500 }] }));
      await kubectl('replace', '--raw', '/_double/faults', '-f', planFile);
      expect((await core.listNamespace()).items.length).toBe(4);
      await expect(core.readNamespace({ name: 'default' })).rejects.toMatchObject({ code: 500 });
      writeFileSync(planFile, '{"rules":[{"verb":"get","status":418}]}');
      await expect(kubectl('replace', '--raw', '/_double/faults', '-f', planFile)).rejects.toThrow(/rules\[0\]\.status: must be one of 409, 429, 500, 503, 504, got 418/);
      await kubectl('delete', '--raw', '/_double/faults');
      expect((await core.readNamespace({ name: 'default' })).metadata?.name).toBe('default');
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await proc.exited).toBe(0);
  });

  it('--admin-token sets the admin token: a script reaches /_double/faults over plain HTTP with it', async () => {
    const { proc, url } = await startApiserver(['--admin-token', 'chaos-admin']);
    try {
      const put = await fetch(`${url}/_double/faults`, { method: 'PUT', headers: { Authorization: 'Bearer chaos-admin' }, body: 'blackout: {durationMs: 60000}' });
      expect(put.status).toBe(200);
      await expect(fetch(`${url}/version`)).rejects.toThrow();
      expect((await fetch(`${url}/_double/faults`, { method: 'DELETE' })).status).toBe(401);
      expect((await fetch(`${url}/_double/faults`, { method: 'DELETE', headers: { Authorization: 'Bearer chaos-admin' } })).status).toBe(200);
      expect((await fetch(`${url}/version`)).status).toBe(200);
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await proc.exited).toBe(0);
  });

  it.each([
    [['--faults', '/nonexistent/faults.yaml'], /--faults \/nonexistent\/faults\.yaml: cannot read: a parent of the path is not a directory|--faults \/nonexistent\/faults\.yaml: cannot read: no such file/],
    [['--faults', 'BAD_STATUS'], /--faults .*bad-status\.yaml: rules\[1\]\.status: must be one of 409, 429, 500, 503, 504, got 418/],
    [['--faults', 'BAD_MODE'], /--faults .*bad-mode\.json: blackout\.mode: must be one of reset, hang, got "off"/],
    [['--fault-seed', '-3'], /--fault-seed "-3": expected an integer/],
    [['--admin-token', 'has space'], /--admin-token "has space": expected 1 to 256 characters/],
  ])('exits 2 on %j, naming the field and the value', async (args, message) => {
    const dir = tempDir('apiserver-badfaults-');
    const files: Record<string, string> = {
      BAD_STATUS: path.join(dir, 'bad-status.yaml'),
      BAD_MODE: path.join(dir, 'bad-mode.json'),
    };
    writeFileSync(files.BAD_STATUS, 'rules:\n  - latencyMs: 5\n  - status: 418\n');
    writeFileSync(files.BAD_MODE, '{"blackout": {"mode": "off"}}');
    const r = await runCli(['apiserver', ...args.map((a) => files[a] ?? a)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  it.each([
    [['--port', 'abc'], /--port "abc": expected an integer in 0\.\.65535/],
    [['--port', '70000'], /--port "70000"/],
    [['--rbac', '/nonexistent-rbac-dir'], /--rbac \/nonexistent-rbac-dir: cannot read: no such folder/],
    [['--user', 'nocolon'], /--user "nocolon": expected NAME:TOKEN/],
    [['--history-size', '0'], /--history-size "0"/],
  ])('exits 2 on %j', async (args, message) => {
    const r = await runCli(['apiserver', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
