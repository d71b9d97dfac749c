// The webhook protocol's two documents (schema.ts): the request for a batch of nodes, and the
// reading of an answer. An answer that does not conform, or whose content the controllers could
// not use (an IP that is not one, a CIDR with host bits), is refused whole, field by field: the
// batch fails and is asked again, and no node's addresses come from it. Pure.
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
  | { kind: 'error'; message: string };

export type ReadAnswer =
  | { ok: true; outcomes: Map<string, WebhookOutcome>; notes: string[] }
  | { ok: false; problems: string[] };

let requestValidator: Validator | undefined;
let responseValidator: Validator | undefined;

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

/** Reads the body of a 2xx answer. `asked` only names the nodes; which are answered is the caller's to check. */
export function readAnswer(body: string): ReadAnswer {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (err) {
    return { ok: false, problems: [`not JSON: ${(err as Error).message}`] };
  }
  const schemaProblems = responseProblems(doc);
  if (schemaProblems.length > 0) return { ok: false, problems: limited(schemaProblems) };
  const outcomes = new Map<string, WebhookOutcome>();
  const notes: string[] = [];
  const problems: string[] = [];
  for (const [name, outcome] of Object.entries((doc as { nodes: Record<string, OutcomeDoc> }).nodes)) {
    if ('found' in outcome) {
      const { shutdown, ...value } = outcome.found;
      try {
        outcomes.set(name, { kind: 'found', metadata: checkMetadata(value, name, notes), shutdown: shutdown ?? false });
      } catch (err) {
        problems.push(`${fieldPath(`/nodes/${name.replace(/~/g, '~0').replace(/\//g, '~1')}/found`)}.${(err as Error).message}`);
      }
    } else if ('notFound' in outcome) {
      outcomes.set(name, outcome.notFound.reason !== undefined ? { kind: 'notFound', reason: outcome.notFound.reason } : { kind: 'notFound' });
    } else {
      outcomes.set(name, { kind: 'error', message: outcome.error.message });
    }
  }
  if (problems.length > 0) return { ok: false, problems: limited(problems) };
  return { ok: true, outcomes, notes };
}
