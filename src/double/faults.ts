// Fault injection and request counters: what tests use to make the API server slow, flaky or
// forgetful, and to count the calls a controller makes.
import { ApiError, type StatusReason } from './errors.js';
import { parse as parseYaml } from 'yaml';
import { seededRandom } from '../util/random.js';

/** Kubernetes audit verbs. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';
export const VERBS: readonly Verb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

/** What the server knows about a resource request once routed. */
export interface RequestInfo {
  verb: Verb;
  /** Plural resource name, e.g. `nodes`, `leases`. */
  resource: string;
  group: string;
  subresource: string;
  namespace: string;
  name: string;
  userAgent: string;
  user: string;
}

export type FaultStatus = 409 | 429 | 500 | 503 | 504;
const FAULT_STATUSES: readonly number[] = [409, 429, 500, 503, 504];

export interface FaultSpec {
  /** Verbs the fault applies to (default: all). */
  verb?: Verb | Verb[];
  /** `nodes`, or qualified `leases.coordination.k8s.io` (default: all). */
  resource?: string;
  /** `status`, or '' for the main resource only (default: any). */
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Substring of the User-Agent header. */
  userAgent?: string;
  /** The authenticated user, exactly (the double's `users`: replicas that share a User-Agent). */
  user?: string;
  /** Added before the request is handled. */
  latencyMs?: number;
  /** Probability in [0, 1] that a matching request fails (default 1 when `status` is set). */
  errorRate?: number;
  /** Error answered instead of handling the request (default 500 when `errorRate` is set). */
  status?: FaultStatus;
  /** Retry-After header and details.retryAfterSeconds (429 and 503; default 1). */
  retryAfterSeconds?: number;
  /** Handle the request (the write happens) then drop the connection without answering. */
  dropResponse?: boolean;
  /** Stop after firing this many times (default: unlimited). */
  count?: number;
}

export interface FaultHandle {
  /** Times this fault fired (added latency, failed or dropped a request). */
  readonly fired: number;
  remove(): void;
}

export interface FaultDecision {
  latencyMs: number;
  error?: ApiError;
  drop: boolean;
}

interface Rule {
  spec: FaultSpec;
  verbs?: Set<string>;
  fired: number;
}

/** A spec problem: `field` is the path of the bad field (`status`, or `rules[2].status` in a plan). */
export class FaultSpecError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'FaultSpecError';
  }
}

/** `where` prefixes field names: '' for inject(), `rules[2].` inside a plan. */
function validateSpec(spec: FaultSpec, where = ''): void {
  const fail = (field: string, value: unknown, why: string): never => {
    const path = field === 'spec' && where ? where.replace(/\.$/, '') : `${where}${field}`;
    throw new FaultSpecError(path, `${where ? '' : 'fault '}${path}: ${why}, got ${JSON.stringify(value)}`);
  };
  const verbs = spec.verb === undefined ? [] : Array.isArray(spec.verb) ? spec.verb : [spec.verb];
  for (const v of verbs) if (!VERBS.includes(v)) fail('verb', v, `must be one of ${VERBS.join(', ')}`);
  if (spec.latencyMs !== undefined && (!Number.isFinite(spec.latencyMs) || spec.latencyMs < 0)) fail('latencyMs', spec.latencyMs, 'must be a number ≥ 0');
  if (spec.errorRate !== undefined && (!Number.isFinite(spec.errorRate) || spec.errorRate < 0 || spec.errorRate > 1)) fail('errorRate', spec.errorRate, 'must be within [0, 1]');
  if (spec.status !== undefined && !FAULT_STATUSES.includes(spec.status)) fail('status', spec.status, `must be one of ${FAULT_STATUSES.join(', ')}`);
  if (spec.retryAfterSeconds !== undefined && (!Number.isInteger(spec.retryAfterSeconds) || spec.retryAfterSeconds < 0)) fail('retryAfterSeconds', spec.retryAfterSeconds, 'must be an integer ≥ 0');
  if (spec.count !== undefined && (!Number.isInteger(spec.count) || spec.count < 1)) fail('count', spec.count, 'must be an integer ≥ 1');
  if (spec.latencyMs === undefined && spec.errorRate === undefined && spec.status === undefined && !spec.dropResponse) {
    fail('spec', spec, 'needs at least one of latencyMs, errorRate, status, dropResponse');
  }
  if (spec.dropResponse && (spec.status !== undefined || spec.errorRate !== undefined)) fail('dropResponse', spec, 'cannot be combined with status or errorRate');
}

