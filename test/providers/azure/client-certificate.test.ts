// The client certificate of aadClientCertPath, read as cloud-provider-azure reads it
// (azidentity.ParseCertificates, then MSAL Go's NewCredFromCert: an RSA key, the certificate that
// matches it first), into the PEM @azure/identity takes. Fixtures: fixtures/README.md.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readClientCertificate } from '../../../providers/azure/client-certificate.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string) => readFileSync(path.join(fixtures, name));

function certsOf(pem: string): string[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].map((m) => new X509Certificate(m[0]).subject);
}

describe('readClientCertificate', () => {
  const client = new X509Certificate(fixture('client.crt'));

  it.each([
    ['PEM, certificate then unencrypted key (no password, as upstream reads PEM)', 'client.pem', undefined],
    ['PEM with an encrypted PKCS#8 key and its password', 'client-encrypted-key.pem', 'pem-password'],
    ['PKCS#12 as OpenSSL 1.x and Windows write it', 'client-legacy.pfx', 'pfx-password'],
    ['PKCS#12 as OpenSSL 3 writes it', 'client-aes.pfx', 'pfx-password'],
    ['PKCS#12 without a password', 'client-nopass.pfx', undefined],
  ])('%s', async (_name, file, password) => {
    const c = await readClientCertificate(fixture(file), password);
    expect(certsOf(c.pem)).toEqual(['CN=node-address-ccm test client']);
    // The key, unencrypted, in the same text: what ClientCertificateCredential signs with.
    const key = createPrivateKey(c.pem);
    expect(key.asymmetricKeyType).toBe('rsa');
    expect(client.checkPrivateKey(key)).toBe(true);
    expect(c.thumbprint).toBe(createHash('sha1').update(client.raw).digest('hex').toUpperCase());
    expect(c.thumbprint).toBe(client.fingerprint.replace(/:/g, ''));
    expect(c.thumbprintSha256).toBe(client.fingerprint256.replace(/:/g, ''));
    expect(c.subject).toBe('CN=node-address-ccm test client');
    expect(c.notAfter.getTime()).toBe(new Date(client.validTo).getTime());
  });

  it('a chain: the certificate matching the key first, the others after it in file order (MSAL Go NewCredFromCert)', async () => {
    expect(certsOf((await readClientCertificate(fixture('chain-ca-first.pem'))).pem)).toEqual(['CN=node-address-ccm test leaf', 'CN=node-address-ccm test CA']);
    expect(certsOf((await readClientCertificate(fixture('chain-legacy.pfx'), 'pfx-password')).pem)).toEqual(['CN=node-address-ccm test leaf', 'CN=node-address-ccm test CA']);
  });

  it.each([
    ['an EC key (MSAL: "key must be an RSA key")', fixture('ec.pem'), undefined, /the private key is EC; the key must be an RSA key/],
    ['an EC key in PKCS#12', fixture('ec.pfx'), 'pfx-password', /the private key is EC; the key must be an RSA key/],
    ['a key that matches no certificate', Buffer.concat([fixture('rotated.crt'), Buffer.from(createPrivateKey(fixture('client.pem')).export({ format: 'pem', type: 'pkcs8' }) as string)]), undefined, /the private key doesn't match any certificate in the file/],
    ['a certificate alone', fixture('client.crt'), undefined, /no private key in the file/],
    ['two keys', Buffer.concat([fixture('client.pem'), fixture('client.pem')]), undefined, /2 private keys in the file, expected one/],
    ['an encrypted key without aadClientCertPassword', fixture('client-encrypted-key.pem'), undefined, /the private key is encrypted and aadClientCertPassword is not set/],
    ['an encrypted key with a wrong password', fixture('client-encrypted-key.pem'), 'nope', /the private key cannot be read \(wrong aadClientCertPassword\?\)/],
    ['a PKCS#12 file with a wrong password', fixture('client-legacy.pfx'), 'nope', /^neither PEM nor a readable PKCS#12 file: the password is wrong/],
    ['random bytes', Buffer.from('not a certificate at all'), undefined, /^neither PEM nor a readable PKCS#12 file/],
  ])('%s is an error', async (_name, bytes, password, message) => {
    await expect(readClientCertificate(bytes, password)).rejects.toThrow(message);
  });
});
