import { UserError } from './user-error.js';

/** The session is busy with another turn and did not become free in time. */
export class SessionBusyError extends UserError {
  readonly code = 'session_busy';
  /**
   * @param options.waitedMs - how long the turn waited for the session.
   * @param options.leaseLost - the turn had the session but its lease expired and another turn took it.
   */
  constructor({ sessionId, waitedMs = 0, leaseLost = false }: SessionBusyErrorOptions) {
    super({
      message: leaseLost
        ? `Session '${sessionId}' was taken over by another turn after this turn's lease expired; nothing more of this turn was stored`
        : `Session '${sessionId}' is busy with another turn (waited ${waitedMs} ms); retry when it has finished`,
    });
  }
}

/** Options of {@link SessionBusyError}. */
export interface SessionBusyErrorOptions {
  sessionId: string;
  waitedMs?: number;
  leaseLost?: boolean;
}
