// Reading PKCS#12 files as real tools write them (providers/azure/pkcs12.ts, by node-forge). The
// fixtures (fixtures/README.md says how) were written by OpenSSL 3.0: `-legacy` gives what
// OpenSSL 1.x, Windows and Azure write (certificates under pbeWithSHAAnd40BitRC2-CBC, the key
// under pbeWithSHAAnd3-KeyTripleDES-CBC, an HMAC-SHA1 MAC: what Go's x/crypto/pkcs12 reads for
// cloud-provider-azure), the default gives PBES2 with AES-256-CBC and an HMAC-SHA256 MAC. Files
// no tool writes on request (two keys, envelopedData, a CRL bag) are OpenSSL's MAC-less file with
// one part of its authenticated safe added.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import forge from 'node-forge';
import { readPkcs12 } from '../../../providers/azure/pkcs12.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string) => readFileSync(path.join(fixtures, name));
const subjects = (certs: Buffer[]) => certs.map((c) => new X509Certificate(c).subject);
const raw = (name: string) => new X509Certificate(fixture(name)).raw;

const { asn1 } = forge;
const seq = (...v: forge.asn1.Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, v);
const oid = (o: string) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(o).getBytes());
const explicit0 = (v: forge.asn1.Asn1) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [v]);
const octets = (bytes: string) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, bytes);

/** A ContentInfo of envelopedData (RFC 2315: version, recipientInfos, encryptedContentInfo). */
function envelopedSafe(): forge.asn1.Asn1 {
  const version = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, '\x00');
  const recipients = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, []);
  const encrypted = seq(oid('1.2.840.113549.1.7.1'), seq(oid('2.16.840.1.101.3.4.1.42')));
  return seq(oid('1.2.840.113549.1.7.3'), explicit0(seq(version, recipients, encrypted)));
}

/** A ContentInfo of data holding a CRL bag (RFC 7292 4.2.4: crlBag of an x509CRL). */
function crlBagSafe(): forge.asn1.Asn1 {
  const bag = seq(oid('1.2.840.113549.1.12.10.1.4'), explicit0(seq(oid('1.2.840.113549.1.9.23.1'), explicit0(octets('')))));
  return seq(oid('1.2.840.113549.1.7.1'), explicit0(octets(asn1.toDer(seq(bag)).getBytes())));
}

/** client-nomac.pfx (OpenSSL, no MAC) with its authenticated safe's ContentInfos edited. */
function editedNoMac(edit: (contentInfos: forge.asn1.Asn1[]) => void): Buffer {
  const pfx = asn1.fromDer(fixture('client-nomac.pfx').toString('binary'));
  const content = ((pfx.value as forge.asn1.Asn1[])[1]!.value as forge.asn1.Asn1[])[1]!.value as forge.asn1.Asn1[];
  const authSafe = asn1.fromDer(content[0]!.value as string);
  edit(authSafe.value as forge.asn1.Asn1[]);
  content[0] = octets(asn1.toDer(authSafe).getBytes());
  return Buffer.from(asn1.toDer(pfx).getBytes(), 'binary');
}

