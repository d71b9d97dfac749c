// Leader-election metrics under client-go's name, scraped from /metrics of real `run` processes:
// the leader reports leader_election_master_status 1 and a follower 0; when the leader is killed
// the follower takes over, its status turns 1 and the lease transitions it reports go up by one.
import { afterEach, describe, expect, it } from 'vitest';
import { Processes, type CliProcess } from '../kit/processes.js';
import { freePort, get } from '../kit/net.js';
import { eventually } from '../kit/wait.js';

const ps = new Processes();
afterEach(() => ps.cleanup());

async function replica(kubeconfig: string, name: string): Promise<{ proc: CliProcess; scrape: () => Promise<string> }> {
  const port = await freePort();
  const proc = ps.start(['run', `--kubeconfig=${kubeconfig}`, '--controllers=node-ipam', `--secure-port=${port}`, '--insecure-plain-http',
    '--leader-elect-lease-duration=3s', '--leader-elect-renew-deadline=2s', '--leader-elect-retry-period=250ms',
    '--allocate-node-cidrs', '--cluster-cidr=10.200.0.0/16', '--leader-elect-resource-name', name]);
  await proc.waitFor((l) => /^serving \/metrics/.test(l.msg), 15_000, 'serving');
  return { proc, scrape: async () => (await get(`http://127.0.0.1:${port}/metrics`)).body };
}

describe('leader_election_master_status and the lease transitions on /metrics', () => {
  it('1 on the leader, 0 on a follower; after the leader is killed the follower reports 1 and one more transition', async () => {
    const api = await ps.apiserver();
    const status = (v: number): RegExp => new RegExp(`^leader_election_master_status\\{name="ccm-test"\\} ${v}$`, 'm');
    const transitions = (v: number): RegExp => new RegExp(`^leader_election_lease_transitions\\{name="ccm-test"\\} ${v}$`, 'm');
    const a = await replica(api.kubeconfig, 'ccm-test');
    await a.proc.waitFor((l) => l.msg === 'acquired the lease', 15_000, 'a leads');
    const b = await replica(api.kubeconfig, 'ccm-test');
    await b.proc.waitFor((l) => l.msg === 'new leader observed', 15_000, 'b sees a');
    const am = await a.scrape();
    expect(am).toMatch(/^# TYPE leader_election_master_status gauge$/m);
    expect(am).toMatch(status(1));
    // The lease was created by a: no transition yet.
    expect(am).toMatch(transitions(0));
    const bm = await b.scrape();
    expect(bm).toMatch(status(0));
    expect(bm).toMatch(transitions(0));

    a.proc.kill('SIGKILL');
    await b.proc.waitFor((l) => l.msg === 'acquired the lease', 15_000, 'b takes over');
    await eventually(async () => status(1).test(await b.scrape()), { timeoutMs: 5000, intervalMs: 100, what: 'b reports 1' });
    expect(await b.scrape()).toMatch(transitions(1));
  }, 60_000);
});
