// A self-signed serving certificate made in memory at start (ECDSA P-256, SHA-256), for when
// no --tls-cert-file is given: Kubernetes components do the same, and the image has no openssl.
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { bitString, boolean, explicit, implicitPrimitive, octetString, oid, sequence, set, smallInteger, time, unsignedInteger, utf8String } from './der.js';

export interface CertificateAndKey {
  /** PEM certificate. */
  cert: string;
  /** PEM private key (PKCS#8). */
  key: string;
}

export interface SelfSignedOptions {
  /** Subject common name. */
  commonName: string;
  /** DNS names and IP addresses the certificate is valid for (subjectAltName). */
  hosts: string[];
  /** Validity from now (default 365 days; one hour of back-dating absorbs clock skew). */
  validDays?: number;
  now?: Date;
  /** What the key may authenticate (default: a server); a client certificate for mutual TLS says client. */
  usage?: 'server' | 'client';
}

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const COMMON_NAME = '2.5.4.3';
const SUBJECT_ALT_NAME = '2.5.29.17';
const BASIC_CONSTRAINTS = '2.5.29.19';
const KEY_USAGE = '2.5.29.15';
const EXT_KEY_USAGE = '2.5.29.37';
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
}

function generalName(host: string): Buffer {
  if (isIP(host)) return implicitPrimitive(7, Buffer.from(ipaddr.parse(host).toByteArray()));
  if (!/^[A-Za-z0-9*]([-A-Za-z0-9.]*[A-Za-z0-9])?$/.test(host)) throw new Error(`hosts: "${host}" is neither an IP address nor a DNS name`);
  return implicitPrimitive(2, Buffer.from(host, 'ascii'));
}

function pem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${b64.join('\n')}\n-----END ${label}-----\n`;
}

/** Builds and signs the certificate; its own public key verifies it (checked before returning). */
export function selfSignedCertificate(options: SelfSignedOptions): CertificateAndKey {
  if (options.hosts.length === 0) throw new Error('hosts: at least one DNS name or IP address is needed');
  const validDays = options.validDays ?? 365;
  if (!(validDays > 0)) throw new Error(`validDays: must be positive, got ${validDays}`);
  const now = options.now ?? new Date();
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const serial = randomBytes(16);
  serial[0] = (serial[0] as number) & 0x7f;
  const name = sequence(set(sequence(oid(COMMON_NAME), utf8String(options.commonName))));
  const algorithm = sequence(oid(ECDSA_WITH_SHA256));
  const extensions = sequence(
    // A self-signed certificate is its own trust anchor: clients given it as their CA accept it.
    extension(BASIC_CONSTRAINTS, true, sequence(boolean(true))),
    // digitalSignature (bit 0) and keyCertSign (bit 5): 0b1000_0100, 2 unused bits.
    extension(KEY_USAGE, true, Buffer.from([0x03, 0x02, 0x02, 0x84])),
    extension(EXT_KEY_USAGE, false, sequence(oid(options.usage === 'client' ? CLIENT_AUTH : SERVER_AUTH))),
    extension(SUBJECT_ALT_NAME, false, sequence(...[...new Set(options.hosts)].map(generalName))),
  );
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    unsignedInteger(serial),
    algorithm,
    name,
    sequence(time(new Date(now.getTime() - 3_600_000)), time(new Date(now.getTime() + validDays * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, extensions),
  );
  const signature = sign('sha256', tbs, privateKey);
  const cert = pem('CERTIFICATE', sequence(tbs, algorithm, bitString(signature)));
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const x509 = new X509Certificate(cert);
  if (!x509.verify(publicKey) || !x509.checkPrivateKey(privateKey)) throw new Error('self-signed certificate: the generated certificate does not verify');
  return { cert, key };
}

/** The private key of a PEM pair (for checks; throws on text that is no key). */
export function privateKeyOf(pemText: string): KeyObject {
  return createPrivateKey(pemText);
}
