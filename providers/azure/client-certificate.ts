// An AAD application's client certificate, from the bytes of aadClientCertPath (or of an MSI data
// plane identity's client_secret), into the one PEM text @azure/identity's ClientCertificateCredential
// takes. Bytes in, PEM out, no I/O; the caller reads the file.
//
// What cloud-provider-azure accepts (azidentity.ParseCertificates, then MSAL Go's NewCredFromCert):
// PEM (CERTIFICATE blocks and one PRIVATE KEY or RSA PRIVATE KEY block) when no password is given,
// else PKCS#12; the key must be RSA and match one of the certificates, which goes first in the
// chain sent as x5c (SendCertificateChain), the others after it in the file's order. This does
// the same, and also takes an encrypted PEM key (ENCRYPTED PRIVATE KEY, or OpenSSL's older
// Proc-Type form) with the password, which Go's reader refuses; PKCS#12 as pkcs12.ts reads it
// (node-forge, imported when a PKCS#12 file is read: hence a promise).
import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readPkcs12 } from './pkcs12.js';

export interface ClientCertificate {
  /** The private key (unencrypted PKCS#8) and the certificates, the one matching the key first. */
  pem: string;
  /** SHA-1 and SHA-256 thumbprints of the certificate matching the key (hex, upper case), as AAD shows them. */
  thumbprint: string;
  thumbprintSha256: string;
  subject: string;
  /** When the certificate matching the key expires. */
  notAfter: Date;
}

export class ClientCertificateError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'ClientCertificateError';
  }
}

const KEY_BLOCKS = new Set(['PRIVATE KEY', 'RSA PRIVATE KEY', 'ENCRYPTED PRIVATE KEY', 'EC PRIVATE KEY']);

function pemBlocks(text: string): { type: string; text: string }[] {
  const out: { type: string; text: string }[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;
  for (const m of text.matchAll(re)) out.push({ type: m[1]!, text: m[0] });
  return out;
}

function toPem(der: Buffer, type: string): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${type}-----\n${b64}\n-----END ${type}-----\n`;
}

function fromPem(text: string, password: string | undefined): { certificates: Buffer[]; key: KeyObject } {
  const blocks = pemBlocks(text);
  const keys = blocks.filter((b) => KEY_BLOCKS.has(b.type));
  if (keys.length > 1) throw new ClientCertificateError(`${keys.length} private keys in the file, expected one`);
  if (keys.length === 0) throw new ClientCertificateError('no private key in the file (a PRIVATE KEY or RSA PRIVATE KEY block)');
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: keys[0]!.text, format: 'pem', ...(password ? { passphrase: password } : {}) });
  } catch (err) {
    const encrypted = keys[0]!.type === 'ENCRYPTED PRIVATE KEY' || /Proc-Type: 4,ENCRYPTED/.test(keys[0]!.text);
    if (encrypted && !password) throw new ClientCertificateError('the private key is encrypted and aadClientCertPassword is not set', { cause: err });
    throw new ClientCertificateError(`the private key cannot be read${encrypted ? ' (wrong aadClientCertPassword?)' : ''}: ${(err as Error).message}`, { cause: err });
  }
  const certificates = blocks.filter((b) => b.type === 'CERTIFICATE').map((b) => Buffer.from(b.text.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, ''), 'base64'));
  return { certificates, key };
}

/**
 * The credential's PEM from a certificate file's bytes: PEM if it is PEM text, else PKCS#12
 * (password `''` when none is given). Rejects with a ClientCertificateError naming what is wrong.
 */
export async function readClientCertificate(bytes: Uint8Array, password?: string): Promise<ClientCertificate> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = buf.toString('latin1');
  let certificates: Buffer[];
  let key: KeyObject;
  if (/-----BEGIN [A-Z0-9 ]+-----/.test(text)) {
    ({ certificates, key } = fromPem(text, password));
  } else {
    let contents;
    try {
      contents = await readPkcs12(buf, password ?? '');
    } catch (err) {
      throw new ClientCertificateError(`neither PEM nor a readable PKCS#12 file: ${(err as Error).message}`, { cause: err });
    }
    certificates = contents.certificates;
    try {
      key = createPrivateKey({ key: contents.privateKey, format: 'der', type: 'pkcs8' });
    } catch (err) {
      throw new ClientCertificateError(`the private key in the PKCS#12 file cannot be read: ${(err as Error).message}`, { cause: err });
    }
  }
  if (certificates.length === 0) throw new ClientCertificateError('no certificate in the file');
  // MSAL (Go and JS) signs client assertions with RSA only.
  if (key.asymmetricKeyType !== 'rsa') throw new ClientCertificateError(`the private key is ${key.asymmetricKeyType?.toUpperCase() ?? 'of an unknown type'}; the key must be an RSA key`);
  const parsed = certificates.map((der, i) => {
    try {
      return { der, x509: new X509Certificate(der) };
    } catch (err) {
      throw new ClientCertificateError(`certificate ${i + 1} in the file cannot be read: ${(err as Error).message}`, { cause: err });
    }
  });
  const leaf = parsed.findIndex((c) => c.x509.checkPrivateKey(key));
  if (leaf < 0) throw new ClientCertificateError("the private key doesn't match any certificate in the file");
  const ordered = [parsed[leaf]!, ...parsed.filter((_, i) => i !== leaf)];
  const keyPem = key.export({ format: 'pem', type: 'pkcs8' }) as string;
  const first = ordered[0]!;
  return {
    pem: keyPem + ordered.map((c) => toPem(c.der, 'CERTIFICATE')).join(''),
    thumbprint: createHash('sha1').update(first.der).digest('hex').toUpperCase(),
    thumbprintSha256: createHash('sha256').update(first.der).digest('hex').toUpperCase(),
    subject: first.x509.subject.replace(/\n/g, ', '),
    notAfter: new Date(first.x509.validTo),
  };
}
