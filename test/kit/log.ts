// A logger whose lines the test reads back: what a process said, as parsed JSON objects.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.js';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLog {
  logger: Logger;
  lines: LogLine[];
  /** The lines whose message is `msg` (or starts with it, for a prefix ending in '…'). */
  find(msg: string): LogLine[];
}

export function captureLog(level = 'info'): CapturedLog {
  const lines: LogLine[] = [];
  const logger = createLogger({ level, destination: new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk)) as LogLine); done(); } }) });
  const find = (msg: string): LogLine[] => msg.endsWith('…') ? lines.filter((l) => l.msg.startsWith(msg.slice(0, -1))) : lines.filter((l) => l.msg === msg);
  return { logger, lines, find };
}
