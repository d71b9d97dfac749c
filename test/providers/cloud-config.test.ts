// The --cloud-config check the registry makes for every provider before it loads the adapter:
// one wording, naming the flag and the path, whichever cloud is named.
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProblem } from '../../src/util/file-argument.js';
import { createProvider } from '../../providers/index.js';
import type { ProviderLogger } from '../../providers/types.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cloud-config-'));
  await chmod(dir, 0o755);
  await writeFile(path.join(dir, 'blank'), ' \n\t\n');
  await writeFile(path.join(dir, 'a-file'), 'x');
  await mkdir(path.join(dir, 'a-directory'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function warnings(): ProviderLogger & { seen: Array<{ obj: object; msg?: string }> } {
  const seen: Array<{ obj: object; msg?: string }> = [];
  return { seen, info() {}, debug() {}, error() {}, warn: (obj, msg) => seen.push({ obj, msg }) };
}

/** The message createProvider rejects with, after checking it is one line. */
async function failure(provider: string, cloudConfig: string | undefined): Promise<string> {
  const err = await createProvider(provider, cloudConfig === undefined ? {} : { cloudConfig }).then(
    () => { throw new Error(`${provider} was built`); },
    (e: unknown) => e as Error,
  );
  expect(err.message).not.toContain('\n');
  return err.message;
}

describe('--cloud-config, checked by the registry for every provider', () => {
  const file = (name: string) => path.join(dir, name);
  it.each([
    ['static', 'no-such-file', 'cannot read: no such file'],
    ['gce', 'no-such-file', 'cannot read: no such file'],
    ['kind', 'no-such-file', 'cannot read: no such file'],
    ['aws', 'no-such-file', 'cannot read: no such file'],
    ['static', 'a-directory', 'cannot read: it is a directory, not a file'],
    ['gce', 'a-directory', 'cannot read: it is a directory, not a file'],
    ['aws', 'a-directory', 'cannot read: it is a directory, not a file'],
    ['kind', 'a-file/cloud.conf', 'cannot read: a parent of the path is not a directory'],
    ['gce', 'blank', 'the file is empty; --cloud-provider gce needs gce.conf with [global] project-id'],
    ['kind', 'blank', 'the file is empty; --cloud-provider kind needs YAML with at least "cluster"'],
  ])('%s, %s: "--cloud-config PATH: %s"', async (provider, name, problem) => {
    expect(await failure(provider, file(name))).toBe(`--cloud-config ${file(name)}: ${problem}`);
  });

  it.each([
    ['static', 'a YAML file listing the nodes'],
    ['gce', 'gce.conf with [global] project-id'],
    ['kind', 'YAML with at least "cluster"'],
  ])('%s without --cloud-config: required, and what the file is', async (provider, what) => {
    expect(await failure(provider, undefined)).toBe(`--cloud-config: required by --cloud-provider ${provider} (${what})`);
  });

  it('a parse error names the flag, the path, the field and the value, whichever adapter parsed it', async () => {
    const bad = async (name: string, text: string) => {
      await writeFile(file(name), text);
      return file(name);
    };
    const gce = await bad('gce.conf', '[global]\nproject-id = p\nstack-type = IPV5\n');
    expect(await failure('gce', gce)).toBe(`--cloud-config ${gce}: [global] stack-type (line 3): "IPV5" is not one of IPV4, IPV4_IPV6, IPV6`);
    const kind = await bad('kind.yaml', 'cluster: kind\nsocket: /x\n');
    expect(await failure('kind', kind)).toMatch(new RegExp(`^--cloud-config ${kind}: \\(root\\): Unrecognized key: "socket"`));
    const st = await bad('static.yaml', 'nodes:\n  n:\n    addresses:\n      - { type: Bogus, address: x }\n');
    expect(await failure('static', st)).toMatch(new RegExp(`^--cloud-config ${st}: nodes\\.n\\.addresses\\[0\\]\\.type: unknown address type .*\\(value "Bogus"\\)$`));
    const aws = await bad('aws.conf', '[Global]\nRegion = Not A Region\n');
    expect(await failure('aws', aws)).toBe(`--cloud-config ${aws}: [Global] Region (line 2): invalid value "Not A Region"`);
  });

  it('a blank file is valid where every entry is optional: static starts with no nodes', async () => {
    const p = await createProvider('static', { cloudConfig: file('blank') });
    try {
      expect((await p.instancesExist([{ name: 'n' }])).get('n')).toEqual({ kind: 'found', value: false });
    } finally {
      await p.close?.();
    }
  });

  it('a provider that takes no file is built as before, without reading it, and a warning says it is ignored', async () => {
    const logger = warnings();
    const p = await createProvider('fake', { cloudConfig: file('no-such-file'), logger });
    expect(p.name).toBe('fake');
    expect(logger.seen).toEqual([{ obj: { cloudConfig: file('no-such-file') }, msg: '--cloud-config: ignored, --cloud-provider fake takes no configuration file' }]);
  });

  it('an unreadable file: permission denied', async () => {
    const locked = file('locked.conf');
    await writeFile(locked, '[global]\nproject-id = p\n');
    await chmod(locked, 0o000);
    if (process.getuid?.() === 0) {
      // Root reads any file, so the errors a non-root operator meets are given to the wording directly.
      for (const code of ['EACCES', 'EPERM']) expect(readProblem(Object.assign(new Error(`${code}: open`), { code }))).toBe('cannot read: permission denied');
      expect(readProblem(Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' }))).toBe('cannot read: EIO: i/o error, read');
      return;
    }
    expect(await failure('gce', locked)).toBe(`--cloud-config ${locked}: cannot read: permission denied`);
  });
});
