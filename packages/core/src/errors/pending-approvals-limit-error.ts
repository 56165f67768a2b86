import { UserError } from './user-error.js';

/**
 * A new turn was refused because its tenant (or, without auth, the server)
 * already has the most sessions waiting for approval that it may keep
 * (`maxPendingApprovalsPerTenant` of the in-memory session store): a waiting
 * session cannot be forgotten to make room, so more would grow memory without
 * bound. Decide (or cancel) some first; expired approvals free their place.
 */
export class PendingApprovalsLimitError extends UserError {
  readonly code = 'too_many_pending_approvals';
  readonly limit: number;
  constructor({ limit }: { limit: number }) {
    super({
      message: `${limit} sessions are already waiting for approval, the most allowed; approve, reject or cancel some before starting new turns`,
    });
    this.limit = limit;
  }
}
