// Client certificates signed by the real control plane's CA (test/controlplane writes its CA key to
// DIR/pki/ca.key), so a test can hold an identity the API server authenticates as it does any
// kubelet's: CN system:node:<name>, O system:nodes is what the Node authorizer and NodeRestriction
// key on (k8s.io/kubernetes pkg/auth/nodeidentifier). Built with the DER helpers of the serving
// certificate (src/serving/der.ts), ECDSA P-256 with SHA-256 as the control plane's own.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { bitString, explicit, oid, sequence, set, tlv, time, unsignedInteger, utf8String, boolean, octetString, smallInteger } from '../../src/serving/der.js';

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const COMMON_NAME = '2.5.4.3';
const ORGANIZATION = '2.5.4.10';
const KEY_USAGE = '2.5.29.15';
const EXT_KEY_USAGE = '2.5.29.37';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/** The tag, header length and total length of the DER element at `at`. */
function element(der: Uint8Array, at: number): { tag: number; header: number; end: number } {
  const tag = der[at] as number;
  const first = der[at + 1] as number;
  if (first < 0x80) return { tag, header: 2, end: at + 2 + first };
  const n = first & 0x7f;
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + (der[at + 2 + i] as number);
  return { tag, header: 2 + n, end: at + 2 + n + len };
}

/**
 * The subject Name of a certificate, byte for byte as it is encoded there: a child certificate's
 * issuer must equal it (Go compares the raw bytes when it builds a chain).
 */
export function rawSubject(certPem: string): Buffer {
  const der = new X509Certificate(certPem).raw;
  const cert = element(der, 0);
  const tbs = element(der, cert.header);
  let at = cert.header + tbs.header;
  // version [0], serialNumber, signature, issuer, validity, subject
  const fields: Array<{ start: number; end: number }> = [];
  while (fields.length < 6) {
    const e = element(der, at);
    fields.push({ start: at, end: e.end });
    at = e.end;
  }
  if (der[fields[0]!.start] !== 0xa0) throw new Error('rawSubject: only v3 certificates are read');
  const subject = fields[5]!;
  return Buffer.from(der.subarray(subject.start, subject.end));
}

export interface ClientCertificate {
  cert: string;
  key: string;
}

/** A client certificate for CN=`commonName`, O=each of `organizations`, signed by the CA given as PEM. */
export function issueClientCertificate(ca: { cert: string; key: string }, commonName: string, organizations: string[] = []): ClientCertificate {
  const caKey = createPrivateKey(ca.key);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const serial = randomBytes(16);
  serial[0] = (serial[0] as number) & 0x7f;
  const rdn = (type: string, value: string): Buffer => set(sequence(oid(type), utf8String(value)));
  const subject = sequence(...organizations.map((o) => rdn(ORGANIZATION, o)), rdn(COMMON_NAME, commonName));
  const algorithm = sequence(oid(ECDSA_WITH_SHA256));
  const now = Date.now();
  const extensions = sequence(
    // digitalSignature (bit 0): 0b1000_0000, 7 unused bits.
    sequence(oid(KEY_USAGE), boolean(true), octetString(tlv(0x03, Buffer.from([0x07, 0x80])))),
    sequence(oid(EXT_KEY_USAGE), octetString(sequence(oid(CLIENT_AUTH)))),
  );
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    unsignedInteger(serial),
    algorithm,
    rawSubject(ca.cert),
    sequence(time(new Date(now - 3_600_000)), time(new Date(now + 7 * 86_400_000))),
    subject,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, extensions),
  );
  const der = sequence(tbs, algorithm, bitString(sign('sha256', tbs, caKey)));
  const cert = `-----BEGIN CERTIFICATE-----\n${(der.toString('base64').match(/.{1,64}/g) ?? []).join('\n')}\n-----END CERTIFICATE-----\n`;
  if (!new X509Certificate(cert).verify(createPublicKey(ca.key))) {
    throw new Error('issueClientCertificate: the certificate does not verify against the CA key');
  }
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}
