import { SwitchboardError } from '@switchboard/core';
import type { Logger } from './logger.js';

/** Which turn failed, and for whom. */
export interface FailedTurn {
  sessionId?: string;
  turnId?: string;
  requestId?: string;
  tenantId?: string;
  traceId?: string;
  orchestrator?: string;
}

/**
 * Logs one line for a failed turn: its error code and the whole error (its
 * message, stack and causes), which clients never see. User errors (a
 * refused request) are warnings, anything else an error.
 */
export function logTurnFailure(logger: Logger | undefined, error: unknown, turn: FailedTurn): void {
  if (!logger) return;
  const known = SwitchboardError.isInstance(error) ? (error as SwitchboardError) : undefined;
  const fields = { ...turn, code: known?.code ?? 'internal_error', err: error };
  if (known?.kind === 'user') logger.warn(fields, 'turn failed');
  else logger.error(fields, 'turn failed');
}

/** The fields of {@link FailedTurn} for a turn of the engine. */
export function failedTurn(
  turn: {
    sessionId: string;
    turnId: string;
    traceId?: string;
    runtime: { requestContext: { requestId?: string; tenantId?: string } };
  },
  orchestrator: string,
): FailedTurn {
  const { requestId, tenantId } = turn.runtime.requestContext;
  return {
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    requestId,
    tenantId,
    traceId: turn.traceId,
    orchestrator,
  };
}
