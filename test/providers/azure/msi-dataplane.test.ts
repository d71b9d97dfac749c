// aadMSIDataPlaneIdentityPath's file, read as msi-dataplane reads it (UserAssignedIdentityCredentials:
// identity.go's required fields, the base64 certificate read as azidentity.ParseCertificates with
// no password; reloadCredentials.go: a reloaded file replaces the credential only when its
// not_before is later, and a bad one leaves it in place).
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenCredential } from '@azure/identity';
import { parseMsiDataPlaneIdentity, ReloadingMsiDataPlaneCredential, type MsiDataPlaneIdentity } from '../../../providers/azure/msi-dataplane.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string) => readFileSync(path.join(fixtures, name));

// The fields the managed identity data plane writes (msi-dataplane's UserAssignedIdentityCredentials).
const file = (over: Record<string, unknown> = {}) => JSON.stringify({
  authentication_endpoint: 'https://login.microsoftonline.com/', client_id: '77777777-8888-9999-aaaa-bbbbbbbbbbbb',
  client_secret: fixture('client-nopass.pfx').toString('base64'), client_secret_url: 'https://control.example/identity',
  mtls_authentication_endpoint: 'https://login.microsoftonline.com/', object_id: 'cccccccc-0000-0000-0000-000000000000',
  resource_id: '/subscriptions/s/resourcegroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/ccm',
  tenant_id: '72f988bf-86f1-41af-91ab-2d7cd011db47', not_before: '2025-01-01T00:00:00Z', not_after: '2025-04-01T00:00:00Z',
  renew_after: '2025-02-15T00:00:00Z', cannot_renew_after: '2025-03-01T00:00:00Z', ...over,
});