describe('readPkcs12', () => {
  it.each([
    ['OpenSSL -legacy (RC2-40 certificates, 3DES key, SHA-1 MAC)', 'client-legacy.pfx', 'pfx-password'],
    ['OpenSSL 3 default (PBES2 AES-256-CBC, SHA-256 MAC)', 'client-aes.pfx', 'pfx-password'],
    ['no password (as the MSI data plane writes its certificate)', 'client-nopass.pfx', ''],
    ['no MAC (openssl pkcs12 -nomac)', 'client-nomac.pfx', 'pfx-password'],
    ['a password that is not ASCII, -legacy (UTF-16 for the PKCS#12 KDF, as Go\'s bmpString)', 'client-utf8-legacy.pfx', 'pässwörd€'],
  ])('%s', async (_name, file, password) => {
    const out = await readPkcs12(fixture(file), password);
    expect(subjects(out.certificates)).toEqual(['CN=node-address-ccm test client']);
    const key = createPrivateKey({ key: out.privateKey, format: 'der', type: 'pkcs8' });
    expect(key.asymmetricKeyType).toBe('rsa');
    expect(new X509Certificate(out.certificates[0]!).checkPrivateKey(key)).toBe(true);
    expect(out.certificates[0]!.equals(raw('client.crt'))).toBe(true);
  });

  it('a chain: every certificate in the file, in its order, byte for byte', async () => {
    const out = await readPkcs12(fixture('chain-legacy.pfx'), 'pfx-password');
    expect(subjects(out.certificates)).toEqual(['CN=node-address-ccm test leaf', 'CN=node-address-ccm test CA']);
    expect(out.certificates.map((c) => c.toString('hex'))).toEqual([raw('leaf.crt'), raw('ca.crt')].map((c) => c.toString('hex')));
  });

  it('a certificate whose signature algorithm has no NULL parameters (RFC 4055) keeps its bytes, and so its thumbprint', async () => {
    // forge re-encodes an RSA certificate with NULL parameters; the reader takes them from the TBSCertificate.
    const out = await readPkcs12(fixture('noparams.pfx'), 'pfx-password');
    expect(out.certificates[0]!.equals(raw('noparams.crt'))).toBe(true);
    expect(out.certificates[0]!.includes(Buffer.from('300b06092a864886f70d01010b', 'hex'))).toBe(true);
  });

  it('an EC key and certificate: forge keeps them as read (the caller refuses the key: MSAL signs with RSA only)', async () => {
    const out = await readPkcs12(fixture('ec.pfx'), 'pfx-password');
    expect(out.certificates[0]!.equals(new X509Certificate(fixture('ec.pem')).raw)).toBe(true);
    const key = createPrivateKey({ key: out.privateKey, format: 'der', type: 'pkcs8' });
    expect(key.asymmetricKeyType).toBe('ec');
    expect(key.export({ format: 'der', type: 'pkcs8' }).equals(createPrivateKey(fixture('ec.pem')).export({ format: 'der', type: 'pkcs8' }))).toBe(true);
  });

  it('the empty password as no bytes at all (x/crypto/pkcs12 tries it too), as node-forge itself writes it', async () => {
    const pem = fixture('client.pem').toString();
    const keyPem = createPrivateKey(pem).export({ format: 'pem', type: 'pkcs8' }) as string;
    const written = forge.pkcs12.toPkcs12Asn1(forge.pki.privateKeyFromPem(keyPem), [forge.pki.certificateFromPem(pem)], null);
    const bytes = Buffer.from(asn1.toDer(written).getBytes(), 'binary');
    const out = await readPkcs12(bytes, '');
    expect(out.certificates[0]!.equals(raw('client.crt'))).toBe(true);
    expect(createPrivateKey({ key: out.privateKey, format: 'der', type: 'pkcs8' }).equals(createPrivateKey(pem))).toBe(true);
    await expect(readPkcs12(bytes, 'x')).rejects.toThrow(/its MAC does not verify/);
  });

  it.each([
    ['a wrong password', () => fixture('client-legacy.pfx'), 'not-it', /^the password is wrong or the file is damaged \(its MAC does not verify\)$/],
    ['a password where none was set', () => fixture('client-nopass.pfx'), 'x', /its MAC does not verify/],
    ['no password where one was set', () => fixture('client-aes.pfx'), '', /its MAC does not verify/],
    ['a wrong password for a file without a MAC', () => fixture('client-nomac.pfx'), 'not-it', /^the password is wrong or the file is damaged \(decryption failed\)$/],
    ['a password that is not ASCII for PBES2 (node-forge takes its bytes as Latin-1, OpenSSL as UTF-8)', () => fixture('client-utf8-aes.pfx'), 'pässwörd€',
      /^the password is wrong or the file is damaged \(decryption failed\); a password that is not ASCII is read only for files encrypted as OpenSSL -legacy writes them/],
    ['PEM text', () => fixture('client.pem'), '', /^not a PKCS#12 file/],
    ['a DER certificate', () => raw('client.crt'), '', /^not a PKCS#12 file/],
    ['a file without a key (openssl pkcs12 -nokeys)', () => fixture('client-nokey.pfx'), 'pfx-password', /^the file holds no private key$/],
    ['a file without a certificate (openssl pkcs12 -nocerts)', () => fixture('key-only.pfx'), 'pfx-password', /^the file holds no certificate$/],
    ['two private keys', () => editedNoMac((cis) => cis.push(cis[cis.length - 1]!)), 'pfx-password', /^the file holds 2 private keys, expected one$/],
    ['a safe encrypted to a public key (envelopedData)', () => editedNoMac((cis) => cis.push(envelopedSafe())), 'pfx-password', /^a safe is encrypted to a public key \(envelopedData\), which is not supported/],
    ['a CRL bag (x/crypto/pkcs12\'s ToPEM, which azidentity calls, refuses it too)', () => editedNoMac((cis) => cis.push(crlBagSafe())), 'pfx-password', /^the file holds a CRL bag, which is not supported: only certificate and key bags are read$/],
  ])('%s is an error', async (_name, bytes, password, message) => {
    const err = await readPkcs12(bytes(), password).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe('Pkcs12Error');
    expect((err as Error).message).toMatch(message);
  });

  it('a damaged file is an error, never a wrong answer', async () => {
    const good = fixture('client-legacy.pfx');
    await fc.assert(fc.asyncProperty(fc.nat({ max: good.length - 1 }), fc.integer({ min: 1, max: 255 }), async (at, flip) => {
      const bad = Buffer.from(good);
      bad[at] = bad[at]! ^ flip;
      let out;
      try {
        out = await readPkcs12(bad, 'pfx-password');
      } catch (err) {
        expect((err as Error).name).toBe('Pkcs12Error');
        return;
      }
      // A flipped bit outside the MAC-protected bytes (the MAC itself excepted) may leave the contents intact.
      expect(out.certificates[0]!.equals(raw('client.crt'))).toBe(true);
    }), { numRuns: 200 });
  });
});
