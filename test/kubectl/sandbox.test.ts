// The sandbox (`simulate --keep`) as a user meets it: the built binary keeps the simulated cluster
// and the controller manager running, prints the export line and three things to try; every
// printed command is run through bash with kubectl and does what the guide says; Ctrl-C (SIGINT)
// stops everything and exits 0.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { cliPath, repoRoot } from '../helpers/cli.js';
import { describeKubectl, KUBECTL, kubectlOk } from './kubectl.js';

interface Sandbox {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startSandbox(args: string[]): Sandbox {
  const child = spawn(process.execPath, [cliPath, 'simulate', '--keep', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs: number, describe: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${describe()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A printed command, run as a user pastes it (bash, KUBECONFIG exported, kubectl on the PATH). */
async function shell(command: string, kubeconfig: string): Promise<string> {
  const bin = path.dirname(KUBECTL as string);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], {
      env: { PATH: `${bin}:${process.env.PATH ?? ''}`, KUBECONFIG: kubeconfig, HOME: path.dirname(kubeconfig) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command}\nexited ${code}: ${err}${out}`));
    });
  });
}

describeKubectl('simulate --keep (the sandbox) driven by kubectl', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-test-'));
  const kubeconfig = path.join(dir, 'sandbox.kubeconfig');
  let sandbox: Sandbox | undefined;
  afterAll(async () => {
    if (sandbox && sandbox.child.exitCode === null) {
      sandbox.child.kill('SIGKILL');
      await sandbox.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the export line and three things to try; each works; Ctrl-C stops it cleanly with exit 0', async () => {
    const s = startSandbox(['--nodes', '3', '--kubeconfig-out', kubeconfig]);
    sandbox = s;
    const context = (): string => `stdout:\n${s.stdout()}\nstderr:\n${s.stderr()}`;
    await until('the guide', () => (/press Ctrl-C/.test(s.stdout()) && /kubectl wait/.test(s.stdout()) ? true : undefined), 60_000, context);
    const out = s.stdout();
    expect(out).toContain('every node ended as its case expects');
    expect(out).toContain(`  export KUBECONFIG=${kubeconfig}\n`);
    expect(statSync(kubeconfig).mode & 0o777).toBe(0o600);
    const commands = out.split('\n').filter((l) => l.startsWith('     kubectl ')).map((l) => l.trim());
    expect(commands).toHaveLength(6);
    const [annotate, watchAddresses, applyNew, watchNew, applyPool, waitPool] = commands as [string, string, string, string, string, string];

    // 1. Another IP: the addresses follow within the sandbox's refresh period.
    const node = /annotate node (\S+) /.exec(annotate)?.[1] as string;
    const ip = /=(\S+)$/.exec(annotate)?.[1] as string;
    await shell(annotate, kubeconfig);
    await kubectlOk(kubeconfig, ['wait', `node/${node}`, `--for=jsonpath={.status.addresses[0].address}=${ip}`, '--timeout=30s']);
    expect(await shell(watchAddresses.replace(' --watch', ''), kubeconfig)).toMatch(new RegExp(`^${node}\\s+${ip.replace(/\./g, '\\.')},${node}$`, 'm'));

    // 2. A new tainted node from YAML: initialised (taint gone, providerID, addresses, pod CIDRs).
    await shell(applyNew, kubeconfig);
    const newNode = /get node (\S+) /.exec(watchNew)?.[1] as string;
    await kubectlOk(kubeconfig, ['wait', `node/${newNode}`, `--for=jsonpath={.spec.providerID}=static://${newNode}`, '--timeout=30s']);
    const row = (await shell(watchNew.replace(' --watch', ''), kubeconfig)).split('\n')[1] as string;
    expect(row.split(/\s+/)).toEqual([newNode, '<none>', expect.stringMatching(/^\d+\.\d+\.\d+\.\d+,/), `static://${newNode}`, expect.stringMatching(/^\[10\.64\./), expect.stringMatching(/^fd00:10:244:/)]);

    // 3. A ClusterCIDR and a node labelled for it: its pod CIDRs come from that range.
    await shell(applyPool, kubeconfig);
    expect(await shell(waitPool, kubeconfig)).toMatch(/\["10\.200\.\d+\.0\/24","fd00:10:200::[0-9a-f]*\/120"\]/);

    // Ctrl-C: everything stops, exit 0; the kubeconfig asked for stays, the sandbox folder goes.
    const folder = path.dirname(/kubectl apply -f (\S+)/.exec(applyNew)?.[1] as string);
    expect(existsSync(folder)).toBe(true);
    s.child.kill('SIGINT');
    expect(await s.exited).toBe(0);
    expect(s.stdout()).toMatch(/stopping the controller manager .*and the API server double; .*sandbox\.kubeconfig is left in place\n$/);
    expect(s.stderr()).toBe('');
    expect(existsSync(folder)).toBe(false);
    expect(existsSync(kubeconfig)).toBe(true);
  }, 120_000);
});
