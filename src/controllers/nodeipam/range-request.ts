// Whether CloudAllocator may ask the cloud for a node's pod ranges, decided from the durable record
// on the Node (CLOUD_RANGE_REQUEST_ANNOTATION) and what this process itself did. The call (AWS
// AssignIpv6Addresses) is not idempotent, so the rule is: a process calls only for a record it
// wrote itself with a guarded PATCH, and only once; every other record means "asked already" and
// is resolved by reading the cloud, except one that says the cloud refused the call for throttling
// (nothing was done: a fresh record may be written and the call made again). Pure.
import type { PodCIDRRequest } from '../../../providers/types.js';
import { CLOUD_RANGE_REQUEST_ANNOTATION } from '../../model/node.js';

/**
 * What happened to a request: `asking`, the record is written and the call made or about to be
 * (or its maker died); `done`, the cloud said it did it; `unknown`, no answer says either way;
 * `throttled`, the cloud did nothing for throttling; `refused`, the cloud did nothing and asking
 * again would not help (a limit, no permission).
 */
export type RangeRequestState = 'asking' | 'done' | 'unknown' | 'throttled' | 'refused';
const STATES: readonly RangeRequestState[] = ['asking', 'done', 'unknown', 'throttled', 'refused'];

export interface RangeRequestRecord {
  /** The cloud object asked (an EC2 network interface ID). */
  target: string;
  what: string;
  /** Unique per record: who may make the call is whoever wrote this id. */
  id: string;
  /** The identity of the process that wrote it. */
  by: string;
  /** When it was written (RFC 3339). */
  at: string;
  state: RangeRequestState;
  /** The cloud's answer or error, in words. */
  detail?: string;
  /** Calls made for this node so far, this one included (only throttled calls are made again). */
  attempt: number;
}

export function formatRangeRequest(r: RangeRequestRecord): string {
  return JSON.stringify(r);
}

/** The record in an annotation value; an error string when it is not one this controller writes. */
export function parseRangeRequest(value: string): RangeRequestRecord | string {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return 'not JSON';
  }
  const r = v as Partial<RangeRequestRecord> | null;
  if (r === null || typeof r !== 'object' || Array.isArray(r)) return 'not a JSON object';
  for (const k of ['target', 'what', 'id', 'by', 'at'] as const) if (typeof r[k] !== 'string' || r[k] === '') return `field ${k} missing`;
  if (!STATES.includes(r.state as RangeRequestState)) return `field state: ${JSON.stringify(r.state)} is not one of ${STATES.join(', ')}`;
  if (!Number.isInteger(r.attempt) || (r.attempt as number) < 1) return `field attempt: ${JSON.stringify(r.attempt)} is not a positive integer`;
  return r as RangeRequestRecord;
}

/** What this process did for a node during its term. */
export interface OwnRequest {
  /**
   * Ids of the records this process wrote (or tried to: a write whose answer was lost may land
   * after a second one was tried).
   */
  written: ReadonlySet<string>;
  /** Ids of the records it made the call for. */
  called: ReadonlySet<string>;
}

export type RangeRequestStep =
  /** No record that forbids it: write a fresh record (guarded), then call. */
  | { kind: 'record'; attempt: number }
  /** The record is this process's own and its call not made yet: call now. */
  | { kind: 'call'; record: RangeRequestRecord }
  /** Never call: the node waits for the cloud to show the ranges, or for an operator. */
  | { kind: 'wait'; message: string };

export interface RangeRequestInput {
  request: PodCIDRRequest;
  /** The annotation's value on the node, if any. */
  annotation: string | undefined;
  own: OwnRequest | undefined;
}

const howToRetry = `remove the annotation ${CLOUD_RANGE_REQUEST_ANNOTATION} to let the controller ask once more, or assign the prefix yourself`;

export function decideRangeRequest({ request, annotation, own }: RangeRequestInput): RangeRequestStep {
  if (annotation === undefined) return { kind: 'record', attempt: 1 };
  const r = parseRangeRequest(annotation);
  if (typeof r === 'string') {
    return { kind: 'wait', message: `the annotation ${CLOUD_RANGE_REQUEST_ANNOTATION} is not a request record (${r}): not asking the cloud for ${request.what} on ${request.target} while it is there; ${howToRetry}` };
  }
  if (r.target !== request.target) {
    return { kind: 'wait', message: `the annotation ${CLOUD_RANGE_REQUEST_ANNOTATION} records a request for ${r.target}, but the ranges are now wanted on ${request.target}: not asking; ${howToRetry}` };
  }
  if (r.state === 'throttled') return { kind: 'record', attempt: r.attempt + 1 };
  if (r.state === 'asking' && own?.written.has(r.id) && !own.called.has(r.id)) return { kind: 'call', record: r };
  const asked = `asked the cloud for ${r.what} on ${r.target} at ${r.at} (${r.by}, attempt ${r.attempt})`;
  if (r.state === 'refused') return { kind: 'wait', message: `${asked}: refused${r.detail ? `: ${r.detail}` : ''}; not asking again: fix the cause, then ${howToRetry}` };
  const outcome = r.state === 'done' ? `done${r.detail ? `: ${r.detail}` : ''}` : r.state === 'unknown' ? `outcome unknown${r.detail ? ` (${r.detail})` : ''}` : 'no outcome recorded';
  return {
    kind: 'wait',
    message: `${asked}, ${outcome}; waiting for the cloud to show it, never asking again (the call is not idempotent); if it never shows, ${howToRetry}`,
  };
}
