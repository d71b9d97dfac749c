// --cloud-provider-module in this process: the loader's one-line errors for a module that is
// missing, does not import or has the wrong shape, and the checks a loaded provider's calls pass
// through (a plugin that throws, hangs, or answers for the wrong nodes).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadProviderModule } from '../../../providers/module/load.js';
import { createProvider } from '../../../providers/registry.js';
import type { CloudProvider } from '../../../providers/types.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string) => path.relative(process.cwd(), path.join(fixtures, name));
let dir: string;
let provider: CloudProvider | undefined;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ccm-module-'));
});
afterEach(async () => {
  await provider?.close?.();
  provider = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function loadError(spec: string, name: string, cloudConfig?: string): Promise<string> {
  try {
    await loadProviderModule(spec, name);
    provider = await createProvider(name, cloudConfig ? { cloudConfig } : {});
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('loaded without an error');
}

describe('loading a module: one-line errors naming the flag and the module', () => {
  it.each([
    ['./no/such/plugin.mjs', 'x', '--cloud-provider-module ./no/such/plugin.mjs: cannot read: no such file'],
    ['no-such-package-for-ccm', 'x', '--cloud-provider-module no-such-package-for-ccm: cannot import: no such package is installed where node-address-ccm can resolve it (next to it, in node_modules)'],
    [fixture('no-default.mjs'), 'x', `--cloud-provider-module ${fixture('no-default.mjs')}: no default export (expected "export default defineProvider({ name, create })"; it exports create)`],
    [fixture('misbehaving.mjs'), 'other', `--cloud-provider-module ${fixture('misbehaving.mjs')}: defines provider "misbehaving", but --cloud-provider names "other"`],
    [fixture('misbehaving.mjs'), 'aws', `--cloud-provider-module ${fixture('misbehaving.mjs')}: --cloud-provider aws is a built-in provider; a module's provider needs a name of its own`],
  ])('%s as %s', async (spec, name, message) => {
    expect(await loadError(spec, name)).toBe(message);
  });

  it('a module that does not parse names the error, in one line', async () => {
    const file = path.join(dir, 'syntax-error.mjs');
    await writeFile(file, "export default {\n  name: 'broken',\n");
    const message = await loadError(file, 'broken');
    // (Node's own wording, SyntaxError: …, is checked through the real process in test/cli.)
    expect(message).toMatch(/^--cloud-provider-module \S+syntax-error\.mjs: cannot import: /);
    expect(message).not.toContain('\n');
  });

  it('a folder is not a module', async () => {
    expect(await loadError(dir, 'x')).toBe(`--cloud-provider-module ${dir}: it is a directory, not a file (name the module file itself)`);
  });

  it('a provider of the wrong shape lists every problem', async () => {
    expect(await loadError(fixture('wrong-shape.mjs'), 'per-node')).toBe(`--cloud-provider-module ${fixture('wrong-shape.mjs')}: the provider create() built is not a CloudProvider: ` +
      'instancesMetadata is missing, not a function; instancesExist takes 4 parameters, not (nodes, signal?)');
  });

  it('a provider whose batched method answers an empty batch with something else than a Map', async () => {
    const file = path.join(dir, 'object.mjs');
    await writeFile(file, `export default { name: 'objecty', async create() { return { name: 'objecty', instancesMetadata: async () => ({}), instancesExist: async () => new Map(), instancesShutdown: async () => new Map() }; } };`);
    expect(await loadError(file, 'objecty')).toBe(`--cloud-provider-module ${file}: the provider create() built is not a CloudProvider: instancesMetadata([]) resolved to an object, not a Map (a batched method answers a Map of node name to outcome)`);
  });

  it('create() failing is named; a required --cloud-config missing is the registry\'s usual error', async () => {
    const file = path.join(dir, 'failing.mjs');
    await writeFile(file, `export default { name: 'failing', async create() { throw new Error('no credentials'); } };`);
    expect(await loadError(file, 'failing')).toBe(`--cloud-provider-module ${file}: create() failed: no credentials`);
    expect(await loadError(fixture('misbehaving.mjs'), 'misbehaving')).toBe('--cloud-config: required by --cloud-provider misbehaving (the provider configuration)');
  });

  it('a bare factory as default export: the provider names itself and is checked the same way', async () => {
    await loadProviderModule(fixture('factory-only.mjs'), 'bare');
    provider = await createProvider('bare', {});
    expect(provider.name).toBe('bare');
    expect((await provider.instancesMetadata([{ name: 'a' }])).get('a')).toEqual({ kind: 'notFound' });
  });
});

describe('calls of a loaded provider go through the checks', () => {
  async function misbehaving(mode: string): Promise<CloudProvider> {
    const conf = path.join(dir, 'conf.json');
    await writeFile(conf, JSON.stringify({ mode, nodes: { n1: { providerID: 'm://n1', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } } }));
    await loadProviderModule(fixture('misbehaving.mjs'), 'misbehaving');
    provider = await createProvider('misbehaving', { cloudConfig: conf });
    return provider;
  }

  it('a plugin that throws: the call rejects with its error (each node an error, never notFound)', async () => {
    await expect((await misbehaving('throw')).instancesMetadata([{ name: 'n1' }])).rejects.toThrow('the inventory is on fire');
  });

  it('a plugin that hangs: the call rejects at the deadline the module set', async () => {
    await expect((await misbehaving('hang')).instancesExist([{ name: 'n1' }])).rejects.toThrow('provider misbehaving did not answer instancesExist within 1s');
  });

  it('a plugin that answers for the wrong nodes: the asked node is an error, the stranger dropped', async () => {
    const answers = await (await misbehaving('wrong-nodes')).instancesMetadata([{ name: 'n1' }]);
    expect([...answers.keys()]).toEqual(['n1']);
    expect(answers.get('n1')).toMatchObject({ kind: 'error', retryable: true, error: new Error('provider misbehaving gave no answer for node n1') });
  });

  it('a plugin that answers a plain object: every node an error', async () => {
    const answers = await (await misbehaving('not-a-map')).instancesShutdown([{ name: 'n1' }]);
    expect(answers.get('n1')?.kind).toBe('error');
  });

  it('a plugin that answers well: as it said, copied', async () => {
    const answers = await (await misbehaving('ok')).instancesMetadata([{ name: 'n1' }, { name: 'n2' }]);
    expect(answers.get('n1')).toEqual({ kind: 'found', value: { providerID: 'm://n1', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } });
    expect(answers.get('n2')).toEqual({ kind: 'notFound' });
  });
});
