// Reading PKCS#12 files as real tools write them. The fixtures (fixtures/README.md says how) were
// written by OpenSSL 3.0: `-legacy` gives what OpenSSL 1.x, Windows and Azure write (certificates
// under pbeWithSHAAnd40BitRC2-CBC, the key under pbeWithSHAAnd3-KeyTripleDES-CBC, an HMAC-SHA1
// MAC: what Go's x/crypto/pkcs12 reads for cloud-provider-azure), the default gives PBES2 with
// AES-256-CBC and an HMAC-SHA256 MAC. RC2 is checked against RFC 2268's own test vector.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readAsn1, octetsOf, oidOf } from '../../../providers/azure/asn1.js';
import { rc2CbcDecrypt, rc2DecryptBlock } from '../../../providers/azure/rc2.js';
import { pkcs12Kdf, readPkcs12 } from '../../../providers/azure/pkcs12.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string) => readFileSync(path.join(fixtures, name));
const subjects = (certs: Buffer[]) => certs.map((c) => new X509Certificate(c).subject);

describe('asn1 reader', () => {
  it('reads object identifiers, and BER: indefinite lengths and constructed octet strings', () => {
    // 1.2.840.113549.1.12.10.1.3 (certBag), as every PKCS#12 file writes it.
    expect(oidOf(readAsn1(Buffer.from('060b2a864886f70d010c0a0103', 'hex')), 'oid')).toBe('1.2.840.113549.1.12.10.1.3');
    // SEQUENCE (indefinite) { OCTET STRING constructed (indefinite) { "ab", "cd" } }
    const ber = readAsn1(Buffer.from('30802480040261620402636400000000', 'hex'));
    expect(octetsOf(ber.children[0], 'x').toString()).toBe('abcd');
  });

  it.each([
    ['truncated', '3005020101'],
    ['trailing bytes', '30000000'],
    ['a length past the end', '3082ffff00'],
    ['an indefinite primitive', '0480000000'],
  ])('refuses %s', (_name, hex) => {
    expect(() => readAsn1(Buffer.from(hex, 'hex'))).toThrow();
  });

  it('never throws anything but an error on random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      try {
        readAsn1(bytes);
      } catch (err) {
        expect(err).toBeInstanceOf(Error);
      }
    }), { numRuns: 500 });
  });
});

describe('rc2', () => {
  it("RFC 2268's test vector (8-byte zero key, 63 effective bits)", () => {
    expect(rc2DecryptBlock(Buffer.alloc(8), 63, Buffer.from('ebb773f993278eff', 'hex')).toString('hex')).toBe('0000000000000000');
  });

  it('CBC: refuses a ragged ciphertext and bad padding', () => {
    expect(() => rc2CbcDecrypt(Buffer.alloc(5), 40, Buffer.alloc(8), Buffer.alloc(7))).toThrow(/not a whole number of 8-byte blocks/);
    expect(() => rc2CbcDecrypt(Buffer.alloc(5), 40, Buffer.alloc(8), Buffer.alloc(8))).toThrow(/bad padding/);
  });
});

describe('pkcs12 key derivation (RFC 7292 B.2)', () => {
  it('gives as many bytes as asked, each purpose its own', () => {
    const pw = Buffer.from('00700077000000', 'hex');
    const salt = Buffer.from('0102030405060708', 'hex');
    const key = pkcs12Kdf('sha1', 64, pw, salt, 2048, 1, 24);
    const iv = pkcs12Kdf('sha1', 64, pw, salt, 2048, 2, 8);
    expect(key).toHaveLength(24);
    expect(iv).toHaveLength(8);
    expect(key.subarray(0, 8).equals(iv)).toBe(false);
    // More than one hash block: the first block is the shorter derivation's.
    expect(pkcs12Kdf('sha1', 64, pw, salt, 3, 1, 40).subarray(0, 20).equals(pkcs12Kdf('sha1', 64, pw, salt, 3, 1, 20))).toBe(true);
  });
});

describe('readPkcs12', () => {
  it.each([
    ['OpenSSL -legacy (RC2-40 certificates, 3DES key, SHA-1 MAC)', 'client-legacy.pfx', 'pfx-password'],
    ['OpenSSL 3 default (PBES2 AES-256-CBC, SHA-256 MAC)', 'client-aes.pfx', 'pfx-password'],
    ['no password (as the MSI data plane writes its certificate)', 'client-nopass.pfx', ''],
  ])('%s', (_name, file, password) => {
    const out = readPkcs12(fixture(file), password);
    expect(subjects(out.certificates)).toEqual(['CN=node-address-ccm test client']);
    const key = createPrivateKey({ key: out.privateKey, format: 'der', type: 'pkcs8' });
    expect(key.asymmetricKeyType).toBe('rsa');
    expect(new X509Certificate(out.certificates[0]!).checkPrivateKey(key)).toBe(true);
    expect(new X509Certificate(out.certificates[0]!).raw.equals(new X509Certificate(fixture('client.crt')).raw)).toBe(true);
  });

  it('a chain: every certificate in the file, in its order', () => {
    expect(subjects(readPkcs12(fixture('chain-legacy.pfx'), 'pfx-password').certificates)).toEqual(['CN=node-address-ccm test leaf', 'CN=node-address-ccm test CA']);
  });

  it.each([
    ['a wrong password', 'client-legacy.pfx', 'not-it', /the password is wrong or the file is damaged \(its MAC does not verify\)/],
    ['a password where none was set', 'client-nopass.pfx', 'x', /its MAC does not verify/],
    ['no password where one was set', 'client-aes.pfx', '', /its MAC does not verify/],
    ['PEM text', 'client.pem', '', /^not a PKCS#12 file/],
  ])('%s is an error', (_name, file, password, message) => {
    expect(() => readPkcs12(fixture(file), password)).toThrow(message);
  });

  it('a damaged file is an error, never a wrong answer', () => {
    const good = fixture('client-legacy.pfx');
    fc.assert(fc.property(fc.nat({ max: good.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, flip) => {
      const bad = Buffer.from(good);
      bad[at] = bad[at]! ^ flip;
      let out;
      try {
        out = readPkcs12(bad, 'pfx-password');
      } catch (err) {
        expect((err as Error).name).toBe('Pkcs12Error');
        return;
      }
      // A flipped bit outside the MAC-protected bytes (the MAC itself excepted) may leave the contents intact.
      expect(subjects(out.certificates)).toEqual(['CN=node-address-ccm test client']);
    }), { numRuns: 200 });
  });
});
