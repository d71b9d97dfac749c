// Secure serving of /metrics and the health paths, as k8s.io/apiserver's delegated serving does:
// a request on an always-allowed path is served to anyone; any other needs a bearer token the
// API server authenticates (TokenReview, else 401) for a user it authorizes to GET that path
// (SubjectAccessReview, else 403).
import type http from 'node:http';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import type { KubeClient } from '../kube/client.js';
import { TokenReviewAuthenticator } from './authn.js';
import { pathMatches, SubjectAccessReviewAuthorizer } from './authz.js';
import { servingCertificate } from './tls.js';

export interface Denial {
  status: 401 | 403 | 500;
  message: string;
}

/** Checks a request before it is served: undefined lets it through. */
export type RequestGuard = (req: http.IncomingMessage) => Promise<Denial | undefined>;

export interface RequestGuardOptions {
  authenticator: Pick<TokenReviewAuthenticator, 'authenticate'>;
  authorizer: Pick<SubjectAccessReviewAuthorizer, 'authorize'>;
  alwaysAllowPaths: readonly string[];
  logger?: Logger;
}

/** The API verb of an HTTP method on a non-resource path (HEAD reads like GET). */
export function verbOfMethod(method: string): string {
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD') return 'get';
  if (m === 'POST') return 'create';
  if (m === 'PUT') return 'update';
  return m.toLowerCase();
}

export function requestGuard(o: RequestGuardOptions): RequestGuard {
  const log = o.logger ?? silentLogger;
  return async (req) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    // Probes must work whatever the API server does: no review at all for these.
    if (pathMatches(o.alwaysAllowPaths, path)) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ''));
    if (!m) return { status: 401, message: 'Unauthorized: a bearer token is required' };
    let authn;
    try {
      authn = await o.authenticator.authenticate(m[1] as string);
    } catch (err) {
      log.warn({ err, path }, 'TokenReview failed: answering 401');
      return { status: 401, message: 'Unauthorized: the token could not be reviewed' };
    }
    if (!authn.ok) return { status: 401, message: 'Unauthorized' };
    const verb = verbOfMethod(req.method ?? 'GET');
    let decision;
    try {
      decision = await o.authorizer.authorize(authn.user, verb, path);
    } catch (err) {
      log.warn({ err, path, user: authn.user.username }, 'SubjectAccessReview failed: answering 500');
      return { status: 500, message: 'Internal Server Error: the request could not be authorized' };
    }
    if (!decision.allowed) {
      const why = decision.reason ? `: ${decision.reason}` : '';
      return { status: 403, message: `forbidden: User "${authn.user.username}" cannot ${verb} path "${path}"${why}` };
    }
    return undefined;
  };
}

export interface SecureServingConfig {
  /** PEM certificate and key; absent: plain HTTP (--insecure-plain-http). */
  tls?: { cert: string; key: string };
  guard?: RequestGuard;
  /** The certificate was made at start (logged so operators know to scrape with insecureSkipVerify or a CA). */
  selfSigned: boolean;
}

/**
 * What the health server needs for the run flags: TLS material and the delegated guard, or
 * nothing with --insecure-plain-http. Errors name the flag (unreadable or mismatched files).
 */
export async function secureServing(
  o: { bindAddress: string; serving: { tlsCertFile?: string; tlsPrivateKeyFile?: string; alwaysAllowPaths: string[]; plainHTTP: boolean } },
  client: Pick<KubeClient, 'request'>,
  logger?: Logger,
): Promise<SecureServingConfig> {
  if (o.serving.plainHTTP) return { selfSigned: false };
  const cert = await servingCertificate({
    bindAddress: o.bindAddress,
    ...(o.serving.tlsCertFile !== undefined ? { certFile: o.serving.tlsCertFile } : {}),
    ...(o.serving.tlsPrivateKeyFile !== undefined ? { keyFile: o.serving.tlsPrivateKeyFile } : {}),
  });
  return {
    tls: { cert: cert.cert, key: cert.key },
    selfSigned: cert.selfSigned,
    guard: requestGuard({
      authenticator: new TokenReviewAuthenticator({ client }),
      authorizer: new SubjectAccessReviewAuthorizer({ client }),
      alwaysAllowPaths: o.serving.alwaysAllowPaths,
      ...(logger ? { logger } : {}),
    }),
  };
}
