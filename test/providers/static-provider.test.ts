import { describe, it, expect, afterEach } from 'vitest';
import { mkdtemp, rename, rm, symlink, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StaticProvider } from '../../providers/static/provider.js';
import { createProvider } from '../../providers/index.js';
import type { ProviderLogger } from '../../providers/types.js';
import { eventually } from '../kit/wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'static-provider-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function recordingLogger(): ProviderLogger & { errors: Array<{ obj: Record<string, unknown>; msg?: string }> } {
  const errors: Array<{ obj: Record<string, unknown>; msg?: string }> = [];
  return { errors, info() {}, warn() {}, debug() {}, error: (obj, msg) => errors.push({ obj: obj as Record<string, unknown>, msg }) };
}

const cfg = (addr: string): string => `nodes:\n  node-a:\n    zone: zone-a\n    addresses:\n      - { type: InternalIP, address: ${addr} }\n`;

async function open(file: string, logger?: ProviderLogger, watch = true): Promise<StaticProvider> {
  const p = await StaticProvider.open({ path: file, logger, debounceMs: 20, pollMs: 50, watch });
  cleanups.push(() => p.close());
  return p;
}

async function addressOf(p: StaticProvider): Promise<string | undefined> {
  const r = (await p.instancesMetadata([{ name: 'node-a' }])).get('node-a');
  return r?.kind === 'found' ? r.value.addresses[0]?.address : undefined;
}

