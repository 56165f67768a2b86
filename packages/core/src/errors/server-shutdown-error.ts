import { SystemError } from './system-error.js';

/**
 * The server is shutting down and its grace period for running turns is
 * over: the reason of `RequestContext.signal` (and of an agent's
 * `ctx.signal`) when the turn is abandoned.
 */
export class ServerShutdownError extends SystemError {
  readonly code = 'server_shutdown';
  constructor() {
    super({ message: 'The server shut down before the turn finished' });
  }
}
