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
