// Structured JSON logs (pino). Fields follow Kubernetes' structured-logging habits: `node`,
// `reason`, `controller`, `err`.
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export const LOG_LEVELS: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function createLogger(options: { level?: string; name?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const level = options.level ?? 'info';
  if (!LOG_LEVELS.includes(level as LevelWithSilent)) {
    throw new Error(`--log-level: unknown level "${level}" (known: ${LOG_LEVELS.join(', ')})`);
  }
  const opts = { level, name: options.name ?? 'node-address-ccm', base: undefined };
  return options.destination ? pino(opts, options.destination) : pino(opts);
}

/** A logger that discards everything, for tests and library callers that pass none. */
export const silentLogger: Logger = pino({ level: 'silent' });

/**
 * Warnings that can hit every node at once (a cloud outage, annotations no cloud address
 * satisfies, overlapping pod CIDRs after a bad migration), gathered over one pass and logged as
 * one line per reason with a count and the first few examples, instead of a line per node: a
 * replica whose stdout drains slowly must not miss its lease renewals over a flood of lines.
 * Events stay per node; only the log is summed up.
 */
export class WarningSummary {
  readonly #byReason = new Map<string, { count: number; examples: Array<Record<string, unknown>> }>();
  readonly #examples: number;

  constructor(examples = 3) {
    this.#examples = examples;
  }

  /** One occurrence of `reason`; `example` (node, message, …) is kept for the first few. */
  add(reason: string, example: Record<string, unknown>): void {
    let entry = this.#byReason.get(reason);
    if (!entry) this.#byReason.set(reason, (entry = { count: 0, examples: [] }));
    entry.count++;
    if (entry.examples.length < this.#examples) entry.examples.push(example);
  }

  get size(): number {
    return this.#byReason.size;
  }

  /**
   * Logs what was gathered and starts over: an occurrence that is alone under its reason as it
   * came (its example's fields and `message`), more as one line with the count, the first
   * examples and `hint`.
   */
  flush(log: Logger, summary: (reason: string, count: number) => string, hint?: (reason: string) => string | undefined): void {
    for (const [reason, { count, examples }] of this.#byReason) {
      if (count === 1) {
        const { message, ...fields } = examples[0] as { message?: unknown };
        log.warn({ reason, ...fields }, typeof message === 'string' ? message : summary(reason, 1));
      } else {
        const h = hint?.(reason);
        log.warn({ reason, count, examples, ...(h !== undefined ? { hint: h } : {}) }, summary(reason, count));
      }
    }
    this.#byReason.clear();
  }
}
