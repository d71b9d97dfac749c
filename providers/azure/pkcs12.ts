// Reading a PKCS#12 (PFX) file (RFC 7292): its certificates and its one private key. Pure: bytes
// and a password in, DER out. cloud-provider-azure reads aadClientCertPath, and the certificate
// inside an aadMSIDataPlaneIdentityPath file, with Go's azidentity.ParseCertificates, which uses
// x/crypto/pkcs12: integrity by an HMAC-SHA1 MAC, contents encrypted with
// pbeWithSHAAnd3-KeyTripleDES-CBC or pbeWithSHAAnd40BitRC2-CBC (what OpenSSL before 3.0, Windows
// and Azure write). This reads those, and also what OpenSSL 3 writes by default (PBES2:
// PBKDF2 with AES-CBC, and a SHA-256 MAC), which x/crypto/pkcs12 refuses: a PFX exported today
// works here unchanged. Certificates encrypted to a public key (envelopedData) are not supported.
import { createDecipheriv, createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { explicitOf, expectTag, octetsOf, oidOf, readAsn1, smallIntegerOf, TAG, type Asn1Element } from './asn1.js';
import { rc2CbcDecrypt } from './rc2.js';

export interface Pkcs12Contents {
  /** DER X.509 certificates, in the file's order. */
  certificates: Buffer[];
  /** The DER PKCS#8 PrivateKeyInfo of the one private key. */
  privateKey: Buffer;
}

export class Pkcs12Error extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'Pkcs12Error';
  }
}

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  envelopedData: '1.2.840.113549.1.7.3',
  keyBag: '1.2.840.113549.1.12.10.1.1',
  pkcs8ShroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  safeContentsBag: '1.2.840.113549.1.12.10.1.6',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  pbeWithSHAAnd128BitRC2CBC: '1.2.840.113549.1.12.1.5',
  pbeWithSHAAnd40BitRC2CBC: '1.2.840.113549.1.12.1.6',
  pbeWithSHAAnd3KeyTripleDESCBC: '1.2.840.113549.1.12.1.3',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
} as const;

/** Digest algorithms of MACs and PRFs: node name, PKCS#12 KDF block size. */
const DIGESTS: Readonly<Record<string, { hash: string; blockBytes: number }>> = {
  '1.3.14.3.2.26': { hash: 'sha1', blockBytes: 64 },
  '2.16.840.1.101.3.4.2.1': { hash: 'sha256', blockBytes: 64 },
  '2.16.840.1.101.3.4.2.2': { hash: 'sha384', blockBytes: 128 },
  '2.16.840.1.101.3.4.2.3': { hash: 'sha512', blockBytes: 128 },
};
const HMAC_PRFS: Readonly<Record<string, string>> = {
  '1.2.840.113549.2.7': 'sha1',
  '1.2.840.113549.2.9': 'sha256',
  '1.2.840.113549.2.10': 'sha384',
  '1.2.840.113549.2.11': 'sha512',
};
const PBES2_CIPHERS: Readonly<Record<string, { cipher: string; keyBytes: number }>> = {
  '2.16.840.1.101.3.4.1.2': { cipher: 'aes-128-cbc', keyBytes: 16 },
  '2.16.840.1.101.3.4.1.22': { cipher: 'aes-192-cbc', keyBytes: 24 },
  '2.16.840.1.101.3.4.1.42': { cipher: 'aes-256-cbc', keyBytes: 32 },
  '1.2.840.113549.3.7': { cipher: 'des-ede3-cbc', keyBytes: 24 },
};

/** The password as PKCS#12's own KDF takes it: UTF-16BE with a terminating zero (RFC 7292 B.1). */
function bmpPassword(password: string): Buffer {
  const out = Buffer.alloc(password.length * 2 + 2);
  for (let i = 0; i < password.length; i++) out.writeUInt16BE(password.charCodeAt(i), i * 2);
  return out;
}

