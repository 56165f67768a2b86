import { UserError } from './user-error.js';

/** An approval was resolved after its expiry: it counts as rejected (reason `expired`) and the turn went on without it. */
export class ApprovalExpiredError extends UserError {
  readonly code = 'approval_expired';
  constructor({ approvalId, expiresAt }: { approvalId: string; expiresAt: string }) {
    super({
      message: `Approval '${approvalId}' expired at ${expiresAt}; it counts as rejected and the turn continued without it`,
    });
  }
}
