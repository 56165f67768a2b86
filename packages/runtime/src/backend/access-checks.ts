/**
 * What a key may do, checked once for every protocol: the HTTP API, the
 * OpenAI-compatible routes, MCP and A2A all run turns, resolve approvals,
 * cancel and read through the {@link ServerBackend} these checks wrap.
 *
 * @module
 */
import { NotFoundError } from '@switchboard/core';
import type { ApprovalResolution, CancelRequest, TurnRequest } from '../engine/turn-types.js';
import { isPromiseLike } from '../promise-like.js';
import type { SessionStore } from '../stores/session-store.js';
import { sessionOwner, userSessions } from '../stores/user-sessions.js';
import { InsufficientScopeError } from './access-errors.js';
import { type ApproversPolicy, checkApprover, deciderOf } from './approvers.js';
import { hasScope, type KeyScope, type Principal } from './principal.js';
import type { Authenticated, ServerBackend } from './server-backend.js';

/** Throws 403 `insufficient_scope` unless the principal (if any: none without auth) holds `scope`. */
export function requireScope(principal: Principal | undefined, scope: KeyScope): void {
  if (principal && !hasScope(principal, scope)) throw new InsufficientScopeError({ scope });
}

/**
 * Throws 404 unless a user-bound principal's user owns the session, or the
 * session does not exist yet (`allowNew`: a new conversation). Tenant-wide
 * keys and requests without auth pass.
 */
export async function checkSessionOwner(
  sessions: SessionStore,
  sessionId: string,
  principal: Principal | undefined,
  { allowNew = false }: { allowNew?: boolean } = {},
): Promise<void> {
  if (principal?.userId === undefined) return;
  const owner = await sessionOwner(sessions, sessionId);
  if (owner === principal.userId || (allowNew && owner === null)) return;
  throw new NotFoundError({ resource: 'Session', id: sessionId });
}

/**
 * The backend with every key's limits applied: the scope each action needs
 * (`chat` to run or cancel a turn), a user-bound key confined to its user's
 * sessions (another's is a 404; a key with `approvals:decide` may still
 * decide, never read, another user's approvals), and approvals decided by
 * an approver's key under the identity of that key, never a `userId` the
 * request claims.
 * Without auth (no principal) everything passes as before, at no cost.
 */
export function withAccessChecks<Backend extends ServerBackend>(
  backend: Backend,
  approvers: ApproversPolicy = {},
): Backend {
  const tenantSessions = (principal: Principal) => backend.sessionsOf(principal.tenantId);
  return {
    ...backend,
    chat(request: TurnRequest & Authenticated) {
      const { principal } = request;
      if (!principal) return backend.chat(request);
      requireScope(principal, 'chat');
      if (principal.userId === undefined) return backend.chat(request);
      return checkSessionOwner(tenantSessions(principal), request.sessionId, principal, {
        allowNew: true,
      }).then(() => {
        const result = backend.chat(request);
        return isPromiseLike(result) ? result : Promise.resolve(result);
      });
    },
    async cancelTurn(request: CancelRequest & Authenticated) {
      const { principal } = request;
      requireScope(principal, 'chat');
      if (principal) await checkSessionOwner(tenantSessions(principal), request.sessionId, principal);
      return backend.cancelTurn(request);
    },
    async resolveApproval(resolution: ApprovalResolution & Authenticated) {
      const { principal } = resolution;
      // Without keys (local development) whoever calls decides, as the request names them.
      if (!principal) return backend.resolveApproval(resolution);
      const sessions = tenantSessions(principal);
      const turns = await sessions.listTurns(resolution.sessionId);
      // A user-bound key reaches another user's approval only as an approver of its tenant (the scope says so).
      const own = turns[0]?.userId === principal.userId;
      if (principal.userId !== undefined && !own && !hasScope(principal, 'approvals:decide'))
        throw new NotFoundError({ resource: 'Approval', id: resolution.approvalId });
      const turn = turns.findLast((candidate) =>
        candidate.approvals?.some((approval) => approval.id === resolution.approvalId),
      );
      const approval = turn?.approvals?.find((candidate) => candidate.id === resolution.approvalId);
      // An unknown approval: the backend answers 404 (or that it was resolved) as without keys.
      if (turn && approval) await checkApprover(approvers, approval, turn.userId, principal);
      return backend.resolveApproval({ ...resolution, userId: deciderOf(principal) });
    },
    sessionsOf(tenantId: string | undefined, userId?: string) {
      const sessions = backend.sessionsOf(tenantId);
      return userId === undefined ? sessions : userSessions(sessions, userId);
    },
  };
}
