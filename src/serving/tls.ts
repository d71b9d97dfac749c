// The serving certificate: --tls-cert-file/--tls-private-key-file when given (checked to belong
// together), else a self-signed one made at start for localhost, this host and the bind address.
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { X509Certificate } from 'node:crypto';
import { privateKeyOf, selfSignedCertificate, type CertificateAndKey } from './certificate.js';
import { fileArgumentError, readProblem } from '../util/file-argument.js';

export interface ServingCertificate extends CertificateAndKey {
  selfSigned: boolean;
}

export interface ServingCertificateOptions {
  certFile?: string;
  keyFile?: string;
  /** --bind-address: added to a self-signed certificate's names unless it is 0.0.0.0 or ::. */
  bindAddress: string;
}

async function readPem(flag: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    // Files are re-read on a rotation too, after the start-up check: the same words as that check.
    throw fileArgumentError(flag, file, readProblem(err as NodeJS.ErrnoException), err);
  }
}

export async function servingCertificate(o: ServingCertificateOptions): Promise<ServingCertificate> {
  if ((o.certFile === undefined) !== (o.keyFile === undefined)) {
    throw new Error(o.certFile === undefined ? '--tls-cert-file: required with --tls-private-key-file' : '--tls-private-key-file: required with --tls-cert-file');
  }
  if (o.certFile !== undefined && o.keyFile !== undefined) {
    const [cert, key] = await Promise.all([readPem('--tls-cert-file', o.certFile), readPem('--tls-private-key-file', o.keyFile)]);
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(cert);
    } catch (err) {
      throw new Error(`--tls-cert-file ${o.certFile}: not a PEM certificate: ${(err as Error).message}`, { cause: err });
    }
    let matches: boolean;
    try {
      matches = x509.checkPrivateKey(privateKeyOf(key));
    } catch (err) {
      throw new Error(`--tls-private-key-file ${o.keyFile}: not a PEM private key: ${(err as Error).message}`, { cause: err });
    }
    if (!matches) throw new Error(`--tls-private-key-file ${o.keyFile}: does not match the certificate in --tls-cert-file ${o.certFile}`);
    return { cert, key, selfSigned: false };
  }
  const hosts = ['localhost', '127.0.0.1', '::1'];
  const host = hostname();
  if (/^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?$/.test(host)) hosts.push(host);
  if (o.bindAddress !== '0.0.0.0' && o.bindAddress !== '::') hosts.push(o.bindAddress);
  // Kubernetes components name theirs "<host>@<unix time>" too.
  return { ...selfSignedCertificate({ commonName: `${host}@${Math.floor(Date.now() / 1000)}`, hosts }), selfSigned: true };
}