function faultError(status: FaultStatus, info: RequestInfo, retryAfter: number): ApiError {
  const what = `${info.resource}${info.subresource ? '/' + info.subresource : ''}${info.name ? ` "${info.name}"` : ''}`;
  const table: Record<FaultStatus, [StatusReason, string]> = {
    409: ['Conflict', `Operation cannot be fulfilled on ${what}: the object has been modified; please apply your changes to the latest version and try again (injected)`],
    429: ['TooManyRequests', 'Too many requests, please try again later. (injected)'],
    500: ['InternalError', `Internal error occurred: injected fault on ${info.verb} ${what}`],
    503: ['ServiceUnavailable', 'The server is currently unable to handle the request (injected)'],
    504: ['Timeout', `Timeout: request did not complete within the allowed duration (injected)`],
  };
  const [reason, message] = table[status];
  const throttled = status === 429 || status === 503;
  const details = { name: info.name || undefined, group: info.group, kind: info.resource, ...(throttled ? { retryAfterSeconds: retryAfter } : {}) };
  return new ApiError(status, reason, message, details, throttled ? { 'Retry-After': String(retryAfter) } : {});
}

/** How a blackout fails requests: `reset` cuts each connection at once (the client sees ECONNRESET), `hang` holds it unanswered until the blackout ends, then cuts it. */
export type BlackoutMode = 'reset' | 'hang';
export const BLACKOUT_MODES: readonly BlackoutMode[] = ['reset', 'hang'];

export interface BlackoutSpec {
  /** Default `reset`. */
  mode?: BlackoutMode;
  /** Ends by itself this long after the plan is applied (default: lasts until the plan is replaced). */
  durationMs?: number;
}

export interface WatchCloseSpec {
  /** Ends every open watch stream this often. */
  everyMs: number;
  /** Also forgets the event history at each cut, so watches resuming from their resourceVersion get 410 Gone and re-list. */
  expireHistory?: boolean;
}

/**
 * Everything the double does wrong at once, as one document: what `--faults FILE` loads and the
 * admin endpoint reads and replaces. Applying a plan replaces every rule (also those added with
 * inject()).
 */
export interface FaultPlan {
  /** Restarts the random generator of errorRate draws from this seed, so a session repeats. */
  seed?: number;
  /** Error, latency and dropped-response rules, as inject() takes them, applied in order. */
  rules?: FaultSpec[];
  /** A full outage: every request but the admin endpoint fails at the transport; open watches are cut when it starts. */
  blackout?: BlackoutSpec;
  /** Periodic watch cuts (and 410 on resume with expireHistory). */
  watchCloses?: WatchCloseSpec;
}

export interface FaultPlanStatus {
  /** The plan last applied (rules as given, including spent ones). */
  plan: FaultPlan;
  /** The rules in force now, with how often each fired. */
  rules: { spec: FaultSpec; fired: number }[];
  /** Present while a blackout is on. */
  blackout?: { mode: BlackoutMode; remainingMs?: number };
  /** Watch cuts made by watchCloses since the plan was applied. */
  watchCloses: number;
  /** Requests the plan's rules failed, delayed or dropped, spent rules included. */
  fired: number;
}

const RULE_FIELDS: Record<keyof FaultSpec, 'string' | 'number' | 'boolean' | 'verbs'> = {
  verb: 'verbs', resource: 'string', subresource: 'string', namespace: 'string', name: 'string', userAgent: 'string', user: 'string',
  latencyMs: 'number', errorRate: 'number', status: 'number', retryAfterSeconds: 'number', dropResponse: 'boolean', count: 'number',
};
const PLAN_FIELDS = ['seed', 'rules', 'blackout', 'watchCloses'];

