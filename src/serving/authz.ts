// Delegated authorization: may this user GET this path? The API server answers from its RBAC
// (SubjectAccessReview with non-resource attributes), as for Kubernetes components; paths in
// --authorization-always-allow-paths are served to anyone. Answers are cached for a short TTL.
import type { Clock } from '../kube/clock.js';
import type { KubeClient } from '../kube/client.js';
import type { ServingUser } from './authn.js';
import { TtlCache } from './ttl-cache.js';

export const SUBJECT_ACCESS_REVIEW_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/**
 * Whether `path` matches one of `patterns`: an exact path, or a prefix ending in `*`
 * ("/debug/*"), the forms --authorization-always-allow-paths takes.
 */
export function pathMatches(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : p === path));
}

export interface Decision {
  allowed: boolean;
  reason: string;
}

export interface SubjectAccessReviewAuthorizerOptions {
  client: Pick<KubeClient, 'request'>;
  /** How long an allow is reused (default 10 s). */
  allowedTtlMs?: number;
  /** How long a deny is reused (default 10 s). */
  deniedTtlMs?: number;
  clock?: Clock;
}

interface SubjectAccessReviewStatus {
  allowed?: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

export class SubjectAccessReviewAuthorizer {
  readonly #o: SubjectAccessReviewAuthorizerOptions;
  readonly #allowed: TtlCache<Decision>;
  readonly #denied: TtlCache<Decision>;

  constructor(options: SubjectAccessReviewAuthorizerOptions) {
    this.#o = options;
    this.#allowed = new TtlCache(options.allowedTtlMs ?? 10_000, 4096, options.clock);
    this.#denied = new TtlCache(options.deniedTtlMs ?? 10_000, 4096, options.clock);
  }

  /** Asks whether `user` may `verb` the non-resource `path`; rejects when the API server cannot be asked. */
  async authorize(user: ServingUser, verb: string, path: string): Promise<Decision> {
    const key = JSON.stringify([user.username, user.uid ?? '', [...user.groups].sort(), user.extra ?? {}, verb, path]);
    const cached = this.#allowed.get(key) ?? this.#denied.get(key);
    if (cached) return cached;
    const body = {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: {
        user: user.username, groups: user.groups,
        ...(user.uid ? { uid: user.uid } : {}), ...(user.extra ? { extra: user.extra } : {}),
        nonResourceAttributes: { path, verb },
      },
    };
    const answer = await this.#o.client.request<{ status?: SubjectAccessReviewStatus }>({ method: 'POST', path: SUBJECT_ACCESS_REVIEW_PATH, body, ungated: true });
    const s = answer?.status ?? {};
    const decision: Decision = { allowed: s.allowed === true && s.denied !== true, reason: s.reason || s.evaluationError || '' };
    (decision.allowed ? this.#allowed : this.#denied).set(key, decision);
    return decision;
  }
}
