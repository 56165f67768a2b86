import { SystemError } from './system-error.js';

/** What became of a request's writes when its store failed (see {@link StoreUnavailableError.outcome}). */
export type StoreOutcome = 'unknown' | 'not_stored';

/** A store (Redis, …) could not be reached, did not answer in time, or refused a write. */
export class StoreUnavailableError extends SystemError {
  readonly code = 'store_unavailable';
  /**
   * What became of the request's writes. `unknown` when a turn had already
   * sent a write that may have been stored (its reply was lost): retry with
   * the same `Idempotency-Key` to get the turn's result without running it
   * twice. `not_stored` when the failed command never reached Redis (the
   * connection was down) or Redis refused it before it wrote anything (out
   * of memory, a read-only replica): sending it again is safe. Undefined
   * when the store cannot tell.
   */
  readonly outcome?: StoreOutcome;
  /** The turn that was running, when there was one. */
  readonly turnId?: string;
  constructor({
    message = 'The session store is unavailable',
    cause,
    outcome,
    turnId,
  }: { message?: string; cause?: unknown; outcome?: StoreOutcome; turnId?: string }) {
    super({ message, cause });
    if (outcome) this.outcome = outcome;
    if (turnId) this.turnId = turnId;
  }
}
