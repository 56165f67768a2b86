/**
 * The refusals of a key that is known but may not do what it asks: 403, on
 * every protocol (a session the key may not see is a 404 instead).
 *
 * @module
 */
import { UserError } from '@switchboard/core';
import type { KeyScope } from './principal.js';

/** The key lacks the scope the request needs (403 `insufficient_scope`, naming the scope). */
export class InsufficientScopeError extends UserError {
  readonly code = 'insufficient_scope';
  readonly scope: KeyScope;
  constructor({ scope }: { scope: KeyScope }) {
    super({ message: `This API key lacks the '${scope}' scope this request needs` });
    this.scope = scope;
  }
}

/** Why a caller may not decide an approval. */
export type ApprovalRefusal = 'self_approval' | 'not_an_approver';

/** The caller may not decide this approval (403 `approval_forbidden`, with the reason). */
export class ApprovalForbiddenError extends UserError {
  readonly code = 'approval_forbidden';
  readonly reason: ApprovalRefusal;
  constructor({ approvalId, reason }: { approvalId: string; reason: ApprovalRefusal }) {
    super({
      message:
        reason === 'self_approval'
          ? `Approval '${approvalId}' was asked for by this key's own user: another approver must decide it`
          : `This API key is not one of the approvers of approval '${approvalId}'`,
    });
    this.reason = reason;
  }
}
