/**
 * Who may decide an approval, when the app has API keys: the app's
 * `approvers` policy, applied the same way to `POST
 * /v1/sessions/:id/approvals/:approvalId`, A2A `input-required` answers and
 * the console's buttons (which call that route).
 *
 * @module
 */
import type { ApprovalRecord } from '../turns/turn-record.js';
import { ApprovalForbiddenError, InsufficientScopeError } from './access-errors.js';
import { hasScope, type KeyScope, type Principal } from './principal.js';

/** Who decides, as an {@link ApproverRule} sees them. */
export interface ApprovalCaller {
  /** The deciding key. */
  principal: Principal;
  /** The user whose turn asked for the approval (the turn's `userId`), when known. */
  requester: string | undefined;
}

/**
 * One way of saying who may decide: keys holding a scope, keys bound to one
 * of a list of users, or a predicate over the approval and the caller.
 */
export type ApproverRule =
  | { scope: KeyScope }
  | { users: readonly string[] }
  | ((approval: ApprovalRecord, caller: ApprovalCaller) => boolean | Promise<boolean>);

/**
 * The app's approvers policy (`AppOptions.approvers`). Without it, keys
 * with the `approvals:decide` scope decide (tenant-wide keys have it by
 * default), and a key bound to a user never decides what its own user's
 * turn asked for.
 *
 * @example
 * ```ts
 * new App({ name: 'shop', agents, auth, approvers: { rule: { users: ['lead'] }, agents: { refund: { users: ['finance'] } } } });
 * ```
 */
export interface ApproversPolicy {
  /** Who may decide any approval (default `{ scope: 'approvals:decide' }`). */
  rule?: ApproverRule;
  /** Per agent: who may decide the approvals of that agent's calls, instead of `rule`. */
  agents?: Readonly<Record<string, ApproverRule>>;
  /** Lets a user-bound key decide what its own user's turn asked for (default false: separation of duties). */
  allowSelfApproval?: boolean;
}

const DEFAULT_RULE: ApproverRule = { scope: 'approvals:decide' };

/**
 * Throws unless `principal` may decide `approval` of a turn started by
 * `requester`: 403 `approval_forbidden` naming the reason, or 403
 * `insufficient_scope` naming the scope a scope rule wants.
 */
export async function checkApprover(
  policy: ApproversPolicy,
  approval: ApprovalRecord,
  requester: string | undefined,
  principal: Principal,
): Promise<void> {
  const rule = policy.agents?.[approval.agent] ?? policy.rule ?? DEFAULT_RULE;
  if (typeof rule === 'object' && 'scope' in rule) {
    if (!hasScope(principal, rule.scope)) throw new InsufficientScopeError({ scope: rule.scope });
  } else {
    const allowed =
      typeof rule === 'function'
        ? await rule(approval, { principal, requester })
        : principal.userId !== undefined && rule.users.includes(principal.userId);
    if (!allowed) throw new ApprovalForbiddenError({ approvalId: approval.id, reason: 'not_an_approver' });
  }
  if (!policy.allowSelfApproval && principal.userId !== undefined && principal.userId === requester)
    throw new ApprovalForbiddenError({ approvalId: approval.id, reason: 'self_approval' });
}

/** The identity a decision is recorded under: the key's user, else the key's name (never a body field). */
export function deciderOf(principal: Principal): string {
  return principal.userId ?? principal.keyName ?? principal.tenantId;
}
