// The double's admin endpoint: read and replace the fault plan of a running double, and cut its
// watches, over the same port, so a chaos session needs no code — `kubectl get --raw` and
// `kubectl replace --raw` with the admin kubeconfig, or curl with its token.
//
// Why the same port and an admin token: the double listens on 127.0.0.1 only, and the token keeps
// the replicas under test (their own users) from changing the faults they are being tested with.
import { ApiError, badRequest } from './errors.js';
import { FaultSpecError, parseFaultPlanText, type Faults } from './faults.js';
import type { UserInfo } from './rbac.js';

/** Every admin path starts here; none of them is ever failed by the faults. */
export const ADMIN_PREFIX = '/_double/';
export const FAULTS_PATH = '/_double/faults';
export const CLOSE_WATCHES_PATH = '/_double/close-watches';

export interface AdminTarget {
  readonly faults: Faults;
  /** Ends every open watch; with `expireHistory` the history is forgotten first (410 on resume). */
  cutWatches(expireHistory: boolean): void;
}

const MASTERS = 'system:masters';

/** Answers one admin request: [status, JSON body]. Throws ApiError for refusals and bad input. */
export function serveAdmin(target: AdminTarget, method: string, url: URL, user: UserInfo, body: () => Promise<Buffer>): Promise<[number, object]> | [number, object] {
  if (user.name === 'system:anonymous') throw new ApiError(401, 'Unauthorized', 'Unauthorized: the admin endpoint needs the admin token');
  if (!user.groups.includes(MASTERS)) throw new ApiError(403, 'Forbidden', `forbidden: User "${user.name}" cannot use ${url.pathname}: the admin endpoint needs a user in group ${MASTERS}`);
  if (url.pathname === FAULTS_PATH) {
    switch (method) {
      case 'GET':
        return [200, target.faults.status()];
      case 'PUT':
      case 'POST':
        return body().then((buf) => {
          try {
            const plan = parseFaultPlanText(buf.toString('utf8'));
            return [200, target.faults.applyPlan(plan)] as [number, object];
          } catch (err) {
            if (err instanceof FaultSpecError) throw badRequest(`fault plan ${err.message}`);
            throw err;
          }
        });
      case 'DELETE':
        return [200, target.faults.applyPlan({})];
      default:
        throw new ApiError(405, 'MethodNotAllowed', `${FAULTS_PATH} serves GET, PUT (or POST) and DELETE, not ${method}`);
    }
  }
  if (url.pathname === CLOSE_WATCHES_PATH) {
    if (method !== 'POST') throw new ApiError(405, 'MethodNotAllowed', `${CLOSE_WATCHES_PATH} serves POST, not ${method}`);
    const raw = url.searchParams.get('expireHistory');
    if (raw !== null && raw !== 'true' && raw !== 'false') throw badRequest(`expireHistory: must be true or false, got ${JSON.stringify(raw)}`);
    target.cutWatches(raw === 'true');
    return [200, { closed: true, expireHistory: raw === 'true' }];
  }
  throw new ApiError(404, 'NotFound', `no admin path ${url.pathname} (known: ${FAULTS_PATH}, ${CLOSE_WATCHES_PATH})`);
}
