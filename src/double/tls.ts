// A throw-away self-signed certificate for 127.0.0.1, made with the openssl binary (Node has no
// certificate generator built in). Only for the double's optional HTTPS listener.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TlsMaterial {
  /** PEM private key. */
  key: string;
  /** PEM certificate (also the CA clients must trust: it is self-signed). */
  cert: string;
}

export function selfSignedCertificate(): TlsMaterial {
  const dir = mkdtempSync(path.join(tmpdir(), 'apiserver-double-tls-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '7', '-subj', '/CN=apiserver-double', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', key, '-out', cert],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new Error(`tls: could not create a self-signed certificate with openssl (pass tls: { key, cert } instead): ${detail}`, { cause: err });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
