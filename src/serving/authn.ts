// Delegated authentication: a bearer token is checked by the API server (TokenReview), as
// Kubernetes components check the tokens of clients scraping /metrics. Answers are cached for a
// short TTL; failed reviews (API server unreachable) are not cached.
import { createHash } from 'node:crypto';
import type { Clock } from '../kube/clock.js';
import type { KubeClient } from '../kube/client.js';
import { TtlCache } from './ttl-cache.js';

/** Who a request comes from, as TokenReview and SubjectAccessReview name users. */
export interface ServingUser {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  audiences?: string[];
  error?: string;
}

export const TOKEN_REVIEW_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';

export interface TokenReviewAuthenticatorOptions {
  client: Pick<KubeClient, 'request'>;
  /** How long an answer is reused (default 10 s, the delegating authenticator's default). */
  ttlMs?: number;
  /** Audiences to ask for (default none: the API server's own). */
  audiences?: string[];
  clock?: Clock;
}

export type AuthenticationResult = { ok: true; user: ServingUser } | { ok: false; reason: string };

export class TokenReviewAuthenticator {
  readonly #o: TokenReviewAuthenticatorOptions;
  readonly #cache: TtlCache<AuthenticationResult>;
  /** Concurrent scrapes with one token share one review. */
  readonly #inFlight = new Map<string, Promise<AuthenticationResult>>();

  constructor(options: TokenReviewAuthenticatorOptions) {
    this.#o = options;
    this.#cache = new TtlCache(options.ttlMs ?? 10_000, 4096, options.clock);
  }

  /** Reviews `token`; rejects when the API server cannot be asked (the caller answers 401). */
  async authenticate(token: string): Promise<AuthenticationResult> {
    // Keyed by a digest: raw tokens are not kept in memory longer than the request.
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = this.#cache.get(key);
    if (cached) return cached;
    const pending = this.#inFlight.get(key);
    if (pending) return pending;
    const review = this.#review(token).then((r) => {
      this.#cache.set(key, r);
      return r;
    }).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, review);
    return review;
  }

  async #review(token: string): Promise<AuthenticationResult> {
    const body = {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview',
      spec: { token, ...(this.#o.audiences?.length ? { audiences: this.#o.audiences } : {}) },
    };
    // Ungated: a follower must authenticate scrapers too, and a review never waits behind node writes.
    const answer = await this.#o.client.request<{ status?: TokenReviewStatus }>({ method: 'POST', path: TOKEN_REVIEW_PATH, body, ungated: true });
    const s = answer?.status ?? {};
    if (!s.authenticated || !s.user?.username) return { ok: false, reason: s.error || 'token not authenticated' };
    return {
      ok: true,
      user: {
        username: s.user.username, groups: s.user.groups ?? [],
        ...(s.user.uid ? { uid: s.user.uid } : {}), ...(s.user.extra ? { extra: s.user.extra } : {}),
      },
    };
  }
}