describe('StaticProvider', () => {
  it('answers found, notFound, exist and shutdown per node', async () => {
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, `${cfg('10.0.0.1')}  node-b:\n    shutdown: true\n`);
    const p = await open(file);
    const md = await p.instancesMetadata([{ name: 'node-a' }, { name: 'node-x' }]);
    expect(md.get('node-a')).toEqual({
      kind: 'found',
      value: { providerID: 'static://node-a', zone: 'zone-a', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] },
    });
    expect(md.get('node-x')?.kind).toBe('notFound');
    const exist = await p.instancesExist([{ name: 'node-a' }, { name: 'node-x' }]);
    expect([...exist.values()]).toEqual([{ kind: 'found', value: true }, { kind: 'found', value: false }]);
    const down = await p.instancesShutdown([{ name: 'node-a' }, { name: 'node-b' }, { name: 'node-x' }]);
    expect(down.get('node-a')).toEqual({ kind: 'found', value: false });
    expect(down.get('node-b')).toEqual({ kind: 'found', value: true });
    expect(down.get('node-x')?.kind).toBe('notFound');
  });

  it('returns copies that callers cannot use to change the config', async () => {
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, cfg('10.0.0.1'));
    const p = await open(file);
    const r = (await p.instancesMetadata([{ name: 'node-a' }])).get('node-a');
    if (r?.kind !== 'found') throw new Error('expected found');
    r.value.addresses[0]!.address = '10.9.9.9';
    expect(await addressOf(p)).toBe('10.0.0.1');
  });

  it('fails to start on a missing or invalid file, naming the field', async () => {
    const dir = await tempDir();
    await expect(StaticProvider.open({ path: path.join(dir, 'nope.yaml') })).rejects.toThrow(/--cloud-config .*nope.yaml: cannot read/);
    const file = path.join(dir, 'bad.yaml');
    await writeFile(file, 'nodes:\n  n:\n    addresses:\n      - { type: Bogus, address: x }\n');
    await expect(StaticProvider.open({ path: file })).rejects.toThrow(/nodes\.n\.addresses\[0\]\.type.*"Bogus"/);
    await expect(createProvider('static', {})).rejects.toThrow(/--cloud-config: required/);
  });

  it('reloads when the file is rewritten in place', async () => {
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, cfg('10.0.0.1'));
    const p = await open(file);
    expect(p.generation).toBe(1);
    await writeFile(file, cfg('10.0.0.2'));
    await eventually(async () => expect(await addressOf(p)).toBe('10.0.0.2'), { timeoutMs: 5000, intervalMs: 20 });
    expect(p.generation).toBe(2);
  });

  it('reloads after an atomic rename over the file', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'cloud.yaml');
    await writeFile(file, cfg('10.0.0.1'));
    const p = await open(file);
    const seen: number[] = [];
    p.onReload((g) => seen.push(g));
    await writeFile(path.join(dir, '.cloud.yaml.tmp'), cfg('fd00::0:2'));
    await rename(path.join(dir, '.cloud.yaml.tmp'), file);
    await eventually(async () => expect(await addressOf(p)).toBe('fd00::2'), { timeoutMs: 5000, intervalMs: 20 });
    expect(seen).toEqual([2]);
  });

  it('follows a ConfigMap-style ..data symlink swap', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, '..v1'));
    await writeFile(path.join(dir, '..v1', 'cloud.yaml'), cfg('10.0.0.1'));
    await symlink('..v1', path.join(dir, '..data'));
    await symlink('..data/cloud.yaml', path.join(dir, 'cloud.yaml'));
    const p = await open(path.join(dir, 'cloud.yaml'));
    await mkdir(path.join(dir, '..v2'));
    await writeFile(path.join(dir, '..v2', 'cloud.yaml'), cfg('10.0.0.3'));
    await symlink('..v2', path.join(dir, '..data_tmp'));
    await rename(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    await eventually(async () => expect(await addressOf(p)).toBe('10.0.0.3'), { timeoutMs: 5000, intervalMs: 20 });
  });

  it('keeps the last good config after a bad reload and logs the field', async () => {
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, cfg('10.0.0.1'));
    const logger = recordingLogger();
    const p = await open(file, logger);
    await writeFile(file, cfg('10.0.0.999'));
    await eventually(() => expect(p.lastError?.message).toMatch(/nodes\.node-a\.addresses\[0\]\.address.*"10\.0\.0\.999"/), { timeoutMs: 5000, intervalMs: 20 });
    expect(await addressOf(p)).toBe('10.0.0.1');
    expect(p.generation).toBe(1);
    expect(logger.errors.some((e) => e.obj.field === 'nodes.node-a.addresses[0].address')).toBe(true);
    // Polls and spurious events re-read the same bad file without logging it again.
    await p.reload();
    await p.reload();
    expect(logger.errors).toHaveLength(1);
    // A fixed file is picked up again and clears the error.
    await writeFile(file, cfg('10.0.0.4'));
    await eventually(async () => expect(await addressOf(p)).toBe('10.0.0.4'), { timeoutMs: 5000, intervalMs: 20 });
    expect(p.lastError).toBeUndefined();
  });

  it('clears the error when a bad edit is reverted', async () => {
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, cfg('10.0.0.1'));
    const p = await open(file);
    await writeFile(file, 'nodes: [');
    await eventually(() => expect(p.lastError?.message).toMatch(/not valid YAML/), { timeoutMs: 5000, intervalMs: 20 });
    await writeFile(file, cfg('10.0.0.1'));
    await eventually(() => expect(p.lastError).toBeUndefined(), { timeoutMs: 5000, intervalMs: 20 });
    expect(p.generation).toBe(1);
    expect(await addressOf(p)).toBe('10.0.0.1');
  });

  it('never applies content read in the middle of a write (an empty file would drop every node)', async () => {
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, cfg('10.0.0.1'));
    const p = await StaticProvider.open({ path: file, debounceMs: 200, pollMs: 0, watch: false });
    cleanups.push(() => p.close());
    await writeFile(file, ''); // truncated, as a save in place leaves it for a moment
    const reload = p.reload();
    await new Promise((r) => setTimeout(r, 50));
    await writeFile(file, cfg('10.0.0.1')); // the write completes within the debounce
    await reload;
    expect(p.generation).toBe(1);
    expect(await addressOf(p)).toBe('10.0.0.1');
  });

  it('picks up a change by polling when no watch event arrives', async () => {
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, cfg('10.0.0.1'));
    const p = await open(file, undefined, false);
    await writeFile(file, cfg('10.0.0.6'));
    await eventually(async () => expect(await addressOf(p)).toBe('10.0.0.6'), { timeoutMs: 5000, intervalMs: 20 });
  });

  /** A provider polling every 30 ms (no fs.watch), with the given statTrustMs, over a fresh file. */
  async function polling(statTrustMs: number): Promise<{ file: string; p: StaticProvider }> {
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, cfg('10.0.0.1'));
    const p = await StaticProvider.open({ path: file, debounceMs: 20, pollMs: 30, watch: false, statTrustMs });
    cleanups.push(() => p.close());
    return { file, p };
  }

  it('a poll of an unchanged, settled file reads only its stat; an in-place edit is still read', async () => {
    const { file, p } = await polling(0);
    // The start-up read, then one poll's read that finds it settled; after that, stats only.
    await eventually(() => expect(p.reads).toBe(2), { timeoutMs: 2000 });
    // Ten polls' time: none of them may read the file again.
    await new Promise((r) => setTimeout(r, 300));
    expect(p.reads).toBe(2);
    await writeFile(file, cfg('10.0.0.2'));
    await eventually(async () => expect(await addressOf(p)).toBe('10.0.0.2'), { timeoutMs: 2000 });
  });

  it('a file changed less than statTrustMs before it was read is read again at every poll', async () => {
    const { p } = await polling(60_000);
    await eventually(() => expect(p.reads).toBeGreaterThanOrEqual(6), { timeoutMs: 2000 });
  });

  it('a poll of unchanged content digests the file in pieces and never reads it whole; new content is read and applied', async () => {
    // Re-read at every poll (never trusted by its stat), with a byte-order mark and text beyond
    // ASCII: the file's bytes must digest as the text the config was applied from.
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, `\uFEFF# Zürich rack ☃\n${cfg('10.0.0.1')}`);
    const p = await StaticProvider.open({ path: file, debounceMs: 20, pollMs: 30, watch: false, statTrustMs: 60_000 });
    cleanups.push(() => p.close());
    await eventually(() => expect(p.reads).toBeGreaterThanOrEqual(6), { timeoutMs: 2000 });
    expect(p.textReads).toBe(1);
    expect(p.generation).toBe(1);
    await writeFile(file, cfg('10.0.0.2'));
    await eventually(async () => expect(await addressOf(p)).toBe('10.0.0.2'), { timeoutMs: 2000 });
    expect(p.generation).toBe(2);
    const read = p.textReads;
    expect(read).toBeGreaterThan(1);
    // Four more polls of the new, unchanged content: none reads it whole.
    const reads = p.reads;
    await eventually(() => expect(p.reads).toBeGreaterThanOrEqual(reads + 4), { timeoutMs: 2000 });
    expect(p.textReads).toBe(read);
  });

  it('a file that is not valid UTF-8 is read whole at each poll, compared as text, and not applied again', async () => {
    // readFile replaces the bad byte, so the file's bytes never digest as the applied text: the
    // piecewise digest misses, and the text read finds the config in effect.
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, Buffer.concat([Buffer.from('# '), Buffer.from([0xff]), Buffer.from(`\n${cfg('10.0.0.1')}`)]));
    const p = await StaticProvider.open({ path: file, debounceMs: 20, pollMs: 30, watch: false, statTrustMs: 60_000 });
    cleanups.push(() => p.close());
    await eventually(() => expect(p.textReads).toBeGreaterThanOrEqual(4), { timeoutMs: 2000 });
    expect(p.generation).toBe(1);
    expect(p.lastError).toBeUndefined();
    expect(await addressOf(p)).toBe('10.0.0.1');
  });

  it('stops reloading after close', async () => {
    const file = path.join(await tempDir(), 'cloud.yaml');
    await writeFile(file, cfg('10.0.0.1'));
    const p = await open(file);
    p.close();
    await writeFile(file, cfg('10.0.0.5'));
    await p.reload();
    expect(await addressOf(p)).toBe('10.0.0.1');
  });
});
