import { UserError } from './user-error.js';

/** A new message (or a cancel) reached a session whose turn is waiting for approvals. */
export class ApprovalPendingError extends UserError {
  readonly code = 'approval_pending';
  readonly turnId: string;
  /** The ids of the approvals to resolve first. */
  readonly approvalIds: readonly string[];
  constructor({
    sessionId,
    turnId,
    approvalIds,
  }: { sessionId: string; turnId: string; approvalIds: readonly string[] }) {
    super({
      message: `Session '${sessionId}' is waiting for ${approvalIds.length === 1 ? 'an approval' : `${approvalIds.length} approvals`} (${approvalIds.join(', ')}); approve or reject first`,
    });
    this.turnId = turnId;
    this.approvalIds = approvalIds;
  }
}
