// Failover liveness through real processes (issue 13): the `apiserver` double and `run` started
// from the built CLI, frozen with SIGSTOP, the API server killed for good. A deposed replica must
// exit 1 within 2 s of "stopped leading"; SIGTERM must end the process with 0 within
// --shutdown-grace-period, whatever the API server does.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Processes, type CliProcess, type LogLine } from '../kit/processes.js';
import { freePort, get } from '../kit/net.js';
import { eventually } from '../kit/wait.js';

const ps = new Processes();
afterEach(() => ps.cleanup());

/** The flags: a 4 s lease, node IPAM with a cluster CIDR, no cloud-node (no provider needed). */
function startRun(kubeconfig: string, extra: string[] = []): CliProcess {
  return ps.start(['run', `--kubeconfig=${kubeconfig}`, '--controllers=node-ipam', '--secure-port=0',
    '--leader-elect-lease-duration=4s', '--leader-elect-renew-deadline=3s', '--leader-elect-retry-period=500ms',
    '--allocate-node-cidrs', '--cluster-cidr=10.200.0.0/16', ...extra]);
}

const acquired = (l: LogLine): boolean => l.msg === 'acquired the lease';
/** The deadline's log line: the process gave up waiting rather than finishing its stop. */
const gaveUp = (l: LogLine): boolean => /^still stopping after/.test(l.msg);

/** The replica logs "stopped leading" (lost) within `ms`, then exits 1 within 2 s of it, cancelled rather than cut off. */
async function expectDeposedExit(run: CliProcess, ms: number): Promise<void> {
  const stopped = await run.waitFor((l) => l.msg === 'stopped leading', ms, 'stopped leading');
    expect(stopped.reason, run.stdout).toBe('lost');
    expect(await run.exitWithin(10_000), run.stdout).toBe(1);
    // Both times as this process saw them, so a busy test runner's own lag cancels out.
    expect((run.exitedAt as number) - stopped.seenAt, run.stdout).toBeLessThanOrEqual(2000);
    // Cancelled, not cut off by the exit deadline.
    expect(run.lines.filter(gaveUp), run.stdout).toEqual([]);
}

describe('a deposed replica exits 1 within 2 s, whatever the API server does', () => {
  it('frozen right after acquiring the lease, resumed with the API server gone for good', async () => {
    const api = await ps.apiserver();
    const run = startRun(api.kubeconfig);
    await run.waitFor(acquired, 15_000, 'acquired the lease');
    run.kill('SIGSTOP');
    api.proc.kill('SIGKILL');
    await api.proc.exited;
    // Frozen past the renew deadline (3 s) and the lease (4 s): time waited out on purpose.
    await new Promise((r) => setTimeout(r, 4500));
    run.kill('SIGCONT');
    await expectDeposedExit(run, 5000);
  }, 40_000);

  it('losing the lease while start-up is stuck in an API outage (not frozen)', async () => {
    const api = await ps.apiserver();
    const run = startRun(api.kubeconfig);
    await run.waitFor(acquired, 15_000, 'acquired the lease');
    api.proc.kill('SIGKILL');
    // Start-up begins after the takeover delay and blocks in node IPAM's re-list; renewals fail
    // until the renew deadline ends the term.
    await expectDeposedExit(run, 10_000);
  }, 40_000);
});

