import { pino } from 'pino';

/** How much to log, most severe first; `silent` logs nothing. The levels of pino. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Writes one line: its fields (an error goes in `err`) and a message, as pino's methods do. */
export interface LogMethod {
  (fields: object, message?: string): void;
  (message: string): void;
}

/**
 * What Switchboard logs through: a pino logger, or any object with the same
 * methods. Each line is fields plus a message; an error travels in the `err`
 * field, so that pino's serializer writes its type, message, stack and causes.
 *
 * @example
 * ```ts
 * import { pino } from 'pino';
 * const app = new App({ name: 'desk', agents, logger: pino({ level: 'debug' }).child({ service: 'desk' }) });
 * ```
 */
export interface Logger {
  error: LogMethod;
  warn: LogMethod;
  info: LogMethod;
  debug: LogMethod;
  /** False when lines of `level` are dropped, so that they need not be built (pino has it). */
  isLevelEnabled?(level: LogLevel): boolean;
  /** A logger that adds `bindings` to every line. */
  child(bindings: Record<string, unknown>): Logger;
}

/**
 * The `logger` option before it took a {@link Logger}: a function given each unexpected error.
 *
 * @deprecated Pass a pino logger (or any {@link Logger}) instead; a function is accepted until the next release.
 */
export type ErrorCallback = (error: unknown) => void;

const ignore = () => {};

/**
 * A {@link Logger} over the deprecated error callback: the callback gets the
 * `err` of every error line, as it used to get each unexpected error (and now
 * each failed turn's error too); every other line is dropped.
 */
function errorCallbackLogger(callback: ErrorCallback): Logger {
  const logger: Logger = {
    error(fields: object | string) {
      if (typeof fields === 'object' && fields !== null && 'err' in fields) callback(fields.err);
    },
    warn: ignore,
    info: ignore,
    debug: ignore,
    isLevelEnabled: (level) => level === 'error' || level === 'fatal',
    child: () => logger,
  };
  return logger;
}

/**
 * The logger an app logs through: the one given, a wrapped error callback
 * (deprecated), or by default a pino logger at `level` writing JSON lines to
 * stdout. Built when the app is, never on import.
 */
export function resolveLogger(logger: Logger | ErrorCallback | undefined, level: LogLevel = 'info'): Logger {
  if (logger === undefined) return pino({ level });
  if (typeof logger === 'function') return errorCallbackLogger(logger);
  return logger;
}
