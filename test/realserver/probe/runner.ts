// Runs the probe (steps.ts) against one target and records what it answered to each step. The
// same steps, in the same order, against the double and against the real kube-apiserver; the
// comparer (compare.ts) then holds the two recordings side by side.
//
// A step may refer to what an earlier step answered on the same target: a string "$(step:path)"
// is replaced by that value (the whole string, keeping the value's type), and "$(step:path)"
// inside a longer string by its text. `path` is dotted into the step's record: body.metadata.uid,
// body.items.0.metadata.name, events.1.object.metadata.resourceVersion.
import { openWatch, send, type Credentials, type Endpoint } from './http.js';

/** Who sends a request: the admin (system:masters), a ServiceAccount bound to nothing, or a token no server knows. */
export type ProbeUser = 'admin' | 'nobody' | 'bogus';

export interface RequestStep {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  /** Default for a body: application/json. */
  contentType?: string;
  /** Default: application/json. */
  accept?: string;
  user?: ProbeUser;
  /** Globs over recorded paths (compare.ts) whose values are compared only for presence. */
  mask?: string[];
  /** Compare metadata.managedFields too (elsewhere dropped: the double keeps none, see docs). */
  managedFields?: boolean;
}

export interface WatchStep {
  name: string;
  watch: string;
  accept?: string;
  user?: ProbeUser;
  /** Requests made once the watch is open; each is recorded as a step of its own. */
  during?: RequestStep[];
  /** Stop after this many events (BOOKMARKs count only when `bookmarks` is set). */
  events?: number;
  /** Stop once a BOOKMARK carrying the k8s.io/initial-events-end annotation arrived. */
  untilInitialEventsEnd?: boolean;
  /** Keep BOOKMARK events in the record (they come on the servers' own timers otherwise). */
  bookmarks?: boolean;
  /** How long to wait for the events (default 10 s); a watch that ends earlier is recorded as ended. */
  timeoutMs?: number;
  mask?: string[];
}

/** Something done to the target that is no HTTP request of a client. */
export interface ActionStep {
  name: string;
  /**
   * compact: every resourceVersion older than now becomes too old to watch from or continue a list
   * at (the real server: etcd compaction to its current revision; the double: compactHistory()).
   */
  action: 'compact';
}

export type ProbeStep = RequestStep | WatchStep | ActionStep;

export interface ProbeRecord {
  step: string;
  code?: number;
  /** The answer's JSON body (its text when not JSON). */
  body?: unknown;
  /** Warning headers, the only headers compared. */
  warnings?: string[];
  /** What a watch delivered, in order. */
  events?: unknown[];
  /** How a watch ended: all events wanted arrived, the server ended the stream, or the wait timed out. */
  ended?: 'matched' | 'ended' | 'timeout';
}

export interface ProbeTarget {
  name: string;
  endpoint: Endpoint;
  users: Record<ProbeUser, Credentials>;
  compact(): Promise<void>;
}

const REF = /\$\(([^:)]+):([^)]+)\)/g;
const WHOLE_REF = /^\$\(([^:)]+):([^)]+)\)$/;

function lookup(records: Map<string, ProbeRecord>, step: string, path: string): unknown {
  const rec = records.get(step);
  if (!rec) throw new Error(`probe: reference to step "${step}", which has not run (yet)`);
  let v: unknown = rec;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') throw new Error(`probe: $(${step}:${path}): nothing at "${part}"`);
    v = (v as Record<string, unknown>)[part];
  }
  if (v === undefined) throw new Error(`probe: $(${step}:${path}) is undefined; the step answered ${JSON.stringify(rec).slice(0, 400)}`);
  return v;
}

