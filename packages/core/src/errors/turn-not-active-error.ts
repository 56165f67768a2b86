import { UserError } from './user-error.js';

/** A turn that is not running or paused (it has ended) was asked to stop. */
export class TurnNotActiveError extends UserError {
  readonly code = 'turn_not_active';
  constructor({ turnId, status }: { turnId: string; status: string }) {
    super({ message: `Turn '${turnId}' is not running (it is ${status})` });
  }
}
