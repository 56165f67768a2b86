import { UserError } from './user-error.js';

/** An approval that was already approved, rejected or expired was resolved again. */
export class ApprovalResolvedError extends UserError {
  readonly code = 'approval_resolved';
  readonly status: string;
  constructor({ approvalId, status }: { approvalId: string; status: string }) {
    super({ message: `Approval '${approvalId}' was already resolved (${status})` });
    this.status = status;
  }
}