/** Replaces $(step:path) references in a step's path or body with what the target answered before. */
export function resolve(value: unknown, records: Map<string, ProbeRecord>): unknown {
  if (typeof value === 'string') {
    const whole = value.match(WHOLE_REF);
    if (whole) return lookup(records, whole[1], whole[2]);
    return value.replace(REF, (_m, step: string, path: string) => String(lookup(records, step, path)));
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, records));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, records)]));
  return value;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function warningsOf(h: string | string[] | undefined): string[] | undefined {
  if (h === undefined) return undefined;
  return Array.isArray(h) ? h : [h];
}

function isInitialEventsEnd(e: unknown): boolean {
  const ev = e as { type?: string; object?: { metadata?: { annotations?: Record<string, string> } } };
  return ev.type === 'BOOKMARK' && ev.object?.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true';
}

function isBookmark(e: unknown): boolean {
  return (e as { type?: string }).type === 'BOOKMARK';
}

async function runRequest(target: ProbeTarget, step: RequestStep, records: Map<string, ProbeRecord>): Promise<ProbeRecord> {
  const path = resolve(step.path, records) as string;
  const body = step.body === undefined ? undefined : resolve(step.body, records);
  const headers: Record<string, string> = { Accept: step.accept ?? 'application/json' };
  if (body !== undefined) headers['Content-Type'] = step.contentType ?? 'application/json';
  const answer = await send(target.endpoint, target.users[step.user ?? 'admin'], {
    method: step.method,
    path,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const rec: ProbeRecord = { step: step.name, code: answer.code, body: parse(answer.text) };
  const warnings = warningsOf(answer.headers.warning);
  if (warnings) rec.warnings = warnings;
  return rec;
}

async function runWatch(target: ProbeTarget, step: WatchStep, records: Map<string, ProbeRecord>, out: ProbeRecord[]): Promise<ProbeRecord> {
  const path = resolve(step.watch, records) as string;
  const w = await openWatch(target.endpoint, target.users[step.user ?? 'admin'], { method: 'GET', path, headers: { Accept: step.accept ?? 'application/json' } });
  try {
    if (w.code !== 200) {
      await w.until(() => false, step.timeoutMs ?? 10_000);
      return { step: step.name, code: w.code, body: parse(w.text()) };
    }
    for (const d of step.during ?? []) {
      const rec = await runRequest(target, d, records);
      records.set(rec.step, rec);
      out.push(rec);
    }
    const counted = (events: unknown[]): number => (step.bookmarks ? events.length : events.filter((e) => !isBookmark(e)).length);
    const ended = await w.until((events) => (step.untilInitialEventsEnd ? events.some(isInitialEventsEnd) : counted(events) >= (step.events ?? Infinity)), step.timeoutMs ?? 10_000);
    // Only the events waited for: more may arrive while the stream is being closed.
    const events = (step.bookmarks ? [...w.events] : w.events.filter((e) => !isBookmark(e))).slice(0, step.events ?? Infinity);
    return { step: step.name, code: w.code, events, ended };
  } finally {
    w.close();
  }
}

/** Runs every step in order against the target; the records in the order their steps ran. */
export async function runProbe(target: ProbeTarget, steps: readonly ProbeStep[]): Promise<ProbeRecord[]> {
  const records = new Map<string, ProbeRecord>();
  const out: ProbeRecord[] = [];
  const names = new Set<string>();
  for (const s of steps) {
    for (const n of [s.name, ...('watch' in s ? (s.during ?? []).map((d) => d.name) : [])]) {
      if (names.has(n)) throw new Error(`probe: two steps are named "${n}"`);
      names.add(n);
    }
  }
  for (const step of steps) {
    let rec: ProbeRecord;
    try {
      if ('action' in step) {
        await target.compact();
        rec = { step: step.name };
      } else if ('watch' in step) rec = await runWatch(target, step, records, out);
      else rec = await runRequest(target, step, records);
    } catch (err) {
      throw new Error(`probe step "${step.name}" on ${target.name}: ${(err as Error).message}`, { cause: err });
    }
    records.set(rec.step, rec);
    out.push(rec);
  }
  return out;
}