describe('SIGTERM exits 0 within --shutdown-grace-period, whatever the API server does', () => {
  it('during a start-up stuck in an API outage, with the API server down for good', async () => {
    const api = await ps.apiserver();
    const run = startRun(api.kubeconfig, ['--shutdown-grace-period=2s']);
    await run.waitFor(acquired, 15_000, 'acquired the lease');
    api.proc.kill('SIGKILL');
    await run.waitFor((l) => l.msg === 'starting controllers', 5000, 'starting controllers');
    const sent = Date.now();
    run.kill('SIGTERM');
    expect(await run.exitWithin(10_000), run.stdout).toBe(0);
    expect((run.exitedAt as number) - sent).toBeLessThanOrEqual(2500);
    expect(run.lines.filter(gaveUp), run.stdout).toEqual([]);
  }, 40_000);

  it('without leader election, during a start-up stuck in an API outage', async () => {
    // The node LIST is held 3 s, so it is still in flight when the API server dies: without it
    // the LIST could answer (and node IPAM load) between "starting controllers" and the kill.
    const plan = path.join(await ps.tempDir(), 'faults.json');
    writeFileSync(plan, JSON.stringify({ rules: [{ verb: ['list'], resource: 'nodes', latencyMs: 3000 }] }));
    const api = await ps.apiserver(['--faults', plan]);
    const run = startRun(api.kubeconfig, ['--leader-elect=false', '--shutdown-grace-period=2s']);
    await run.waitFor((l) => l.msg === 'starting controllers', 15_000, 'starting controllers');
    api.proc.kill('SIGKILL');
    // Half a second with the API server gone: still starting, node IPAM never got to load its allocator.
    await new Promise((r) => setTimeout(r, 500));
    expect(run.lines.some((l) => l.msg === 'allocator loaded from existing nodes'), run.stdout).toBe(false);
    const sent = Date.now();
    run.kill('SIGTERM');
    expect(await run.exitWithin(10_000), run.stdout).toBe(0);
    expect((run.exitedAt as number) - sent, run.stdout).toBeLessThanOrEqual(2500);
    expect(run.lines.filter(gaveUp), run.stdout).toEqual([]);
  }, 40_000);

  it('while leading with the controllers running; after the grace period it says what was pending', async () => {
    const api = await ps.apiserver();
    const run = startRun(api.kubeconfig, ['--shutdown-grace-period=1500ms']);
    await run.waitFor((l) => l.msg === 'allocator loaded from existing nodes', 15_000, 'node IPAM started');
    // Stopped, not killed: connections hang rather than fail, so nothing ends by itself.
    api.proc.kill('SIGSTOP');
    const sent = Date.now();
    run.kill('SIGTERM');
    expect(await run.exitWithin(10_000), run.stdout).toBe(0);
    // 1.5 s and the time to exit and be seen exiting on a busy machine.
    expect((run.exitedAt as number) - sent, run.stdout).toBeLessThanOrEqual(2500);
    // The event flush or the lease release hangs on the frozen API server: the deadline ends the
    // stop and names what was pending, with how long.
    const last = run.lines.find(gaveUp);
    expect(last?.level, run.stdout).toBe(40);
    const pending = last?.pending as string[];
    expect(pending.length, run.stdout).toBeGreaterThan(0);
    for (const p of pending) expect(p).toMatch(/^(leader election \(lease release\)|stopping the controllers) \([\d.]+ s\)$/);
    api.proc.kill('SIGCONT');
  }, 40_000);
});

describe('/livez while a shutdown is stuck', () => {
  it('fails, naming what is pending, until the grace period ends the process', async () => {
    const api = await ps.apiserver();
    const port = await freePort();
    const run = startRun(api.kubeconfig, ['--shutdown-grace-period=6s', `--secure-port=${port}`, '--insecure-plain-http']);
    await run.waitFor((l) => l.msg === 'allocator loaded from existing nodes', 15_000, 'node IPAM started');
    expect((await get(`http://127.0.0.1:${port}/livez`)).status).toBe(200);
    api.proc.kill('SIGSTOP');
    run.kill('SIGTERM');
    // The lease release hangs on the frozen API server: the shutdown is stuck.
    const live = await eventually(async () => {
      const r = await get(`http://127.0.0.1:${port}/livez?verbose`);
      return r.status !== 200 && r;
    }, { timeoutMs: 5000, intervalMs: 200, what: '/livez to fail' });
    expect(live.status).toBe(500);
    expect(live.body).toMatch(/\[-\]shutdown failed: shutting down for [\d.]+ s; pending: /);
    expect(await run.exitWithin(10_000), run.stdout).toBe(0);
    api.proc.kill('SIGCONT');
  }, 40_000);
});
