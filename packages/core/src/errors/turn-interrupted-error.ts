import { SystemError } from './system-error.js';

/** Why a running turn was stopped: a cancel request, or a new message with the `interrupt` policy. */
export class TurnInterruptedError extends SystemError {
  readonly code = 'turn_interrupted';
  constructor({ turnId, reason }: { turnId: string; reason: string }) {
    super({ message: `Turn '${turnId}' was interrupted: ${reason}` });
  }
}
