// Reading a PKCS#12 (PFX) file (RFC 7292): its certificates and its one private key, by
// node-forge's pkcs12FromAsn1 (the MAC, the PKCS#12 key derivation, 3DES, RC2 and PBES2 are all
// forge's). cloud-provider-azure reads aadClientCertPath, and the certificate inside an
// aadMSIDataPlaneIdentityPath file, with Go's azidentity.ParseCertificates, which uses
// x/crypto/pkcs12 (pkcs12/pkcs12.go): an HMAC-SHA1 MAC, contents under
// pbeWithSHAAnd3-KeyTripleDES-CBC or pbeWithSHAAnd40BitRC2-CBC (what OpenSSL before 3.0, Windows
// and Azure write). forge reads those, and also what OpenSSL 3 writes by default (PBES2: PBKDF2
// with AES-256-CBC, and an HMAC-SHA256 MAC), which x/crypto/pkcs12 refuses, so a PFX exported
// today works here unchanged, unless its password is not ASCII (below).
//
// node-forge is imported on first use: only a client certificate in PKCS#12 form needs it, and
// the other credentials' processes never load it.
import type * as Forge from 'node-forge';

export interface Pkcs12Contents {
  /** DER X.509 certificates, in the file's order, byte for byte as the file holds them. */
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

type ForgeModule = typeof Forge;
let loading: Promise<ForgeModule> | undefined;
function loadForge(): Promise<ForgeModule> {
  loading ??= import('node-forge').then((m) => m.default);
  return loading;
}

const BAG_NAMES: Readonly<Record<string, string>> = {
  '1.2.840.113549.1.12.10.1.4': 'a CRL bag',
  '1.2.840.113549.1.12.10.1.5': 'a secret bag',
  '1.2.840.113549.1.12.10.1.6': 'a nested safe contents bag',
};
const ENVELOPED_DATA = '1.2.840.113549.1.7.3';

function der(forge: ForgeModule, asn1: Forge.asn1.Asn1): Buffer {
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}

/**
 * A certificate bag's certificate as the file holds it. forge hands back the ASN.1 as read when
 * it cannot parse the certificate (a key or signature other than RSA), and that re-encodes to the
 * same bytes. One it parses it hands back as an object, whose re-encoding rebuilds the outer
 * signatureAlgorithm from its OID, with NULL parameters for every PKCS#1 signature: a
 * certificate written without them (RFC 4055 section 5 lets a writer leave them out) would come
 * back with other bytes, and so another thumbprint than the one registered in AAD. The
 * TBSCertificate forge keeps as read, and it holds the same AlgorithmIdentifier (RFC 5280
 * 4.1.1.2 requires the two be identical): the outer one is taken from there.
 */
function certificateDer(forge: ForgeModule, bag: Forge.pkcs12.Bag): Buffer {
  if (!bag.cert) return der(forge, bag.asn1);
  const certificate = forge.pki.certificateToAsn1(bag.cert);
  const tbs = bag.cert.tbsCertificate.value as Forge.asn1.Asn1[];
  // TBSCertificate: [0] version (absent for v1), serialNumber, signature, ...
  const signature = tbs[tbs[0]!.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC ? 2 : 1]!;
  (certificate.value as Forge.asn1.Asn1[])[1] = signature;
  return der(forge, certificate);
}

/** The DER PKCS#8 of a key bag: forge parses an RSA key into an object, and keeps any other as read. */
function privateKeyDer(forge: ForgeModule, bag: Forge.pkcs12.Bag): Buffer {
  if (!bag.key) return der(forge, bag.asn1);
  return der(forge, forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key)));
}

function parse(forge: ForgeModule, asn1: Forge.asn1.Asn1, password: string | null): Forge.pkcs12.Pkcs12Pfx {
  // A null password is the empty one as no bytes at all (forge derives its keys from no bytes).
  return forge.pkcs12.pkcs12FromAsn1(asn1, true, password as string);
}

/** forge's MAC failure ("PKCS#12 MAC could not be verified. Invalid password?"). */
const isMacFailure = (err: unknown) => err instanceof Error && /MAC could not be verified/.test(err.message);

/**
 * The certificates and the private key of a PKCS#12 file. Rejects (a Pkcs12Error naming the
 * problem) for a wrong password, damage, more than one private key, none, or no certificate.
 */
