import type { LogLevel } from '@switchboard/runtime';
import { type Logger, pino } from 'pino';

/**
 * The server's logger: JSON lines on stdout for log collectors, or, when
 * stdout is a terminal, the same lines made readable by pino-pretty (loaded
 * only then). Written synchronously, so that the lines before an exit are
 * not lost.
 */
export async function createServerLogger(
  level: LogLevel,
  { pretty = process.stdout.isTTY === true }: { pretty?: boolean } = {},
): Promise<Logger> {
  if (!pretty) return pino({ level });
  const { default: pinoPretty } = await import('pino-pretty');
  return pino({ level }, pinoPretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l' }));
}
