import { SystemError } from './system-error.js';

/** A turn whose replica stopped mid-turn was closed by the next request (the app's `recovery: 'fail'`). */
export class TurnAbandonedError extends SystemError {
  readonly code = 'turn_abandoned';
  constructor({ turnId }: { turnId: string }) {
    super({ message: `Turn '${turnId}' stopped with its replica and was closed instead of resumed` });
  }
}
