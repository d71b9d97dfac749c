// The sandbox (`simulate --keep`) as a user meets it: the built binary keeps the simulated cluster
// and the controller manager running, prints the export line and three things to try; every
// printed command is run through bash with kubectl and does what the guide says; Ctrl-C (SIGINT)
// stops everything and exits 0.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runProcess } from '../kit/cli.js';
import { Processes } from '../kit/processes.js';
import { eventually } from '../kit/wait.js';
import { describeKubectl, KUBECTL, kubectl, kubectlOk } from './kubectl.js';

/** A printed command, run as a user pastes it (bash, KUBECONFIG exported, kubectl on the PATH). */
async function shell(command: string, kubeconfig: string): Promise<string> {
  const bin = path.dirname(KUBECTL as string);
  const r = await runProcess('bash', ['-c', command], {
    env: { PATH: `${bin}:${process.env.PATH ?? ''}`, KUBECONFIG: kubeconfig, HOME: path.dirname(kubeconfig) },
    timeoutMs: 40_000,
  });
  if (r.code !== 0) throw new Error(`${command}\nexited ${r.code}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

describeKubectl('simulate --keep (the sandbox) driven by kubectl', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-test-'));
  const kubeconfig = path.join(dir, 'sandbox.kubeconfig');
  const ps = new Processes();
  afterAll(async () => {
    await ps.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the export line and three things to try; each works; Ctrl-C stops it cleanly with exit 0', async () => {
    const s = ps.start(['simulate', '--keep', '--nodes', '3', '--kubeconfig-out', kubeconfig]);
    await eventually(() => /press Ctrl-C/.test(s.stdout) && /kubectl wait/.test(s.stdout), {
      timeoutMs: 60_000, intervalMs: 100, what: 'the guide', describe: () => `stdout:\n${s.stdout}\nstderr:\n${s.stderr}`,
    });
    const out = s.stdout;
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

    // 4. The first command an operator runs: describe node (which lists the node's pods by field
    // selector), and the pod views; the sandbox runs no pods, so they find none.
    const described = await kubectlOk(kubeconfig, ['describe', 'node', newNode]);
    expect(described).toMatch(new RegExp(`ProviderID:\\s+static://${newNode}`));
    expect(described).toMatch(/Non-terminated Pods:\s+\(0 in total\)/);
    expect(described).toMatch(/^Taints:\s+<none>$/m);
    expect((await kubectl(kubeconfig, ['get', 'pods', '-A', '-o', 'wide'])).stderr).toMatch(/No resources found/);
    expect(await kubectlOk(kubeconfig, ['drain', newNode, '--dry-run=server'])).toMatch(/cordoned \(server dry run\)/);

    // Ctrl-C: everything stops, exit 0; the kubeconfig asked for stays, the sandbox folder goes.
    const folder = path.dirname(/kubectl apply -f (\S+)/.exec(applyNew)?.[1] as string);
    expect(existsSync(folder)).toBe(true);
    s.kill('SIGINT');
    expect(await s.exited).toBe(0);
    expect(s.stdout).toMatch(/stopping the controller manager .*and the API server double; .*sandbox\.kubeconfig is left in place\n$/);
    expect(s.stderr).toBe('');
    expect(existsSync(folder)).toBe(false);
    expect(existsSync(kubeconfig)).toBe(true);
  }, 120_000);
});