function planFail(field: string, why: string, value: unknown): never {
  throw new FaultSpecError(field, `${field}: ${why}, got ${JSON.stringify(value)}`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkKeys(obj: Record<string, unknown>, known: readonly string[], where: string): void {
  for (const k of Object.keys(obj)) if (!known.includes(k)) planFail(`${where}${k}`, `unknown field (known: ${known.join(', ')})`, obj[k]);
}

function parseRule(raw: unknown, where: string): FaultSpec {
  if (!isRecord(raw)) planFail(where.replace(/\.$/, ''), 'must be an object', raw);
  checkKeys(raw, Object.keys(RULE_FIELDS), where);
  for (const [k, v] of Object.entries(raw)) {
    const kind = RULE_FIELDS[k as keyof FaultSpec];
    if (kind === 'verbs') {
      if (typeof v !== 'string' && !(Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string'))) planFail(`${where}${k}`, 'must be a verb or a non-empty list of verbs', v);
    } else if (typeof v !== kind) planFail(`${where}${k}`, `must be a ${kind}`, v);
  }
  const spec = { ...raw } as FaultSpec;
  validateSpec(spec, where);
  return spec;
}

/** Checks a fault plan (parsed JSON or YAML); throws a FaultSpecError naming the field and the value. */
export function parseFaultPlan(raw: unknown): FaultPlan {
  if (raw === null || raw === undefined) return {};
  if (!isRecord(raw)) planFail('plan', 'must be an object with rules, blackout, watchCloses or seed', raw);
  checkKeys(raw, PLAN_FIELDS, '');
  const plan: FaultPlan = {};
  if (raw.seed !== undefined) {
    if (typeof raw.seed !== 'number' || !Number.isInteger(raw.seed) || raw.seed < 0) planFail('seed', 'must be an integer ≥ 0', raw.seed);
    plan.seed = raw.seed;
  }
  if (raw.rules !== undefined) {
    if (!Array.isArray(raw.rules)) planFail('rules', 'must be a list of rules', raw.rules);
    plan.rules = raw.rules.map((r, i) => parseRule(r, `rules[${i}].`));
  }
  if (raw.blackout !== undefined) {
    const b = raw.blackout;
    if (!isRecord(b)) planFail('blackout', 'must be an object ({} for a reset blackout until replaced)', b);
    checkKeys(b, ['mode', 'durationMs'], 'blackout.');
    if (b.mode !== undefined && !BLACKOUT_MODES.includes(b.mode as BlackoutMode)) planFail('blackout.mode', `must be one of ${BLACKOUT_MODES.join(', ')}`, b.mode);
    if (b.durationMs !== undefined && (typeof b.durationMs !== 'number' || !Number.isFinite(b.durationMs) || b.durationMs <= 0)) planFail('blackout.durationMs', 'must be a number > 0', b.durationMs);
    plan.blackout = { ...(b.mode !== undefined ? { mode: b.mode as BlackoutMode } : {}), ...(b.durationMs !== undefined ? { durationMs: b.durationMs as number } : {}) };
  }
  if (raw.watchCloses !== undefined) {
    const w = raw.watchCloses;
    if (!isRecord(w)) planFail('watchCloses', 'must be an object with everyMs', w);
    checkKeys(w, ['everyMs', 'expireHistory'], 'watchCloses.');
    // Below 50 ms a client could not even finish its re-list between cuts.
    if (typeof w.everyMs !== 'number' || !Number.isFinite(w.everyMs) || w.everyMs < 50) planFail('watchCloses.everyMs', 'must be a number ≥ 50', w.everyMs);
    if (w.expireHistory !== undefined && typeof w.expireHistory !== 'boolean') planFail('watchCloses.expireHistory', 'must be a boolean', w.expireHistory);
    plan.watchCloses = { everyMs: w.everyMs, ...(w.expireHistory !== undefined ? { expireHistory: w.expireHistory } : {}) };
  }
  return plan;
}

/** Parses a fault plan written as YAML or JSON (JSON is YAML); problems name the field. */
export function parseFaultPlanText(text: string): FaultPlan {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new FaultSpecError('plan', `plan: not valid YAML or JSON: ${err instanceof Error ? err.message.split('\n')[0].replace(/:$/, '') : String(err)}`);
  }
  return parseFaultPlan(raw);
}

export class Faults {
  private rules: Rule[] = [];
  private random: () => number;
  private current: FaultPlan = {};
  private blackoutMode: BlackoutMode | undefined;
  private blackoutUntil = 0;
  private blackoutEnded: Promise<void> = Promise.resolve();
  private endBlackout: () => void = () => {};
  private blackoutTimer: NodeJS.Timeout | undefined;
  private readonly planListeners = new Set<(plan: FaultPlan) => void>();
  /** Watch cuts made for the current plan (the server counts them). */
  watchClosesDone = 0;
  private firedSincePlan = 0;

  constructor(seed = 1) {
    this.random = seededRandom(seed);
  }

  /**
   * Replaces every rule, the blackout and the watch cuts with `plan` (checked first: a bad plan
   * throws a FaultSpecError and changes nothing). `{}` ends every fault.
   */
  applyPlan(input: FaultPlan): FaultPlanStatus {
    const plan = parseFaultPlan(input);
    const rules = (plan.rules ?? []).map((spec): Rule => ({ spec: { ...spec }, fired: 0, verbs: spec.verb === undefined ? undefined : new Set(Array.isArray(spec.verb) ? spec.verb : [spec.verb]) }));
    this.rules = rules;
    if (plan.seed !== undefined) this.random = seededRandom(plan.seed);
    this.current = plan;
    this.watchClosesDone = 0;
    this.firedSincePlan = 0;
    this.setBlackout(plan.blackout);
    for (const l of this.planListeners) l(plan);
    return this.status();
  }

  /** The plan in force and what it has done so far. */
  status(): FaultPlanStatus {
    const mode = this.blackout();
    return {
      plan: structuredClone(this.current),
      rules: this.rules.map((r) => ({ spec: { ...r.spec }, fired: r.fired })),
      ...(mode ? { blackout: { mode, ...(Number.isFinite(this.blackoutUntil) ? { remainingMs: Math.max(0, this.blackoutUntil - Date.now()) } : {}) } } : {}),
      watchCloses: this.watchClosesDone,
      fired: this.firedSincePlan,
    };
  }

  /** Called with each plan applied (the server re-arms its watch cuts and cuts watches for a blackout). */
  onPlan(listener: (plan: FaultPlan) => void): () => void {
    this.planListeners.add(listener);
    return () => this.planListeners.delete(listener);
  }

  /** The blackout mode while one is on, else undefined. */
  blackout(): BlackoutMode | undefined {
    if (this.blackoutMode && Date.now() >= this.blackoutUntil) this.setBlackout(undefined);
    return this.blackoutMode;
  }

  /** Resolves when the current blackout ends (at once when none is on). */
  blackoutOver(): Promise<void> {
    return this.blackout() ? this.blackoutEnded : Promise.resolve();
  }

  private setBlackout(spec: BlackoutSpec | undefined): void {
    clearTimeout(this.blackoutTimer);
    this.blackoutTimer = undefined;
    const wasOn = this.blackoutMode !== undefined;
    if (!spec) {
      this.blackoutMode = undefined;
      if (wasOn) this.endBlackout();
      return;
    }
    if (!wasOn) this.blackoutEnded = new Promise((resolve) => (this.endBlackout = resolve));
    this.blackoutMode = spec.mode ?? 'reset';
    this.blackoutUntil = spec.durationMs === undefined ? Infinity : Date.now() + spec.durationMs;
    if (spec.durationMs !== undefined) {
      // Ends on time even when no request arrives to notice (held requests wait on it).
      this.blackoutTimer = setTimeout(() => this.setBlackout(undefined), spec.durationMs);
      this.blackoutTimer.unref();
    }
  }

  inject(spec: FaultSpec): FaultHandle {
    validateSpec(spec);
    const rule: Rule = { spec: { ...spec }, fired: 0, verbs: spec.verb === undefined ? undefined : new Set(Array.isArray(spec.verb) ? spec.verb : [spec.verb]) };
    this.rules.push(rule);
    return {
      get fired() {
        return rule.fired;
      },
      remove: () => {
        this.rules = this.rules.filter((r) => r !== rule);
      },
    };
  }

  /** Removes every rule (the blackout and watch cuts of a plan stay: applyPlan({}) ends those). */
  clear(): void {
    this.rules = [];
  }

  get active(): number {
    return this.rules.length;
  }

  private matches(rule: Rule, info: RequestInfo): boolean {
    const s = rule.spec;
    if (rule.verbs && !rule.verbs.has(info.verb)) return false;
    if (s.resource !== undefined && s.resource !== info.resource && s.resource !== `${info.resource}.${info.group}`) return false;
    if (s.subresource !== undefined && s.subresource !== info.subresource) return false;
    if (s.namespace !== undefined && s.namespace !== info.namespace) return false;
    if (s.name !== undefined && s.name !== info.name) return false;
    if (s.userAgent !== undefined && !info.userAgent.includes(s.userAgent)) return false;
    if (s.user !== undefined && s.user !== info.user) return false;
    return true;
  }

  /** Decides what happens to one request; rules apply in injection order, latencies add up. */
  decide(info: RequestInfo): FaultDecision {
    const out: FaultDecision = { latencyMs: 0, drop: false };
    for (const rule of [...this.rules]) {
      if (!this.matches(rule, info)) continue;
      const s = rule.spec;
      let fired = false;
      if (s.latencyMs) {
        out.latencyMs += s.latencyMs;
        fired = true;
      }
      if (!out.error && !out.drop && (s.status !== undefined || s.errorRate !== undefined)) {
        if (this.random() < (s.errorRate ?? 1)) {
          out.error = faultError(s.status ?? 500, info, s.retryAfterSeconds ?? 1);
          fired = true;
        }
      }
      if (!out.error && s.dropResponse && !out.drop) {
        out.drop = true;
        fired = true;
      }
      if (fired) {
        rule.fired++;
        this.firedSincePlan++;
        if (s.count !== undefined && rule.fired >= s.count) this.rules = this.rules.filter((r) => r !== rule);
      }
    }
    return out;
  }
}

export interface CounterRow {
  verb: string;
  /** Plural resource name; `nonResourceURL` rows carry the path in `subresource`. */
  resource: string;
  group: string;
  subresource: string;
  userAgent: string;
  count: number;
}

/** A counter row that also names the authenticated user and the HTTP status answered. */
export interface DetailedCounterRow extends CounterRow {
  /** Authenticated user name (`system:anonymous` without a token). */
  user: string;
  /**
   * HTTP status the double answered: 200 for a watch that started, the error's code for a
   * refused or failed request (403, 409, 429, …); for apply-then-drop, the status it would have
   * sent. Requests whose token is unknown (401) are not counted.
   */
  code: number;
}

export type CounterFilter = Partial<Omit<DetailedCounterRow, 'count'>>;

export class Counters {
  private readonly rows = new Map<string, CounterRow>();
  private readonly detailed = new Map<string, DetailedCounterRow>();

  /** Counts a request when it arrives (the rows of list() and count() without user or code). */
  record(verb: string, resource: string, group: string, subresource: string, userAgent: string): void {
    const key = `${verb}\u0000${resource}\u0000${group}\u0000${subresource}\u0000${userAgent}`;
    const row = this.rows.get(key);
    if (row) row.count++;
    else this.rows.set(key, { verb, resource, group, subresource, userAgent, count: 1 });
  }

  /** Counts a request once answered, with its user and status (the rows of listDetailed()). */
  recordAnswered(verb: string, resource: string, group: string, subresource: string, userAgent: string, user: string, code: number): void {
    const key = `${verb}\u0000${resource}\u0000${group}\u0000${subresource}\u0000${userAgent}\u0000${user}\u0000${code}`;
    const row = this.detailed.get(key);
    if (row) row.count++;
    else this.detailed.set(key, { verb, resource, group, subresource, userAgent, user, code, count: 1 });
  }

  list(): CounterRow[] {
    return [...this.rows.values()].map((r) => ({ ...r }));
  }

  listDetailed(): DetailedCounterRow[] {
    return [...this.detailed.values()].map((r) => ({ ...r }));
  }

  /**
   * Sum of counts over rows matching every given field. `resource` matches the plural or the
   * qualified `plural.group`; `userAgent` matches as a substring. A filter on `user` or `code`
   * counts answered requests only (a request still in flight has neither yet).
   */
  count(filter: CounterFilter = {}): number {
    const detailed = filter.user !== undefined || filter.code !== undefined;
    let n = 0;
    for (const r of detailed ? this.detailed.values() : this.rows.values()) {
      if (filter.verb !== undefined && r.verb !== filter.verb) continue;
      if (filter.resource !== undefined && r.resource !== filter.resource && `${r.resource}.${r.group}` !== filter.resource) continue;
      if (filter.group !== undefined && r.group !== filter.group) continue;
      if (filter.subresource !== undefined && r.subresource !== filter.subresource) continue;
      if (filter.userAgent !== undefined && !r.userAgent.includes(filter.userAgent)) continue;
      if (detailed) {
        const d = r as DetailedCounterRow;
        if (filter.user !== undefined && d.user !== filter.user) continue;
        if (filter.code !== undefined && d.code !== filter.code) continue;
      }
      n += r.count;
    }
    return n;
  }

  reset(): void {
    this.rows.clear();
    this.detailed.clear();
  }
}
