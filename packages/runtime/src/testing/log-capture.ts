import { pino } from 'pino';
import type { Logger, LogLevel } from '../logging/logger.js';

/** One parsed log line: pino's `level`, `time` and `msg`, and the line's own fields. */
export interface LogRecord {
  level: number;
  time: number;
  msg: string;
  [field: string]: unknown;
}

/** A logger whose lines are kept in memory. */
export interface LogCapture {
  /** A real pino logger (so its serializers run): pass it as the app's `logger`. */
  logger: Logger;
  /** Every line as written, unparsed: what a log collector would receive. */
  readonly lines: readonly string[];
  /** Every line parsed as JSON; throws if one is not. */
  records(): LogRecord[];
  /** The parsed lines with this `msg`. */
  withMessage(message: string): LogRecord[];
}

/**
 * A pino logger writing to an array instead of stdout, for tests that check
 * what an app logs.
 *
 * @example
 * ```ts
 * const logs = captureLogs();
 * const app = new App({ name: 'test', agents, logger: logs.logger });
 * await app.request('/v1/chat', { method: 'POST', body: '{"message":"hi"}', headers: { 'content-type': 'application/json' } });
 * expect(logs.withMessage('request completed')[0]).toMatchObject({ route: '/v1/chat', status: 200 });
 * ```
 */
export function captureLogs({ level = 'debug' }: { level?: LogLevel } = {}): LogCapture {
  const lines: string[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(line) });
  const records = () => lines.map((line) => JSON.parse(line) as LogRecord);
  return {
    logger,
    lines,
    records,
    withMessage: (message) => records().filter((record) => record.msg === message),
  };
}
