// The example adapter's own tests: its mapping of a NetBox VM, and the module as `run` loads it
// (through --cloud-provider-module's loader and the registry) over an export file that changes.
import { mkdtemp, rm, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadProviderModule } from '../../providers/module/load.js';
import { createProvider } from '../../providers/registry.js';
import type { CloudProvider } from '../../providers/types.js';
import { parseExport, vmMetadata, type NetBoxVM } from './netbox.js';

const vm = (over: Partial<NetBoxVM> = {}): NetBoxVM => ({
  id: 7, name: 'worker-1', status: { value: 'active' }, site: { slug: 'fra1' }, role: { slug: 'k8s-worker' }, cluster: { name: 'pve-a' },
  primary_ip4: { address: '10.1.0.7/24' }, primary_ip6: { address: '2001:db8::7/64' }, custom_fields: { region: 'eu-central' }, ...over,
});

describe('vmMetadata', () => {
  it.each([
    ['a dual-stack VM', vm(), { providerID: 'netbox://7', zone: 'fra1', region: 'eu-central', instanceType: 'k8s-worker', labels: { 'netbox.example.com/cluster': 'pve-a' },
      addresses: [{ type: 'InternalIP', address: '10.1.0.7' }, { type: 'InternalIP', address: '2001:db8::7' }, { type: 'Hostname', address: 'worker-1' }] }],
    ['IPv6 only, no site, role or cluster', vm({ primary_ip4: null, site: null, role: null, cluster: null, custom_fields: null }),
      { providerID: 'netbox://7', addresses: [{ type: 'InternalIP', address: '2001:db8::7' }, { type: 'Hostname', address: 'worker-1' }] }],
  ])('%s', (_name, input, expected) => {
    expect(vmMetadata(input)).toEqual(expected);
  });

  it.each([
    ['{}', 'not a NetBox list: no "results" array'],
    ['{"results":[{"name":"x"}]}', 'results: an entry without a numeric id and a name'],
  ])('parseExport(%s) throws', (text, message) => {
    expect(() => parseExport(text)).toThrow(message);
  });
});

describe('the module, loaded as run loads it', () => {
  let dir: string;
  let provider: CloudProvider | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'netbox-'));
  });
  afterEach(async () => {
    await provider?.close?.();
    await rm(dir, { recursive: true, force: true });
  });

  async function writeExport(vms: NetBoxVM[]): Promise<string> {
    const file = path.join(dir, 'vms.json');
    await writeFile(`${file}.tmp`, JSON.stringify({ count: vms.length, results: vms }));
    await rename(`${file}.tmp`, file);
    return file;
  }

  it('answers by providerID or name; offline is shut down; a removed VM is gone; an edit is read', async () => {
    const file = await writeExport([vm(), vm({ id: 8, name: 'worker-2', status: { value: 'offline' } })]);
    await loadProviderModule(path.join(path.dirname(fileURLToPath(import.meta.url)), 'netbox.ts'), 'netbox');
    provider = await createProvider('netbox', { cloudConfig: file });
    const meta = await provider.instancesMetadata([{ name: 'worker-1' }, { name: 'renamed', providerID: 'netbox://8' }, { name: 'ghost' }, { name: 'aws-node', providerID: 'aws:///i-1' }]);
    expect(meta.get('worker-1')).toMatchObject({ kind: 'found', value: { providerID: 'netbox://7', zone: 'fra1' } });
    expect(meta.get('renamed')).toMatchObject({ kind: 'found', value: { providerID: 'netbox://8' } });
    expect(meta.get('ghost')).toEqual({ kind: 'notFound', reason: 'no virtual machine ghost in the NetBox export' });
    expect(meta.get('aws-node')).toMatchObject({ kind: 'error', retryable: true });
    const shutdown = await provider.instancesShutdown([{ name: 'worker-1' }, { name: 'worker-2' }]);
    expect([shutdown.get('worker-1'), shutdown.get('worker-2')]).toEqual([{ kind: 'found', value: false }, { kind: 'found', value: true }]);

    await writeExport([vm({ id: 8, name: 'worker-2', status: { value: 'active' } })]);
    const exist = await provider.instancesExist([{ name: 'worker-1' }, { name: 'worker-2' }]);
    expect([exist.get('worker-1'), exist.get('worker-2')]).toEqual([{ kind: 'found', value: false }, { kind: 'found', value: true }]);
  });

  it('an export that no longer parses is an error for every node, never "gone"', async () => {
    const file = await writeExport([vm()]);
    await loadProviderModule(path.join(path.dirname(fileURLToPath(import.meta.url)), 'netbox.ts'), 'netbox');
    provider = await createProvider('netbox', { cloudConfig: file });
    await writeFile(file, '{"results": ');
    const exist = await provider.instancesExist([{ name: 'worker-1' }]);
    expect(exist.get('worker-1')).toMatchObject({ kind: 'error', retryable: true });
  });
});
