// Structured JSON logs (pino). Fields follow Kubernetes' structured-logging habits: `node`,
// `reason`, `controller`, `err`.
import { pino, symbols, type Logger, type LevelWithSilent, type LoggerOptions } from 'pino';
import { findDuplicateJsonKey } from './util/json-text.js';

export type { Logger };

export const LOG_LEVELS: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Keys pino writes on every line of its own, besides `name` (which it writes as a binding). */
const PINO_KEYS = ['level', 'time'] as const;
/** Keys a binding may not take: pino's own and the message's. */
const LINE_KEYS: ReadonlySet<string> = new Set([...PINO_KEYS, 'msg']);

/** The keys each logger's bindings hold (its own and its parents'), recorded when it is made. */
const boundKeys = new WeakMap<object, ReadonlySet<string>>();

/**
 * Each key once per line. pino writes a child's bindings and then the call's fields as they come,
 * so a field a call repeats (`provider`, given by the child logger and again by the caller) was
 * written twice, and a log reader keeps one of them at random. A call's field that a binding (or
 * pino's own level, time, msg) already holds is dropped when its value is the same, and
 * written as `<key>.call` when it differs; a child that binds a key its parent already binds
 * replaces that binding, and a binding named like pino's own keys is written as `<key>.bound`.
 */
const onceEachKey: Pick<LoggerOptions, 'hooks' | 'onChild'> = {
  onChild(child) {
    const held = child as unknown as Record<symbol, string>;
    const chindings = held[symbols.chindingsSym] ?? '';
    const bindings = child.bindings();
    const lineKey = Object.keys(bindings).some((k) => LINE_KEYS.has(k));
    if (lineKey || (chindings !== '' && findDuplicateJsonKey(`{${chindings.slice(1)}}`))) {
      // JSON.parse keeps the last of two equal keys: the child's. A binding named like one of
      // pino's own keys is written as `<key>.bound`.
      const own: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(bindings)) own[LINE_KEYS.has(k) ? `${k}.bound` : k] = v;
      held[symbols.chindingsSym] = `,${JSON.stringify(own).slice(1, -1)}`;
    }
    boundKeys.set(child, new Set(Object.keys(child.bindings())));
  },
  hooks: {
    logMethod(args, method) {
      const fields = args[0] as unknown;
      if (typeof fields !== 'object' || fields === null || fields instanceof Error) return method.apply(this, args);
      const bound = boundKeys.get(this);
      const withMessage = typeof args[1] === 'string';
      let clash = false;
      for (const key of Object.keys(fields)) {
        if (bound?.has(key) || (PINO_KEYS as readonly string[]).includes(key) || (withMessage && key === 'msg')) {
          clash = true;
          break;
        }
      }
      if (!clash) return method.apply(this, args);
      const bindings = bound ? this.bindings() : {};
      const own: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(fields)) {
        const taken = Object.prototype.hasOwnProperty.call(bindings, key) || (PINO_KEYS as readonly string[]).includes(key) || (withMessage && key === 'msg');
        if (!taken) own[key] = value;
        else if (!Object.prototype.hasOwnProperty.call(bindings, key) || JSON.stringify(bindings[key]) !== JSON.stringify(value)) own[`${key}.call`] = value;
      }
      return method.apply(this, [own, ...args.slice(1)] as unknown as Parameters<typeof method>);
    },
  },
};

export function createLogger(options: { level?: string; name?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const level = options.level ?? 'info';
  if (!LOG_LEVELS.includes(level as LevelWithSilent)) {
    throw new Error(`--log-level: unknown level "${level}" (known: ${LOG_LEVELS.join(', ')})`);
  }
  const opts = { level, name: options.name ?? 'node-address-ccm', base: undefined, ...onceEachKey };
  const root = options.destination ? pino(opts, options.destination) : pino(opts);
  // The root's own binding: its name.
  boundKeys.set(root, new Set(Object.keys(root.bindings())));
  return root;
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
