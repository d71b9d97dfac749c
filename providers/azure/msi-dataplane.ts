// aadMSIDataPlaneIdentityPath: the credential of a user-assigned identity that the managed
// identity data plane writes to a file (managed control planes: the identity's certificate, not
// IMDS). cloud-provider-azure builds it with msi-dataplane's NewUserAssignedIdentityCredential
// (pkg/azclient/auth_func.go; msi-dataplane reloadCredentials.go and identity.go):
//   - the file is JSON (UserAssignedIdentityCredentials): client_id, tenant_id, client_secret (the
//     certificate and key, base64 of a password-less PKCS#12 or PEM), authentication_endpoint (the
//     AAD authority to ask, possibly regional), not_before (RFC 3339);
//   - the credential is a client certificate credential for that client and tenant at that
//     authority, sending the certificate chain (x5c), without AAD instance discovery;
//   - the file is read again when it is written and every 6 hours, and a credential read from it
//     replaces the current one only when its not_before is later; a file that fails to read or
//     parse leaves the current credential in place.
// The file is watched through its directory, so that a Kubernetes Secret volume's update (a
// symlink swap, which a watch on the old file never reports) is seen at once too.
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AccessToken, GetTokenOptions, TokenCredential } from '@azure/identity';
import { readClientCertificate, type ClientCertificate } from './client-certificate.js';

export interface MsiDataPlaneIdentity {
  clientId: string;
  tenantId: string;
  /** AAD authority host (authentication_endpoint). */
  authorityHost: string;
  certificate: ClientCertificate;
  notBefore: Date;
  notAfter?: Date;
}

export class MsiDataPlaneError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'MsiDataPlaneError';
  }
}

const REQUIRED = ['client_id', 'tenant_id', 'client_secret', 'authentication_endpoint', 'not_before'] as const;

function time(value: unknown, field: string): Date {
  const d = typeof value === 'string' ? new Date(value) : undefined;
  // RFC 3339, as msi-dataplane parses it with time.RFC3339.
  if (!d || Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value as string)) {
    throw new MsiDataPlaneError(`${field}: ${JSON.stringify(value)} is not an RFC 3339 time`);
  }
  return d;
}

/** Parses the identity file's text (no I/O); rejects with an MsiDataPlaneError naming the field. */
export async function parseMsiDataPlaneIdentity(text: string): Promise<MsiDataPlaneIdentity> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new MsiDataPlaneError(`not JSON: ${(err as Error).message}`, { cause: err });
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new MsiDataPlaneError('expected a JSON object (UserAssignedIdentityCredentials)');
  const o = raw as Record<string, unknown>;
  const missing = REQUIRED.filter((k) => o[k] === undefined || o[k] === null);
  if (missing.length > 0) throw new MsiDataPlaneError(`missing ${missing.join(', ')}`);
  for (const k of ['client_id', 'tenant_id', 'client_secret', 'authentication_endpoint'] as const) {
    if (typeof o[k] !== 'string' || (o[k] as string).trim() === '') throw new MsiDataPlaneError(`${k}: expected a non-empty string`);
  }
  let authority: URL;
  try {
    authority = new URL(o.authentication_endpoint as string);
  } catch {
    throw new MsiDataPlaneError(`authentication_endpoint: "${o.authentication_endpoint as string}" is not a URL`);
  }
  if (authority.protocol !== 'https:') throw new MsiDataPlaneError(`authentication_endpoint: "${o.authentication_endpoint as string}" must be an https:// URL`);
  const secret = (o.client_secret as string).trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(secret) || secret.length % 4 !== 0) throw new MsiDataPlaneError('client_secret: not standard base64');
  let certificate: ClientCertificate;
  try {
    certificate = await readClientCertificate(Buffer.from(secret, 'base64'));
  } catch (err) {
    throw new MsiDataPlaneError(`client_secret: ${(err as Error).message}`, { cause: err });
  }
  const identity: MsiDataPlaneIdentity = {
    clientId: (o.client_id as string).trim(),
    tenantId: (o.tenant_id as string).trim(),
    authorityHost: authority.href,
    certificate,
    notBefore: time(o.not_before, 'not_before'),
  };
  if (o.not_after !== undefined && o.not_after !== null) identity.notAfter = time(o.not_after, 'not_after');
  return identity;
}

