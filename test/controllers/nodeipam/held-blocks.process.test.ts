// Issue 18's three migrations, each through a real `run` process (the built binary) against the
// API server double: a block a node holds is never handed to another node, whatever today's
// pools are, and the Warning event says how the block relates to the pools.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliPath, repoRoot } from '../../helpers/cli.js';
import { startApiServerDouble, type ApiServerDouble } from '../../../src/sim/apiserver/server.js';
import { cidrsOverlap, parseCIDR } from '../../../src/ipam/cidr.js';
import { createNode } from '../harness.js';
import { until } from '../memory-nodes.js';
import { createClusterCIDR, podCIDRsOf, storedNodes } from './harness.js';
import { nodePodCIDRs } from '../../../src/model/node.js';

let api: ApiServerDouble;
let dir: string;
let child: ChildProcess | undefined;
let output = '';

beforeEach(async () => {
  api = await startApiServerDouble({ bookmarkIntervalMs: 200 });
  dir = await mkdtemp(path.join(tmpdir(), 'ccm-held-'));
});
afterEach(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('close', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  child = undefined;
  output = '';
  await api.stop();
  await rm(dir, { recursive: true, force: true });
});

async function startRun(...flags: string[]): Promise<void> {
  const kubeconfig = path.join(dir, 'kubeconfig');
  await writeFile(kubeconfig, api.kubeconfig);
  child = spawn(process.execPath, [cliPath, 'run', `--kubeconfig=${kubeconfig}`, '--controllers=node-ipam', '--allocate-node-cidrs', '--secure-port=0', '--leader-elect=false', ...flags], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await until(() => output.includes('allocator loaded from existing nodes'), 15_000, `the run process restored the allocator; output:\n${output}`);
}

function eventsFor(name: string): { reason: string; message: string; type: string }[] {
  return (api.store.list('events', { namespace: 'default' }) as unknown as { involvedObject: { name: string }; reason: string; message: string; type: string }[])
    .filter((e) => e.involvedObject.name === name);
}

/** No two live nodes hold overlapping pod CIDRs. */
function overlaps(): string[] {
  const held = storedNodes(api).flatMap((n) => nodePodCIDRs(n).map((c) => ({ node: n.metadata.name, c: parseCIDR(c) })));
  const out: string[] = [];
  for (let i = 0; i < held.length; i++) {
    for (let j = i + 1; j < held.length; j++) if (cidrsOverlap(held[i].c, held[j].c)) out.push(`${held[i].node} ${held[i].c.text} ~ ${held[j].node} ${held[j].c.text}`);
  }
  return out;
}

describe('a pod CIDR any node holds is never handed out again (real run process)', () => {
  it('1. a held block that contains the narrowed pool: the joining node waits, the event says "contains pool"', async () => {
    createNode(api, { name: 'legacy', tainted: false, podCIDRs: ['10.0.0.0/16'] });
    await startRun('--cluster-cidr=10.0.0.0/20');
    createNode(api, { name: 'fresh', tainted: false });
    await until(() => eventsFor('fresh').some((e) => e.reason === 'CIDRNotAvailable'), 10_000, 'CIDRNotAvailable for fresh');
    expect(podCIDRsOf(api, 'fresh')).toEqual([]);
    const warning = eventsFor('legacy').find((e) => e.reason === 'PodCIDRConflict');
    expect(warning?.type).toBe('Warning');
    expect(warning?.message).toMatch(/pod CIDR 10\.0\.0\.0\/16 contains pool "created-from-flags-[0-9a-f]+" \(10\.0\.0\.0\/20\)/);
    expect(warning?.message).not.toMatch(/outside every pool/);
    expect(overlaps()).toEqual([]);
  });

  it('2. a held block outside every pool, then a ClusterCIDR is created over it: the new node gets another block', async () => {
    createNode(api, { name: 'old', tainted: false, podCIDRs: ['10.1.0.0/24'] });
    await startRun('--cluster-cidr=10.0.0.0/16', '--cidr-allocator-type=MultiCIDRRangeAllocator');
    await until(() => eventsFor('old').some((e) => e.reason === 'PodCIDRConflict'), 10_000, 'old reported outside every pool');
    expect(eventsFor('old').find((e) => e.reason === 'PodCIDRConflict')?.message).toMatch(/10\.1\.0\.0\/24 lies outside every pool/);
    // Fewer blocks than the flags pool, so the new pool is the first choice for every node.
    createClusterCIDR(api, 'added', { perNodeHostBits: 8, ipv4: '10.1.0.0/22' });
    await until(() => /"clusterCIDR":"added".*"ClusterCIDR added"/.test(output), 10_000, 'the pool is loaded');
    createNode(api, { name: 'new', tainted: false });
    await until(() => podCIDRsOf(api, 'new').length > 0, 10_000, 'new gets a block');
    expect(podCIDRsOf(api, 'new')).toEqual(['10.1.1.0/24']);
    expect(overlaps()).toEqual([]);
  });

  it('3. two holders of one block, the older is deleted: the block stays held by the younger', async () => {
    createNode(api, { name: 'x-old', tainted: false, podCIDRs: ['10.0.0.0/24'] });
    createNode(api, { name: 'y-new', tainted: false, podCIDRs: ['10.0.0.0/24'] });
    await startRun('--cluster-cidr=10.0.0.0/16');
    await until(() => eventsFor('y-new').some((e) => e.reason === 'PodCIDRConflict'), 10_000, 'y-new gets the conflict');
    expect(eventsFor('x-old').filter((e) => e.reason === 'PodCIDRConflict')).toEqual([]);
    api.store.delete('nodes', 'x-old');
    await until(() => output.includes('"node":"x-old"') && output.includes('pod CIDRs released'), 10_000, 'x-old released');
    createNode(api, { name: 'z', tainted: false });
    await until(() => podCIDRsOf(api, 'z').length > 0, 10_000, 'z gets a block');
    expect(podCIDRsOf(api, 'z')).toEqual(['10.0.1.0/24']);
    expect(overlaps()).toEqual([]);
  });
});
