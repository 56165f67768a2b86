import { ConfigurationError } from '@switchboard/core';

/** What Node attaches to a failed `listen()`. */
interface ListenError {
  code?: string;
  syscall?: string;
  address?: string;
  port?: number;
}

function isListenError(error: unknown): error is ListenError {
  return typeof error === 'object' && error !== null && (error as ListenError).syscall === 'listen';
}

/**
 * Why the server could not start, in one line, when the reason is one an
 * operator fixes (the configuration, the port): undefined for anything else,
 * which is a bug and deserves its stack trace.
 *
 * @example
 * ```ts
 * startupFailure(Object.assign(new Error('listen EADDRINUSE'), { syscall: 'listen', code: 'EADDRINUSE', address: '127.0.0.1', port: 3000 }));
 * // 'port 3000 on 127.0.0.1 is already in use'
 * ```
 */
export function startupFailure(error: unknown): string | undefined {
  if (ConfigurationError.isInstance(error)) return (error as Error).message.replace(/\s*\n\s*/g, '; ');
  if (!isListenError(error)) return undefined;
  const where = `port ${error.port} on ${error.address}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return `${where} is already in use`;
    case 'EACCES':
      return `no permission to listen on ${where} (ports below 1024 need privileges)`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${where}: HOST is not an address of this machine`;
    default:
      return `cannot listen on ${where} (${error.code})`;
  }
}

/**
 * Ends a start-up that failed: `switchboard: <reason>` on stderr and exit
 * code 1; an unexpected error (a bug) is printed with its stack.
 */
export function exitOnStartupFailure(error: unknown): never {
  const reason = startupFailure(error);
  if (reason) console.error(`switchboard: ${reason}`);
  else console.error('switchboard: could not start:', error);
  process.exit(1);
}