describe('parseMsiDataPlaneIdentity', () => {
  it('the identity, its authority and its certificate', async () => {
    const id = await parseMsiDataPlaneIdentity(file());
    expect(id).toMatchObject({ clientId: '77777777-8888-9999-aaaa-bbbbbbbbbbbb', tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47', authorityHost: 'https://login.microsoftonline.com/' });
    expect(id.notBefore.toISOString()).toBe('2025-01-01T00:00:00.000Z');
    expect(id.notAfter?.toISOString()).toBe('2025-04-01T00:00:00.000Z');
    expect(id.certificate.subject).toBe('CN=node-address-ccm test client');
    // A PEM certificate in the secret is read too, as ParseCertificates does without a password.
    expect((await parseMsiDataPlaneIdentity(file({ client_secret: fixture('client.pem').toString('base64') }))).certificate.thumbprint).toBe(id.certificate.thumbprint);
  });

  it.each([
    ['not JSON', '{', /^not JSON/],
    ['a list', '[]', /expected a JSON object/],
    ['required fields missing', JSON.stringify({ client_id: 'x' }), 'missing tenant_id, client_secret, authentication_endpoint, not_before'],
    ['an empty client_id', file({ client_id: ' ' }), 'client_id: expected a non-empty string'],
    ['an http authority', file({ authentication_endpoint: 'http://login.example/' }), 'authentication_endpoint: "http://login.example/" must be an https:// URL'],
    ['a secret that is no base64', file({ client_secret: 'not base64!' }), 'client_secret: not standard base64'],
    ['a secret that is no certificate', file({ client_secret: Buffer.from('hello').toString('base64') }), /^client_secret: neither PEM nor a readable PKCS#12 file/],
    ['a password-protected PKCS#12 secret', file({ client_secret: fixture('client-legacy.pfx').toString('base64') }), /^client_secret: neither PEM nor a readable PKCS#12 file: the password is wrong/],
    ['a not_before that is no RFC 3339 time', file({ not_before: '01/01/2025' }), 'not_before: "01/01/2025" is not an RFC 3339 time'],
  ])('%s is an error', async (_name, text, message) => {
    await expect(parseMsiDataPlaneIdentity(text)).rejects.toThrow(message);
  });
});

describe('ReloadingMsiDataPlaneCredential', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'msi-dataplane-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function recorder() {
    const builtFor: MsiDataPlaneIdentity[] = [];
    const warnings: string[] = [];
    return {
      builtFor,
      warnings,
      options: {
        build: (id: MsiDataPlaneIdentity): TokenCredential => {
          builtFor.push(id);
          return { getToken: async () => ({ token: `token-of-${id.certificate.subject}-${id.notBefore.toISOString()}`, expiresOnTimestamp: Date.now() + 60_000 }) };
        },
        logger: { info: () => undefined, warn: (o: object, m: string) => warnings.push(`${m} ${JSON.stringify(o)}`) },
      },
    };
  }

  it('a later not_before replaces the credential; an earlier or equal one, or a bad file, leaves it', async () => {
    const p = path.join(dir, 'a.json');
    await writeFile(p, file());
    const r = recorder();
    const c = await ReloadingMsiDataPlaneCredential.create(p, r.options);
    try {
      expect((await c.getToken('s'))?.token).toBe('token-of-CN=node-address-ccm test client-2025-01-01T00:00:00.000Z');
      await writeFile(p, file({ client_secret: fixture('rotated-nopass.pfx').toString('base64'), not_before: '2024-12-31T00:00:00Z' }));
      await c.reload();
      await writeFile(p, file({ client_secret: fixture('rotated-nopass.pfx').toString('base64') }));
      await c.reload();
      await writeFile(p, '{ half a file');
      await c.reload();
      expect(r.builtFor).toHaveLength(1);
      expect(c.identity.certificate.subject).toBe('CN=node-address-ccm test client');
      // (The directory watch may read the file mid-write too: each failed read only warns.)
      expect(r.warnings.length).toBeGreaterThan(0);
      expect(r.warnings.every((w) => /^azure: reloading the MSI data plane identity failed; the current credential stays /.test(w))).toBe(true);
      expect(r.warnings.some((w) => /not JSON: Expected property name/.test(w))).toBe(true);
      await writeFile(p, file({ client_secret: fixture('rotated-nopass.pfx').toString('base64'), not_before: '2025-01-01T00:00:01+00:00' }));
      await c.reload();
      expect(r.builtFor).toHaveLength(2);
      expect((await c.getToken('s'))?.token).toBe('token-of-CN=node-address-ccm test client rotated-2025-01-01T00:00:01.000Z');
    } finally {
      c.close();
    }
  });

  it('a file that cannot be read at start is an error naming it', async () => {
    const p = path.join(dir, 'absent.json');
    await expect(ReloadingMsiDataPlaneCredential.create(p, recorder().options)).rejects.toThrow(`aadMSIDataPlaneIdentityPath: reading ${p} failed: ENOENT`);
  });

  it('sees a Secret volume\'s update (the ..data symlink swapped to a new directory) through its directory watch', async () => {
    // The layout kubelet writes: identity.json -> ..data/identity.json, ..data -> ..2025_01_01_a.
    const vol = await mkdtemp(path.join(dir, 'volume-'));
    await mkdir(path.join(vol, '..2025_01_01_a'));
    await writeFile(path.join(vol, '..2025_01_01_a', 'identity.json'), file());
    await symlink('..2025_01_01_a', path.join(vol, '..data'));
    await symlink(path.join('..data', 'identity.json'), path.join(vol, 'identity.json'));
    const r = recorder();
    // A backstop of an hour: only the watch can see the change within the test.
    const c = await ReloadingMsiDataPlaneCredential.create(path.join(vol, 'identity.json'), { ...r.options, backstopMs: 3_600_000 });
    try {
      await mkdir(path.join(vol, '..2025_01_02_b'));
      await writeFile(path.join(vol, '..2025_01_02_b', 'identity.json'), file({ not_before: '2025-01-02T00:00:00Z' }));
      await symlink('..2025_01_02_b', path.join(vol, '..data_tmp'));
      await rename(path.join(vol, '..data_tmp'), path.join(vol, '..data'));
      const deadline = Date.now() + 5_000;
      while (r.builtFor.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(c.identity.notBefore.toISOString()).toBe('2025-01-02T00:00:00.000Z');
    } finally {
      c.close();
    }
  });
});
