// The webhook protocol's two documents (schema.ts): the request for a batch of nodes, and the
// reading of an answer. A document that is not JSON, or whose envelope is not v1's (apiVersion,
// kind, a `nodes` object), is refused whole: the batch fails and is asked again (in halves, by the
// controllers). Otherwise each node's entry is checked on its own: an entry that does not conform,
// or whose content the controllers could not use (an IP that is not one, a CIDR with host bits),
// is refused field by field and costs that node alone its answer. Pure.
import { checkMetadata } from '../answers.js';
import type { InstanceMetadata, NodeRef } from '../types.js';
import { REQUEST_SCHEMA, RESPONSE_SCHEMA, WEBHOOK_API_VERSION } from './schema.js';
import { compileSchema, fieldPath, type Validator } from './validate.js';

/** At most this many problems are named; the rest are counted. */
const MAX_PROBLEMS = 5;

export interface InstancesRequest {
  apiVersion: typeof WEBHOOK_API_VERSION;
  kind: 'InstancesRequest';
  nodes: { name: string; providerID?: string; labels?: Record<string, string> }[];
}

/** One node's answer, read. */
export type WebhookOutcome =
  | { kind: 'found'; metadata: InstanceMetadata; shutdown: boolean }
  | { kind: 'notFound'; reason?: string }
  | { kind: 'error'; message: string }
  /** The node's entry failed its checks (named field by field): that node waits, no other. */
  | { kind: 'refused'; problems: string[] };

export type ReadAnswer =
  | { ok: true; outcomes: Map<string, WebhookOutcome>; notes: string[] }
  /** Not JSON, or not a v1 answer: nothing in it is used. */
  | { ok: false; problems: string[] };

let requestValidator: Validator | undefined;
let responseValidator: Validator | undefined;
let envelopeValidator: Validator | undefined;
let outcomeValidator: Validator | undefined;

/** The answer's envelope alone: what must hold before any node's entry is read. */
const ENVELOPE_SCHEMA = {
  type: 'object',
  required: RESPONSE_SCHEMA.required,
  additionalProperties: false,
  properties: { apiVersion: RESPONSE_SCHEMA.properties.apiVersion, kind: RESPONSE_SCHEMA.properties.kind, nodes: { type: 'object' } },
} as const;

/** One node's entry, as the response schema defines it. */
const OUTCOME_SCHEMA = { definitions: RESPONSE_SCHEMA.definitions, $ref: '#/definitions/outcome' } as const;

export function buildRequest(nodes: readonly NodeRef[]): InstancesRequest {
  return {
    apiVersion: WEBHOOK_API_VERSION,
    kind: 'InstancesRequest',
    nodes: nodes.map((n) => ({
      name: n.name,
      ...(n.providerID ? { providerID: n.providerID } : {}),
      ...(n.labels && Object.keys(n.labels).length > 0 ? { labels: n.labels } : {}),
    })),
  };
}

/** The problems of a request document (what a webhook server checks; the tests check ours). */
export function requestProblems(doc: unknown): string[] {
  requestValidator ??= compileSchema(REQUEST_SCHEMA);
  return requestValidator(doc);
}

/** The problems of an answer document against the schema alone. */
export function responseProblems(doc: unknown): string[] {
  responseValidator ??= compileSchema(RESPONSE_SCHEMA);
  return responseValidator(doc);
}

function limited(problems: string[]): string[] {
  return problems.length <= MAX_PROBLEMS ? problems : [...problems.slice(0, MAX_PROBLEMS), `and ${problems.length - MAX_PROBLEMS} more`];
}

interface FoundDoc { shutdown?: boolean; [k: string]: unknown }
type OutcomeDoc = { found: FoundDoc } | { notFound: { reason?: string } } | { error: { message: string } };

/** Reads the body of a 2xx answer. Which nodes are answered is the caller's to check. */
export function readAnswer(body: string): ReadAnswer {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (err) {
    return { ok: false, problems: [`not JSON: ${(err as Error).message}`] };
  }
  envelopeValidator ??= compileSchema(ENVELOPE_SCHEMA);
  const envelopeProblems = envelopeValidator(doc);
  if (envelopeProblems.length > 0) return { ok: false, problems: limited(envelopeProblems) };
  outcomeValidator ??= compileSchema(OUTCOME_SCHEMA);
  const outcomes = new Map<string, WebhookOutcome>();
  const notes: string[] = [];
  for (const [name, entry] of Object.entries((doc as { nodes: Record<string, unknown> }).nodes)) {
    const at = `/nodes/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const problems = outcomeValidator(entry, at);
    if (problems.length > 0) {
      outcomes.set(name, { kind: 'refused', problems: limited(problems) });
      continue;
    }
    const outcome = entry as OutcomeDoc;
    if ('found' in outcome) {
      const { shutdown, ...value } = outcome.found;
      // Notes (a dropped label) count only for an entry that is used.
      const own: string[] = [];
      try {
        outcomes.set(name, { kind: 'found', metadata: checkMetadata(value, name, own), shutdown: shutdown ?? false });
        notes.push(...own);
      } catch (err) {
        outcomes.set(name, { kind: 'refused', problems: [`${fieldPath(`${at}/found`)}.${(err as Error).message}`] });
      }
    } else if ('notFound' in outcome) {
      outcomes.set(name, outcome.notFound.reason !== undefined ? { kind: 'notFound', reason: outcome.notFound.reason } : { kind: 'notFound' });
    } else {
      outcomes.set(name, { kind: 'error', message: outcome.error.message });
    }
  }
  return { ok: true, outcomes, notes };
}