export interface ReloadingCredentialOptions {
  /** Builds the credential of one identity (the caller's @azure/identity ClientCertificateCredential). */
  build: (identity: MsiDataPlaneIdentity) => TokenCredential;
  /** Reads the file again this often even without a change seen (default 6 h, as msi-dataplane). */
  backstopMs?: number;
  logger?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export const MSI_DATA_PLANE_BACKSTOP_MS = 6 * 60 * 60 * 1000;

/** The credential of an identity file, kept current as the file changes. */
export class ReloadingMsiDataPlaneCredential implements TokenCredential {
  private current!: { identity: MsiDataPlaneIdentity; credential: TokenCredential };
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private reloading?: Promise<void>;
  private again = false;
  private closed = false;

  private constructor(readonly path: string, private readonly options: ReloadingCredentialOptions) {}

  /** Reads the file (a failure is thrown: the provider does not start) and starts watching it. */
  static async create(file: string, options: ReloadingCredentialOptions): Promise<ReloadingMsiDataPlaneCredential> {
    const c = new ReloadingMsiDataPlaneCredential(file, options);
    const identity = await c.read();
    c.current = { identity, credential: options.build(identity) };
    c.start();
    return c;
  }

  /** The identity in use. */
  get identity(): MsiDataPlaneIdentity {
    return this.current.identity;
  }

  getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> {
    return this.current.credential.getToken(scopes, options);
  }

  /** Reads the file now; resolves when done (a failure is logged, never thrown). Concurrent calls share one read, and one more follows if asked meanwhile. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.again = false;
        await this.reloadOnce();
      } while (this.again && !this.closed);
    })().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
  }

  private async read(): Promise<MsiDataPlaneIdentity> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      throw new MsiDataPlaneError(`aadMSIDataPlaneIdentityPath: reading ${this.path} failed: ${(err as Error).message}`, { cause: err });
    }
    try {
      return await parseMsiDataPlaneIdentity(text);
    } catch (err) {
      throw new MsiDataPlaneError(`aadMSIDataPlaneIdentityPath ${this.path}: ${(err as Error).message}`, { cause: err });
    }
  }

  private async reloadOnce(): Promise<void> {
    if (this.closed) return;
    let identity: MsiDataPlaneIdentity;
    try {
      identity = await this.read();
    } catch (err) {
      this.options.logger?.warn({ path: this.path, err: (err as Error).message }, 'azure: reloading the MSI data plane identity failed; the current credential stays');
      return;
    }
    // msi-dataplane: only a credential that became valid later replaces the current one.
    if (identity.notBefore.getTime() <= this.current.identity.notBefore.getTime()) return;
    let credential: TokenCredential;
    try {
      credential = this.options.build(identity);
    } catch (err) {
      this.options.logger?.warn({ path: this.path, err: (err as Error).message }, 'azure: building the reloaded MSI data plane credential failed; the current credential stays');
      return;
    }
    this.current = { identity, credential };
    this.options.logger?.info({ path: this.path, clientId: identity.clientId, thumbprint: identity.certificate.thumbprint, notBefore: identity.notBefore.toISOString() }, 'azure: MSI data plane identity reloaded');
  }

  private start(): void {
    const dir = path.dirname(this.path);
    try {
      this.watcher = watch(dir, { persistent: false }, () => void this.reload());
      this.watcher.on('error', (err) => this.options.logger?.warn({ path: this.path, err: err.message }, 'azure: watching the MSI data plane identity failed; it is read again every few hours'));
    } catch (err) {
      this.options.logger?.warn({ path: this.path, err: (err as Error).message }, 'azure: watching the MSI data plane identity failed; it is read again every few hours');
    }
    this.timer = setInterval(() => void this.reload(), this.options.backstopMs ?? MSI_DATA_PLANE_BACKSTOP_MS);
    this.timer.unref();
  }
}