export async function readPkcs12(bytes: Uint8Array, password = ''): Promise<Pkcs12Contents> {
  const forge = await loadForge();
  const binary = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('binary');
  let asn1: Forge.asn1.Asn1;
  try {
    asn1 = forge.asn1.fromDer(binary, true);
  } catch (err) {
    throw new Pkcs12Error(`not a PKCS#12 file: ${(err as Error).message}`, { cause: err });
  }
  let pfx: Forge.pkcs12.Pkcs12Pfx;
  try {
    try {
      pfx = parse(forge, asn1, password);
    } catch (err) {
      // x/crypto/pkcs12 tries the empty password both as a lone terminator (two zero bytes, as
      // OpenSSL writes it) and as no bytes at all ("some implementations use an empty byte
      // array", node-forge's own writer among them).
      if (password !== '' || !isMacFailure(err)) throw err;
      pfx = parse(forge, forge.asn1.fromDer(binary, true), null);
    }
  } catch (err) {
    throw translate(err, password);
  }
  const certificates: Buffer[] = [];
  const keys: Buffer[] = [];
  try {
    for (const safe of pfx.safeContents) {
      for (const bag of safe.safeBags) {
        if (bag.type === forge.pki.oids.certBag) certificates.push(certificateDer(forge, bag));
        // forge keeps only certificate and key bags: it refuses a file with any other, as
        // x/crypto/pkcs12's ToPEM (azidentity's loadPKCS12Cert) does.
        else keys.push(privateKeyDer(forge, bag));
      }
    }
  } catch (err) {
    throw new Pkcs12Error(`damaged PKCS#12 file: ${(err as Error).message}`, { cause: err });
  }
  if (keys.length > 1) throw new Pkcs12Error(`the file holds ${keys.length} private keys, expected one`);
  if (keys.length === 0) throw new Pkcs12Error('the file holds no private key');
  if (certificates.length === 0) throw new Pkcs12Error('the file holds no certificate');
  return { certificates, privateKey: keys[0]! };
}

/** forge's errors as the operator needs them: what is wrong with the file, or with the password. */
function translate(err: unknown, password: string): Pkcs12Error {
  const e = err as Error & { oid?: string; contentType?: string };
  if (isMacFailure(e)) return new Pkcs12Error('the password is wrong or the file is damaged (its MAC does not verify)', { cause: err });
  if (/^Cannot read PKCS#12 PFX/.test(e.message)) return new Pkcs12Error(`not a PKCS#12 file: ${e.message}`, { cause: err });
  if (e.contentType === ENVELOPED_DATA) return new Pkcs12Error('a safe is encrypted to a public key (envelopedData), which is not supported: export the file with a password', { cause: err });
  if (/^Unsupported PKCS#12 SafeBag type/.test(e.message)) {
    return new Pkcs12Error(`the file holds ${BAG_NAMES[e.oid ?? ''] ?? `a safe bag of type ${e.oid}`}, which is not supported: only certificate and key bags are read`, { cause: err });
  }
  if (/^(Failed to decrypt PKCS#12 SafeContents|Unable to decrypt PKCS#8 ShroudedKeyBag)/.test(e.message)) {
    // node-forge takes one password string for the whole file: as UTF-16 for the MAC and the
    // PKCS#12 PBE (right: RFC 7292 B.1), but as one byte per character for PBES2's PBKDF2, where
    // OpenSSL uses the password's UTF-8 bytes (RFC 8018). Past a verified MAC, with a password
    // that is not ASCII, this is why; no other reader of ours is kept for that case.
    const hint = [...password].some((c) => c.charCodeAt(0) > 0x7f)
      ? '; a password that is not ASCII is read only for files encrypted as OpenSSL -legacy writes them (PKCS#12 PBE), not PBES2 (OpenSSL 3\'s default): export the file again with -legacy or an ASCII password'
      : '';
    return new Pkcs12Error(`the password is wrong or the file is damaged (decryption failed)${hint}`, { cause: err });
  }
  const detail = e.oid ?? e.contentType;
  return new Pkcs12Error(`damaged or unsupported PKCS#12 file: ${e.message}${detail ? ` (${detail})` : ''}`, { cause: err });
}