/** RFC 7292 appendix B.2: `n` bytes of key material of purpose `id` (1 key, 2 IV, 3 MAC key). */
export function pkcs12Kdf(hash: string, blockBytes: number, password: Buffer, salt: Buffer, iterations: number, id: 1 | 2 | 3, n: number): Buffer {
  const v = blockBytes;
  const fill = (src: Buffer) => {
    if (src.length === 0) return Buffer.alloc(0);
    const len = v * Math.ceil(src.length / v);
    const out = Buffer.alloc(len);
    for (let i = 0; i < len; i++) out[i] = src[i % src.length]!;
    return out;
  };
  const d = Buffer.alloc(v, id);
  const i = Buffer.concat([fill(salt), fill(password)]);
  const chunks: Buffer[] = [];
  let produced = 0;
  while (produced < n) {
    let a = createHash(hash).update(d).update(i).digest();
    for (let r = 1; r < iterations; r++) a = createHash(hash).update(a).digest();
    chunks.push(a);
    produced += a.length;
    if (produced >= n) break;
    // I_j = (I_j + B + 1) mod 2^(8v), B being A repeated to v bytes.
    const b = Buffer.alloc(v);
    for (let k = 0; k < v; k++) b[k] = a[k % a.length]!;
    for (let off = 0; off < i.length; off += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = i[off + k]! + b[k]! + carry;
        i[off + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(chunks).subarray(0, n);
}

/** Iteration counts beyond this are refused: a hostile file could otherwise hold the process for hours. */
const MAX_ITERATIONS = 10_000_000;

function iterationsOf(e: Asn1Element | undefined, what: string): number {
  const n = e === undefined ? 1 : smallIntegerOf(e, what);
  if (n < 1 || n > MAX_ITERATIONS) throw new Pkcs12Error(`${what}: ${n} iterations (1 to ${MAX_ITERATIONS})`);
  return n;
}

/** The passwords to try: Go's x/crypto/pkcs12 tries an empty password both as a lone terminator and as no bytes at all. */
function passwordForms(password: string): Buffer[] {
  return password === '' ? [bmpPassword(''), Buffer.alloc(0)] : [bmpPassword(password)];
}

/** Decrypts `data` with an AlgorithmIdentifier of PKCS#12 PBE or PBES2. */
function decrypt(algorithm: Asn1Element, data: Buffer, password: string, bmp: Buffer, what: string): Buffer {
  const id = oidOf(algorithm.children[0], `${what} algorithm`);
  const params = algorithm.children[1];
  const pkcs12 = (cipher: 'des-ede3-cbc' | 'rc2-40' | 'rc2-128', keyBytes: number) => {
    const p = expectTag(params, TAG.SEQUENCE, `${what} parameters`);
    const salt = octetsOf(p.children[0], `${what} salt`);
    const iterations = iterationsOf(p.children[1], `${what} iterations`);
    const key = pkcs12Kdf('sha1', 64, bmp, salt, iterations, 1, keyBytes);
    const iv = pkcs12Kdf('sha1', 64, bmp, salt, iterations, 2, 8);
    if (cipher === 'des-ede3-cbc') {
      const d = createDecipheriv('des-ede3-cbc', key, iv);
      return Buffer.concat([d.update(data), d.final()]);
    }
    return rc2CbcDecrypt(key, cipher === 'rc2-40' ? 40 : 128, iv, data);
  };
  switch (id) {
    case OID.pbeWithSHAAnd3KeyTripleDESCBC:
      return pkcs12('des-ede3-cbc', 24);
    case OID.pbeWithSHAAnd40BitRC2CBC:
      return pkcs12('rc2-40', 5);
    case OID.pbeWithSHAAnd128BitRC2CBC:
      return pkcs12('rc2-128', 16);
    case OID.pbes2: {
      const p = expectTag(params, TAG.SEQUENCE, `${what} PBES2 parameters`);
      const kdf = expectTag(p.children[0], TAG.SEQUENCE, `${what} key derivation`);
      const kdfID = oidOf(kdf.children[0], `${what} key derivation algorithm`);
      if (kdfID !== OID.pbkdf2) throw new Pkcs12Error(`${what}: key derivation ${kdfID} is not PBKDF2`);
      const kp = expectTag(kdf.children[1], TAG.SEQUENCE, `${what} PBKDF2 parameters`);
      const salt = octetsOf(kp.children[0], `${what} PBKDF2 salt`);
      const iterations = iterationsOf(kp.children[1], `${what} PBKDF2 iterations`);
      let next = 2;
      let keyLength: number | undefined;
      if (kp.children[next]?.tag === TAG.INTEGER) keyLength = smallIntegerOf(kp.children[next++], `${what} PBKDF2 key length`);
      let prf = 'sha1';
      if (kp.children[next]) {
        const prfID = oidOf(expectTag(kp.children[next], TAG.SEQUENCE, `${what} PBKDF2 PRF`).children[0], `${what} PBKDF2 PRF`);
        const hash = HMAC_PRFS[prfID];
        if (!hash) throw new Pkcs12Error(`${what}: PBKDF2 PRF ${prfID} is not HMAC-SHA1/256/384/512`);
        prf = hash;
      }
      const scheme = expectTag(p.children[1], TAG.SEQUENCE, `${what} encryption scheme`);
      const schemeID = oidOf(scheme.children[0], `${what} encryption scheme`);
      const c = PBES2_CIPHERS[schemeID];
      if (!c) throw new Pkcs12Error(`${what}: cipher ${schemeID} is not AES-128/192/256-CBC or 3DES-CBC`);
      if (keyLength !== undefined && keyLength !== c.keyBytes) throw new Pkcs12Error(`${what}: key length ${keyLength} does not fit ${c.cipher}`);
      const iv = octetsOf(scheme.children[1], `${what} IV`);
      // PBES2 takes the password as its UTF-8 bytes (RFC 8018), as OpenSSL writes it.
      const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, c.keyBytes, prf);
      const d = createDecipheriv(c.cipher, key, iv);
      return Buffer.concat([d.update(data), d.final()]);
    }
    default:
      throw new Pkcs12Error(`${what}: encryption ${id} is not supported (3DES or RC2 PKCS#12 PBE, or PBES2 with AES)`);
  }
}

/** Checks the MAC over the authenticated safe; returns the password bytes that verified it. */
function verifyMac(macData: Asn1Element, content: Buffer, password: string): Buffer {
  const mac = expectTag(macData.children[0], TAG.SEQUENCE, 'MAC');
  const digestAlgorithm = expectTag(mac.children[0], TAG.SEQUENCE, 'MAC algorithm');
  const digestID = oidOf(digestAlgorithm.children[0], 'MAC algorithm');
  const digest = DIGESTS[digestID];
  if (!digest) throw new Pkcs12Error(`MAC algorithm ${digestID} is not SHA-1, SHA-256, SHA-384 or SHA-512`);
  const expected = octetsOf(mac.children[1], 'MAC value');
  const salt = octetsOf(macData.children[1], 'MAC salt');
  const iterations = iterationsOf(macData.children[2], 'MAC iterations');
  const size = createHash(digest.hash).digest().length;
  for (const bmp of passwordForms(password)) {
    const key = pkcs12Kdf(digest.hash, digest.blockBytes, bmp, salt, iterations, 3, size);
    const actual = createHmac(digest.hash, key).update(content).digest();
    if (actual.length === expected.length && timingSafeEqual(actual, expected)) return bmp;
  }
  throw new Pkcs12Error('the password is wrong or the file is damaged (its MAC does not verify)');
}

function contentInfo(e: Asn1Element, what: string): { type: string; content: Asn1Element | undefined } {
  const seq = expectTag(e, TAG.SEQUENCE, what);
  const type = oidOf(seq.children[0], `${what} type`);
  return { type, content: seq.children[1] ? explicitOf(seq.children[1], 0, `${what} content`) : undefined };
}

/**
 * The certificates and the private key of a PKCS#12 file. Throws (a Pkcs12Error naming the
 * part) for a wrong password, damage, more than one private key, none, or no certificate.
 */
export function readPkcs12(bytes: Uint8Array, password = ''): Pkcs12Contents {
  let pfx: Asn1Element;
  try {
    pfx = expectTag(readAsn1(bytes), TAG.SEQUENCE, 'PFX');
  } catch (err) {
    throw new Pkcs12Error(`not a PKCS#12 file: ${(err as Error).message}`, { cause: err });
  }
  try {
    const version = smallIntegerOf(pfx.children[0], 'PFX version');
    if (version !== 3) throw new Pkcs12Error(`PFX version ${version}, expected 3`);
    const authSafe = contentInfo(pfx.children[1]!, 'authenticated safe');
    if (authSafe.type !== OID.data) throw new Pkcs12Error(`authenticated safe of type ${authSafe.type}: only password integrity (data) is supported`);
    const safeBytes = octetsOf(authSafe.content, 'authenticated safe');
    let bmp = bmpPassword(password);
    if (pfx.children[2]) bmp = verifyMac(expectTag(pfx.children[2], TAG.SEQUENCE, 'MAC data'), safeBytes, password);
    const certificates: Buffer[] = [];
    const keys: Buffer[] = [];
    const bags = (safeContents: Buffer, what: string, depth = 0) => {
      if (depth > 4) throw new Pkcs12Error(`${what}: safe contents nested too deep`);
      for (const [i, bag] of expectTag(readAsn1(safeContents), TAG.SEQUENCE, what).children.entries()) {
        const b = expectTag(bag, TAG.SEQUENCE, `${what} bag ${i}`);
        const bagID = oidOf(b.children[0], `${what} bag ${i} type`);
        const value = explicitOf(b.children[1], 0, `${what} bag ${i} value`);
        if (bagID === OID.certBag) {
          const certBag = expectTag(value, TAG.SEQUENCE, `${what} certificate bag ${i}`);
          const certType = oidOf(certBag.children[0], `${what} certificate bag ${i} type`);
          if (certType === OID.x509Certificate) certificates.push(octetsOf(explicitOf(certBag.children[1], 0, `${what} certificate bag ${i}`), `${what} certificate bag ${i}`));
        } else if (bagID === OID.keyBag) {
          keys.push(Buffer.from(expectTag(value, TAG.SEQUENCE, `${what} key bag ${i}`).encoded));
        } else if (bagID === OID.pkcs8ShroudedKeyBag) {
          const epki = expectTag(value, TAG.SEQUENCE, `${what} shrouded key bag ${i}`);
          const algorithm = expectTag(epki.children[0], TAG.SEQUENCE, `${what} shrouded key bag ${i} algorithm`);
          keys.push(decrypt(algorithm, octetsOf(epki.children[1], `${what} shrouded key bag ${i}`), password, bmp, `shrouded key bag ${i}`));
        } else if (bagID === OID.safeContentsBag) {
          bags(Buffer.from(value.encoded), `${what} nested safe ${i}`, depth + 1);
        }
        // CRL and secret bags carry nothing a credential needs.
      }
    };
    for (const [i, ci] of expectTag(readAsn1(safeBytes), TAG.SEQUENCE, 'authenticated safe').children.entries()) {
      const c = contentInfo(ci, `safe ${i}`);
      if (c.type === OID.data) bags(octetsOf(c.content, `safe ${i}`), `safe ${i}`);
      else if (c.type === OID.encryptedData) {
        const ed = expectTag(c.content, TAG.SEQUENCE, `safe ${i} encrypted data`);
        const eci = expectTag(ed.children[1], TAG.SEQUENCE, `safe ${i} encrypted content`);
        const algorithm = expectTag(eci.children[1], TAG.SEQUENCE, `safe ${i} encryption algorithm`);
        const encrypted = octetsOf(eci.children[2], `safe ${i} encrypted content`, 0x80);
        bags(decrypt(algorithm, encrypted, password, bmp, `safe ${i}`), `safe ${i}`);
      } else if (c.type === OID.envelopedData) throw new Pkcs12Error(`safe ${i} is encrypted to a public key (envelopedData), which is not supported`);
    }
    if (keys.length > 1) throw new Pkcs12Error(`the file holds ${keys.length} private keys, expected one`);
    if (keys.length === 0) throw new Pkcs12Error('the file holds no private key');
    if (certificates.length === 0) throw new Pkcs12Error('the file holds no certificate');
    return { certificates, privateKey: keys[0]! };
  } catch (err) {
    if (err instanceof Pkcs12Error) throw err;
    const e = err as Error & { code?: string };
    // A wrong password past the MAC (or a file without one) shows as bad padding.
    if (/bad decrypt|bad padding/i.test(e.message) || e.code === 'ERR_OSSL_BAD_DECRYPT') throw new Pkcs12Error('the password is wrong or the file is damaged (decryption failed)', { cause: err });
    throw new Pkcs12Error(`damaged PKCS#12 file: ${e.message}`, { cause: err });
  }
}
